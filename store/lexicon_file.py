"""The lexicon's cache file: a derived, read-only SQLite file of word maps built from CC-CEDICT.

It is not the memory database (no schema version, no migrations, no pragmas of `connect()`): it is
rebuilt from its source whenever lang/crosslingual.py changes its format. Its SQL lives here, with the
rest of memlane's SQL, so that lang/ says what the maps mean and this module how they are stored:
each table is (k text primary key, v text) without rowid, written once and replaced atomically.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

_TABLE = re.compile(r"[a-z][a-z0-9_]*")  # table names are the caller's constants; checked, never bound


def _name(table: str) -> str:
    if not _TABLE.fullmatch(table):
        raise ValueError(f"not a lexicon table name: {table!r}")
    return table


def write(dest: Path, tables: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> None:
    """Write every (table, rows) pair to a new file, then move it over `dest`: a reader never sees half a file."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        for table, rows in tables:
            db.execute(f"create table {_name(table)} (k text primary key, v text not null) without rowid")
            db.executemany(f"insert into {_name(table)} values (?, ?)", rows)
        db.commit()
    finally:
        db.close()
    os.replace(tmp, dest)


CACHED_LOOKUPS = 4096  # recent (table, key) answers kept in memory: well under 1 MB, and the file never changes


class LexiconFile:
    """The file opened read-only and immutable, shared by threads behind one lock. Recent answers are
    kept in a bounded LRU cache: a memory's text asks about a dozen words, most of them asked before."""

    def __init__(self, path: Path) -> None:
        self._conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._cached = functools.lru_cache(maxsize=CACHED_LOOKUPS)(self._read)

    def value(self, table: str, key: str) -> str | None:
        """The value stored under `key`, or None when the table has no such key."""
        return self._cached(table, key)

    def _read(self, table: str, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute(f"select v from {_name(table)} where k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
