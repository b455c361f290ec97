"""Storage behind memlane: the store protocol (protocol.py) and its engines (SQLite: sqlite.py,
PostgreSQL: postgres.py). `locate` says which database a Memory opens; `open_store` opens it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from contract.errors import Unavailable
from server import private
from store import maintenance
from store.protocol import Filter, Neighbours, NewChunk, QueuedChunk, Store, chunk_filter
from store.sqlite.engine import SqliteStore
from store.util import is_pg_url, redact_url

__all__ = ["Filter", "Neighbours", "NewChunk", "QueuedChunk", "Store", "chunk_filter", "daemon_lock", "local_dir", "locate",
           "open_store"]


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


def local_dir(engine: str, path: Path | str, cfg: Any) -> Path:
    """The folder for local caches (models, the relevance cohort): beside the SQLite file; on PostgreSQL
    beside the default SQLite file's place. Created when missing."""
    folder = (cfg.resolved_db_path() if engine == "postgres" else Path(path)).parent
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def daemon_lock(cfg: Any) -> Iterator[None]:
    """What a running daemon holds on its database. SQLite: an exclusive lock file beside it, so a second
    daemon on the same file refuses to start (`[unavailable]`), and the database files made private.
    PostgreSQL: nothing, since any number of daemons share one database."""
    if cfg.engine != "sqlite":
        yield
        return
    db_path = cfg.resolved_db_path()
    lock_path = maintenance.lock_path(db_path)
    private.make_dir(lock_path.parent)
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise Unavailable("server.locked", db=str(db_path), lock=str(lock_path)) from None
    try:
        private.tighten(private.database_files(db_path))  # files made before the umask rule, or copied in
        yield
    finally:
        lock.release()
