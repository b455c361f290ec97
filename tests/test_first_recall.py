"""The first recall after a daemon starts is as fast as the ones after it (issue 29): the start-up warms
what a recall pays for once (the model, the lexicon, the segmenter, the index pages) before /health is ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time

import httpx
import pytest
from daemon_util import mcp_session, running_daemon
from mcp.types import CallToolResult

pytestmark = pytest.mark.e2e

QUERIES = ["what does Alice drink in the morning", "莉莉喜欢什么运动", "where did Bob move last year",
           "project deadline for the Kestrel launch", "谁负责数据库迁移"]
FACTS = ["Alice drinks green tea every morning", "莉莉每周六去游泳", "Bob moved to Lisbon in March",
         "The Kestrel launch is due on 14 May", "王伟负责数据库迁移到 PostgreSQL"]


async def _remember(d) -> None:
    async with mcp_session(d, "http") as s:
        for i in range(40):
            res = await s.call_tool("memory_remember", {"content": f"{FACTS[i % len(FACTS)]} (note {i})"})
            assert not res.is_error, res


async def _recall_times(d, n: int) -> list[float]:
    out = []
    async with mcp_session(d, "http") as s:
        # One cheap call first, so the client's own first-call costs are not counted against the daemon's recall;
        # and the client's validator of memory_recall's output schema compiled (the SDK compiles it at a tool's
        # first result, about 60 times the cost of a validation) on a result made here, not on the first recall's.
        assert not (await s.call_tool("memory_stats", {})).is_error
        with contextlib.suppress(RuntimeError):
            await s.validate_tool_result("memory_recall", CallToolResult(content=[], structured_content={"hits": []}))
        for i in range(n):
            t0 = time.perf_counter()
            # A new question each time: a repeated one would skip its embedding (the query cache).
            query = f"{QUERIES[i % len(QUERIES)]} {i}"
            res = await s.call_tool("memory_recall", {"query": query})
            out.append(time.perf_counter() - t0)
            assert not res.is_error, res
    return out


def _cold_ratios(times: list[float]) -> list[tuple[str, float, float]]:
    """For the first English and the first Chinese question: its first recall and the median of its later ones.

    Like with like: the later recalls of the same question. They cost different amounts: one that names
    someone most memories mention embeds the question a second time (relevance, "what is asked").
    """
    out = []
    for i in range(2):
        same = times[i + len(QUERIES)::len(QUERIES)]
        out.append((QUERIES[i], times[i], statistics.median(same)))
    return out


# Without the start-up's warm-up (and with the relevance cohort already on disk), the first English recall took
# about 1.6x the later ones here, the first Chinese one about 10x (rjieba and the Chinese analysis load: 344-524
# ms against 32-47 ms). One sample can be 2x on a busy machine too (a CI run: 103 ms against 50 ms), so a start
# counts as cold only when each of ATTEMPTS starts shows it: a lost warm-up fails them all, a hiccup does not.
ATTEMPTS = 3


def test_first_recall_after_start_is_warm(tmp_path):
    db = tmp_path / "memory.db"
    with running_daemon(tmp_path, db_path=db) as d:
        asyncio.run(_remember(d))
        # Every memory embedded before the stop, so the next start has no backlog competing with the recalls.
        deadline = time.monotonic() + 120
        while httpx.get(d.url + "/health", timeout=10).json()["pending_embeddings"] and time.monotonic() < deadline:
            time.sleep(0.2)
    seen = []
    for _ in range(ATTEMPTS):
        # A new start on the same file is what a user meets every morning.
        with running_daemon(tmp_path, db_path=db) as d:
            times = asyncio.run(_recall_times(d, 41))
        ratios = _cold_ratios(times)
        seen.append([(q, round(first * 1000), round(rest * 1000)) for q, first, rest in ratios])
        print("first recall, median of the later ones of its question (ms):", seen[-1])
        if all(first <= 2 * rest for _, first, rest in ratios):
            return
    pytest.fail(f"in each of {ATTEMPTS} starts a first recall took over twice the median of the later ones of "
                f"its question (question, first ms, median ms): {seen}")


def test_warm_up_also_runs_the_entity_extractor_on_both_languages(tmp_path, e5, monkeypatch):
    """The first Chinese name written after a start loaded rjieba's tagger for it (150 ms, the questions
    of the recall warm-up name nobody); the warm-up pays it, writing nothing."""
    import entity_resolve as er
    from config import load_config
    from memory import WARM_UP_WRITES, Memory

    seen: list[str] = []
    real = er.extract_mentions
    monkeypatch.setattr(er, "extract_mentions", lambda text, *a, **k: (seen.append(text), real(text, *a, **k))[1])
    with Memory(tmp_path / "w.db", config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as m:
        m.warm_up()
        assert m.store.count_memories("default") == 0  # nothing written
    assert set(WARM_UP_WRITES) <= set(seen) and any(er.has_cjk(text) for text in WARM_UP_WRITES)


def test_a_start_reads_the_older_chinese_names_in_pinyin(tmp_path, e5):
    """A database from before names were read in pinyin: the daemon gives its Chinese names their readings
    after its start (Memory.add_name_readings), so an English question naming Zhao Lei finds 赵磊's memory."""
    import sqlean

    import entity_resolve as er
    from config import load_config
    from memory import READINGS_META, Memory

    db = tmp_path / "memory.db"
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as m:
        zhao = m.remember("赵磊说明年的差旅预算会压缩百分之二十。")["chunk_id"]
        assert m.flush(60)
    with contextlib.closing(sqlean.connect(db)) as conn, conn:  # as an older version left it
        conn.execute("delete from entity_aliases where substr(norm, 1, 1) = ?", (er.ROMANISED,))
    query = {"query": "What did Zhao Lei say about next year's travel budget?", "lanes": ["entity"]}

    async def entity_hits(d) -> list[str]:
        async with mcp_session(d, "http") as s:
            res = await s.call_tool("memory_recall", query)
            assert not res.is_error, res
            return [h["chunk_id"] for h in res.structured_content["hits"]]

    with running_daemon(tmp_path, db_path=db) as d:
        deadline, got = time.monotonic() + 60, []
        while time.monotonic() < deadline and not (got := asyncio.run(entity_hits(d))):
            time.sleep(0.5)
    assert got == [zhao]
    with contextlib.closing(sqlean.connect(db)) as conn:
        assert conn.execute("select value from meta where key = ?", (READINGS_META,)).fetchone()
