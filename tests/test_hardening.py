"""Issue 16: what a hostile review of the running daemon found, each attack replayed against a real daemon
on loopback (real SQLite file under tmp_path, real model). See docs/RELIABILITY.md, "Hostile review"."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_util import Daemon, module_daemon, running_daemon
from dashboard_util import login_url
from reliability_util import SyncSession

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "harden-token-7c1e"
EXTREME_TIMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]
DEEP = '{"a": ' * 3000 + "1" + "}" * 3000  # metadata as a JSON string nested 3,000 deep


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


daemon = module_daemon("harden", token=TOKEN)


@pytest.fixture(scope="module")
def session(daemon: Daemon) -> Iterator[SyncSession]:
    with SyncSession(daemon, "http") as s:
        yield s


@pytest.fixture(scope="module")
def api(daemon: Daemon) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=60) as c:
        yield c


# ---------------------------------------------------------------- 7: extreme times, deep metadata


@pytest.mark.parametrize("when", EXTREME_TIMES)
def test_extreme_iso_times_are_invalid_arguments(session: SyncSession, api: httpx.Client, when: str) -> None:
    calls = [("memory_remember", {"content": "Extreme times must not crash the daemon.", "valid_from": when}),
             ("memory_recall", {"query": "extreme", "as_of": when}),
             ("memory_recall", {"query": "extreme", "since": when}),
             ("memory_recall", {"query": "extreme", "until": when}),
             ("memory_relate", {"subject": "Ann", "predicate": "knows", "object": "Bo", "valid_from": when}),
             ("memory_graph_query", {"entity": "Ann", "as_of": when})]
    for tool, args in calls:
        out = session.call(tool, args)
        assert out.code == "invalid_argument", (tool, out.text)
        assert "UTC" in out.text and "0001-01-02" in out.text, out.text
    for name in ("as_of", "since", "until"):
        r = api.get("/ui/api/recall", params={"q": "extreme", name: when}, headers={"x-memlane-lang": "zh"})
        assert r.status_code == 400, (name, r.status_code, r.text)
        assert r.json()["error"]["code"] == "invalid_argument" and "UTC" in r.json()["error"]["message"]


def test_deeply_nested_metadata_is_an_invalid_argument(session: SyncSession, api: httpx.Client) -> None:
    out = session.call("memory_remember", {"content": "Deep metadata must be refused.", "metadata": DEEP})
    assert out.code == "invalid_argument" and "32" in out.text, out.text
    nested: dict[str, object] = {"v": 1}
    for _ in range(40):  # an object (not a string) nested past the limit, within the SDK's own JSON limits
        nested = {"a": nested}
    out = session.call("memory_remember", {"content": "Deep metadata must be refused.", "metadata": nested})
    assert out.code == "invalid_argument", out.text
    ok = session.call("memory_remember", {"content": "Shallow metadata is fine.", "metadata": {"a": {"b": [1]}}})
    assert ok.ok, ok.text
    cid = ok.data["chunk_id"]
    r = api.post(f"/ui/api/memory/{cid}/update", json={"content": "Still shallow.", "metadata": DEEP})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_argument", r.text
    r = api.post(f"/ui/api/memory/{cid}/update", content=("[" * 3000 + "]" * 3000).encode(),
                 headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_argument", r.text


# ---------------------------------------------------------------- 8: whole-string argument patterns


@pytest.mark.parametrize("namespace", ["default\n", "user:alice\n", "a" * 64 + "\n"])
def test_a_trailing_newline_never_makes_a_new_namespace(session: SyncSession, namespace: str) -> None:
    out = session.call("memory_remember", {"content": "Newline namespaces are refused.", "namespace": namespace})
    assert out.code == "invalid_argument" and "namespace" in out.text, out.text
    out = session.call("memory_recall", {"query": "newline", "namespace": namespace})
    assert out.code == "invalid_argument", out.text


def test_an_id_with_a_trailing_newline_is_not_an_id(session: SyncSession) -> None:
    ok = session.call("memory_remember", {"content": "The id check matches the whole string."})
    assert ok.ok
    out = session.call("memory_history", {"id": ok.data["chunk_id"] + "\n"})
    # Ids are opaque (contract v2, issue 14): another string is an id never issued, not this memory.
    assert out.code == "not_found", out.text


# ---------------------------------------------------------------- 12: a stray MEMLANE_* variable


def test_an_unknown_env_variable_warns_and_the_daemon_starts(tmp_path: Path) -> None:
    with running_daemon(tmp_path, env={"MEMLANE_PORTT": "1"}) as d:
        assert httpx.get(d.url + "/health", timeout=10).status_code == 200
        assert any("MEMLANE_PORTT" in line and "Did you mean MEMLANE_PORT?" in line for line in d.lines), d.output()
    with running_daemon(tmp_path, env={"MEMLANE_PORTT": "1"}, lang="zh") as d:
        assert any("MEMLANE_PORTT" in line and "忽略环境变量" in line for line in d.lines), d.output()


def test_an_unknown_env_variable_does_not_stop_the_health_check(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(tmp_path), MEMLANE_LANG="en", MEMLANE_PORTT="1", MEMLANE_PORT=str(_free_port()))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "health_check.py")], env=env, cwd=str(ROOT),
                         capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert "Did you mean MEMLANE_PORT?" in out.stderr, out.stderr + out.stdout
    assert "daemon down" in out.stdout, out.stdout  # it ran its checks (nothing listens on that port)


# ---------------------------------------------------------------- 6: framing and a strict CSP on every /ui response


def _raw(d: Daemon, data: bytes, read: bool = True) -> bytes:
    """Send raw bytes to the daemon on loopback; return what comes back until it closes (bounded)."""
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
        s.sendall(data)
        if not read:
            return b""
        out = b""
        while len(out) < 1_000_000:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out


def test_every_ui_response_forbids_framing_and_inline_code(daemon: Daemon, api: httpx.Client) -> None:
    anon = httpx.Client(base_url=daemon.url, timeout=30)
    responses = [api.get("/ui/"), api.get("/ui/api/meta"), api.get("/ui/static/app.js"), api.get("/ui/nowhere"),
                 anon.get("/ui/"), anon.get("/ui/api/meta"), anon.get("/ui/login?token=wrong"),
                 anon.get("/ui/api/meta", headers={"Origin": "http://evil.example"}),
                 anon.get("/ui/", headers={"Host": "evil.example"})]
    assert {r.status_code for r in responses} == {200, 401, 403, 404, 421}
    for r in responses:
        csp = r.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and "default-src 'self'" in csp, (r.url, r.status_code, csp)
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert r.headers.get("x-frame-options") == "DENY", (r.url, r.status_code)
    assert "content-security-policy" not in httpx.get(daemon.url + "/health", timeout=10).headers
    anon.close()


# ---------------------------------------------------------------- 10: logout revokes; no token in a URL


def _cookie(r: httpx.Response) -> str:
    assert r.status_code == 303, r.text
    return r.headers["set-cookie"].split("memlane_ui=", 1)[1].split(";", 1)[0]


def test_logout_revokes_the_cookie_and_the_token_is_never_accepted_in_a_url(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with running_daemon(tmp_path / "a", db_path=db, token=TOKEN) as d, httpx.Client(timeout=30) as c:
        assert c.get(d.url + f"/ui/login?token={TOKEN}").status_code == 401
        printed = _cookie(c.get(login_url(d.lines)))  # the printed one-time link still signs in
        formed = _cookie(c.post(d.url + "/ui/login", data={"token": TOKEN}))
        c.cookies.clear()
        for value in (printed, formed):
            assert c.get(d.url + "/ui/api/meta", headers={"cookie": f"memlane_ui={value}"}).status_code == 200
        r = c.post(d.url + "/ui/logout", headers={"cookie": f"memlane_ui={printed}"})
        assert r.status_code == 303 and 'memlane_ui=""' in r.headers["set-cookie"]
        assert c.get(d.url + "/ui/api/meta", headers={"cookie": f"memlane_ui={printed}"}).status_code == 401
        assert c.get(d.url + "/ui/", headers={"cookie": f"memlane_ui={printed}"}).status_code == 401
        assert c.get(d.url + "/ui/api/meta", headers={"cookie": f"memlane_ui={formed}"}).status_code == 200
    # After a restart the revoked cookie stays refused, and a cookie never logged out still works.
    with running_daemon(tmp_path / "b", db_path=db, token=TOKEN) as d, httpx.Client(timeout=30) as c:
        assert c.get(d.url + "/ui/api/meta", headers={"cookie": f"memlane_ui={printed}"}).status_code == 401
        assert c.get(d.url + "/ui/api/meta", headers={"cookie": f"memlane_ui={formed}"}).status_code == 200
    mode = (db.with_name(db.name + ".ui-sessions")).stat().st_mode & 0o777
    assert mode == 0o600, oct(mode)


# ---------------------------------------------------------------- 11: an aborted dashboard POST


def test_an_aborted_dashboard_post_logs_no_traceback(daemon: Daemon, session: SyncSession) -> None:
    ok = session.call("memory_remember", {"content": "Aborted posts leave this memory as it is."})
    assert ok.ok
    head = (f"POST /ui/api/memory/{ok.data['chunk_id']}/update HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n")
    before = len(daemon.lines)
    for _ in range(20):
        _raw(daemon, head.encode() + b'{"content": "half a bo', read=False)
    assert httpx.get(daemon.url + "/health", timeout=10).status_code == 200
    time.sleep(1.0)
    logged = "\n".join(daemon.lines[before:])
    assert "Traceback" not in logged and "ClientDisconnect" not in logged, logged[:3000]
    history = session.call("memory_history", {"id": ok.data["chunk_id"]})
    assert len(history.data["versions"]) == 1


# ---------------------------------------------------------------- 3: /health and light calls beside slow searches


def test_health_and_light_calls_answer_while_slow_recalls_hold_every_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    import daemon_util
    from daemon_util import mcp_session
    from reliability_util import FAULT_DAEMON

    monkeypatch.setattr(daemon_util, "SERVER", FAULT_DAEMON)
    slow_s = 8.0
    env = {"RELIABILITY_SLOW_RECALL_S": str(slow_s), "MEMLANE_CALL_QUEUE_TIMEOUT_S": "2"}
    with running_daemon(tmp_path, env=env) as d:
        async def go() -> dict[str, float | str]:
            async with mcp_session(d, "http") as a, mcp_session(d, "sse") as b:
                # Warm up first (the tokenizer's dictionary loads on the first remember): not what is measured.
                assert not (await b.call_tool("memory_remember", {"content": "Warm-up before the slow searches."})).is_error
                started = asyncio.get_running_loop().time()
                slow = [asyncio.create_task((a if i % 2 else b).call_tool(
                    "memory_recall", {"query": f"slow-recall number {i}"})) for i in range(8)]
                await asyncio.sleep(1.0)  # all eight now hold a worker each

                async def timed(coro: object) -> tuple[float, object]:
                    t0 = asyncio.get_running_loop().time()
                    res = await coro  # type: ignore[misc]
                    return asyncio.get_running_loop().time() - t0, res

                async with httpx.AsyncClient(timeout=30) as http:
                    health_s, r = await timed(http.get(d.url + "/health"))
                    assert r.status_code == 200 and r.json()["status"] == "ok"
                stats_s, stats = await timed(a.call_tool("memory_stats", {}))
                remember_s, rem = await timed(b.call_tool("memory_remember", {"content": "Light calls get through."}))
                ninth_s, ninth = await timed(a.call_tool("memory_recall", {"query": "one more search"}))
                still_running = not any(task.done() for task in slow)
                results = await asyncio.gather(*slow)
                assert not stats.is_error and not rem.is_error and all(not x.is_error for x in results)
                return {"health": health_s, "stats": stats_s, "remember": remember_s, "ninth": ninth_s,
                        "ninth_text": ninth.content[0].text, "running": str(still_running),
                        "total": asyncio.get_running_loop().time() - started}

        out = asyncio.run(go())
    assert out["running"] == "True", out  # the measurements above were taken while all eight were running
    assert float(out["health"]) < 1.0 and float(out["stats"]) < 2.0 and float(out["remember"]) < 3.0, out
    # A search that finds every search worker taken is refused after the bound, not queued behind them.
    assert str(out["ninth_text"]).startswith("[unavailable]") and 1.5 < float(out["ninth"]) < 4.0, out


# ---------------------------------------------------------------- 4: idle, trickled and too many connections


def _still_open(s: socket.socket) -> bool:
    """True while the daemon keeps `s` open (reads and discards anything it sent)."""
    s.setblocking(False)
    try:
        while True:
            if not s.recv(65536):
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def _open_attack(port: int) -> tuple[list[socket.socket], list[socket.socket]]:
    """40 sockets: 14 idle, 13 trickling a request head, 13 trickling a body. Returns (all, tricklers)."""
    idle, heads, bodies = [], [], []
    for i in range(40):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 3 == 1:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            heads.append(s)
        elif i % 3 == 2:
            s.sendall(b"POST /ui/api/memory/m_0123456789abcdef/update HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"content\": \"")
            bodies.append(s)
        else:
            idle.append(s)
    return idle + heads + bodies, heads + bodies


def test_idle_and_trickling_connections_are_closed_and_health_still_answers(tmp_path: Path) -> None:
    import resource

    def low_fd_limit() -> None:  # runs in the daemon's process only
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))

    log_file = tmp_path / "daemon.log"
    env = {"MEMLANE_HEADER_TIMEOUT_S": "3", "MEMLANE_BODY_TIMEOUT_S": "3", "MEMLANE_KEEPALIVE_TIMEOUT_S": "2",
           "MEMLANE_LOG_FILE": str(log_file)}
    with running_daemon(tmp_path, env=env, preexec_fn=low_fd_limit) as d:
        sockets, tricklers = _open_attack(d.port)
        try:
            # With 40 sockets held against a 48-descriptor limit, /health, /mcp and /ui still answer at once.
            with httpx.Client(timeout=5) as c:
                assert c.get(d.url + "/health").json()["status"] == "ok"
                r = c.post(d.mcp_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
                           headers={"Accept": "application/json, text/event-stream"})
                assert r.status_code == 200, r.text
                assert c.get(d.url + "/ui/").status_code == 200
            deadline = time.monotonic() + 8  # every deadline is 3 s; trickle a byte each 0.5 s meanwhile
            while time.monotonic() < deadline and any(_still_open(s) for s in sockets):
                for s in tricklers:
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
                time.sleep(0.5)
            left = sum(_still_open(s) for s in sockets)
            assert left == 0, f"{left} of 40 idle or trickling connections still open after 8 s"
        finally:
            for s in sockets:
                s.close()
        assert httpx.get(d.url + "/health", timeout=5).status_code == 200
    # A burst of accepts can still meet the descriptor limit for a moment; the log says so at most 3 times.
    text = log_file.read_text(errors="replace")
    assert log_file.stat().st_size < 64 * 1024 and text.count("Too many open files") <= 3, text[-3000:]


# ---------------------------------------------------------------- 1: files private to their owner


def _mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777  # tests run as root: the mode bits, not access(), tell the truth


def _script_env(home: Path, lang: str = "en") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(home), MEMLANE_LANG=lang, PYTHONIOENCODING="utf-8")
    return env


def test_everything_memlane_creates_is_private(tmp_path: Path) -> None:
    os.umask(0o022)  # the usual umask, under which 0755 folders and 0644 files appeared
    db = tmp_path / "data" / "sub" / "memory.db"
    log_file = tmp_path / "logs" / "daemon.log"
    with running_daemon(tmp_path, db_path=db, token=TOKEN, env={"MEMLANE_LOG_FILE": str(log_file)}) as d:
        s = SyncSession(d, "http")
        try:
            assert s.call("memory_remember", {"content": "Private files stay private."}).ok
        finally:
            s.close()
        with httpx.Client(timeout=30) as c:
            c.get(login_url(d.lines))  # the session file
        files = [db, db.with_name("memory.db-wal"), db.with_name("memory.db-shm"), db.with_name("memory.db.lock"),
                 db.with_name("memory.db.ui-sessions"), log_file]
        modes = {p.name: oct(_mode(p)) for p in files}
        assert set(modes.values()) == {"0o600"}, modes
        dirs = {p.name: oct(_mode(p)) for p in (db.parent, db.parent.parent, log_file.parent)}
        assert set(dirs.values()) == {"0o700"}, dirs

    # A database made readable by an older version is tightened at the next start.
    os.chmod(db, 0o644)
    env = _script_env(tmp_path / "home")
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "health_check.py"), "--db", str(db)], env=env,
                         cwd=str(ROOT), capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert f"🟡 {db} has mode 0o644" in out.stdout and f"chmod 600 {db}" in out.stdout, out.stdout
    zh = subprocess.run([sys.executable, str(ROOT / "scripts" / "health_check.py"), "--db", str(db)],
                        env=_script_env(tmp_path / "home", "zh"), cwd=str(ROOT), capture_output=True, text=True,
                        encoding="utf-8", timeout=120)
    assert "本机其他用户可以读取" in zh.stdout, zh.stdout
    with running_daemon(tmp_path, db_path=db):
        assert _mode(db) == 0o600

    # Backups: 0600 files in a 0700 folder, whatever the caller's umask.
    dest = tmp_path / "backups" / "daily"
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "backup.py"), "--db", str(db), "--dest", str(dest)],
                         env=env, cwd=str(ROOT), capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0, out.stderr
    backups = list(dest.glob("*.db"))
    assert backups and {_mode(p) for p in backups} == {0o600}
    assert _mode(dest) == 0o700 and _mode(dest.parent) == 0o700


# ---------------------------------------------------------------- 9: secrets outside content; recall_log

KEY = "ghp_" + "Zx9" * 15
SECRET_CALLS = [
    ("memory_remember", {"content": "A memory with a secret in its metadata.", "metadata": {"auth": f"Bearer {KEY}"}}),
    ("memory_remember", {"content": "A memory with a secret in its tags.", "tags": ["ok", KEY]}),
    ("memory_remember", {"content": "A memory with a secret in its source.", "source": KEY}),
    ("memory_remember", {"content": "A memory with a secret entity.", "entities": [KEY]}),
    ("memory_remember", {"content": "A memory with a secret alias.",
                         "entities": [{"name": "Vault", "aliases": ["13812345678"]}]}),
    ("memory_relate", {"subject": "Alice", "predicate": "has_key", "object": KEY}),
]


@pytest.fixture(scope="module")
def rejecting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("pii"), env={"MEMLANE_PII": "reject"}) as d:
        yield d


@pytest.mark.parametrize(("tool", "args"), SECRET_CALLS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(SECRET_CALLS)])
def test_pii_reject_refuses_a_secret_in_any_field(rejecting: Daemon, tool: str, args: dict[str, object]) -> None:
    s = SyncSession(rejecting, "http")
    try:
        out = s.call(tool, args)
        assert out.code == "invalid_argument" and "contains sensitive data" in out.text, out.text
        assert KEY not in out.text and "13812345678" not in out.text
        ok = s.call("memory_remember", {"content": "Clean memories are still stored.", "tags": ["clean"]})
        assert ok.ok and s.call("memory_update", {"id": ok.data["chunk_id"], "content": "Still clean.",
                                                  "tags": [KEY]}).code == "invalid_argument"
    finally:
        s.close()


def test_recall_log_keeps_no_bearer_token_token_tail_or_phone(tmp_path: Path) -> None:
    import sqlean

    query = f"why does {KEY} fail with Authorization: Bearer abcDEF123456.xyz-987 for +1 415-555-0132 or 010-62345678"
    with running_daemon(tmp_path) as d:
        s = SyncSession(d, "http")
        try:
            assert s.call("memory_recall", {"query": query}).ok
        finally:
            s.close()
    db = sqlean.connect(d.db_path)
    (logged,) = db.execute("select query from recall_log order by rowid desc limit 1").fetchone()
    db.close()
    for secret in ("Zx9", "abcDEF123456", "xyz-987", "555-0132", "62345678"):
        assert secret not in logged, (secret, logged)
