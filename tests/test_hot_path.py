"""Work done once per recall (issue 15): counts are reused between commits, and stay exact."""

from __future__ import annotations

from memory import Memory
from store.protocol import Filter


def test_counts_are_reused_until_a_commit_and_stay_exact(mem: Memory) -> None:
    store = mem.store
    ids = [mem.remember(f"Note {i}: Bob met Alice in Berlin.", namespace="n")["chunk_id"] for i in range(3)]
    statements: list[str] = []
    store.set_trace(statements.append)
    try:
        assert store.count_memories("n") == 3 and store.count(Filter("n")) == 3
        before = len(statements)
        assert store.count_memories("n") == 3 and store.count(Filter("n")) == 3
        assert len(statements) == before  # no second count without a commit in between
        mem.forget(ids[0], namespace="n")
        assert store.count_memories("n") == 2 and store.count(Filter("n")) == 2
        mem.rename_namespace("n", "m")
        assert store.count_memories("n") == 0 and store.count_memories("m") == 2
    finally:
        store.set_trace(None)
