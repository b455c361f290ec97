"""store/sqlite/derived.py owns every derived row: regressions for the three drifts of 0.1.0.

Each test lowers the size threshold so that the vector lane takes the approximate index (store/sqlite/ann.py,
built from chunk_vec_f32 and fed by derived's notes), the path a drifted copy of the fan-out would miss.
"""

from __future__ import annotations

from pathlib import Path

from contract import validate
from memory import Memory
from store import maintenance, portable

FACTS = ("爱丽丝去年搬到了柏林，在一家软件公司工作。", "Bob drinks green tea every morning before work.",
         "The staging server ran out of memory on Friday.")


def _ids(res: dict) -> list[str]:
    return [h["chunk_id"] for h in res["hits"]]


def test_an_imported_memory_has_every_derived_row(tmp_path: Path, cfg, e5, ann_index) -> None:
    with Memory(tmp_path / "a.db", config=cfg, embedder=e5) as a:
        ids = [a.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert a.flush(60)
        lines = [portable.dumps(r) for r in a.export_records(vectors=True)]
    with Memory(tmp_path / "b.db", config=cfg, embedder=e5, start_worker=False) as b:
        rep = b.import_records(lines)
        assert rep.vectors == 3 and rep.queued == 0 and not rep.errors
        # A two-character Chinese word is found through the bigram index (chunks_bi).
        assert ids[0] in _ids(b.recall("柏林", namespace="n", lanes=["meta"]))
        # The approximate index is built from chunk_vec_f32: imported vectors are there too.
        ann_index(b, "n")
        hits = _ids(b.recall("What does Bob drink in the morning?", namespace="n", lanes=["vector"]))
        assert hits and hits[0] == ids[1]
        assert not maintenance.check_vectors(b.store.reader()).problems


def test_repair_fixes_liveness_and_the_index_follows(mem: Memory, ann_index) -> None:
    ids = [mem.remember(f, namespace="n")["chunk_id"] for f in FACTS]
    assert mem.flush(60)
    ann_index(mem, "n")
    mem.forget(ids[1], namespace="n")
    seq = mem.store.reader().execute("select seq from chunks where id = ?", (ids[1],)).fetchone()[0]
    with mem.store.atomic() as db:  # the drift: the exact index still calls the forgotten memory live
        db.execute("update chunk_vec set live = 1 where rowid = ?", (seq,))
    rep = maintenance.check_vectors(mem.store.reader())
    assert rep.wrong_live == [seq]
    with mem.store.atomic() as db:
        done = maintenance.repair_vectors(db, maintenance.check_vectors(db), validate.now_iso())
    assert done["relived"] == 1
    assert mem.store.reader().execute("select live from chunk_vec where rowid = ?", (seq,)).fetchone() == (0,)
    assert ids[1] not in _ids(mem.recall("What does Bob drink in the morning?", namespace="n", lanes=["vector"]))
    assert not maintenance.check_vectors(mem.store.reader()).problems
