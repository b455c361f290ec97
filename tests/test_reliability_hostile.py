"""Hostile input against a real daemon: Hypothesis over every tool's arguments, the core issue's bad
inputs, SQL/FTS syntax stored and found literally, and raw JSON-RPC that no SDK client would send.

Only the contract's input error codes may come back (never `internal`), nothing is half-written, and
the daemon still answers. 2,000 examples in CI; RELIABILITY_LONG=1 runs 20,000.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_util import Daemon, module_daemon
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_util import INPUT_ERROR_CODES, LONG, Outcome, SyncSession, health

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral, pytest.mark.timeout(1800)]

EXAMPLES = 20_000 if LONG else 2_000
TOOLS: dict[str, list[str]] = {
    "memory_remember": ["content", "namespace", "source", "importance", "tags", "entities", "metadata", "valid_from"],
    "memory_recall": ["query", "namespace", "top_k", "lanes", "as_of", "include_history", "source", "tags",
                      "since", "until"],
    "memory_relate": ["subject", "predicate", "object", "namespace", "subject_kind", "object_kind", "confidence",
                      "chunk_id", "valid_from"],
    "memory_forget": ["id", "namespace", "reason"],
    "memory_purge": ["id", "namespace", "confirm"],
    "memory_update": ["id", "content", "namespace", "source", "importance", "tags", "metadata", "valid_from"],
    "memory_history": ["id", "namespace"],
    "memory_graph_query": ["entity", "namespace", "depth", "predicates", "limit", "as_of"],
    "memory_stats": ["namespace"],
}
SQL_FTS = [
    "\"'); drop table chunks;--",
    "NEAR(",
    "NEAR(alpha beta, 2)",
    "*",
    "^",
    "\"unbalanced quote",
    "it's O'Brien's \"quote",
    "100% of a_b\\c",
    "col:value AND OR NOT",
    "'; select * from chunks where 1=1; --",
    "{\"$gt\": \"\"}",
    "-- comment /* block */",
]
BAD_TEXT = [
    "", " ", "\t\n", "x" * 40_000, "a\x00b", "\u202eevil\u202c text", "\x07\x1b[31mred\x1b[0m", "\ufeff",
    "😀" * 10, "柏林" * 5, "../../etc/passwd", "%s%n%x", "test", "?", "...", "null",
]
KNOWN_IDS = ["m_0000000000000000", "r_ffffffffffffffff", "e_1234567890abcdef", "m_", "M_1234567890", "x" * 300]


def json_values() -> st.SearchStrategy[Any]:
    scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=60)
               | st.sampled_from(SQL_FTS + BAD_TEXT + KNOWN_IDS))
    return st.recursive(scalars, lambda ch: st.lists(ch, max_size=5) | st.dictionaries(st.text(max_size=12), ch,
                                                                                        max_size=5), max_leaves=12)


def plausible(name: str) -> st.SearchStrategy[Any]:
    """Values of roughly the right type, near and past every limit."""
    text = st.text(max_size=80) | st.sampled_from(SQL_FTS + BAD_TEXT)
    if name in ("top_k", "depth", "limit"):
        return st.integers(min_value=-5, max_value=600) | st.sampled_from([0, 1, 100, 101, 2**63, 1.5, "5", True])
    if name in ("importance", "confidence"):
        return st.floats(min_value=-2, max_value=3, allow_nan=False) | st.sampled_from([0, 1, 1.0000001, "0.5", False])
    if name in ("valid_from", "as_of", "since", "until"):
        return st.sampled_from(["2026-01-31T09:00:00+00:00", "2026-13-01", "yesterday", "9999-12-31T23:59:59",
                                "0001-01-01", "", "2026-01-31T09:00:00+25:00"]) | st.text(max_size=30)
    if name == "namespace":
        return st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True) | st.sampled_from(
            ["default", "a" * 65, "", "a b", "ns/../x", "命名", None])
    if name in ("tags", "predicates", "lanes"):
        return st.lists(text, max_size=40) | st.lists(st.sampled_from(["vector", "graph", "meta", "entity", "x"]),
                                                      max_size=5)
    if name == "entities":
        ent = text | st.fixed_dictionaries({"name": text}, optional={"kind": text, "aliases": st.lists(text, max_size=3),
                                                                     "bogus": text})
        return st.lists(ent, max_size=70)
    if name == "metadata":
        return st.dictionaries(st.text(max_size=10), json_values(), max_size=6) | st.sampled_from(
            ["{\"a\": 1}", "not json", "[]", {"big": "x" * 17_000}, {"nul": "a\x00"}])
    if name in ("id", "chunk_id"):
        return st.sampled_from(KNOWN_IDS) | st.from_regex(r"[mre]_[0-9a-f]{8,40}", fullmatch=True) | text
    if name in ("include_history", "confirm"):
        return st.booleans() | st.sampled_from(["true", 1, 0, None])
    return text


REQUIRED = {"memory_remember": ["content"], "memory_recall": ["query"], "memory_relate": ["subject", "predicate", "object"],
            "memory_forget": ["id"], "memory_purge": ["id", "confirm"], "memory_update": ["id", "content"],
            "memory_history": ["id"],
            "memory_graph_query": ["entity"], "memory_stats": []}
POOL = "<pool>"  # replaced at call time by an id the daemon really returned earlier in the run


def valid(name: str) -> st.SearchStrategy[Any]:
    """Values inside every limit, so that calls get past validation and reach storage and recall."""
    words = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=60)
    text = st.sampled_from(SQL_FTS + ["Alice moved to Berlin", "爱丽丝住在柏林", "sh600089 建仓 18.96",
                                      "$AAPL at 190", "O'Brien said \"hi\""]) | words
    if name in ("top_k",):
        return st.integers(1, 100)
    if name == "depth":
        return st.integers(1, 3)
    if name == "limit":
        return st.integers(1, 500)
    if name in ("importance", "confidence"):
        return st.floats(0, 1)
    if name in ("valid_from", "as_of", "since", "until"):
        return st.datetimes(timezones=st.just(datetime.timezone.utc)).map(lambda d: d.isoformat())
    if name == "namespace":
        return st.sampled_from(["default", "h1", "h:2", "h.3-x_y"])
    if name in ("tags", "predicates"):
        return st.lists(st.text(alphabet="abcxyz中文_-", min_size=1, max_size=10), max_size=4)
    if name == "lanes":
        return st.lists(st.sampled_from(["vector", "graph", "meta", "entity"]), min_size=1, max_size=4, unique=True)
    if name == "entities":
        return st.lists(text | st.fixed_dictionaries({"name": text}, optional={
            "kind": st.sampled_from(["person", "place", "org", "stock", "concept", "canonical_fact"]),
            "aliases": st.lists(text, max_size=3)}), max_size=5)
    if name == "metadata":
        return st.dictionaries(st.text(max_size=10), json_values(), max_size=4)
    if name in ("id", "chunk_id"):
        return st.integers(0, 10**6).map(lambda n: f"{POOL}{n}")
    if name in ("include_history", "confirm"):
        return st.booleans()
    if name in ("subject_kind", "object_kind"):
        return st.sampled_from(["person", "org", "stock", "concept"])
    return text


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    mode = draw(st.sampled_from(["valid", "one_bad", "hostile"]))
    args: dict[str, Any] = {}
    for name in TOOLS[tool]:
        if name in REQUIRED[tool] and mode != "hostile" or draw(st.integers(0, 2)) == 0:
            args[name] = draw(valid(name)) if mode != "hostile" else draw(
                json_values() if draw(st.integers(0, 9)) == 0 else plausible(name))
    if mode == "one_bad" and TOOLS[tool]:
        name = draw(st.sampled_from(TOOLS[tool]))
        args[name] = draw(json_values() | plausible(name))
    if mode == "hostile" and draw(st.integers(0, 9)) == 0:
        args[draw(st.sampled_from(["extra", "Content", "query ", "__proto__", "top-k"]))] = draw(json_values())
    return tool, args


daemon = module_daemon("hostile")


@pytest.fixture(scope="module")
def session(daemon: Daemon) -> Iterator[SyncSession]:
    with SyncSession(daemon, "sse") as s:
        yield s


def check(out: Outcome, tool: str, args: dict[str, Any]) -> None:
    if not out.ok:
        assert out.code in INPUT_ERROR_CODES, f"{tool}({json.dumps(args, default=repr)[:300]}) -> {out.text[:300]}"
        assert len(out.text) < 2000 and "Traceback" not in out.text


def test_property_every_tool_only_contract_errors(daemon: Daemon, session: SyncSession) -> None:
    seen: dict[str, int] = {}
    ids: dict[str, list[str]] = {}  # ids the daemon returned, per namespace, fed back into later calls
    started = time.monotonic()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not LONG,
              suppress_health_check=list(HealthCheck))
    @given(call=tool_calls())
    def prop(call: tuple[str, dict[str, Any]]) -> None:
        tool, args = call
        ns = args.get("namespace") if isinstance(args.get("namespace"), str) else "default"
        pool = ids.get(ns) or ["m_0000000000000000"]
        args = {k: (pool[int(v[len(POOL):]) % len(pool)] if isinstance(v, str) and v.startswith(POOL) else v)
                for k, v in args.items()}
        out = session.call(tool, args)
        check(out, tool, args)
        if out.ok:
            for key in ("chunk_id", "relation_id"):
                if isinstance(out.data.get(key), str):
                    ids.setdefault(ns, []).append(out.data[key])
        key = "ok" if out.ok else str(out.code)
        seen[key] = seen.get(key, 0) + 1

    prop()
    took = time.monotonic() - started
    body = health(daemon)
    assert body["_status"] == 200 and body["status"] == "ok"
    assert session.call("memory_stats", {}).ok
    print(f"\nHOSTILE examples={sum(seen.values())} outcomes={dict(sorted(seen.items()))} took_s={took:.1f}")
    assert sum(seen.values()) >= EXAMPLES and seen.get("invalid_argument", 0) > 0
    assert seen.get("ok", 0) > EXAMPLES // 5  # a good share reaches storage and recall, not just validation
    assert "internal" not in seen and "unavailable" not in seen
    assert "unexpected error" not in daemon.output()


@pytest.mark.parametrize("text", SQL_FTS)
def test_sql_and_fts_syntax_is_stored_and_found_literally(session: SyncSession, text: str) -> None:
    ns = "lit" + str(abs(hash(text)) % 10**8)
    content = f"literal probe {text} end"
    out = session.call("memory_remember", {"content": content, "namespace": ns})
    assert out.ok, out.text
    cid = out.data["chunk_id"]
    hist = session.call("memory_history", {"id": cid, "namespace": ns})
    assert hist.data["versions"][0]["content"] == content
    for query in (text, content):
        # min_relevance 0: this is about syntax reaching the engines literally, not about relevance.
        res = session.call("memory_recall", {"query": query, "namespace": ns, "min_relevance": 0})
        assert res.ok, res.text
        if res.data.get("skipped") is None:  # "*" and "^" alone are placeholder queries, skipped by design
            assert cid in [h["chunk_id"] for h in res.data["hits"]], (query, res.data)
    for lane in ("meta", "entity", "graph"):
        assert session.call("memory_recall", {"query": text, "namespace": ns, "lanes": [lane]}).ok
    stats = session.call("memory_stats", {"namespace": ns})
    assert stats.ok and stats.data["live_chunks"] == 1  # and the chunks table is still there


BAD_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    ("memory_remember", {"content": ""}, "invalid_argument"),
    ("memory_remember", {"content": "   \n\t "}, "invalid_argument"),
    ("memory_remember", {"content": "x" * 32_769}, "too_large"),
    ("memory_remember", {"content": "a\x00b"}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "importance": 1.5}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "importance": -0.1}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "importance": "0.5"}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "namespace": "bad ns"}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "namespace": "x" * 65}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "metadata": "not json"}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "metadata": {"k": "x" * 17_000}}, "too_large"),
    ("memory_remember", {"content": "fine text", "metadata": {"k": "a\x00"}}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "tags": ["t"] * 33}, "too_large"),
    ("memory_remember", {"content": "fine text", "tags": ["x" * 65]}, "too_large"),
    ("memory_remember", {"content": "fine text", "valid_from": "yesterday"}, "invalid_argument"),
    ("memory_remember", {"content": "fine text", "bogus": 1}, "invalid_argument"),
    ("memory_remember", {"content": "test"}, "invalid_argument"),
    ("memory_recall", {"query": "x", "top_k": 0}, "invalid_argument"),
    ("memory_recall", {"query": "x", "top_k": 101}, "invalid_argument"),
    ("memory_recall", {"query": "x", "top_k": 2.5}, "invalid_argument"),
    ("memory_recall", {"query": "x", "top_k": "5"}, "invalid_argument"),
    ("memory_recall", {"query": "x" * 2001}, "too_large"),
    ("memory_recall", {"query": "x", "lanes": ["bogus"]}, "invalid_argument"),
    ("memory_recall", {"query": "x", "as_of": "never"}, "invalid_argument"),
    ("memory_forget", {"id": "m_0123456789abcdef"}, "not_found"),
    ("memory_forget", {"id": "'; drop table chunks;--"}, "not_found"),  # ids are opaque (issue 14)
    ("memory_update", {"id": "m_0123456789abcdef", "content": "new text"}, "not_found"),
    ("memory_history", {"id": "m_0123456789abcdef"}, "not_found"),
    ("memory_graph_query", {"entity": "nobody at all"}, "not_found"),
    ("memory_graph_query", {"entity": "x", "depth": 4}, "invalid_argument"),
    ("memory_relate", {"subject": "a", "predicate": "p", "object": "b", "confidence": 2}, "invalid_argument"),
    ("memory_relate", {"subject": "a", "predicate": "p", "object": "b", "chunk_id": "m_0123456789abcdef"},
     "not_found"),
]


def test_core_bad_inputs_give_their_codes_and_store_nothing(session: SyncSession) -> None:
    before = session.call("memory_stats", {}).data
    for tool, args, code in BAD_INPUTS:
        out = session.call(tool, args)
        assert not out.ok and out.code == code, (tool, {k: str(v)[:40] for k, v in args.items()}, out.text[:200])
    after = session.call("memory_stats", {}).data
    assert (after["chunks"], after["entities"], after["relations"]) == (
        before["chunks"], before["entities"], before["relations"])
    # Control and bidi characters are stripped, not stored.
    out = session.call("memory_remember", {"content": "\u202eevil\u202c bidi \x07 text", "namespace": "strip"})
    assert out.ok
    stored = session.call("memory_history", {"id": out.data["chunk_id"], "namespace": "strip"}).data[
        "versions"][0]["content"]
    assert "evil" in stored and "text" in stored and not set(stored) & {"\u202e", "\u202c", "\x07"}


def _rpc(client: httpx.Client, d: Daemon, body: bytes, sid: str | None) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18", **d.headers()}
    if sid:
        headers["mcp-session-id"] = sid
    return client.post(d.mcp_url, content=body, headers=headers)


def _result(resp: httpx.Response) -> dict[str, Any]:
    text = resp.text
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        text = "\n".join(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


def test_raw_jsonrpc_lone_surrogates_invalid_utf8_and_garbage(daemon: Daemon) -> None:
    """Bytes no SDK client would send: each gets an error answer (or a 4xx), never a crash or a 5xx."""
    with httpx.Client(timeout=30) as client:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
        r = _rpc(client, daemon, json.dumps(init).encode(), None)
        assert r.status_code == 200, r.text
        sid = r.headers["mcp-session-id"]
        _rpc(client, daemon, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', sid)

        def call(args_json: bytes, n: int) -> tuple[int, dict[str, Any] | None]:
            body = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_remember",'
                    b'"arguments":' % n + args_json + b"}}")
            resp = _rpc(client, daemon, body, sid)
            return resp.status_code, (_result(resp) if resp.status_code == 200 else None)

        cases = [
            b'{"content":"lone \\ud800 surrogate"}',
            b'{"content":"low \\udfff first"}',
            b'{"content":"bad utf8 \xff\xfe here"}',
            b'{"content":"nul \\u0000 inside"}',
            b'{"content":"nan", "importance": NaN}',
            b'{"content":"inf", "importance": 1e999}',
            b'{"content":["a list"]}',
            b'"not an object"',
            b'{"content":"' + b"[" * 5000 + b'"}',
        ]
        for n, case in enumerate(cases, 10):
            status, body = call(case, n)
            assert status < 500, (case[:60], status)
            if body is not None and "result" in body:
                res = body["result"]
                assert res.get("isError") is True, (case[:60], res)
                assert res["content"][0]["text"].split("]")[0][1:] in INPUT_ERROR_CODES, res
        for garbage in (b"{", b"[]", b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":"x"}',
                        b"\xff\xfe\x00"):
            assert _rpc(client, daemon, garbage, sid).status_code < 500
    body = health(daemon)
    assert body["_status"] == 200 and body["status"] == "ok"


def test_namespaces_never_see_each_other(session: SyncSession) -> None:
    a = session.call("memory_remember", {"content": "Project Falcon launches in May", "namespace": "iso.a",
                                         "entities": [{"name": "Falcon", "kind": "concept"}]})
    assert a.ok
    cid = a.data["chunk_id"]
    session.call("memory_relate", {"subject": "Falcon", "predicate": "owned_by", "object": "Team A",
                                   "namespace": "iso.a"})
    assert session.call("memory_recall", {"query": "Project Falcon launches", "namespace": "iso.b"}).data["hits"] == []
    for tool, args in (("memory_history", {"id": cid}), ("memory_forget", {"id": cid}),
                       ("memory_update", {"id": cid, "content": "Project Falcon is cancelled"}),
                       ("memory_graph_query", {"entity": "Falcon"})):
        out = session.call(tool, {**args, "namespace": "iso.b"})
        assert not out.ok and out.code == "not_found", (tool, out.text)
    assert session.call("memory_stats", {"namespace": "iso.b"}).data["chunks"] == 0
    assert session.call("memory_history", {"id": cid, "namespace": "iso.a"}).data["versions"][0].get("valid_until") is None


def test_no_code_path_hard_deletes_user_rows() -> None:
    """A static check beside the behavioural ones: no DELETE on chunks, relations or entities anywhere but
    the explicit purge (store/shared.py's purge section, issue 29; tests/test_purge.py shows what it removes)."""
    root = Path(__file__).resolve().parent.parent
    offenders = []
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=root, capture_output=True, text=True, check=True)
    paths = [root / f for f in tracked.stdout.split() if not f.startswith("tests/")]
    assert len(paths) > 50 and root / "store" / "shared.py" in paths
    for path in paths:
        text = path.read_text(encoding="utf-8").lower()
        if path.name == "shared.py":
            head, _, rest = text.partition("# ------------------------------------------------------------ purge")
            assert rest, "store/shared.py has no purge section"
            text = head + rest[rest.index("# ------------------------------------------------------------ ", 1):]
        for table in ("chunks", "relations", "entities", "entity_aliases", "chunk_entities"):
            for stmt in (f"delete from {table} ", f"delete from {table}\"", f"drop table {table} ",
                         f"drop table if exists {table} "):
                if stmt in text:
                    offenders.append(f"{path.name}: {stmt.strip()}")
    assert offenders == []
