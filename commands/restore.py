"""Restore a backup over the database. Refuses while the daemon runs.

    memlane restore BACKUP.db [--db PATH]

The daemon holds a filelock on `<db>.lock` for as long as it runs; this script takes the same lock
(without waiting) for the whole restore, so a daemon cannot start in the middle of it either.
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

from commands import _common as c
from store import maintenance

PROG = "memlane restore"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.restore", PROG)
    p.add_argument("backup", help=c.t("data.help.backup_file"))
    args = p.parse_args(argv)
    cfg = c.config(args)
    if cfg.db_url:  # a file backup cannot exist for a server database: say what to use instead
        raise c.Unavailable("pg.no_file_backup", url=cfg.db_label())


    db = cfg.resolved_db_path()
    lock = FileLock(str(maintenance.lock_path(db)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise c.Unavailable("data.daemon_running", lock=str(maintenance.lock_path(db))) from None
    try:
        safety, check = maintenance.restore(Path(args.backup).expanduser(), db)
    finally:
        lock.release()
    if safety:
        c.say("data.restore_safety", path=str(safety))
    c.say("data.restore_done", path=str(db), backup=args.backup, check=check)
    return 0 if check == "ok" else 1
