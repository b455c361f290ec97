"""Create or migrate the memlane database, idempotently, and say what was done.

    memlane init [--db PATH] [--lang en|zh]
    MEMLANE_DB_URL=postgresql://user@host/db memlane init

Safe to run any number of times. On a file it refuses while a daemon holds the database (the daemon
migrates on start by itself). On PostgreSQL it may run beside daemons: migrations take an advisory lock. Exit code 0 on success, 1 with a message on failure.
"""

from __future__ import annotations

import sys
from pathlib import Path

from filelock import FileLock, Timeout

import i18n_messages
from commands._common import parser
from config import load_config
from contract.errors import MemlaneError, Unavailable
from i18n_messages import t
from memory import SCHEMA_VERSION, Memory
from store import maintenance


def init_db(db_path: Path, cfg: object, lang: str) -> list[str]:
    """Create or migrate `db_path`; return the lines to print."""
    existed = db_path.exists() and db_path.stat().st_size > 0
    before = maintenance.file_schema_version(db_path) if existed else 0
    lock_path = db_path.with_name(db_path.name + ".lock")
    db_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise Unavailable("install.db_in_use", path=str(db_path)) from None
    try:
        with Memory(db_path, config=cfg, start_worker=False) as m:  # type: ignore[arg-type]
            stats = m.stats()
            model, dim = m.embedder.model, m.embedder.dim
    finally:
        lock.release()
    if not existed:
        lines = [t("install.db_created", lang, path=db_path, version=SCHEMA_VERSION, model=model, dim=dim)]
    elif before < SCHEMA_VERSION:
        lines = [t("install.db_migrated", lang, path=db_path, old=before, new=SCHEMA_VERSION)]
    else:
        lines = [t("install.db_current", lang, path=db_path, version=SCHEMA_VERSION)]
    lines.append(t("install.db_stats", lang, chunks=stats["chunks"], live=stats["live_chunks"],
                   pending=stats["pending_embeddings"]))
    return lines


def init_pg(cfg: object, lang: str) -> list[str]:
    """Create or migrate the PostgreSQL database of MEMLANE_DB_URL (each migration in one transaction,
    under an advisory lock, so running daemons are safe); return the lines to print."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres.db import SCHEMA_VERSION as PG_VERSION

    with Memory(None, config=cfg, start_worker=False) as m:  # type: ignore[arg-type]
        applied = list(m.migrations_applied)
        stats = m.stats()
        model, dim, label = m.embedder.model, m.embedder.dim, m.path
    if 1 in applied:
        lines = [t("install.db_created", lang, path=label, version=PG_VERSION, model=model, dim=dim)]
    elif applied:
        lines = [t("install.db_migrated", lang, path=label, old=min(applied) - 1, new=PG_VERSION)]
    else:
        lines = [t("install.db_current", lang, path=label, version=PG_VERSION)]
    lines.append(t("install.db_stats", lang, chunks=stats["chunks"], live=stats["live_chunks"],
                   pending=stats["pending_embeddings"]))
    return lines


def main(argv: list[str] | None = None) -> int:
    p = parser("cli.help.init", "memlane init")
    p.add_argument("--lang", help=t("cli.help.lang"))
    args = p.parse_args(argv)
    lang = i18n_messages.normalize_lang(args.lang) if args.lang else i18n_messages.detect_lang()
    try:
        cfg = load_config(overrides={"db_path": args.db, "lang": args.lang})
        lang = cfg.lang or lang
        lines = init_pg(cfg, lang) if cfg.db_url else init_db(cfg.resolved_db_path(), cfg, lang)
        for line in lines:
            print(line)
    except MemlaneError as exc:
        print(exc.render(lang), file=sys.stderr)
        return 1
    return 0
