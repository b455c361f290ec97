"""Network edges against a real daemon on loopback: auth (401), Origin (403), Host (421), oversized
bodies (413), 1,000 connect/drop cycles with flat thread and fd counts, and local-only binding."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import daemon_util
import httpx
import pytest
from daemon_util import Daemon, module_daemon
from reliability_util import LONG, SyncSession, health, proc_counts

import i18n_messages

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral, pytest.mark.timeout(900)]

TOKEN = "rel-test-token-4f9c"
CYCLES = 5000 if LONG else 1000
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "drop", "version": "0"}}}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


daemon = module_daemon("net", token=TOKEN)


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_token_is_required_everywhere_but_health(daemon: Daemon) -> None:
    with httpx.Client(timeout=10) as c:
        assert c.get(daemon.url + "/health").status_code == 200
        for method, path in (("GET", "/sse"), ("POST", "/messages/?session_id=x"), ("POST", "/mcp"),
                             ("GET", "/mcp"), ("DELETE", "/mcp")):
            for headers in ({}, auth("wrong-token"), {"Authorization": "Basic " + TOKEN},
                            {"Authorization": "Bearer"}):
                r = c.request(method, daemon.url + path, headers={**MCP_HEADERS, **headers}, content=b"{}")
                assert r.status_code == 401, (method, path, headers, r.status_code)
                assert r.headers.get("www-authenticate", "").startswith("Bearer")
                assert r.json()["error"] == i18n_messages.t("server.unauthorized", "en")
        r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth()}, json=INIT)
        assert r.status_code == 200 and r.headers.get("mcp-session-id")


def test_foreign_origin_is_403_and_foreign_host_is_421(daemon: Daemon) -> None:
    with httpx.Client(timeout=10) as c:
        for origin in ("http://evil.example", "https://127.0.0.1.evil.example", "null", "file://"):
            r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth(), "Origin": origin}, json=INIT)
            assert r.status_code == 403, (origin, r.status_code)
        ok = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth(), "Origin": "http://localhost:3000"}, json=INIT)
        assert ok.status_code == 200
        for host in ("evil.example", "evil.example:8086", "127.0.0.1.nip.io", "192.168.1.10"):
            r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth(), "Host": host}, json=INIT)
            assert r.status_code == 421, (host, r.status_code)
            r = c.get(daemon.url + "/health", headers={"Host": host})
            assert r.status_code == 421, (host, r.status_code)


def test_oversized_bodies_are_refused(daemon: Daemon) -> None:
    limit = 1_048_576  # max_request_bytes' default
    big = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "memory_remember", "arguments": {"content": "x" * (limit + 10)}}}).encode()
    with httpx.Client(timeout=30) as c:
        r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth()}, content=big)
        assert r.status_code == 413 and r.json()["error"] == i18n_messages.t("server.too_large", "en", limit=limit)
        r = c.post(daemon.url + "/messages/?session_id=0", headers={**MCP_HEADERS, **auth()}, content=big)
        assert r.status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: the size shows only while reading
            for i in range(0, len(big), 65536):
                yield big[i:i + 65536]

        r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth()}, content=chunks())
        assert r.status_code == 413, r.status_code
    assert health(daemon)["status"] == "ok"


def _sse_cycle(daemon: Daemon) -> None:
    with httpx.Client(timeout=10) as c, c.stream("GET", daemon.sse_url, headers=auth()) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data:"):
                break  # got the endpoint event: drop the stream here


def _http_cycle(daemon: Daemon) -> None:
    with httpx.Client(timeout=10) as c:
        r = c.post(daemon.mcp_url, headers={**MCP_HEADERS, **auth()}, json=INIT)
        assert r.status_code == 200  # and leave without DELETE


def _raw_cycle(daemon: Daemon, partial: bool) -> None:
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
        if partial:  # half a request, then gone
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\"")


def test_connect_drop_cycles_leak_no_threads_or_fds(daemon: Daemon) -> None:
    pid = daemon.proc.pid

    def cycle(i: int) -> None:
        kind = i % 4
        if kind == 0:
            _sse_cycle(daemon)
        elif kind == 1:
            _http_cycle(daemon)
        else:
            _raw_cycle(daemon, partial=kind == 3)

    for i in range(40):  # warm up thread pools and caches
        cycle(i)
    time.sleep(1.0)
    threads0, fds0 = proc_counts(pid)
    rss0 = _rss_kib(pid)
    t0 = time.monotonic()
    for i in range(CYCLES):
        cycle(i)
    took = time.monotonic() - t0
    # Let the server notice the last drops, then compare.
    deadline = time.monotonic() + 20
    while True:
        threads1, fds1 = proc_counts(pid)
        if (threads1 <= threads0 + 2 and fds1 <= fds0 + 4) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    rss1 = _rss_kib(pid)
    print(f"\nCYCLES n={CYCLES} took_s={took:.1f} threads {threads0}->{threads1} fds {fds0}->{fds1} "
          f"rss_kib {rss0}->{rss1}")
    assert threads1 <= threads0 + 2, (threads0, threads1)
    assert fds1 <= fds0 + 4, (fds0, fds1)
    s = SyncSession(daemon)  # and it still serves a real client
    try:
        assert s.call("memory_stats", {}).ok
    finally:
        s.close()


def _rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))


def _listening_addresses(pid: int) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            parts = line.split()
            if parts[9] in inodes and parts[3] == "0A":  # LISTEN
                out.add(parts[1].split(":")[0])
    return out


def test_local_only_by_default(daemon: Daemon, tmp_path: Path) -> None:
    # The running daemon listens on 127.0.0.1 only (0100007F in /proc/net/tcp).
    assert _listening_addresses(daemon.proc.pid) == {"0100007F"}
    # A non-loopback address without a token is refused before anything is opened.
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([sys.executable, str(daemon_util.SERVER), "--host", "0.0.0.0", "--port", "0",
                           "--db", str(tmp_path / "x.db")], env=daemon_util.daemon_env(home), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().startswith("[unavailable] refusing to listen on 0.0.0.0"), proc.stderr
    assert not (tmp_path / "x.db").exists()
