"""Conversations: the LoCoMo evaluation's calling convention, threads, context vectors, time grounding.

The tests marked `engine_neutral` run on PostgreSQL too (`pytest --engine postgres`); their raw reads
of derived rows name the row key per engine (`_key`: SQLite's rowid, PostgreSQL's seq).
"""

from __future__ import annotations

from typing import Any

from devtools import eval_locomo

SAMPLE: dict[str, Any] = {  # a made-up conversation in LoCoMo's file format (not LoCoMo data)
    "sample_id": "toy",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_2_date_time": "3:00 pm on 9 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Back again."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the pottery class yesterday."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": " "}],
    },
    "qa": [],
}


def test_locomo_turns_follow_the_black_box_convention() -> None:
    turns = eval_locomo.turns_of(SAMPLE)
    assert [t["dia_id"] for t in turns] == ["D1:1", "D2:1"]  # sessions in order, empty turns dropped
    first = turns[0]
    assert first["content"] == "Ann: I went to the pottery class yesterday."
    assert first["session"] == 1 and first["speaker"] == "Ann"
    assert first["session_date"] == "1:56 pm on 8 May, 2023"
    assert first["valid_from"] == "2023-05-08T13:56:00+00:00"
    assert eval_locomo.SOURCE == "locomo"


def test_eval_locomo_reports_each_conversation(tmp_path: Path) -> None:
    def toy(sid: str, pet: str) -> dict[str, Any]:
        return {"sample_id": sid, "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": f"I adopted a {pet} last week."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "I am training for a marathon."}]},
            "qa": [{"question": "What pet did Ann adopt?", "answer": pet, "evidence": ["D1:1"], "category": 4}]}

    path, out = tmp_path / "toy.json", tmp_path / "out.json"
    path.write_text(json.dumps([toy("one", "cat"), toy("two", "parrot")]), encoding="utf-8")
    assert eval_locomo.main([str(path), "--db", str(tmp_path / "toy.db"), "--json", str(out)]) == 0
    by_conv = json.loads(out.read_text(encoding="utf-8"))["by_conversation"]
    assert set(by_conv) == {"locomo-one", "locomo-two"} and all(m["n"] == 1 for m in by_conv.values())

    # --reuse-db: a second run on the same file asks the conversations it holds without importing them again.
    # Bo's turn of conversation "one" is forgotten in between: an import would write it back.
    with Memory(tmp_path / "toy.db") as mem:
        bo = [h for h in mem.recall("marathon", namespace="locomo-one")["hits"] if h["metadata"]["dia_id"] == "D1:2"]
        mem.forget(bo[0]["chunk_id"], namespace="locomo-one")
    again = tmp_path / "again.json"
    assert eval_locomo.main([str(path), "--db", str(tmp_path / "toy.db"), "--reuse-db", "--json", str(again)]) == 0
    first, second = (json.loads(p.read_text(encoding="utf-8")) for p in (out, again))
    assert [q["question"] for q in second["questions"]] == [q["question"] for q in first["questions"]]
    assert all(q["got"][:1] == ["D1:1"] for q in second["questions"])
    with Memory(tmp_path / "toy.db") as mem:
        assert mem.store.count_memories("locomo-one") == 1 and mem.store.count_memories("locomo-two") == 2
    with pytest.raises(SystemExit) as stop:
        eval_locomo.main([str(path), "--reuse-db"])  # no --db: nothing to reuse
    assert stop.value.code == 2


# ---------------------------------------------------------------- threads

import dataclasses  # noqa: E402
import json  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from contract.errors import InvalidArgument  # noqa: E402
from ingest import embed_work  # noqa: E402
from ingest import threads as th  # noqa: E402
from lang import timeground as tg  # noqa: E402
from memory import Memory  # noqa: E402

DAY1 = "2023-05-08T13:56:00+00:00"
DAY2 = "2023-05-20T09:00:00+00:00"


neutral = pytest.mark.engine_neutral


def _key(mem: Memory) -> str:
    """The column naming a chunk in its derived tables: rowid on SQLite (vec0, FTS5), seq on PostgreSQL."""
    return "seq" if mem.engine == "postgres" else "rowid"


def _thread(mem: Memory, cid: str, ns: str = "default") -> str | None:
    row = mem.store.reader().execute("select thread from chunks where id = ? and namespace = ?", (cid, ns)).fetchone()
    return row[0] if row else None


@neutral
def test_explicit_thread_is_kept_and_shown_in_history(mem: Memory) -> None:
    a = mem.remember("Ann: the kiln at the studio broke down.", thread="conv-7")["chunk_id"]
    b = mem.remember("Bo: then we fire the bowls next week instead.", thread="conv-7")["chunk_id"]
    c = mem.remember("An unrelated note about the tax office.", thread="other")["chunk_id"]
    assert _thread(mem, a) == _thread(mem, b) == "conv-7" and _thread(mem, c) == "other"
    hist = mem.history(b)
    assert hist["thread"]["id"] == "conv-7"
    assert hist["thread"]["before"] == [{"chunk_id": a, "content": "Ann: the kiln at the studio broke down."}]
    assert "after" not in hist["thread"]  # c is in another thread
    with pytest.raises(InvalidArgument):
        mem.remember("Reserved prefix must be refused.", thread=th.INFERRED_PREFIX + "x")


