"""Find live chunks without vectors, orphan vectors and vectors of the wrong dimension; re-queue or
remove them with a report. A dry run (report only) unless --apply.

    memlane repair [--db PATH|URL] [--apply] [--embed] [--json]

On PostgreSQL (MEMLANE_DB_URL, or --db given a postgresql:// URL) the same checks run in one
transaction; a vector there always has the column's dimension, and orphans cannot exist (a foreign key).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from commands import _common as c
from contract import validate
from store import maintenance

PROG = "memlane repair"


def _check_file(db_path: Path, apply: bool) -> tuple[Any, dict[str, int] | None]:
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import connect

    if not db_path.is_file():
        raise c.Unavailable("data.no_db", path=str(db_path))
    db = connect(db_path)
    try:
        db.execute("begin")
        rep = maintenance.check_vectors(db)
        db.execute("commit")
    finally:
        db.close()
    done = None
    if apply and rep.problems:
        # One BEGIN IMMEDIATE transaction, as Memory.atomic does; no embedder is loaded for this.
        db = connect(db_path)
        try:
            db.execute("begin immediate")
            rep = maintenance.check_vectors(db)  # again, inside the write transaction
            done = maintenance.repair_vectors(db, rep, validate.now_iso())
            db.execute("commit")
        except BaseException:
            db.execute("rollback")
            raise
        finally:
            db.close()
    return rep, done


def _check_pg(url: str, label: str, apply: bool) -> tuple[Any, dict[str, int] | None]:
    """The same check and repair on PostgreSQL, each in one transaction (repeatable read for the
    check; the repair locks the vector tables and their queues against the daemons' workers)."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres import derived as pg_derived
    from store.postgres.db import Handle, connect_once, db_error

    conn = connect_once(url)
    try:
        if conn.execute("select to_regclass('chunk_vec')").fetchone()[0] is None:
            raise c.Unavailable("data.no_db", path=label)
        with conn.transaction():
            conn.execute("set transaction isolation level repeatable read")
            rep = maintenance.check_vectors(Handle(conn), pg_derived)
        done = None
        if apply and rep.problems:
            with conn.transaction():
                conn.execute("lock table chunk_vec, embed_queue, chunk_ctx_vec, ctx_queue in share row exclusive mode")
                rep = maintenance.check_vectors(Handle(conn), pg_derived)  # again, under the lock
                done = maintenance.repair_vectors(Handle(conn), rep, validate.now_iso(), pg_derived)
        return rep, done
    except psycopg.Error as exc:
        raise db_error(exc, url) from None
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.repair", PROG)
    p.add_argument("--apply", action="store_true", help=c.t("data.help.apply"))
    p.add_argument("--embed", action="store_true", help=c.t("data.help.embed"))
    p.add_argument("--json", action="store_true", help=c.t("data.help.json"))
    args = p.parse_args(argv)
    cfg = c.config(args)
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    if cfg.db_url:
        rep, done = _check_pg(cfg.db_url, cfg.db_label(), args.apply)
    else:
        rep, done = _check_file(cfg.resolved_db_path(), args.apply)
    if args.embed:
        with Memory(config=cfg, start_worker=False) as mem:
            # With --json, stdout holds one JSON document; the progress line goes to stderr.
            (c.warn if args.json else c.say)("data.embedding", count=mem.pending_embeddings())
            mem.embed_pending()
    if args.json:
        print(json.dumps({"report": rep.as_dict(), "applied": done}, ensure_ascii=False))
        return 0
    c.say("data.repair_report", **rep.as_dict())
    if not rep.problems:
        c.say("data.repair_ok")
    elif done is None:
        c.say("data.repair_dry", problems=rep.problems)
    else:
        c.say("data.repair_done", **done)
    return 0
