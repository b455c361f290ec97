"""store/bench_support.py: the probes devtools/ reads with, on a real file written by Memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from contract.validate import now_iso
from memory import Memory
from store import bench_support as bs
from store.sqlite.engine import SqliteStore


def test_probes_read_what_memory_wrote(mem: Memory, db_target: Path) -> None:
    first = mem.remember("Alice Smith works at Acme in Berlin.")["chunk_id"]
    mem.remember("Bob Jones knows Alice Smith.")
    new = mem.update(first, "Alice Smith works at Acme in Lisbon.")["chunk_id"]
    mem.relate("Alice Smith", "works_at", "Acme")
    mem.relate("Alice Smith", "knows", "Bob Jones")
    assert mem.flush()  # the worker may hold a batch that embed_pending() would not wait for
    db = mem.store.reader()
    # An explicit update versions the memory; superseded_by is set only by supersession detection.
    assert all(old != first for old, _ in bs.supersession_links(db, "default"))
    assert bs.busiest_subject(mem.store, "default") == "Alice Smith"
    assert bs.context_vector_count(mem.store) >= 0
    seqs, blobs = bs.live_f32_vectors(db, "default")
    assert len(seqs) == len(blobs) >= 2 and all(len(b) == mem.embedder.dim * 4 for b in blobs)
    assert set(bs.seqs_of(db, [new, "m_nothing"])) == {new}
    qv = np.frombuffer(blobs[0], dtype=np.float32)
    assert bs.vec0_knn(db, qv, 1, "default")[0][0] == seqs[0]
    assert bs.explain_plan(db, "select seq from chunks where id = 'x'")
    calls = mem.stats()["recall_24h"]["calls"]
    bs.add_recall_log(mem.store, "default", [("q1", now_iso(), 12.5, 3), ("q2", now_iso(), 20.0, 0)])
    assert mem.stats()["recall_24h"]["calls"] == calls + 2
    assert len(bs.file_f32_vectors(db_target, 10)) == len(mem.store.reader().execute(
        "select seq from chunk_vec_f32").fetchall())


def test_synthetic_sqlite_load_writes_chunks_and_vectors(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db", 8, model="synthetic")
    try:
        vecs = np.eye(8, dtype=np.float32)[[0, 1, 2]]
        bs.load_synthetic_sqlite(store, vecs, lambda i: f"ns{i % 2}", "2026-01-01T00:00:00.000000Z", batch=2)
        seqs, _ = bs.live_f32_vectors(store.reader(), "ns0")
        assert seqs == [1, 3]
    finally:
        store.close()
