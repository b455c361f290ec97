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


def test_a_brief_recall_reads_no_thread_neighbours_and_shows_what_full_shows(mem: Memory) -> None:
    from recall import hydrate

    for text in ("Ann: the kiln at the studio broke down.", "Bo: then we fire the bowls next week instead.",
                 "Ann: fine, the bowls can wait for the kiln."):
        mem.remember(text, thread="conv-7", namespace="n")
    mem.flush()
    full = mem.recall("When do they fire the bowls?", namespace="n", detail="full")["hits"]
    assert full and all("thread" in h for h in full)  # a full hit names its neighbours
    statements: list[str] = []
    mem.store.set_trace(statements.append)
    try:
        brief = mem.recall("When do they fire the bowls?", namespace="n", detail="brief")["hits"]
    finally:
        mem.store.set_trace(None)
    assert brief == [hydrate.brief(h) for h in full]
    assert not any("thread" in s for s in statements if "recall_log" not in s)


def test_entity_counts_are_counted_once_per_write_of_any_connection(mem: Memory, tmp_path) -> None:
    from store.sqlite import SqliteStore

    store = mem.store
    mem.remember("Bob met Alice in Berlin.", namespace="n", entities=[{"name": "Alice", "kind": "person"}])
    mem.flush()
    (alice,) = [m[0] for m in store.match_aliases("n", ["alice"])]
    statements: list[str] = []
    store.set_trace(statements.append)
    try:
        assert store.entity_chunk_counts([alice, "e_nobody"]) == {alice: 1}
        before = len(statements)
        assert store.entity_chunk_counts([alice, "e_nobody"]) == {alice: 1}
        assert not any("chunk_entities" in s for s in statements[before:])  # reused, not counted again
        mem.remember("Alice moved to Paris.", namespace="n", entities=[{"name": "Alice", "kind": "person"}])
        assert store.entity_chunk_counts([alice]) == {alice: 2}  # a commit of this store
        mem.flush()  # the worker's vector commit lands now, not inside the no-op check below
        other = SqliteStore(store.path, store.dim)  # another connection to the file, as another process has
        try:
            with other.atomic() as tx:
                tx.execute("delete from chunk_entities where entity_id = ? and chunk_seq = "
                           "(select max(chunk_seq) from chunk_entities where entity_id = ?)", (alice, alice))
        finally:
            other.close()
        assert store.entity_chunk_counts([alice]) == {alice: 1}  # its commit is seen too
        gen = store.data_gen()
        with store.atomic() as tx:  # a transaction that changes nothing leaves the generation as it is
            tx.execute("select count(*) from chunks").fetchone()
        assert store.data_gen() == gen
        mem.recall("Where is Alice?", namespace="n")  # the recall log's commit changes no count...
        before = len(statements)
        assert store.entity_chunk_counts([alice]) == {alice: 1}
        assert not any("chunk_entities" in s for s in statements[before:])  # ...so nothing is recounted
    finally:
        store.set_trace(None)
