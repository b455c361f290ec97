"""The rows one recall reads of its candidates, each read at most once.

After fusion, the reranker, the rule that lanes earn their rank, the reply rule and relevance each ask
for the same memories' text and entity names, and the reranker (for a "when" question) and hydration
for their grounded dates; this keeps what was read for the rest of the recall.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from store.protocol import Store


def _fill(cache: dict[int, Any], seqs: Sequence[int], fetch: Callable[[list[int]], Mapping[int, Any]],
          default: Any = None) -> None:
    """Read the seqs `cache` does not hold yet, in one call of `fetch`; a seq it leaves out gets `default`."""
    missing = [s for s in dict.fromkeys(seqs) if s not in cache]
    if missing:
        got = fetch(missing)
        for s in missing:
            cache[s] = got.get(s, default)


class Reads:
    """One recall's cache of `Store.rank_rows`, `Store.alias_norms` and `Store.dates_of`, by seq."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows: dict[int, tuple[str, str, str | None, str, str | None] | None] = {}
        self._names: dict[int, set[str]] = {}
        self._dates: dict[int, str | None] = {}

    def rank_rows(self, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None, str, str | None]]:
        """seq -> (content, valid_from, superseded_by, id, asserted thread), as Store.rank_rows."""
        _fill(self._rows, seqs, self.store.rank_rows)
        return {s: row for s in seqs if (row := self._rows[s]) is not None}

    def contents(self, seqs: Sequence[int]) -> dict[int, str]:
        """seq -> content, as Store.contents."""
        return {s: row[0] for s, row in self.rank_rows(seqs).items()}

    def alias_norms(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        """seq -> the normalised names and aliases of its entities (seqs without any left out)."""
        _fill(self._names, seqs, self.store.alias_norms, set())
        return {s: names for s in seqs if (names := self._names[s])}

    def dates_of(self, seqs: Sequence[int]) -> dict[int, str]:
        """seq -> its grounded dates, as Store.dates_of (seqs without any left out)."""
        _fill(self._dates, seqs, self.store.dates_of)
        return {s: dates for s in seqs if (dates := self._dates[s]) is not None}

    def threads(self, seqs: Sequence[int]) -> dict[int, str]:
        """seq -> the thread a client or a session asserts for it, from rank_rows (seqs in none left out)."""
        return {s: row[4] for s, row in self.rank_rows(seqs).items() if row[4] is not None}
