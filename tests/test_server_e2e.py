"""End to end: the real daemon on loopback, every tool through the official MCP client, both transports."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_util import Daemon, mcp_session, running_daemon

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral]

TRANSPORTS = ("sse", "http")
TOOLS = {"memory_remember", "memory_recall", "memory_relate", "memory_forget", "memory_purge", "memory_update",
         "memory_history", "memory_graph_query", "memory_stats"}
# A full hit of a live memory: version 1's fields, compact (valid_until, null while live, is left out).
HIT_KEYS = {"chunk_id", "content", "score", "ranks", "source", "importance", "tags", "metadata", "entities",
            "created_at", "valid_from", "relevance", "status", "final_score"}
BRIEF_KEYS = {"chunk_id", "content", "relevance", "status", "superseded_by", "valid_from", "valid_until", "entities"}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, engine_env: Any) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("e2e"), env=engine_env()) as d:
        yield d
    assert d.returncode == 0, d.output()


def ns() -> str:
    return "t:" + uuid.uuid4().hex[:12]


async def call(session: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; check the text copy matches the structured content."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text
    assert not res.is_error, text
    assert res.structured_content is not None
    assert json.loads(text) == res.structured_content
    assert text == json.dumps(res.structured_content, ensure_ascii=False, separators=(",", ":"))  # compact
    assert "null" not in text.replace('"null"', "") and "[]" not in text.replace('"hits":[]', "")
    return res.structured_content


async def fail(session: Any, tool: str, args: dict[str, Any], code: str) -> str:
    """Call a tool that must fail with `code`; return the message after the prefix."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text
    assert res.is_error, f"expected [{code}], got success: {text[:200]}"
    assert text.startswith(f"[{code}] "), text
    assert "Error executing tool" not in text
    return text[len(code) + 3:]


