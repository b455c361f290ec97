"""Find live chunks without vectors, orphan vectors and vectors of the wrong dimension; re-queue or
remove them with a report. A dry run (report only) unless --apply.

    memlane repair [--db PATH|URL] [--apply] [--embed] [--json]

On PostgreSQL (MEMLANE_DB_URL, or --db given a postgresql:// URL) the same checks run in one
transaction; a vector there always has the column's dimension, and orphans cannot exist (a foreign key).
"""

from __future__ import annotations

import json

from commands import _common as c
from store import maintenance

PROG = "memlane repair"


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
        rep, done = maintenance.check_pg(cfg.db_url, cfg.db_label(), args.apply)
    else:
        rep, done = maintenance.check_file(cfg.resolved_db_path(), args.apply)
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
