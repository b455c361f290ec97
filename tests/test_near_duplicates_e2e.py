"""A paraphrase of a live memory is reported, not stored silently (issue 29): through MCP on a real daemon,
memory_remember with `wait_embedded` lists `near_duplicates` with a warning that names memory_update, and
memory_history lists them on both memories. Nothing is merged. Both engines
(`pytest --engine postgres -m engine_neutral`)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from daemon_util import Daemon, mcp_session, module_daemon
from test_agent_view_e2e import TWELVE
from test_server_e2e import call, fail

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral]

ORIGINAL = "Maya Okafor is allergic to peanuts; she carries an EpiPen."
PARAPHRASE = "Maya Okafor has a peanut allergy and always has an EpiPen with her."
DISTINCT = "Tomás rides a folding Brompton to work and hates parking garages."


daemon = module_daemon("neardup")


def test_a_paraphrase_is_reported_as_a_near_duplicate(daemon: Daemon) -> None:
    async def go() -> None:
        async with mcp_session(daemon, "http") as s:
            space = "t:" + uuid.uuid4().hex[:12]
            for text in TWELVE:
                await call(s, "memory_remember", {"content": text, "namespace": space})
            first = await call(s, "memory_remember", {"content": ORIGINAL, "namespace": space, "wait_embedded": True})
            assert first["embedding"] == "done" and "near_duplicates" not in first
            again = await call(s, "memory_remember", {"content": PARAPHRASE, "namespace": space, "wait_embedded": True})
            assert again["created"] is True and "duplicate_of" not in again  # stored: a warning, not a merge
            assert [x["chunk_id"] for x in again["near_duplicates"]] == [first["chunk_id"]]
            assert again["near_duplicates"][0]["content"] == ORIGINAL
            assert any("memory_update" in w and first["chunk_id"] in w for w in again["warnings"])
            other = await call(s, "memory_remember", {"content": DISTINCT, "namespace": space, "wait_embedded": True})
            assert "near_duplicates" not in other and other["embedding"] == "done"
            # Both ends show the link in their history; a distinct memory shows none.
            hist = await call(s, "memory_history", {"id": again["chunk_id"], "namespace": space})
            assert [x["chunk_id"] for x in hist["near_duplicates"]] == [first["chunk_id"]]
            back = await call(s, "memory_history", {"id": first["chunk_id"], "namespace": space})
            assert [x["chunk_id"] for x in back["near_duplicates"]] == [again["chunk_id"]]
            assert "near_duplicates" not in await call(s, "memory_history", {"id": other["chunk_id"], "namespace": space})
            # Once the agent acts (forgets the repeat), the link is gone.
            await call(s, "memory_forget", {"id": again["chunk_id"], "namespace": space})
            assert "near_duplicates" not in await call(s, "memory_history", {"id": first["chunk_id"], "namespace": space})
            # Another namespace never sees it.
            elsewhere = await call(s, "memory_remember", {"content": PARAPHRASE, "namespace": space + "x",
                                                          "wait_embedded": True})
            assert "near_duplicates" not in elsewhere
            msg = await fail(s, "memory_remember", {"content": DISTINCT, "namespace": space, "wait_embedded": "yes"},
                             "invalid_argument")
            assert "wait_embedded" in msg

    asyncio.run(go())