def test_health_shape(daemon: Daemon) -> None:
    r = httpx.get(daemon.url + "/health", timeout=10)
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"status", "version", "uptime_s", "db_path", "schema_version", "embedder",
                         "pending_embeddings", "pending_context", "index_building"}
    assert body["status"] == "ok"
    assert body["db_path"] == daemon.db_label
    if daemon.db_url:  # PostgreSQL: the URL's password never shows
        from urllib.parse import urlsplit

        assert urlsplit(daemon.db_url).password not in json.dumps(body) and ":***@" in body["db_path"]
    assert set(body["embedder"]) == {"model", "dim"} and body["embedder"]["dim"] > 0
    assert isinstance(body["pending_embeddings"], int) and body["uptime_s"] >= 0
    assert isinstance(body["pending_context"], int) and body["index_building"] == 0  # a small store: none


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tools_and_prompt_are_listed(daemon: Daemon, transport: str) -> None:
    async def go() -> None:
        async with mcp_session(daemon, transport) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert len(tool.description or "") > 40, tool.name
                props = tool.input_schema["properties"]
                assert "namespace" in props
                assert all(p.get("description") for n, p in props.items() if n != "namespace"), tool.name
            assert tools["memory_remember"].input_schema["required"] == ["content"]
            assert tools["memory_recall"].annotations.read_only_hint is True
            assert tools["memory_forget"].annotations.destructive_hint is True
            assert tools["memory_remember"].annotations.read_only_hint is False
            assert set(tools["memory_relate"].input_schema["required"]) == {"subject", "predicate", "object"}
            prompts = {p.name for p in (await s.list_prompts()).prompts}
            assert "memlane-guide" in prompts
            en = (await s.get_prompt("memlane-guide", {"lang": "en"})).messages[0].content.text
            zh = (await s.get_prompt("memlane-guide", {"lang": "zh"})).messages[0].content.text
            assert "namespace" in en.lower() and "memory_recall" in en
            assert "命名空间" in zh and "memory_recall" in zh

    asyncio.run(go())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_tool_matches_the_contract(daemon: Daemon, transport: str) -> None:
    space = ns()

    async def go() -> None:
        async with mcp_session(daemon, transport) as s:
            r = await call(s, "memory_remember", {
                "content": "Alice moved to Berlin in March 2024 and works at SAP.", "namespace": space,
                "source": "chat", "importance": 0.8, "tags": ["move", "work"],
                "entities": ["Alice", {"name": "SAP", "kind": "org", "aliases": ["SAP SE"]}],
                "metadata": {"k": "v", "n": 1}, "valid_from": "2024-03-01T00:00:00Z"})
            assert set(r) >= {"chunk_id", "namespace", "created", "entities", "embedding"}
            assert r["created"] is True and "duplicate_of" not in r and r["namespace"] == space
            assert r["embedding"] in ("queued", "done")
            names = {e["name"] for e in r["entities"]}
            assert {"Alice", "SAP"} <= names
            assert all(set(e) >= {"id", "name", "kind"} for e in r["entities"])
            cid = r["chunk_id"]

            dup = await call(s, "memory_remember", {"content": "Alice moved to Berlin in March 2024 and works at SAP.",
                                                    "namespace": space})
            assert dup["created"] is False and dup["duplicate_of"] == cid

            other = await call(s, "memory_remember", {"content": "Bob prefers green tea over coffee.",
                                                      "namespace": space, "tags": ["food"]})

            brief = await call(s, "memory_recall", {"query": "Where does Alice live?", "namespace": space, "top_k": 5})
            assert set(brief) == {"hits", "took_ms"} and brief["hits"][0]["chunk_id"] == cid
            assert all(set(h) <= BRIEF_KEYS and {"chunk_id", "content", "relevance", "status"} <= set(h)
                       for h in brief["hits"])
            rec = await call(s, "memory_recall", {"query": "Where does Alice live?", "namespace": space, "top_k": 5,
                                                  "detail": "full"})
            assert set(rec) >= {"hits", "took_ms", "lanes"} and "skipped" not in rec
            assert set(rec["lanes"]) == {"vector", "graph", "meta", "entity"}
            assert all(set(v) >= {"hits", "ms"} for v in rec["lanes"].values())
            assert rec["hits"] and rec["hits"][0]["chunk_id"] == cid
            hit = rec["hits"][0]
            assert set(hit) >= HIT_KEYS
            assert hit["ranks"] and all(lane in ("vector", "graph", "meta", "entity") and rank >= 1
                                        for lane, rank in hit["ranks"].items())
            assert hit["tags"] == ["move", "work"] and hit["metadata"] == {"k": "v", "n": 1}
            assert hit["source"] == "chat" and hit["importance"] == 0.8
            assert ISO_UTC.match(hit["created_at"]) and "valid_until" not in hit and hit["status"] == "current"
            assert 0 <= hit["relevance"] <= 1
            assert hit["valid_from"].startswith("2024-03-01T00:00:00")

            only = await call(s, "memory_recall", {"query": "tea", "namespace": space, "tags": ["food"],
                                                   "lanes": ["meta"], "detail": "full"})
            assert [h["chunk_id"] for h in only["hits"]] == [other["chunk_id"]]
            assert set(only["lanes"]) == {"meta"}

            rel = await call(s, "memory_relate", {"subject": "Alice", "predicate": "works_at", "object": "SAP SE",
                                                  "namespace": space, "subject_kind": "person", "confidence": 0.9,
                                                  "chunk_id": cid})
            assert set(rel) >= {"relation_id", "subject", "object", "created"} and rel["created"] is True
            assert rel["object"]["name"] == "SAP"  # resolved through the alias
            assert set(rel["subject"]) >= {"id", "name", "kind"}

            g = await call(s, "memory_graph_query", {"entity": "Alice", "namespace": space, "depth": 1})
            assert set(g) >= {"root", "nodes", "edges", "truncated"}
            assert g["root"]["name"] == "Alice" and set(g["root"]) >= {"id", "name", "kind"}  # no aliases: left out
            assert any(e["relation_id"] == rel["relation_id"] and e["predicate"] == "works_at" for e in g["edges"])
            assert all(set(e) >= {"relation_id", "subject", "predicate", "object", "confidence", "valid_from"}
                       for e in g["edges"])
            assert any(n["name"] == "SAP" for n in g["nodes"])

            up = await call(s, "memory_update", {"id": cid, "content": "Alice moved to Munich in 2025; still at SAP.",
                                                 "namespace": space, "tags": ["move"]})
            assert up["previous_id"] == cid and up["chunk_id"] != cid and up["namespace"] == space

            h = await call(s, "memory_history", {"id": up["chunk_id"], "namespace": space})
            versions = h["versions"]
            assert [v["chunk_id"] for v in versions] == [cid, up["chunk_id"]]
            assert versions[0]["valid_until"] and "valid_until" not in versions[1]
            assert all(set(v) >= {"chunk_id", "content", "valid_from"} for v in versions)

            f = await call(s, "memory_forget", {"id": other["chunk_id"], "namespace": space, "reason": "user said so"})
            assert f["id"] == other["chunk_id"] and f["forgotten"] is True and ISO_UTC.match(f["valid_until"])
            again = await call(s, "memory_forget", {"id": other["chunk_id"], "namespace": space})
            assert again["forgotten"] is True
            gone = await call(s, "memory_recall", {"query": "green tea", "namespace": space})
            assert other["chunk_id"] not in [x["chunk_id"] for x in gone["hits"]]
            kept = await call(s, "memory_recall", {"query": "green tea", "namespace": space, "include_history": True})
            assert other["chunk_id"] in [x["chunk_id"] for x in kept["hits"]]

            st = await call(s, "memory_stats", {"namespace": space})
            assert set(st) >= {"chunks", "live_chunks", "entities", "relations", "vectors", "pending_embeddings",
                               "namespaces", "db_bytes", "embedder", "recall_24h", "schema_version", "version"}
            assert st["chunks"] == 3 and st["live_chunks"] == 1 and st["relations"] == 1
            assert set(st["recall_24h"]) == {"calls", "p50_ms", "p95_ms", "empty"} and st["recall_24h"]["calls"] >= 4
            assert space in (await call(s, "memory_stats", {}))["namespaces"]

    asyncio.run(go())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_errors_carry_contract_codes(daemon: Daemon, transport: str) -> None:
    space = ns()

    async def go() -> None:
        async with mcp_session(daemon, transport) as s:
            msg = await fail(s, "memory_recall", {"query": "x y", "bogus": 1}, "invalid_argument")
            assert "bogus" in msg
            assert "top_k" in await fail(s, "memory_recall", {"query": "alice", "top_k": "5"}, "invalid_argument")
            assert "top_k" in await fail(s, "memory_recall", {"query": "alice", "top_k": 5.5}, "invalid_argument")
            assert "top_k" in await fail(s, "memory_recall", {"query": "alice", "top_k": True}, "invalid_argument")
            assert "100" in await fail(s, "memory_recall", {"query": "alice", "top_k": 0}, "invalid_argument")
            assert "query" in await fail(s, "memory_recall", {}, "invalid_argument")
            await fail(s, "memory_recall", {"query": "alice", "lanes": ["vector", "psychic"]}, "invalid_argument")
            await fail(s, "memory_recall", {"query": "alice", "as_of": "yesterday"}, "invalid_argument")
            await fail(s, "memory_remember", {"content": "a\x00b"}, "invalid_argument")
            await fail(s, "memory_remember", {"content": "fine", "namespace": "bad namespace!"}, "invalid_argument")
            await fail(s, "memory_remember", {"content": "Carol likes chess", "importance": "high"},
                       "invalid_argument")
            await fail(s, "memory_remember", {"content": "Carol likes chess", "tags": "chess"}, "invalid_argument")
            await fail(s, "memory_remember", {"content": "Carol likes chess", "metadata": [1, 2]}, "invalid_argument")
            await fail(s, "memory_remember", {"content": "x" * 40_000}, "too_large")
            await fail(s, "memory_forget", {"id": "m_" + "0" * 24, "namespace": space}, "not_found")
            await fail(s, "memory_history", {"id": "m_" + "0" * 24, "namespace": space}, "not_found")
            for never in ("'; drop table chunks;--", "not-an-id", "r_zzz"):  # ids are opaque: never issued
                await fail(s, "memory_forget", {"id": never, "namespace": space}, "not_found")
                await fail(s, "memory_update", {"id": never, "content": "Carol likes chess"}, "not_found")
            assert "detail" in await fail(s, "memory_recall", {"query": "alice", "detail": "short"}, "invalid_argument")
            await fail(s, "memory_recall", {"query": "alice", "min_relevance": 2}, "invalid_argument")
            await fail(s, "memory_graph_query", {"entity": "Nobody Atall", "namespace": space}, "not_found")
            await fail(s, "memory_graph_query", {"entity": "x", "depth": 9}, "invalid_argument")
            await fail(s, "memory_nonexistent", {}, "invalid_argument")
            # An error stores nothing.
            st = await call(s, "memory_stats", {"namespace": space})
            assert st["chunks"] == 0

    asyncio.run(go())


