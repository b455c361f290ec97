"""Find live chunks without vectors, orphan vectors and vectors of the wrong dimension; re-queue or
remove them with a report. A dry run (report only) unless --apply.

    memlane repair [--db PATH] [--apply] [--embed] [--json]
"""

from __future__ import annotations

import json

from commands import _common as c

PROG = "memlane repair"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.repair", PROG)
    p.add_argument("--apply", action="store_true", help=c.t("data.help.apply"))
    p.add_argument("--embed", action="store_true", help=c.t("data.help.embed"))
    p.add_argument("--json", action="store_true", help=c.t("data.help.json"))
    args = p.parse_args(argv)
    cfg = c.config(args)
    if cfg.db_url:  # sqlite-vec's indexes are what drifts; never fall back to the default file
        raise c.Unavailable("pg.file_only", command="repair", url=cfg.db_label())
    import maintenance
    import validate
    from memory import Memory, connect

    db_path = cfg.resolved_db_path()
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
    if args.apply and rep.problems:
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
    if args.embed:
        with Memory(config=cfg, start_worker=False) as mem:
            c.say("data.embedding", count=mem.pending_embeddings())
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
