"""The rows one recall reads of its candidates, each read at most once.

After fusion, the reranker, the rule that lanes earn their rank, the reply rule and relevance each ask
for the same memories' text and entity names; this keeps what was read for the rest of the recall.
"""

from __future__ import annotations

from collections.abc import Sequence

from store.protocol import Store


class Reads:
    """One recall's cache of `Store.rank_rows` and `Store.alias_norms`, by seq."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows: dict[int, tuple[str, str, str | None, str] | None] = {}
        self._names: dict[int, set[str]] = {}

    def rank_rows(self, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None, str]]:
        """seq -> (content, valid_from, superseded_by, id), as Store.rank_rows."""
        missing = [s for s in dict.fromkeys(seqs) if s not in self._rows]
        if missing:
            got = self.store.rank_rows(missing)
            for s in missing:
                self._rows[s] = got.get(s)
        return {s: row for s in seqs if (row := self._rows[s]) is not None}

    def contents(self, seqs: Sequence[int]) -> dict[int, str]:
        """seq -> content, as Store.contents."""
        return {s: row[0] for s, row in self.rank_rows(seqs).items()}

    def alias_norms(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        """seq -> the normalised names and aliases of its entities (seqs without any left out)."""
        missing = [s for s in dict.fromkeys(seqs) if s not in self._names]
        if missing:
            got = self.store.alias_norms(missing)
            for s in missing:
                self._names[s] = got.get(s, set())
        return {s: names for s in seqs if (names := self._names[s])}
