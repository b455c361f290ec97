"""The daemon's guards, end to end: token, Host/Origin, body size, bind refusal, the database lock, signals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_util import SESSION_ERRORS, Daemon, mcp_session, running_daemon, spawn_daemon, start_daemon

pytestmark = pytest.mark.e2e

TOKEN = "test-token-4f1c9a"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon with a token and a small request limit."""
    with running_daemon(tmp_path_factory.mktemp("sec"), token=TOKEN,
                        env={"MEMLANE_MAX_REQUEST_BYTES": "4096"}) as d:
        yield d
    assert d.returncode == 0, d.output()


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_health_needs_no_token(guarded: Daemon) -> None:
    r = httpx.get(guarded.url + "/health", timeout=10)
    assert r.status_code == 200 and r.json()["status"] == "ok"


@pytest.mark.parametrize(("method", "path"), [("GET", "/sse"), ("POST", "/messages/?session_id=abc"),
                                              ("POST", "/mcp"), ("GET", "/mcp"), ("GET", "/anything-else")])
@pytest.mark.parametrize("header", [None, "Bearer wrong-token", "Basic dGVzdA==", f"bearer {TOKEN}x", "Bearer x"])
def test_every_other_path_needs_the_token(guarded: Daemon, method: str, path: str, header: str | None) -> None:
    headers = {**MCP_HEADERS, **({"Authorization": header} if header else {})}
    r = httpx.request(method, guarded.url + path, headers=headers, json=INIT if method == "POST" else None,
                      timeout=10)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer" in r.json()["error"]


def test_the_token_opens_the_door(guarded: Daemon) -> None:
    r = httpx.post(guarded.mcp_url, headers={**MCP_HEADERS, **auth()}, json=INIT, timeout=10)
    assert r.status_code == 200
    # One JSON body, not an SSE stream (json_response): what curl in the README prints as is.
    assert r.headers["content-type"].startswith("application/json") and r.json()["result"]["serverInfo"]
    r = httpx.post(guarded.mcp_url, headers={**MCP_HEADERS, "Authorization": f"bearer {TOKEN}"}, json=INIT,
                   timeout=10)
    assert r.status_code == 200  # the scheme is case-insensitive

    async def go() -> None:
        for transport in ("sse", "http"):
            async with mcp_session(guarded, transport) as s:
                res = await s.call_tool("memory_stats", {})
                assert not res.is_error and res.structured_content["schema_version"] >= 1

    asyncio.run(go())


@pytest.mark.parametrize("origin", ["http://evil.example", "https://127.0.0.1.evil.example", "null",
                                    "http://localhost.evil.example:8086", "file://"])
@pytest.mark.parametrize(("method", "path"), [("GET", "/health"), ("GET", "/sse"), ("POST", "/mcp"),
                                              ("POST", "/messages/?session_id=abc")])
def test_a_foreign_origin_gets_403(guarded: Daemon, origin: str, method: str, path: str) -> None:
    r = httpx.request(method, guarded.url + path, headers={**MCP_HEADERS, **auth(), "Origin": origin},
                      json=INIT if method == "POST" else None, timeout=10)
    assert r.status_code == 403, r.text


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1:8086", "https://localhost"])
def test_a_local_origin_is_accepted(guarded: Daemon, origin: str) -> None:
    r = httpx.post(guarded.mcp_url, headers={**MCP_HEADERS, **auth(), "Origin": origin}, json=INIT, timeout=10)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8086", "127.0.0.1.nip.io", "10.0.0.1:8086"])
@pytest.mark.parametrize(("method", "path"), [("GET", "/health"), ("POST", "/mcp"), ("GET", "/sse")])
def test_a_foreign_host_is_refused(guarded: Daemon, host: str, method: str, path: str) -> None:
    r = httpx.request(method, guarded.url + path, headers={**MCP_HEADERS, **auth(), "Host": host},
                      json=INIT if method == "POST" else None, timeout=10)
    assert r.status_code == 421, r.text


def test_an_oversized_body_gets_413(guarded: Daemon) -> None:
    big = {**INIT, "params": {**INIT["params"], "pad": "x" * 5000}}
    for path in ("/mcp", "/messages/?session_id=abc"):
        r = httpx.post(guarded.url + path, headers={**MCP_HEADERS, **auth()}, content=json.dumps(big), timeout=10)
        assert r.status_code == 413, (path, r.status_code, r.text)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the transport counts while it reads
        body = json.dumps(big).encode()
        for i in range(0, len(body), 1000):
            yield body[i:i + 1000]

    r = httpx.post(guarded.mcp_url, headers={**MCP_HEADERS, **auth()}, content=chunks(), timeout=10)
    assert r.status_code == 413, r.text


def test_a_non_loopback_bind_without_token_is_refused(tmp_path: Path) -> None:
    d = spawn_daemon(tmp_path, args=["--host", "0.0.0.0"])
    assert d.proc.wait(60) == 1
    d.proc.wait()
    out = d.output()
    assert "refusing to listen on 0.0.0.0" in out and "MEMLANE_AUTH_TOKEN" in out
    assert "🟢" not in out