@neutral
def test_inferred_threads_by_session_and_time_not_across_sources_or_far_apart(mem: Memory) -> None:
    s1 = [mem.remember(f"Ann: turn {i} of the first session about pottery.", source="chat",
                       metadata={"session": 1}, valid_from=DAY1)["chunk_id"] for i in range(3)]
    s2 = mem.remember("Ann: the second session starts.", source="chat", metadata={"session": 2},
                      valid_from=DAY1)["chunk_id"]
    assert len({_thread(mem, c) for c in s1}) == 1
    assert _thread(mem, s2) != _thread(mem, s1[0])  # another session: another thread
    # Without sessions: same source and close in time joins; another source or a far-apart date does not.
    t1 = mem.remember("Bo: we met at the market this morning.", source="talk", valid_from=DAY1)["chunk_id"]
    t2 = mem.remember("Bo: and bought three pears.", source="talk", valid_from=DAY1)["chunk_id"]
    t3 = mem.remember("Bo: a commit message about the parser.", source="code", valid_from=DAY1)["chunk_id"]
    t4 = mem.remember("Bo: the code review went fine.", source="code", valid_from=DAY2)["chunk_id"]
    assert _thread(mem, t1) == _thread(mem, t2)
    assert _thread(mem, t3) not in (_thread(mem, t2), None)
    assert _thread(mem, t4) != _thread(mem, t3)
    # No source and no session: nothing says two memories belong together.
    n1 = mem.remember("A note without a source.")["chunk_id"]
    n2 = mem.remember("Another note without a source.")["chunk_id"]
    assert _thread(mem, n1) != _thread(mem, n2)


def test_thread_rules_pure() -> None:
    prev = th.Previous("auto:t_1", th.BY_TIME, "chat", None, DAY1, "2023-05-08T14:00:00+00:00")
    assert th.joins(prev, "chat", None, DAY1, "2023-05-08T14:10:00+00:00")
    assert not th.joins(prev, "chat", None, DAY1, "2023-05-08T15:00:00+00:00")  # written an hour later
    assert not th.joins(prev, "mail", None, DAY1, "2023-05-08T14:01:00+00:00")
    named = th.Previous("conv", th.BY_CLIENT, "chat", None, DAY1, DAY1)
    assert th.choose(None, named, "chat", None, DAY1, DAY1, "t_2") == ("auto:t_2", th.BY_TIME)


# ---------------------------------------------------------------- context vectors


def _vecs(mem: Memory, table: str, ids: list[str]) -> dict[str, np.ndarray]:
    """The vectors of `ids` in `table`: chunk_ctx_vec, or chunk_vec_f32 for the own vectors (on
    PostgreSQL chunk_vec, the one own-vector table)."""
    from store.postgres.derived import as_vector

    db = mem.store.reader()
    col = "seq" if table == "chunk_vec_f32" else _key(mem)
    if mem.engine == "postgres" and table == "chunk_vec_f32":
        table = "chunk_vec"
    out = {}
    for cid in ids:
        row = db.execute(f"select v.embedding from chunks c join {table} v on v.{col} = c.seq where c.id = ?",
                         (cid,)).fetchone()
        if row:
            out[cid] = as_vector(row[0])
    return out


def _window_vec(e5: Any, *texts: str) -> np.ndarray:
    """What the worker embeds for a window: the turns in thread order, each clipped to its share."""
    return e5.embed_passages([th.window_text(list(texts), lambda t, n: e5.clip(t, max_tokens=n))])[0]


TURNS = ("Ann: did you go anywhere nice?", "Bo: I went to the lake with my sister.", "Ann: how was the water?",
         "Bo: cold, but we swam anyway.")


