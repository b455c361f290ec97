"""One recall embeds its query once, whatever the query cache holds (issue 15: nothing on the hot path
twice). With the cache off, the vector lane and relevance each embedded it before. A query about someone
most candidates mention is also embedded once without the name, for relevance (issue 27); with two cores,
beside the query itself and from the same model instance (issue 30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import embedder as embedder_mod
import memory
from config import load_config
from memory import Memory


def _recall_counting(tmp_path: Path, e5: Any, beside: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    """The hits of one recall about Alice, and the model calls it made: ("query", text) and ("beside", a, b)."""
    env = {"HOME": str(tmp_path), "MEMLANE_QUERY_CACHE_SIZE": "0", "MEMLANE_ASKED_BESIDE": "1" if beside else "0"}
    with Memory(tmp_path / f"m{int(beside)}.db", config=load_config(env), embedder=e5) as m:
        m.remember("Alice moved to Berlin last spring.")
        m.remember("爱丽丝喜欢柏林的冬天。")
        assert m.flush(60)
        m.recall("warm up")  # the relevance cohort is embedded once per embedder, on first use
        calls: list[Any] = []
        real, real_beside = m.embedder.embed_query, e5.embed_beside

        def counting(text: str) -> Any:
            calls.append(("query", text))
            return real(text)

        def counting_beside(first: str, second: str) -> Any:
            calls.append(("beside", first, second))
            return real_beside(first, second)

        m.embedder.embed_query = counting  # type: ignore[method-assign]
        e5.embed_beside = counting_beside
        try:
            hits = m.recall("Where does Alice live?")["hits"]
        finally:
            m.embedder.embed_query = real  # type: ignore[method-assign]
            e5.embed_beside = real_beside
    return hits, calls


def test_a_recall_embeds_its_query_once_with_the_cache_off(tmp_path: Path, e5: Any) -> None:
    hits, calls = _recall_counting(tmp_path, e5, beside=False)
    assert hits and "Berlin" in hits[0]["content"]
    # Both memories name Alice (爱丽丝): relevance reads what is asked about her.
    assert calls == [("query", "Where does Alice live?"), ("query", "Where does live?")]


def test_what_is_asked_is_embedded_beside_the_query_with_the_same_hits(tmp_path: Path, e5: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    serial, _ = _recall_counting(tmp_path / "serial", e5, beside=False)
    monkeypatch.setattr(memory, "spare_core", lambda: True)
    hits, calls = _recall_counting(tmp_path / "beside", e5, beside=True)
    assert calls == [("beside", "Where does Alice live?", "Where does live?")]
    assert [(h["content"], h["relevance"]) for h in hits] == [(h["content"], h["relevance"]) for h in serial]


def test_with_no_core_to_spare_what_is_asked_waits_its_turn(tmp_path: Path, e5: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "spare_core", lambda: False)
    hits, calls = _recall_counting(tmp_path, e5, beside=True)
    assert hits and calls == [("query", "Where does Alice live?"), ("query", "Where does live?")]


def test_a_spare_core_needs_two_and_others_load_below_all_but_one(monkeypatch: pytest.MonkeyPatch) -> None:
    table = ((1, 0.0, 0.0, False), (2, 0.4, 0.0, True), (2, 1.3, 0.0, False), (4, 2.5, 0.0, True),
             (4, 3.2, 0.0, False), (2, 1.3, 0.9, True), (2, 2.1, 0.9, False))  # cores, load, own load, spare
    for cores, load, own, spare in table:
        monkeypatch.setattr(embedder_mod, "usable_cores", lambda n=cores: n)
        monkeypatch.setattr(embedder_mod.os, "getloadavg", lambda x=load: (x, x, x))
        monkeypatch.setattr(embedder_mod._own_load, "cores", lambda x=own: x)
        assert embedder_mod.spare_core() is spare, (cores, load, own)


def test_the_own_load_follows_this_process_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    own = embedder_mod._OwnLoad()
    clock = [1000.0]
    used = [10.0]
    monkeypatch.setattr(embedder_mod.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(embedder_mod._OwnLoad, "_used", staticmethod(lambda: used[0]))
    own._at, own._cpu, own._rate = clock[0], used[0], 0.0
    for _ in range(60):  # a minute of one busy core, sampled every 2 s
        clock[0] += 2.0
        used[0] += 2.0
        rate = own.cores()
    assert 0.8 < rate <= 1.0
    clock[0] += 1.0  # within OWN_SAMPLE_S: the same reading
    used[0] += 5.0
    assert own.cores() == rate


def test_embed_beside_gives_each_text_its_own_vector(e5: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = "Where does Alice live?", "爱丽丝住在哪里？"
    alone = [e5.embed_query(first), e5.embed_query(second)]
    for cores in (2, 1):  # a thread beside, and one core: one after the other
        monkeypatch.setattr(embedder_mod, "usable_cores", lambda n=cores: n)
        pair = e5.embed_beside(first, second)
        assert np.array_equal(pair[0], alone[0]) and np.array_equal(pair[1], alone[1])
