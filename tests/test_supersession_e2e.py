"""Supersession as one story, through MCP on a real daemon (issue 29): memory_history shows both
directions, an update of a superseded memory keeps it superseded unless `reinstate`, and a superseded
memory never ranks above its replacement. Both engines (`pytest --engine postgres -m engine_neutral`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from daemon_util import Daemon, mcp_session, module_daemon, running_daemon
from test_agent_view_e2e import TWELVE
from test_server_e2e import call, fail

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral]

OLD = "Dana lives at Kastanienallee 12 in Prenzlauer Berg."
NEW = "Dana moved to Oranienstraße 45 in Kreuzberg last month."
NOW = "Where does Dana live now?"


# successor_order on: the ranking test holds the switch's promise (off by default, README).
daemon = module_daemon("supersede", env={"MEMLANE_SUCCESSOR_ORDER": "true"})


async def settle(s: Any, space: str) -> None:
    """Wait until every vector is written: supersession is decided in the same transaction."""
    for _ in range(600):
        if not (await call(s, "memory_stats", {"namespace": space})).get("pending_embeddings"):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("embeddings still pending")


async def remember(s: Any, space: str, text: str, **extra: Any) -> str:
    cid = (await call(s, "memory_remember", {"content": text, "namespace": space, **extra}))["chunk_id"]
    await settle(s, space)
    return cid


async def dana(s: Any) -> tuple[str, str, str]:
    """A namespace with the twelve memories of test_agent_view_e2e, Dana's old address and her move."""
    space = "t:" + uuid.uuid4().hex[:12]
    for text in TWELVE:
        await call(s, "memory_remember", {"content": text, "namespace": space})
    old = await remember(s, space, OLD)
    new = await remember(s, space, NEW)
    return space, old, new


async def recall(s: Any, space: str, query: str) -> list[dict[str, Any]]:
    return (await call(s, "memory_recall", {"query": query, "namespace": space, "min_relevance": 0}))["hits"]


def test_history_shows_what_a_memory_superseded_and_what_superseded_it(daemon: Daemon) -> None:
    async def go() -> None:
        async with mcp_session(daemon, "http") as s:
            space, old, new = await dana(s)
            newer = await call(s, "memory_history", {"id": new, "namespace": space})
            assert [v["chunk_id"] for v in newer["versions"]] == [new]
            assert [(x["chunk_id"], x["content"]) for x in newer["supersedes"]] == [(old, OLD)]
            assert "superseded_by" not in newer
            older = await call(s, "memory_history", {"id": old, "namespace": space})
            assert older["superseded_by"]["chunk_id"] == new and older["superseded_by"]["content"] == NEW
            assert older["versions"][-1]["superseded_by"] == new
            assert "supersedes" not in older

    asyncio.run(go())


def test_updating_a_superseded_memory_keeps_it_superseded_unless_reinstated(daemon: Daemon) -> None:
    async def go() -> None:
        async with mcp_session(daemon, "sse") as s:
            space, old, new = await dana(s)
            up = await call(s, "memory_update", {"id": old, "namespace": space,
                                                 "content": "Dana lives at Kastanienallee 14 in Prenzlauer Berg."})
            assert up["previous_id"] == old and up["superseded_by"] == new
            await settle(s, space)
            hits = await recall(s, space, NOW)
            ids = [h["chunk_id"] for h in hits]
            assert ids[0] == new, hits[:2]
            rewritten = hits[ids.index(up["chunk_id"])]
            assert rewritten["status"] == "superseded" and rewritten["superseded_by"] == new
            # Its history and the replacement's agree: the rewritten version is the one that was replaced.
            older = await call(s, "memory_history", {"id": old, "namespace": space})
            assert older["superseded_by"]["chunk_id"] == new
            newer = await call(s, "memory_history", {"id": new, "namespace": space})
            assert [x["chunk_id"] for x in newer["supersedes"]] == [up["chunk_id"]]
            # Asked for, a rewrite is current again.
            again = await call(s, "memory_update", {"id": up["chunk_id"], "namespace": space, "reinstate": True,
                                                    "content": "Dana lives at Kastanienallee 16 in Prenzlauer Berg."})
            assert "superseded_by" not in again
            await settle(s, space)
            back = {h["chunk_id"]: h for h in await recall(s, space, "Where does Dana live?")}
            assert back[again["chunk_id"]]["status"] == "current" and "superseded_by" not in back[again["chunk_id"]]
            msg = await fail(s, "memory_update", {"id": again["chunk_id"], "namespace": space, "content": "x y z",
                                                  "reinstate": "maybe"}, "invalid_argument")
            assert "reinstate" in msg

    asyncio.run(go())


def test_a_superseded_memory_never_ranks_above_its_replacement(daemon: Daemon) -> None:
    """README: never above the memory that superseded it when both are found, whatever reordered them.

    In a conversation the old address is the reply to a question that matches best; the reply rule lifts
    a reply above its question, and used to lift the old address above its replacement too."""
    async def go() -> None:
        async with mcp_session(daemon, "http") as s:
            space = "t:" + uuid.uuid4().hex[:12]
            for text in TWELVE:
                await call(s, "memory_remember", {"content": text, "namespace": space})
            await call(s, "memory_remember", {"content": "Do you know where Dana lives?", "namespace": space,
                                              "thread": "chat-1"})
            old = await remember(s, space, "Dana lives at Kastanienallee 12.", thread="chat-1")
            new = await remember(s, space, "Dana moved to Oranienstraße 45 last month.")
            for query in (NOW, "Where does Dana live?", "Where did Dana live?", "Dana 住在哪里？"):
                hits = await recall(s, space, query)
                ids = [h["chunk_id"] for h in hits]
                assert new in ids and old in ids, (query, hits)
                assert ids.index(new) < ids.index(old), (query, [h["content"] for h in hits[:4]])
                assert hits[ids.index(old)]["superseded_by"] == new

    asyncio.run(go())


@pytest.fixture(scope="module")
def default_daemon(tmp_path_factory: pytest.TempPathFactory, engine_env: Any) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("supersede-default"), env=engine_env()) as d:
        yield d
    assert d.returncode == 0, d.output()


def test_with_the_default_config_a_superseded_memory_ranks_just_below_its_replacement(default_daemon: Daemon) -> None:
    """README, default config (successor_order off): the reranker puts the superseded memory just below its
    replacement when both are found; for a question about the present it may rank lower still; the verbatim
    step can lift a memory that holds the question word for word."""
    async def go() -> None:
        async with mcp_session(default_daemon, "http") as s:
            space, old, new = await dana(s)
            for query in ("Where does Dana live?", "Where did Dana live?", "Dana 住在哪里？", NOW):
                ids = [h["chunk_id"] for h in await recall(s, space, query)]
                assert new in ids and old in ids, (query, ids)
                if query == NOW:
                    assert ids.index(old) > ids.index(new), query
                else:
                    assert ids.index(old) == ids.index(new) + 1, (query, ids)
            ids = [h["chunk_id"] for h in await recall(s, space, "Kastanienallee 12")]
            assert ids[0] == old, ids  # the verbatim step lifts the memory that holds the question

    asyncio.run(go())