@neutral
def test_context_windows_embed_the_text_and_refresh_after_update_and_forget(mem: Memory, e5: Any) -> None:
    ids = [mem.remember(text, thread="c1")["chunk_id"] for text in TURNS]
    assert mem.flush()
    ctx = _vecs(mem, "chunk_ctx_vec", ids)
    assert set(ctx) == set(ids)
    assert np.allclose(ctx[ids[1]], _window_vec(e5, *TURNS[:3]), atol=1e-5)
    assert np.allclose(ctx[ids[0]], _window_vec(e5, *TURNS[:2]), atol=1e-5)  # the first turn: itself + next
    assert not np.allclose(ctx[ids[1]], _vecs(mem, "chunk_vec_f32", [ids[1]])[ids[1]], atol=1e-3)
    mem.forget(ids[2])  # ids[1] and ids[3] now neighbour each other: both windows are queued again
    queued = {r[0] for r in mem.store.reader().execute("select c.id from ctx_queue q join chunks c on c.seq = q.chunk_seq")}
    assert queued == {ids[1], ids[3]}
    assert mem.flush()
    ctx = _vecs(mem, "chunk_ctx_vec", ids)
    assert np.allclose(ctx[ids[1]], _window_vec(e5, TURNS[0], TURNS[1], TURNS[3]), atol=1e-5)
    assert np.allclose(ctx[ids[3]], _window_vec(e5, TURNS[1], TURNS[3]), atol=1e-5)
    (live,) = mem.store.reader().execute(f"select live from chunk_ctx_vec where {_key(mem)} = (select seq from "
                                         "chunks where id = ?)", (ids[2],)).fetchone()
    assert not live  # closed with its memory
    new_text = "Ann: did you go anywhere nice last weekend?"
    new = mem.update(ids[0], new_text)["chunk_id"]
    assert mem.flush()
    assert _thread(mem, new) == "c1"
    ctx = _vecs(mem, "chunk_ctx_vec", [*ids, new])
    assert np.allclose(ctx[ids[1]], _window_vec(e5, new_text, TURNS[1], TURNS[3]), atol=1e-5)
    assert np.allclose(ctx[new], _window_vec(e5, new_text, TURNS[1]), atol=1e-5)  # keeps its place: first


class _Counting:
    """The real model, recording every text it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model, self.dim, self.texts = inner, inner.model, inner.dim, []

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed_passages(texts)


@neutral
def test_context_queue_waits_for_own_vectors_and_resumes_after_restart(db_target: Any, cfg: Any, e5: Any) -> None:
    path = db_target
    first = _Counting(e5)
    with Memory(path, config=cfg, embedder=first, start_worker=False) as m:
        ids = [m.remember(text, thread="c3")["chunk_id"] for text in TURNS[:3]]
        m.remember("A note in no thread at all.")
        assert (m.pending_embeddings(), m.pending_context()) == (4, 3)
        st = m.stats()  # memory_stats says recall is not at full strength yet, per namespace too
        assert (st["pending_embeddings"], st["pending_context"]) == (4, 3)
        assert m.stats(namespace="elsewhere")["pending_context"] == 0
        assert m.embed_pending(max_batches=1) == 4  # the first batch is own vectors only
        assert (m.pending_embeddings(), m.pending_context()) == (0, 3)
        assert first.texts[:4] == [*TURNS[:3], "A note in no thread at all."]  # then the centre's probe texts
        assert not any("\n" in x for x in first.texts)  # no window yet
        own = _vecs(m, "chunk_vec_f32", ids)
        assert _vecs(m, "chunk_ctx_vec", ids) == {}
    again = _Counting(e5)
    with Memory(path, config=cfg, embedder=again) as m:  # the queue is on disk: the new worker resumes it
        assert m.flush(timeout=60)
        assert m.pending_context() == 0 and m.stats()["pending_context"] == 0
        assert set(_vecs(m, "chunk_ctx_vec", ids)) == set(ids)
        assert sorted(again.texts) == sorted([th.window_text(list(TURNS[:2]), lambda t, n: e5.clip(t, max_tokens=n)),
                                              th.window_text(list(TURNS[:3]), lambda t, n: e5.clip(t, max_tokens=n)),
                                              th.window_text(list(TURNS[1:3]), lambda t, n: e5.clip(t, max_tokens=n))])
        after = _vecs(m, "chunk_vec_f32", ids)
        assert all(after[k].tobytes() == own[k].tobytes() for k in ids)  # no own vector embedded twice


def _mean(*parts: tuple[int, np.ndarray]) -> np.ndarray:
    """The context vector of context_mode "mean", computed here from its definition (MEAN_DECAY 1.0: equal weights)."""
    total = sum(vec for _, vec in parts)
    return total / np.linalg.norm(total)


@neutral
def test_mean_context_vectors_need_no_model_call(db_target: Any, cfg: Any, e5: Any) -> None:
    counting = _Counting(e5)
    mean_cfg = dataclasses.replace(cfg, context_mode="mean")
    with Memory(db_target, config=mean_cfg, embedder=counting, start_worker=False) as m:
        ids = [m.remember(text, thread="c5")["chunk_id"] for text in TURNS[:3]]
        while m.pending_embeddings():
            m.embed_pending(max_batches=1)
        embedded = len(counting.texts)
        assert m.pending_context() == 3
        assert m.flush(timeout=60)
        assert m.pending_context() == 0 and m.stats()["pending_context"] == 0
        assert len(counting.texts) == embedded  # the windows cost no model call
        own, ctx = _vecs(m, "chunk_vec_f32", ids), _vecs(m, "chunk_ctx_vec", ids)
        a, b, c = (own[i] for i in ids)
        assert np.allclose(ctx[ids[0]], _mean((0, a), (1, b)), atol=1e-5)
        assert np.allclose(ctx[ids[1]], _mean((1, a), (0, b), (1, c)), atol=1e-5)
        assert np.allclose(ctx[ids[2]], _mean((1, b), (0, c)), atol=1e-5)
        assert not np.allclose(ctx[ids[1]], b, atol=1e-3)  # the neighbours count
        # A new turn: its neighbour's window waits for the new own vector, then is remade with it.
        d_id = m.remember(TURNS[3], thread="c5")["chunk_id"]
        assert m.pending_context() == 2  # the new turn's window and its neighbour's
        assert m.flush(timeout=60)
        own, ctx = _vecs(m, "chunk_vec_f32", [*ids, d_id]), _vecs(m, "chunk_ctx_vec", [*ids, d_id])
        assert np.allclose(ctx[ids[2]], _mean((1, own[ids[1]]), (0, own[ids[2]]), (1, own[d_id])), atol=1e-5)
        assert np.allclose(ctx[d_id], _mean((1, own[ids[2]]), (0, own[d_id])), atol=1e-5)


@neutral
def test_a_mean_window_whose_member_has_no_own_vector_waits_for_it(db_target: Any, cfg: Any, e5: Any) -> None:
    with Memory(db_target, config=dataclasses.replace(cfg, context_mode="mean"), embedder=e5,
                start_worker=False) as m:
        ids = [m.remember(text, thread="c6")["chunk_id"] for text in TURNS[:2]]
        # Before any own vector: nothing can be made, both windows stay queued behind any other.
        assert embed_work.context_means(m.store) == 0
        assert m.pending_context() == 2 and _vecs(m, "chunk_ctx_vec", ids) == {}
        assert m.flush(timeout=60)  # own vectors first, then the windows
        own, ctx = _vecs(m, "chunk_vec_f32", ids), _vecs(m, "chunk_ctx_vec", ids)
        assert np.allclose(ctx[ids[0]], _mean((0, own[ids[0]]), (1, own[ids[1]])), atol=1e-5)


def _live(mem: Memory, cid: str) -> bool | None:
    """The `live` flag of a memory's context vector, None when it has none."""
    row = mem.store.reader().execute(f"select v.live from chunk_ctx_vec v join chunks c on v.{_key(mem)} = c.seq "
                                     "where c.id = ?", (cid,)).fetchone()
    return None if row is None else bool(row[0])


