"""Storage behind memlane: the store protocol (protocol.py) and its engines (SQLite: sqlite.py,
PostgreSQL: postgres.py). `locate` says which database a Memory opens; `open_store` opens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from store.protocol import Filter, Neighbours, NewChunk, QueuedChunk, Store, chunk_filter
from store.sqlite.engine import SqliteStore
from store.util import is_pg_url, redact_url

__all__ = ["Filter", "Neighbours", "NewChunk", "QueuedChunk", "Store", "chunk_filter", "locate", "open_store"]


def locate(db_path: str | Path | None, cfg: Any) -> tuple[str, Path | str, Path | str]:
    """(engine, target, label): a postgresql:// URL given or configured selects PostgreSQL, else the file.

    `target` opens the database again (a URL keeps its password); `label` names it in messages and
    /health (the file, or the URL with its password as ***).
    """
    url = str(db_path) if is_pg_url(db_path) else (cfg.db_url if db_path is None else "")
    if url:
        return "postgres", url, redact_url(url)
    path = Path(db_path) if db_path is not None else cfg.resolved_db_path()
    return "sqlite", path, path


def open_store(engine: str, target: Path | str, embedder: Any, cfg: Any) -> Any:
    """The engine's store over `target`, migrated to the current schema."""
    if engine == "postgres":
        from store.postgres.engine import PgStore  # psycopg is imported only when PostgreSQL is used

        return PgStore(str(target), embedder.dim, model=embedder.model, lease_s=cfg.embed_lease_s,
                       ef_search=cfg.pg_ef_search, supersession_scoring=cfg.supersession_scoring)
    return SqliteStore(target, embedder.dim, model=embedder.model, cache_mib=cfg.sqlite_cache_mib,
                       ef_search=cfg.ann_ef_search, supersession_scoring=cfg.supersession_scoring)
