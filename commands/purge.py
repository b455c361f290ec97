"""Delete a memory for good: every version of its chain, the facts derived from them, their vectors,
full-text and approximate-index entries, queue rows, entity links and relations only it supported, and
the recall-log rows that name or quote it (Memory.purge, the CLI face of memory_purge).

    memlane purge ID [--namespace NS] [--db PATH] --yes

It works beside a running daemon (one transaction; the daemon's approximate index checks every hit
against the database). Without --yes it refuses and changes nothing.
"""

from __future__ import annotations

from commands import _common as c

PROG = "memlane purge"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.purge", PROG)
    p.add_argument("id", help=c.t("data.help.purge_id"))
    p.add_argument("--namespace", help=c.t("data.help.purge_ns"))
    p.add_argument("--yes", action="store_true", help=c.t("data.help.yes"))
    args = p.parse_args(argv)
    if not args.yes:
        raise c.InvalidArgument("data.purge_needs_yes", id=args.id)
    cfg = c.config(args)
    if not cfg.db_url and not cfg.resolved_db_path().is_file():
        raise c.Unavailable("data.no_db", path=str(cfg.resolved_db_path()))
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    with Memory(config=cfg, start_worker=False) as mem:
        got = mem.purge(args.id, namespace=args.namespace, confirm=True)
    c.say("data.purge_done", count=len(got["purged"]), ids=", ".join(got["purged"]), relations=got["relations"],
          entities=got["entities"], recall_log=got["recall_log"])
    return 0