def _staged(db_target: Any, cfg: Any, embedder: Any, thread: str) -> tuple[Memory, list[str]]:
    """A staged-mode Memory (no worker) holding TURNS in `thread`, own vectors written, no window made yet."""
    m = Memory(db_target, config=dataclasses.replace(cfg, context_mode="staged"), embedder=embedder,
               start_worker=False)
    ids = [m.remember(text, thread=thread)["chunk_id"] for text in TURNS]
    while m.pending_embeddings():
        m.embed_pending(max_batches=1)
    return m, ids


@neutral
def test_staged_context_vectors_are_the_mean_at_once_then_the_text(db_target: Any, cfg: Any, e5: Any) -> None:
    counting = _Counting(e5)
    m, ids = _staged(db_target, cfg, counting, "c7")
    with m:
        lone = m.remember("Cy: a thread of one turn has no window.", thread="c8")["chunk_id"]
        m.embed_pending(max_batches=1)  # its own vector
        embedded = len(counting.texts)
        assert m.pending_context() == 5 and _vecs(m, "chunk_ctx_vec", ids) == {}
        assert m.embed_pending(max_batches=1) == 5  # the next batch: every window's mean, no model call
        assert len(counting.texts) == embedded
        # Still to embed by the model: the four windows; the lone turn's had nothing to embed and is done.
        assert m.pending_context() == 4 and m.stats()["pending_context"] == 4
        own, ctx = _vecs(m, "chunk_vec_f32", ids), _vecs(m, "chunk_ctx_vec", [*ids, lone])
        assert set(ctx) == set(ids)
        for i, cid in enumerate(ids):
            members = [(abs(j - i), own[ids[j]]) for j in range(max(0, i - 1), min(len(ids), i + 2))]
            assert np.allclose(ctx[cid], embed_work.window_mean(members), atol=1e-6)
        assert embed_work.context_means(m.store, staged=True) == 0  # each has its provisional vector
        assert m.embed_pending(max_batches=1) == 4  # then the text windows, through the model
        assert m.pending_context() == 0 and m.stats()["pending_context"] == 0
        assert len(counting.texts) == embedded + 4
        ctx = _vecs(m, "chunk_ctx_vec", ids)
        for i, cid in enumerate(ids):  # what context_mode "text" writes: the window's text embedded
            want = _window_vec(e5, *TURNS[max(0, i - 1):i + 2])
            assert float(np.abs(ctx[cid] - want).max()) <= 1e-6, cid
        assert not np.allclose(ctx[ids[1]], embed_work.window_mean([(1, own[ids[0]]), (0, own[ids[1]]),
                                                                     (1, own[ids[2]])]), atol=1e-3)
        assert m.embed_pending() == 0  # nothing left: a text vector is never overwritten by a mean


