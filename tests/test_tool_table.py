"""The tool table (contract/tools.py) against what uses it: the MCP tool list through a real in-process MCP
client, each tool's documented bounds and defaults, the Python client's methods, and docs/CONTRACT.md."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import mcp_server
from config import Config, load_config
from contract.tools import BY_NAME, LANES, NAMESPACE_PATTERN, SCHEMA_TYPES, TOOLS, Arg, ToolSpec
from memory import Memory

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "api"))
from memlane_client import AsyncMemlaneClient, MemlaneClient  # noqa: E402

# The client's method for each tool (recall_full is the method that takes every recall argument).
METHODS = {"memory_remember": "remember", "memory_recall": "recall_full", "memory_relate": "relate",
           "memory_forget": "forget", "memory_update": "update", "memory_history": "history",
           "memory_graph_query": "graph_query", "memory_stats": "stats", "memory_purge": "purge"}


def run(server: mcp_server.MemlaneMCP, fn: Callable[[Client], Any]) -> Any:
    async def go() -> Any:
        async with Client(server) as c:
            return await fn(c)

    return asyncio.run(go())


@pytest.fixture
def server(mem: Memory) -> Any:
    s = mcp_server.MemlaneMCP(mem, "en")
    yield s
    s.close()


# ---------------------------------------------------------------- the tool list


def test_the_mcp_tool_list_is_the_table(server: mcp_server.MemlaneMCP, mem: Memory) -> None:
    async def listed(c: Client) -> Any:
        return (await c.list_tools()).tools

    tools = {t.name: t for t in run(server, listed)}
    assert list(tools) == [t.name for t in TOOLS]
    cfg = mem.config
    for spec in TOOLS:
        tool = tools[spec.name]
        assert tool.description == spec.desc
        schema = tool.input_schema
        assert list(schema["properties"]) == [a.name for a in spec.args]
        assert schema.get("required", []) == [a.name for a in spec.args if a.required]
        for a in spec.args:
            prop = schema["properties"][a.name]
            assert prop["type"] == SCHEMA_TYPES[a.kind], (spec.name, a.name)
            assert prop.get("default") == a.default, (spec.name, a.name)
            assert (prop.get("minimum"), prop.get("maximum")) == (a.low, a.high), (spec.name, a.name)
            assert prop.get("maxLength") == (a.limit(a.max_len, cfg) if a.kind == "text" else None)
            assert prop.get("maxItems") == a.limit(a.max_items, cfg), (spec.name, a.name)
            assert prop.get("enum", []) == list(a.choices)
        hints = tool.annotations
        assert hints.read_only_hint is spec.read_only and bool(hints.idempotent_hint) is spec.idempotent
        assert bool(hints.destructive_hint) is spec.destructive
    assert tools["memory_remember"].input_schema["properties"]["source"]["maxLength"] == cfg.max_source_chars
    assert tools["memory_recall"].input_schema["properties"]["lanes"]["items"]["enum"] == list(LANES)
    assert {t.name for t in TOOLS if t.heavy} == {"memory_recall", "memory_graph_query"}


def test_limits_from_the_config_reach_the_schema(tmp_path: Path, e5: object) -> None:
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_MAX_TAGS": "5", "MEMLANE_MAX_QUERY_CHARS": "300"})
    with Memory(tmp_path / "m.db", config=cfg, embedder=e5) as m:  # type: ignore[arg-type]
        props = {t.name: t.parameters["properties"] for t in mcp_server.build_tools(m)}
        assert props["memory_remember"]["tags"]["maxItems"] == 5
        assert props["memory_recall"]["query"]["maxLength"] == 300
        with pytest.raises(Exception, match=r"^\[too_large\] tags"):
            m.remember("Zed keeps bees on the roof.", tags=[f"t{i}" for i in range(6)])


# ---------------------------------------------------------------- bounds and defaults, through MCP


def space() -> str:
    return "t:" + uuid.uuid4().hex[:10]


def base_args(mem: Memory, tool: str, ns: str) -> dict[str, Any]:
    """Arguments with which `tool` succeeds in namespace `ns` (fresh rows where a call consumes one)."""
    fact = f"Zed {uuid.uuid4().hex[:8]} keeps bees on the roof of the old mill."
    if tool == "memory_remember":
        return {"content": fact, "namespace": ns}
    if tool in ("memory_forget", "memory_update", "memory_history"):
        cid = mem.remember(fact, namespace=ns)["chunk_id"]
        return {"id": cid, "namespace": ns, **({"content": fact + " Since May."} if tool == "memory_update" else {})}
    if tool == "memory_purge":
        return {"id": mem.remember(fact, namespace=ns)["chunk_id"], "confirm": True, "namespace": ns}
    if tool == "memory_relate":
        return {"subject": "Zed", "predicate": "knows", "object": "Amy", "namespace": ns}
    if tool == "memory_graph_query":
        mem.relate("Zed", "knows", "Amy", namespace=ns)
        return {"entity": "Zed", "namespace": ns}
    if tool == "memory_recall":
        return {"query": "Who keeps bees?", "namespace": ns}
    return {"namespace": ns}


def past_bound(a: Arg, cfg: Config) -> list[tuple[Any, str]]:
    """Values just past each documented bound of `a`, with the error code each must give."""
    out: list[tuple[Any, str]] = []
    if a.kind == "int":
        out += [(int(a.low or 0) - 1, "invalid_argument"), (int(a.high or 0) + 1, "invalid_argument")]
    if a.kind == "number":
        out += [((a.low or 0) - 0.01, "invalid_argument"), ((a.high or 0) + 0.01, "invalid_argument")]
    if a.kind == "text" and a.max_len is not None:
        out.append(("b" * (a.limit(a.max_len, cfg) + 1), "too_large"))  # type: ignore[operator]
    if a.kind == "strings":
        out.append(([f"x{i}" for i in range(a.limit(a.max_items, cfg) + 1)], "too_large"))  # type: ignore[operator]
        out.append((["y" * (a.limit(a.max_len, cfg) + 1)], "too_large"))  # type: ignore[operator]
    if a.kind == "entities":
        out.append(([f"E{i}" for i in range(a.limit(a.max_items, cfg) + 1)], "too_large"))  # type: ignore[operator]
    if a.kind == "metadata":
        out.append(({"k": "z" * a.limit(a.max_len, cfg)}, "too_large"))  # type: ignore[arg-type]
    if a.kind in ("choice", "lanes"):
        out.append(("nope" if a.kind == "choice" else ["nope"], "invalid_argument"))
    if a.kind == "namespace":
        out.append(("bad namespace!", "invalid_argument"))
    return out


def at_bound(a: Arg) -> list[Any]:
    """The documented bounds themselves (and every choice), which must be accepted."""
    if a.kind in ("int", "number"):
        return [a.low, a.high]
    return list(a.choices) if a.kind == "choice" else []


@pytest.mark.engine_neutral
@pytest.mark.parametrize("spec", TOOLS, ids=lambda s: s.name)
def test_each_tool_takes_its_bounds_and_refuses_one_past_each(spec: ToolSpec, server: mcp_server.MemlaneMCP,
                                                               mem: Memory) -> None:
    ns = space()

    async def go(c: Client) -> None:
        ok = await c.call_tool(spec.name, base_args(mem, spec.name, ns))  # the documented defaults
        assert not ok.is_error, ok.content[0].text
        for a in spec.args:
            for value in at_bound(a):
                res = await c.call_tool(spec.name, {**base_args(mem, spec.name, ns), a.name: value})
                assert not res.is_error, (a.name, value, res.content[0].text)
            for value, code in past_bound(a, mem.config):
                res = await c.call_tool(spec.name, {**base_args(mem, spec.name, ns), a.name: value})
                text = res.content[0].text
                assert res.is_error and text.startswith(f"[{code}] "), (a.name, str(value)[:40], text)
                if a.kind != "namespace":
                    assert a.name in text, text  # the error names the argument
            if a.required:
                res = await c.call_tool(spec.name, {k: v for k, v in base_args(mem, spec.name, ns).items()
                                                     if k != a.name})
                assert res.content[0].text.startswith(f"[invalid_argument] {a.name}"), res.content[0].text

    run(server, go)


def test_documented_defaults_are_the_behaviour(server: mcp_server.MemlaneMCP, mem: Memory) -> None:
    ns = space()
    for i in range(12):
        mem.remember(f"Zed planted tree number {i} beside the mill pond.", namespace=ns)
    for a, b in (("Zed", "Amy"), ("Amy", "Bo"), ("Bo", "Cy")):
        mem.relate(a, "knows", b, namespace=ns)
    mem.flush(timeout=120, context=False)
    recall, graph = BY_NAME["memory_recall"].arg, BY_NAME["memory_graph_query"].arg

    async def go(c: Client) -> None:
        brief = (await c.call_tool("memory_recall", {"query": "tree beside the mill pond", "namespace": ns,
                                                     "min_relevance": 0})).structured_content
        assert set(brief) == {"hits", "took_ms"} and recall["detail"].default == "brief"
        assert len(brief["hits"]) == recall["top_k"].default
        full = (await c.call_tool("memory_recall", {"query": "tree beside the mill pond", "namespace": ns,
                                                    "min_relevance": 0, "detail": "full"})).structured_content
        assert {h["importance"] for h in full["hits"]} == {BY_NAME["memory_remember"].arg["importance"].default}
        g = (await c.call_tool("memory_graph_query", {"entity": "Zed", "namespace": ns})).structured_content
        assert max(n["depth"] for n in g["nodes"]) == graph["depth"].default  # Cy, three hops away, is not listed
        assert {e["confidence"] for e in g["edges"]} == {BY_NAME["memory_relate"].arg["confidence"].default}

    run(server, go)


@pytest.mark.engine_neutral
def test_stats_with_a_namespace_lists_only_that_namespace(server: mcp_server.MemlaneMCP, mem: Memory) -> None:
    one, two = space(), space()
    mem.remember("Zed keeps bees on the roof.", namespace=one)
    mem.remember("Amy keeps goats in the yard.", namespace=two)

    async def go(c: Client) -> tuple[dict[str, Any], ...]:
        return tuple([(await c.call_tool("memory_stats", args)).structured_content
                      for args in ({"namespace": one}, {"namespace": "t:empty"}, {})])

    mine, empty, every = run(server, go)
    assert mine["namespaces"] == [one] and mine["chunks"] == 1
    assert "namespaces" not in empty  # compact: an empty list is left out
    assert {one, two} <= set(every["namespaces"])


def test_update_refuses_a_relation_id_as_its_description_says(server: mcp_server.MemlaneMCP, mem: Memory) -> None:
    ns = space()
    rid = mem.relate("Zed", "knows", "Amy", namespace=ns)["relation_id"]
    assert "not a relation" in BY_NAME["memory_update"].arg["id"].desc

    async def go(c: Client) -> Any:
        return await c.call_tool("memory_update", {"id": rid, "content": "Zed knows Amy well.", "namespace": ns})

    res = run(server, go)
    assert res.is_error and res.content[0].text.startswith("[not_found] ")


# ---------------------------------------------------------------- the Python client


@pytest.mark.parametrize("cls", [MemlaneClient, AsyncMemlaneClient], ids=lambda c: c.__name__)
def test_client_methods_match_the_table(cls: type) -> None:
    """api/memlane_client.py stays importable on its own, so it carries the names; they must be the table's."""
    for tool, method in METHODS.items():
        params = inspect.signature(getattr(cls, method)).parameters
        spec = BY_NAME[tool]
        names = [n for n in params if n != "self"]
        assert sorted(names) == sorted(a.name for a in spec.args), (cls.__name__, method)
        for a in spec.args:
            p = params[a.name]
            if a.required:
                assert p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD, (method, a.name)
            elif tool == "memory_recall" and a.name == "detail":
                assert p.default == "full"  # a program reads every field (the client's docstring says so)
            else:
                assert p.default is None and p.kind is p.KEYWORD_ONLY, (method, a.name)  # None: the daemon's default
    assert set(METHODS) == set(BY_NAME)


