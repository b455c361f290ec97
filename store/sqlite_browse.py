"""Listings for the dashboard and tools on SQLite: pages of memories, entities and namespaces, one
memory in detail, and the activity report. A mixin of SqliteStore (it uses `self.reader()`)."""

from __future__ import annotations

from typing import Any


class SqliteBrowse:
    """Read-only listings; every method reads through this thread's reader connection."""

    def reader(self) -> Any:  # provided by SqliteStore
        raise NotImplementedError