@neutral
def test_staged_forget_and_update_leave_no_stale_live_vector(db_target: Any, cfg: Any, e5: Any) -> None:
    m, ids = _staged(db_target, cfg, e5, "c9")
    with m:
        # The provisional pass reads the windows; a forget commits before it writes.
        read = m.store.context_queued_vectors(64, unmade=True)
        assert len(read) == 4
        m.forget(ids[2])
        with m.store.atomic() as tx:  # the forgotten one is closed, its neighbours' windows moved on (gen)
            assert m.store.write_contexts(tx, [(s, g, embed_work.window_mean(v)) for s, g, v in read], keep=True) == 1
        assert _live(m, ids[2]) is None and _live(m, ids[0]) is True
        if m.engine == "postgres":  # the windows not written were claimed by the read: hand them back
            m.store.release_claims()
        # The neighbours' means, made from the windows without ids[2], whose own window is done (it has none).
        assert m.embed_pending(max_batches=1) == 3 and m.pending_context() == 3
        own, ctx = _vecs(m, "chunk_vec_f32", ids), _vecs(m, "chunk_ctx_vec", ids)
        assert np.allclose(ctx[ids[1]], _mean((1, own[ids[0]]), (0, own[ids[1]]), (1, own[ids[3]])), atol=1e-5)
        assert np.allclose(ctx[ids[3]], _mean((1, own[ids[1]]), (0, own[ids[3]])), atol=1e-5)
        # An update during the provisional life: the old memory's vector goes dead, the new one gets a mean.
        new_text = "Ann: did you go anywhere nice last weekend?"
        new = m.update(ids[0], new_text)["chunk_id"]
        assert _live(m, ids[0]) is False
        m.embed_pending(max_batches=1)  # the new own vector
        assert m.embed_pending(max_batches=1) == 1  # its window, the only one without a vector
        own = _vecs(m, "chunk_vec_f32", [new, ids[1]])
        assert np.allclose(_vecs(m, "chunk_ctx_vec", [new])[new], _mean((0, own[new]), (1, own[ids[1]])), atol=1e-5)
        hits = m.recall("did you go anywhere nice?", lanes=["vector"], top_k=10)["hits"]
        assert not {ids[0], ids[2]} & {h["chunk_id"] for h in hits}
        assert m.flush(timeout=60)
        assert m.pending_context() == 0
        ctx = _vecs(m, "chunk_ctx_vec", [new, ids[1], ids[3]])
        assert np.allclose(ctx[ids[1]], _window_vec(e5, new_text, TURNS[1], TURNS[3]), atol=1e-6)
        assert np.allclose(ctx[new], _window_vec(e5, new_text, TURNS[1]), atol=1e-6)
        assert (_live(m, ids[0]), _live(m, ids[2]), _live(m, new)) == (False, None, True)


@neutral
def test_window_requeued_while_embedded_is_not_dequeued(db_target: Any, cfg: Any, e5: Any) -> None:
    with Memory(db_target, config=cfg, embedder=e5, start_worker=False) as m:
        ids = [m.remember(text, thread="c4")["chunk_id"] for text in TURNS[:3]]
        m.embed_pending(max_batches=1)
        read = {seq: (gen, parts) for seq, gen, parts in m.store.context_queued(8)}
        middle = m.store.chunk_row(None, ids[1], "default")["seq"]
        assert read[middle][1] == list(TURNS[:3])
        m.forget(ids[2])  # changes the middle window while its old text is "being embedded"
        vec = e5.embed_passages([th.window_text(read[middle][1])])[0]
        with m.store.atomic() as tx:
            assert m.store.write_contexts(tx, [(middle, read[middle][0], vec)]) == 0
        # Still queued, with its new text (read once: on PostgreSQL a read claims the window).
        assert {seq: parts for seq, _, parts in m.store.context_queued(8)}.get(middle) == list(TURNS[:2])


