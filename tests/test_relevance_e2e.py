"""Relevance an agent can trust (issue 27), through MCP on a real daemon: a question about an attribute
nobody stored gets nothing relevant, relevance never rises down the list, a Chinese memory that answers
an English question about a named person is not beaten by memories that share only the name, and a
verbatim quote finds its memory first among hundreds of near-identical ones."""

from __future__ import annotations

import random

import pytest
from daemon_util import Daemon, mcp_session, module_daemon
from test_agent_view_e2e import call, fill, ns

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]  # async tests, run by anyio's pytest plugin

# What an agent would store about Dana over a few weeks, with one memory written in Chinese (丹 is Dana).
DANA = [
    "Dana is allergic to penicillin; her doctor noted it after a bad reaction in 2023.",
    "Dana moved to Lisbon in March and works remotely for a Berlin design studio.",
    "Dana's birthday is on 14 July and she prefers dark chocolate to cake.",
    "Dana runs the Thursday book club and is reading The Left Hand of Darkness.",
    "Dana drives a green 2018 Subaru Outback and parks it at her sister's place.",
    "Dana prefers calls after 10 am Lisbon time and hates surprise video meetings.",
    "Dana and Marco are planning a hiking trip in the Dolomites in September.",
    "丹的猫叫「馒头」，是一只三岁的橘猫，去年秋天从动物收容所领养的。",
    "Our team retro is every second Friday at 3 pm in the small meeting room.",
    "The staging database was migrated to PostgreSQL 16 last week.",
    "Marco's daughter started violin lessons in October.",
    "I usually buy coffee beans from the roaster on Rua Augusta.",
]
CAT = DANA[7]
QUESTIONS = ["What is Dana's blood type?", "What is the name of Dana's cat?", "Where does Dana live?",
             "When is Dana's birthday?", "What car does Dana drive?", "Who is Dana's doctor?", "丹的猫叫什么？"]
# 360 notes that differ only in three numbers: the lanes read words and meaning, not the exact string.
NEAR = [f"daemon {p} client {c} note {j}: the build server moved to rack {j}"
        for p in range(6) for c in range(6) for j in range(10)]


daemon = module_daemon("relevance")


async def test_relevance_falls_when_the_asked_attribute_is_missing_and_never_rises_down_the_list(daemon: Daemon) -> None:
    space = ns()
    async with mcp_session(daemon, "http") as s:
        await fill(s, space, DANA)
        # Every Dana memory names her, none gives her blood type: nothing is that relevant.
        res, _ = await call(s, "memory_recall", {"query": "What is Dana's blood type?", "namespace": space,
                                                 "min_relevance": 0.9})
        assert res["hits"] == [], res["hits"][:2]
        res, _ = await call(s, "memory_recall", {"query": "What is Dana's blood type?", "namespace": space})
        assert all(h["relevance"] < 0.5 for h in res["hits"]), res["hits"][:2]
        for q in QUESTIONS:
            res, _ = await call(s, "memory_recall", {"query": q, "namespace": space, "min_relevance": 0})
            rel = [h["relevance"] for h in res["hits"]]
            assert rel == sorted(rel, reverse=True), (q, rel)
        # The attribute that is stored still comes first, and clearly relevant.
        res, _ = await call(s, "memory_recall", {"query": "What car does Dana drive?", "namespace": space})
        assert res["hits"][0]["content"] == DANA[4] and res["hits"][0]["relevance"] >= 0.9


async def test_a_chinese_memory_that_answers_is_not_beaten_by_memories_sharing_only_the_name(daemon: Daemon) -> None:
    space = ns()
    async with mcp_session(daemon, "sse") as s:
        await fill(s, space, DANA)
        for q in ("What is the name of Dana's cat?", "What is the name of the cat?", "Dana 的猫叫什么名字？"):
            res, _ = await call(s, "memory_recall", {"query": q, "namespace": space, "min_relevance": 0})
            top, *rest = res["hits"]
            assert top["content"] == CAT, (q, [(h["relevance"], h["content"][:30]) for h in res["hits"][:4]])
            assert all(h["relevance"] < top["relevance"] for h in rest), q
        # At the default floor the cat is what an agent gets back, nothing about Dana's car or birthday.
        res, _ = await call(s, "memory_recall", {"query": "What is the name of Dana's cat?", "namespace": space})
        assert [h["content"] for h in res["hits"]] == [CAT]


async def test_a_verbatim_quote_ranks_its_memory_first(daemon: Daemon) -> None:
    space = ns()
    async with mcp_session(daemon, "http") as s:
        ids = dict(zip(NEAR, await fill(s, space, NEAR), strict=True))
        for text in random.Random(27).sample(NEAR, 15):
            res, _ = await call(s, "memory_recall", {"query": text, "namespace": space, "top_k": 3})
            assert res["hits"][0]["chunk_id"] == ids[text], (text, [h["content"] for h in res["hits"]])
            assert res["hits"][0]["relevance"] == 1.0
        # A quoted span inside a question finds its memory first too.
        quote = NEAR[137].split(": ")[0]
        res, _ = await call(s, "memory_recall", {"query": f'Which note said "{quote}:"?', "namespace": space})
        assert res["hits"][0]["chunk_id"] == ids[NEAR[137]], [h["content"] for h in res["hits"][:3]]

