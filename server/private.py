"""Everything memlane creates is private to its owner: files 0600, folders 0700.

The database holds a person's memories; a token does not protect a file that every local user can
read. The daemon and the scripts that create files call `restrict_umask()` first, folders are made
with `make_dir()`, and files memlane made before this rule (or copied into place) are tightened with
`tighten()`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

UMASK = 0o077
DIR_MODE = 0o700
DATA_SUFFIXES = ("", "-wal", "-shm", "-journal")  # the files that hold memories
SQLITE_SUFFIXES = (*DATA_SUFFIXES, ".lock")


def restrict_umask() -> None:
    """New files 0600 and folders 0700 from here on, whatever the caller's umask."""
    os.umask(UMASK)


def make_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as 0700; an existing folder is left as the user set it."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    return path


def database_files(db_path: Path, *, data_only: bool = False) -> list[Path]:
    """The database and the files SQLite and the daemon keep beside it (`data_only`: without the lock)."""
    return [db_path.with_name(db_path.name + suffix) for suffix in (DATA_SUFFIXES if data_only else SQLITE_SUFFIXES)]


def tighten(paths: Iterable[Path]) -> list[Path]:
    """Take group and other bits off the files among `paths` that are ours; returns those changed.

    Only bits are removed, never added: a file the user made read-only stays read-only."""
    changed = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o077:
            os.chmod(path, stat.S_IMODE(st.st_mode) & 0o700)
            changed.append(path)
    return changed


def readable_by_others(path: Path) -> int | None:
    """The mode bits of `path` when group or others may read or write it, else None."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    return mode if mode & 0o066 else None