def test_window_text_clips_each_turn_to_its_share(e5: Any) -> None:
    long = "Bo: " + "the lake was very cold that morning, " * 200
    text = th.window_text(["Ann: short.", long, "Ann: next."], lambda t, n: e5.clip(t, max_tokens=n))
    lines = text.split("\n")
    assert lines[0] == "Ann: short." and lines[2] == "Ann: next."
    assert len(lines[1]) < len(long) and e5.clip(text) == text  # the whole window fits e5's 512 tokens
    assert th.window_text(["abc", "x" * 1000]) == "abc\n" + "x" * (th.WINDOW_TOKENS // 2 * th.CHARS_PER_TOKEN)


@neutral
def test_repair_finds_and_fixes_context_vector_drift(db_target: Any, cfg: Any, e5: Any) -> None:
    """`memlane repair` checks context vectors as it checks own vectors: a missing one is re-queued, a
    wrong live flag fixed, one of the wrong namespace (or, on SQLite, an orphan) removed and re-made."""
    from store import maintenance

    def check(apply: bool) -> tuple[Any, Any]:
        if isinstance(db_target, str):
            return maintenance.check_pg(db_target, "pg", apply)
        return maintenance.check_file(Path(db_target), apply)

    with Memory(db_target, config=cfg, embedder=e5) as mem:
        ids = [mem.remember(text, thread="c1")["chunk_id"] for text in TURNS]
        lone = mem.remember("Cy: a thread of one turn has no window.", thread="c2")["chunk_id"]
        assert mem.flush()
        key = _key(mem)
        seq = {i: mem.store.reader().execute("select seq from chunks where id = ?", (i,)).fetchone()[0]
               for i in [*ids, lone]}
        good = _vecs(mem, "chunk_ctx_vec", ids)
    rep, done = check(False)
    assert rep.problems == 0 and rep.ctx_vectors == 4 and done is None, rep.as_dict()
    if isinstance(db_target, str):
        import psycopg

        with psycopg.connect(db_target, autocommit=True) as conn:
            conn.execute("delete from chunk_ctx_vec where seq = %s", (seq[ids[1]],))
            conn.execute("update chunk_ctx_vec set live = false where seq = %s", (seq[ids[2]],))
            conn.execute("update chunk_ctx_vec set namespace = 'other' where seq = %s", (seq[ids[3]],))
    else:
        from store.sqlite.db import connect

        conn = connect(db_target)
        conn.execute("delete from chunk_ctx_vec where rowid = ?", (seq[ids[1]],))
        conn.execute("update chunk_ctx_vec set live = 0 where rowid = ?", (seq[ids[2]],))
        (emb,) = conn.execute("select embedding from chunk_ctx_vec where rowid = ?", (seq[ids[3]],)).fetchone()
        conn.execute("delete from chunk_ctx_vec where rowid = ?", (seq[ids[3]],))  # vec0: no update of a partition key
        conn.execute("insert into chunk_ctx_vec(rowid, namespace, live, lang, embedding) values (?, 'other', 1, 'en', ?)",
                     (seq[ids[3]], emb))
        conn.execute("insert into chunk_ctx_vec(rowid, namespace, live, lang, embedding) values (99999, 'default', 1, "
                     "'en', ?)", (emb,))
        conn.close()
    rep, done = check(False)
    orphans = 0 if isinstance(db_target, str) else 1  # PostgreSQL: a foreign key
    assert (rep.ctx_missing, rep.ctx_wrong_live, rep.ctx_wrong_meta, len(rep.ctx_orphans)) == (
        [seq[ids[1]]], [seq[ids[2]]], [seq[ids[3]]], orphans), rep.as_dict()
    assert rep.problems == 3 + orphans and done is None
    assert check(False)[0].problems == 3 + orphans  # the dry run changed nothing
    rep, done = check(True)
    assert done is not None and (done["ctx_requeued"], done["ctx_removed"], done["relived"]) == (2, 1 + orphans, 1)
    with Memory(db_target, config=cfg, embedder=e5) as mem:
        assert mem.flush()
        got = _vecs(mem, "chunk_ctx_vec", ids)
        assert set(got) == set(ids) and all(np.allclose(got[i], good[i], atol=1e-5) for i in ids)
        rows = mem.store.reader().execute(f"select namespace, live from chunk_ctx_vec where {key} = ?",
                                          (seq[ids[3]],)).fetchall()
        assert [(r[0], bool(r[1])) for r in rows] == [("default", True)]
    rep, _ = check(False)
    assert rep.problems == 0 and rep.ctx_vectors == 4 and rep.ctx_queued == 0, rep.as_dict()


@neutral
def test_context_vectors_move_and_are_remade_by_reembedding(mem: Memory) -> None:
    from contract.validate import now_iso

    ids = [mem.remember(t, thread="c2", namespace="a") for t in ("Ann: the bus was late again.",
                                                                 "Bo: take the early train tomorrow.")]
    assert mem.flush()
    before = _vecs(mem, "chunk_ctx_vec", [r["chunk_id"] for r in ids])
    mem.rename_namespace("a", "b")
    db = mem.store.reader()
    assert db.execute("select count(*) from chunk_ctx_vec where namespace = 'b'").fetchone()[0] == 2
    with mem.store.atomic() as tx:
        mem.store.DERIVED.reset_vectors(tx, mem.embedder.dim, now_iso())
    assert db.execute("select count(*) from chunk_ctx_vec").fetchone()[0] == 0
    assert mem.pending_context() == 2  # re-embedding queues the windows again
    assert mem.flush()
    after = _vecs(mem, "chunk_ctx_vec", [r["chunk_id"] for r in ids])
    assert set(after) == set(before)
    assert all(np.allclose(after[k], before[k], atol=1e-5) for k in before)
    hits = mem.recall("which train should I take", namespace="b", top_k=2)["hits"]
    assert hits and "context" not in {lane for h in hits for lane in h["ranks"]}  # merged into "vector"
    assert hits[0]["thread"]["id"] == "c2"
    mem.config = dataclasses.replace(mem.config, context_fusion="lane")  # recall reads config per call
    hits = mem.recall("which train should I take", namespace="b", top_k=2)["hits"]
    assert "context" in {lane for h in hits for lane in h["ranks"]}


# ---------------------------------------------------------------- time grounding

BASE = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(("text", "want"), [
    ("I went to a support group yesterday.", [("day", date(2023, 5, 7))]),
    ("Two days ago we ran; last week I painted.", [("day", date(2023, 5, 6)), ("week", date(2023, 5, 1))]),
    ("Next month we move, and last year we moved too.", [("month", date(2023, 6, 1)), ("year", date(2022, 1, 1))]),
    ("We met last Friday and meet again this weekend.", [("day", date(2023, 5, 5)), ("day", date(2023, 5, 13))]),
    ("The day before yesterday it rained.", [("day", date(2023, 5, 6))]),
    ("我昨天去了书店，上周三见了老王。", [("day", date(2023, 5, 7)), ("day", date(2023, 5, 3))]),
    ("下个月去北京，三天前买了票。", [("month", date(2023, 6, 1)), ("day", date(2023, 5, 5))]),
    ("上周很忙，前天才休息，去年也这样。", [("week", date(2023, 5, 1)), ("day", date(2023, 5, 6)),
                                        ("year", date(2022, 1, 1))]),
    ("You may go to the market.", []),
])
def test_relative_times_resolve_against_valid_from(text: str, want: list[tuple[str, date]]) -> None:
    assert tg.resolve(text, BASE) == want


@neutral
def test_grounded_dates_are_searchable_and_shown(mem: Memory) -> None:
    cid = mem.remember("Caroline: I went to the LGBTQ support group yesterday.", source="chat",
                       valid_from="2023-05-08T13:56:00+00:00")["chunk_id"]
    mem.remember("Caroline: the painting class is on Tuesdays.", source="chat", valid_from="2023-05-08T13:57:00+00:00")
    zh = mem.remember("老王说他上个月搬到了杭州。", source="chat", valid_from="2024-03-15T08:00:00+00:00")["chunk_id"]
    mem.flush()
    hits = mem.recall("When did Caroline go to the support group?", top_k=3)["hits"]
    assert hits[0]["chunk_id"] == cid and hits[0]["dates"].startswith("7 May 2023")
    lex = mem.recall("support group in May 2023", lanes=["meta"], top_k=3)["hits"]
    assert lex and lex[0]["chunk_id"] == cid
    assert "2024年2月" in next(h for h in mem.recall("老王什么时候搬到杭州", top_k=3)["hits"]
                               if h["chunk_id"] == zh)["dates"]


# ---------------------------------------------------------------- export and import


@neutral
def test_export_import_round_trips_threads_and_dates(mem: Memory, request: pytest.FixtureRequest, tmp_path: Path,
                                                      cfg: Any, e5: Any) -> None:
    ids = [mem.remember(t, source="chat", metadata={"session": 1}, valid_from=DAY1)["chunk_id"]
           for t in ("Ann: I adopted a cat yesterday.", "Bo: what is its name?", "Ann: Pixel.")]
    mem.update(ids[1], "Bo: what did you name it?")
    mem.flush()
    lines = [json.dumps(r) for r in mem.export_records()]
    cols = "id, thread, thread_by, valid_until is null"
    order = "thread_pos, seq"
    if mem.engine == "postgres":
        from conftest import new_database

        copy: Any = new_database(request.getfixturevalue("pg_server"))
    else:
        copy = tmp_path / "copy.db"
    with Memory(copy, config=cfg, embedder=e5) as other:
        other.import_records(lines)
        other.flush()
        for m in (mem, other):
            m.rows = m.store.reader().execute(f"select {cols} from chunks order by {order}").fetchall()  # type: ignore[attr-defined]
            m.dates = m.store.reader().execute(  # type: ignore[attr-defined]
                f"select c.id, w.dates from chunks c join chunks_when w on w.{_key(m)} = c.seq order by c.id").fetchall()
            m.ctx = m.store.reader().execute("select count(*) from chunk_ctx_vec where live").fetchone()  # type: ignore[attr-defined]
        assert other.rows == mem.rows  # type: ignore[attr-defined]
        assert other.dates == mem.dates and other.dates[0][1].startswith("7 May 2023")  # type: ignore[attr-defined]
        assert other.ctx == mem.ctx == (3,)  # type: ignore[attr-defined]
        view = other.history(ids[2])["thread"]
        assert [n["content"] for n in view["before"]] == ["Bo: what did you name it?", "Ann: I adopted a cat yesterday."]


# ---------------------------------------------------------------- replies to a question

from recall import rank  # noqa: E402
from recall.query import QueryInfo  # noqa: E402


def test_a_memory_asks_when_its_question_holds_the_query_words() -> None:
    terms = QueryInfo("What does Bo's necklace mean?").relevance_terms
    assert rank.asks(terms, "Ann: Hi Bo! Love the necklace, any special meaning to it?")
    assert rank.asks(terms, "Ann: Nice! Does the necklace mean something to you?)")  # closing bracket after "?"
    # The words are in what it states; the trailing question is small talk.
    assert not rank.asks(terms, "Bo: My necklace means a lot, it was my grandmother's. How about you?")
    assert not rank.asks(terms, "Ann: Love the necklace.")  # no question at all
    assert not rank.asks(terms, "Ann: How was the weekend?")  # a question, but about something else


NECKLACE = ["Ann: How was the trip to the coast last week?",
            "Bo: Windy, but we found a quiet beach near the harbour.",
            "Ann: Love the necklace you wore in the photo! Any special meaning behind the necklace?",
            "Bo: My grandmother gave it to me when I left home, so it reminds me of her.",
            "Ann: The bakery on the corner closed for the summer."]


@neutral
def test_a_question_hands_its_place_to_the_reply_after_it_in_its_thread(mem: Memory) -> None:
    ids = [mem.remember(t, thread="chat-1")["chunk_id"] for t in NECKLACE]
    assert mem.flush()
    query = {"query": "What does Bo's necklace mean to him?", "min_relevance": 0}
    hits = [h["chunk_id"] for h in mem.recall(**query)["hits"]]
    assert hits[:2] == [ids[3], ids[2]]  # the reply, then the question it answers
    mem.config = dataclasses.replace(mem.config, replies=False)  # recall reads config per call
    assert mem.recall(**query)["hits"][0]["chunk_id"] == ids[2]


@neutral
def test_no_reply_is_taken_from_a_thread_inferred_from_write_time(mem: Memory) -> None:
    # Same source, written together: one inferred thread, which may mix unrelated memories.
    ids = [mem.remember(t, source="notes", valid_from=DAY1)["chunk_id"] for t in NECKLACE]
    assert mem.flush()
    assert len({_thread(mem, c) for c in ids}) == 1
    hits = mem.recall("What does Bo's necklace mean to him?", min_relevance=0)["hits"]
    assert hits[0]["chunk_id"] == ids[2]


# ---------------------------------------------------------------- a thread prior

from lang.predicates import UNIT  # noqa: E402
from recall.fusion import Fused  # noqa: E402
from recall.query import Plan  # noqa: E402
from store.protocol import Filter  # noqa: E402


@neutral
def test_top_hits_of_one_asserted_thread_lend_each_other_weight(mem: Memory) -> None:
    a = [mem.remember(f"Ann: the pottery class, part {i}.", thread="chat-a")["chunk_id"] for i in range(3)]
    b = [mem.remember(f"Bo: the marathon, part {i}.", metadata={"session": "s2"}, source="chat")["chunk_id"]
         for i in range(2)]
    # Same source, written together: a thread inferred from write time, which asserts nothing.
    inferred = [mem.remember(f"Note {i} about the harbour.", source="notes", valid_from=DAY1)["chunk_id"]
                for i in range(2)]
    everyone = [*a, *b, *inferred]
    seq = {c: mem.store.reader().execute("select seq from chunks where id = ?", (c,)).fetchone()[0] for c in everyone}
    rows = mem.store.rank_rows(list(seq.values()))  # the thread column: only a client's or a session's
    assert {s: row[4] for s, row in rows.items() if row[4] is not None} == {
        **{seq[c]: "chat-a" for c in a}, **{seq[c]: _thread(mem, b[0]) for c in b}}
    assert all(rows[seq[c]][4] is None and _thread(mem, c) for c in inferred)  # in a thread, not an asserted one

    # b's first turn leads on fused score; a's turns are three of the seven candidates, b's two.
    fused = Fused({seq[c]: 0.010 for c in everyone} | {seq[b[0]]: 0.011}, {seq[c]: {"vector": 1} for c in everyone}, {})
    plan = Plan(Filter("default"), QueryInfo("What did Ann make in the pottery class?"), 10, cfg=mem.config)
    out = rank.thread_prior(mem.store, plan, fused, dict(fused.scores))
    total = sum(fused.scores.values())
    assert out[seq[a[0]]] == pytest.approx(0.010 + rank.W_THREAD * UNIT * 0.030 / total)
    assert out[seq[b[0]]] == pytest.approx(0.011 + rank.W_THREAD * UNIT * 0.021 / total)
    # No asserted thread: a thread of its own, however many top hits its inferred thread holds.
    assert all(out[seq[c]] == pytest.approx(0.010 + rank.W_THREAD * UNIT * 0.010 / total) for c in inferred)
    assert out[seq[a[1]]] > out[seq[b[0]]]  # the thread that holds more of the top moves up past a stray lead
    assert rank.thread_prior(mem.store, plan, fused, {seq[c]: 0.010 for c in inferred}) == \
        {seq[c]: 0.010 for c in inferred}  # no candidate in an asserted thread: the scores as they were
