"""The daemon's error mapping, in process, over a real Memory."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

import mcp_server
from config import load_config
from memory import Memory


def test_unexpected_exception_becomes_internal_with_a_logged_traceback(
        mem: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    server = mcp_server.MemlaneMCP(mem, "en")

    def boom(**_: object) -> dict[str, object]:
        raise RuntimeError("secret detail 12345")

    monkeypatch.setattr(mem, "stats", boom)
    with caplog.at_level(logging.ERROR, logger="memlane.server"):
        res = asyncio.run(server.call_tool("memory_stats", {}))
    text = res.content[0].text
    assert res.is_error and text.startswith("[internal] ") and "RuntimeError" in text
    assert "secret detail" not in text  # the detail stays in the log
    assert any(r.exc_info and "secret detail 12345" in str(r.exc_info[1]) for r in caplog.records)


def test_memlane_error_is_rendered_in_the_daemon_language(tmp_path: Path, e5: object) -> None:
    m = Memory(tmp_path / "m.db", config=load_config({"HOME": str(tmp_path)}), embedder=e5)  # type: ignore[arg-type]
    server = mcp_server.MemlaneMCP(m, "zh")
    m.close()
    res = asyncio.run(server.call_tool("memory_stats", {}))
    assert res.is_error and res.content[0].text.startswith("[unavailable] ")
    assert "已关闭" in res.content[0].text
    res = asyncio.run(server.call_tool("memory_recall", {"query": "x", "extra": 1}))
    assert res.content[0].text.startswith("[invalid_argument] 未知参数 extra")


def test_draining_daemon_refuses_new_calls(mem: Memory) -> None:
    server = mcp_server.MemlaneMCP(mem, "en")
    server.draining = True
    res = asyncio.run(server.call_tool("memory_stats", {}))
    assert res.is_error and res.content[0].text.startswith("[unavailable] ")


@pytest.mark.parametrize(("host", "expected"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("127.0.0.2", True), ("0.0.0.0", False), ("192.168.1.4", False),
                                                ("example.com", False)])
def test_is_loopback(host: str, expected: bool) -> None:
    assert mcp_server.is_loopback(host) is expected


def test_health_is_503_degraded_when_the_store_cannot_be_read(tmp_path: Path, e5: object) -> None:
    import httpx

    cfg = load_config({"HOME": str(tmp_path)})
    m = Memory(tmp_path / "m.db", config=cfg, embedder=e5)  # type: ignore[arg-type]
    app, _ = mcp_server.create_app(m, cfg, lang="en", transports=("sse",))

    async def get() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            return await c.get("/health")

    ok = asyncio.run(get())
    assert ok.status_code == 200 and ok.json()["status"] == "ok"
    m.close()
    bad = asyncio.run(get())
    body = bad.json()
    assert bad.status_code == 503 and body["status"] == "degraded"
    assert body["reason"].startswith("the database cannot be read: this memory store is closed")
    assert set(body) >= {"version", "uptime_s", "db_path", "schema_version", "embedder", "pending_embeddings"}


def test_tool_calls_run_on_the_daemons_fixed_thread_pool(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not on the event loop, and not on short-lived threads that would each leave a read connection behind."""
    import threading

    seen: list[str] = []
    real = mem.stats

    def stats(**kwargs: object) -> dict[str, object]:
        seen.append(threading.current_thread().name)
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(mem, "stats", stats)
    server = mcp_server.MemlaneMCP(mem, "en")

    async def many() -> None:
        results = await asyncio.gather(*[server.call_tool("memory_stats", {}) for _ in range(40)])
        assert not any(r.is_error for r in results)

    asyncio.run(many())
    server.close()
    # memory_stats is a light call: it runs on the light pool, so slow searches cannot starve it.
    assert len(seen) == 40 and all(name.startswith("memlane-light") for name in seen)
    assert len(set(seen)) <= mcp_server.LIGHT_THREADS
