"""Online backup of a memlane database, verified with quick_check and rotated (keep N).

    memlane backup [--db PATH] [--dest DIR] [--keep 7]
"""

from __future__ import annotations

from pathlib import Path

from commands import _common as c
from store import maintenance

PROG = "memlane backup"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.backup", PROG)
    p.add_argument("--dest", help=c.t("data.help.dest"))
    p.add_argument("--keep", type=int, default=7, help=c.t("data.help.keep"))
    args = p.parse_args(argv)
    cfg = c.config(args)
    if cfg.db_url:  # a file backup cannot exist for a server database: say what to use instead
        raise c.Unavailable("pg.no_file_backup", url=cfg.db_label())

    db = cfg.resolved_db_path()
    dest = Path(args.dest) if args.dest else (cfg.backup_dir or db.parent / "backups")
    res = maintenance.backup(db, Path(dest).expanduser(), keep=args.keep)
    c.say("data.backup_done", path=str(res.path), bytes=res.bytes, check=res.check)
    for old in res.removed:
        c.say("data.backup_removed", path=str(old))
    return 0