def test_namespaces_are_isolated(daemon: Daemon) -> None:
    a, b = ns(), ns()

    async def go() -> None:
        async with mcp_session(daemon, "sse") as s1, mcp_session(daemon, "http") as s2:
            r = await call(s1, "memory_remember", {"content": "The vault code word is pelican.", "namespace": a,
                                                   "entities": ["Vault"]})
            await call(s1, "memory_relate", {"subject": "Vault", "predicate": "guarded_by", "object": "Dave",
                                             "namespace": a})
            hits_b = (await call(s2, "memory_recall", {"query": "vault code word pelican", "namespace": b}))["hits"]
            assert hits_b == []
            hits_a = (await call(s2, "memory_recall", {"query": "vault code word pelican", "namespace": a}))["hits"]
            assert [h["chunk_id"] for h in hits_a][:1] == [r["chunk_id"]]
            await fail(s2, "memory_forget", {"id": r["chunk_id"], "namespace": b}, "not_found")
            await fail(s2, "memory_history", {"id": r["chunk_id"], "namespace": b}, "not_found")
            await fail(s2, "memory_update", {"id": r["chunk_id"], "content": "overwritten", "namespace": b},
                       "not_found")
            await fail(s2, "memory_graph_query", {"entity": "Vault", "namespace": b}, "not_found")
            assert (await call(s2, "memory_stats", {"namespace": b}))["chunks"] == 0
            # Still intact in its own namespace.
            assert "valid_until" not in (await call(s1, "memory_history", {"id": r["chunk_id"], "namespace": a}))[
                "versions"][0]
            # Same content in another namespace is a new memory, not a duplicate.
            r2 = await call(s2, "memory_remember", {"content": "The vault code word is pelican.", "namespace": b})
            assert r2["created"] is True and r2["chunk_id"] != r["chunk_id"]

    asyncio.run(go())


def test_health_reveals_no_memory_content(daemon: Daemon) -> None:
    async def go() -> None:
        async with mcp_session(daemon, "http") as s:
            await call(s, "memory_remember", {"content": "Zephyrine's locker combination is 31-07-12.",
                                              "namespace": "secret.space"})

    asyncio.run(go())
    text = httpx.get(daemon.url + "/health", timeout=10).text
    assert "Zephyrine" not in text and "31-07-12" not in text and "secret.space" not in text


def test_chinese_daemon_speaks_chinese(tmp_path: Path) -> None:
    with running_daemon(tmp_path, lang="zh") as d:
        assert "已就绪" in d.ready_line

        async def go() -> None:
            async with mcp_session(d, "sse") as s:
                msg = await fail(s, "memory_recall", {"query": "爱丽丝", "top_k": 500}, "invalid_argument")
                assert "必须在" in msg
                r = await call(s, "memory_remember", {"content": "爱丽丝在柏林的 SAP 工作。"})
                hits = (await call(s, "memory_recall", {"query": "爱丽丝在哪里工作"}))["hits"]
                assert hits and hits[0]["chunk_id"] == r["chunk_id"]

        asyncio.run(go())
    assert d.returncode == 0
