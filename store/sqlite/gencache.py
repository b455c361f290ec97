"""Values that change only when the data does, kept for one data generation.

SQLite's `meta.data_gen` is bumped by every write transaction that changed a row, in any process
(store/sqlite/engine.py, atomic()). A value read at generation g stays exact until the generation moves, so a
recall asks the database once per generation for what every recall asks the same (the graph lane's hub
counts, the document frequencies of common words) instead of once per recall.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Any


class GenerationCache:
    """A bounded map of key -> value for one generation; a new generation, or more than `limit` keys,
    empties it. Thread-safe; `compute` runs outside the lock."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._gen = -1
        self._values: dict[Hashable, Any] = {}

    def get_many(self, gen: int, keys: Iterable[Hashable],
                 compute: Callable[[list[Hashable]], dict[Hashable, Any]]) -> dict[Hashable, Any]:
        """The value of every key at generation `gen`; `compute(missing)` returns one for each missing key.

        `gen` is read before `compute` runs, on a reader in autocommit mode: a commit in between only makes
        the values kept under `gen` newer than it, and the next call sees the new generation and reads again.
        """
        keys = list(keys)
        with self._lock:
            if gen != self._gen or len(self._values) > self.limit:
                self._values, self._gen = {}, gen
            known = self._values
            out = {k: known[k] for k in keys if k in known}
        missing = list(dict.fromkeys(k for k in keys if k not in out))
        if missing:
            found = compute(missing)
            missing_values = {k: found[k] for k in missing}  # a KeyError here is compute's bug, not a miss
            with self._lock:
                if self._gen == gen:
                    self._values.update(missing_values)
            out.update(missing_values)
        return out