def test_the_token_file_is_used_and_must_be_private(tmp_path: Path) -> None:
    token_file = tmp_path / "home" / ".memlane" / "auth_token"
    token_file.parent.mkdir(parents=True)
    token_file.write_text("file-token-77\n")
    os.chmod(token_file, 0o644)
    d = spawn_daemon(tmp_path)
    assert d.proc.wait(60) == 1
    assert "chmod 600" in d.output() and "🟢" not in d.output()

    os.chmod(token_file, 0o600)
    with running_daemon(tmp_path) as d:
        assert httpx.post(d.mcp_url, headers=MCP_HEADERS, json=INIT, timeout=10).status_code == 401
        r = httpx.post(d.mcp_url, headers={**MCP_HEADERS, **auth("file-token-77")}, json=INIT, timeout=10)
        assert r.status_code == 200
    assert d.returncode == 0


def test_a_second_daemon_on_the_same_database_is_refused(tmp_path: Path) -> None:
    with running_daemon(tmp_path / "a", db_path=tmp_path / "shared.db") as first:
        second = spawn_daemon(tmp_path / "b", db_path=tmp_path / "shared.db")
        assert second.proc.wait(60) == 1
        assert "another memlane daemon is already using" in second.output()
        assert "🟢" not in second.output()
        zh = spawn_daemon(tmp_path / "c", db_path=tmp_path / "shared.db", lang="zh")
        assert zh.proc.wait(60) == 1
        assert "另一个 memlane 守护进程正在使用" in zh.output()
        assert httpx.get(first.url + "/health", timeout=10).status_code == 200
    # Once the first one is gone, the file is free again.
    with running_daemon(tmp_path / "d", db_path=tmp_path / "shared.db") as third:
        assert httpx.get(third.url + "/health", timeout=10).json()["status"] == "ok"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_daemon_cleanly(tmp_path: Path, sig: int) -> None:
    d = start_daemon(tmp_path)

    async def open_streams() -> None:
        # An idle SSE stream and a Streamable HTTP session stay open while the signal arrives.
        async with mcp_session(d, "sse") as s1, mcp_session(d, "http") as s2:
            await s1.call_tool("memory_remember", {"content": "Signals should not lose this note."})
            await s2.call_tool("memory_stats", {})
            d.proc.send_signal(sig)
            await asyncio.sleep(0.5)

    # The server going away may end the sessions with an error; that is not what this test checks.
    with contextlib.suppress(*SESSION_ERRORS):
        asyncio.run(open_streams())
    assert d.stop() == 0, d.output()
    assert "memlane stopped cleanly" in d.output()
    with running_daemon(tmp_path) as again:
        hits = asyncio.run(_recall(again, "Signals should not lose"))
        assert any("Signals should not lose this note." == h["content"] for h in hits)


def test_signals_repeated_while_the_daemon_stops_do_not_kill_it(tmp_path: Path) -> None:
    # A user presses Ctrl-C, then systemd or a second Ctrl-C follows while the daemon is still stopping, with
    # streams open: every signal after the first is ignored until the store is closed, wherever it falls.
    d = start_daemon(tmp_path)
    sent = 0

    def repeat() -> None:  # a signal every 10 ms, SIGTERM and SIGINT in turn, until the daemon exits (10 s at most)
        nonlocal sent
        while d.proc.poll() is None and sent < 1000:
            with contextlib.suppress(ProcessLookupError):
                d.proc.send_signal(signal.SIGTERM if sent % 2 == 0 else signal.SIGINT)
            sent += 1
            with contextlib.suppress(subprocess.TimeoutExpired):
                d.proc.wait(0.01)

    async def open_streams() -> None:
        async with mcp_session(d, "sse") as s1, mcp_session(d, "http") as s2:
            await s1.call_tool("memory_remember", {"content": "A second signal should not lose this note."})
            await s2.call_tool("memory_stats", {})
            d.proc.send_signal(signal.SIGINT)
            spam = threading.Thread(target=repeat)
            spam.start()
            await asyncio.sleep(0.5)
        spam.join(15)

    with contextlib.suppress(*SESSION_ERRORS):
        asyncio.run(open_streams())
    assert d.stop() == 0, d.output()
    assert sent > 1 and "memlane stopped cleanly" in d.output()
    with running_daemon(tmp_path) as again:
        hits = asyncio.run(_recall(again, "A second signal should not lose"))
        assert any("A second signal should not lose this note." == h["content"] for h in hits)


async def _recall(d: Daemon, query: str) -> list[dict[str, object]]:
    async with mcp_session(d, "http") as s:
        res = await s.call_tool("memory_recall", {"query": query})
        assert not res.is_error
        return res.structured_content["hits"]


def test_bad_flags_are_refused_with_a_message(tmp_path: Path) -> None:
    d = spawn_daemon(tmp_path, args=["--port", "99999"])
    assert d.proc.wait(60) == 1
    assert d.output().startswith("[invalid_argument] config key port in arguments must be an integer from 0 to")
    d = spawn_daemon(tmp_path, args=["--transport", "carrier-pigeon"])
    assert d.proc.wait(60) == 1
    assert "transport" in d.output() and "sse, http, both" in d.output()


def test_transport_sse_serves_sse_only(tmp_path: Path) -> None:
    with running_daemon(tmp_path, args=["--transport", "sse"]) as d:
        assert "(sse)" in d.ready_line
        assert httpx.post(d.mcp_url, headers=MCP_HEADERS, json=INIT, timeout=10).status_code == 404

        async def go() -> None:
            async with mcp_session(d, "sse") as s:
                assert not (await s.call_tool("memory_stats", {})).is_error

        asyncio.run(go())