# ---------------------------------------------------------------- docs/CONTRACT.md

DOC_TYPES = {"text": "string", "id": "id", "time": "time", "choice": "string", "namespace": "string", "int": "integer",
             "number": "number", "bool": "boolean", "strings": "list of strings", "lanes": "list of lanes",
             "entities": "list of entities", "metadata": "object"}


def doc_limits(a: Arg, cfg: Config) -> str:
    if a.kind == "namespace":
        return f"`{NAMESPACE_PATTERN}`"
    if a.kind in ("int", "number"):
        return f"{a.low:g} to {a.high:g}"
    if a.kind == "text" and a.max_len is not None:
        return f"≤ {a.limit(a.max_len, cfg):,} characters"
    if a.kind == "strings":
        return f"≤ {a.limit(a.max_items, cfg):,} of ≤ {a.limit(a.max_len, cfg):,} characters"
    if a.kind == "entities":
        return f"≤ {a.limit(a.max_items, cfg):,}"
    if a.kind == "metadata":
        return f"≤ {a.limit(a.max_len, cfg):,} bytes"
    if a.kind in ("choice", "lanes"):
        return ", ".join(a.choices or LANES)
    return ""


def table_rows(cfg: Config) -> list[list[str]]:
    """The contract's argument table as docs/CONTRACT.md must show it, at the default configuration."""
    return [[f"`{t.name}`", f"`{a.name}`", DOC_TYPES[a.kind], "yes" if a.required else "",
             "" if a.default is None else json.dumps(a.default), doc_limits(a, cfg)]
            for t in TOOLS for a in t.args]


def test_contract_doc_lists_the_tables_tools_and_arguments() -> None:
    text = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    section = text.split("<!-- tool-table -->")[1]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `")]
    assert rows == table_rows(Config())
    headings = re.findall(r"^### `(memory_\w+)`", text, flags=re.M)
    assert headings == [t.name for t in TOOLS]
