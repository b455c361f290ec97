"""Entity kinds as an agent meets them, through MCP on a real daemon (issue 29's reproduction): tools,
products and acronyms are not persons, and titles and sentence fragments are not entities at all.
Both engines (`pytest --engine postgres -m engine_neutral`)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from daemon_util import Daemon, mcp_session, module_daemon
from test_server_e2e import call, fail

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral]

# The sentences of the reproduction, as a user of a developer's agent would store them.
MEMORIES = [
    "We moved the order events from RabbitMQ to Kafka last spring.",
    "CI fails whenever someone commits a package-lock.json.",
    "Dr. Sousa moved my appointment to Thursday.",
    "Taming the flaky integration tests took most of March.",
    "My work laptop is a ThinkPad X1 Carbon Gen 11.",
]
NOT_PERSONS = ["Kafka", "CI", "RabbitMQ"]
NO_ENTITY = ["Dr", "Taming", "Carbon Gen"]


daemon = module_daemon("kinds")


async def root(s: Any, space: str, name: str) -> dict[str, Any]:
    """The graph query's root (its `edges` may be empty, which CONTRACT keeps: not `call`)."""
    res = await s.call_tool("memory_graph_query", {"entity": name, "namespace": space})
    assert not res.is_error, res.content[0].text
    return res.structured_content["root"]


def test_tools_and_acronyms_are_not_persons_and_fragments_are_not_entities(daemon: Daemon) -> None:
    async def go() -> None:
        space = "t:" + uuid.uuid4().hex[:12]
        async with mcp_session(daemon) as s:
            for text in MEMORIES:
                await call(s, "memory_remember", {"content": text, "namespace": space})
            for name in NOT_PERSONS:
                got = await root(s, space, name)
                assert got["name"] == name and got["kind"] != "person", got
            assert (await root(s, space, "Sousa"))["kind"] == "person"  # the title goes, the surname stays a person
            for name in NO_ENTITY:
                await fail(s, "memory_graph_query", {"entity": name, "namespace": space}, "not_found")

    asyncio.run(go())
