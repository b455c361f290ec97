"""Online backup of a memlane database, verified with quick_check and rotated (keep N).

    python scripts/backup.py [--db PATH] [--dest DIR] [--keep 7]
"""

from __future__ import annotations

from pathlib import Path

import _common as c


def main() -> int:
    import private

    private.restrict_umask()  # the backup and its folder: 0600 in 0700, like the database
    p = c.parser("data.help.backup")
    p.add_argument("--dest", help=c.t("data.help.dest"))
    p.add_argument("--keep", type=int, default=7, help=c.t("data.help.keep"))
    args = p.parse_args()
    cfg = c.config(args)
    import maintenance

    db = cfg.resolved_db_path()
    dest = Path(args.dest) if args.dest else (cfg.backup_dir or db.parent / "backups")
    res = maintenance.backup(db, Path(dest).expanduser(), keep=args.keep)
    c.say("data.backup_done", path=str(res.path), bytes=res.bytes, check=res.check)
    for old in res.removed:
        c.say("data.backup_removed", path=str(old))
    return 0


if __name__ == "__main__":
    raise SystemExit(c.run(main))
