"""Helpers for the reliability tests: a blocking MCP client, process counters, the contract's codes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from daemon_util import Daemon, mcp_session

# Codes a hostile *argument* may produce. `internal` never; `unavailable` only for resource faults.
INPUT_ERROR_CODES = ("invalid_argument", "not_found", "too_large", "conflict")
LONG = os.environ.get("RELIABILITY_LONG") == "1"  # the long runs (see docs/RELIABILITY.md)
FAULT_DAEMON = Path(__file__).with_name("fault_daemon.py")


def error_code(text: str) -> str | None:
    if text.startswith("[") and "] " in text:
        return text[1:text.index("]")]
    return None


class Outcome:
    """One tool call's result: ok with `data`, or an error with `code` and `text`."""

    def __init__(self, res: Any) -> None:
        self.text = res.content[0].text if res.content else ""
        self.ok = not res.is_error
        self.data: dict[str, Any] = (res.structured_content or {}) if self.ok else {}
        self.code = None if self.ok else error_code(self.text)

    def __repr__(self) -> str:
        return f"Outcome(ok={self.ok}, text={self.text[:200]!r})"


class SyncSession:
    """An MCP session in a background event loop, for synchronous tests (e.g. Hypothesis).

    One task opens the session and serves calls from a queue, so the SDK's cancel scopes are entered
    and left in the same task.
    """

    def __init__(self, d: Daemon, transport: str = "sse", timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, name="sync-mcp", daemon=True)
        self._thread.start()
        self._queue: asyncio.Queue[Any] | None = None
        self._main = asyncio.run_coroutine_threadsafe(self._serve(d, transport), self.loop)
        if not self._ready.wait(timeout):
            raise TimeoutError("MCP session did not open")
        if self._error:
            raise self._error

    async def _serve(self, d: Daemon, transport: str) -> None:
        self._queue = asyncio.Queue()
        try:
            async with mcp_session(d, transport) as session:
                self._ready.set()
                while True:
                    item = await self._queue.get()
                    if item is None:
                        return
                    fn, fut = item
                    try:
                        fut.set_result(await fn(session))
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller
                        fut.set_exception(exc)
        except BaseException as exc:  # noqa: BLE001
            self._error = exc
            self._ready.set()

    def run(self, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        assert self._queue is not None
        self.loop.call_soon_threadsafe(self._queue.put_nowait, (fn, fut))
        return fut.result(self.timeout)

    def call(self, tool: str, args: dict[str, Any]) -> Outcome:
        return Outcome(self.run(lambda s: s.call_tool(tool, args)))

    def __enter__(self) -> SyncSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._queue is not None:
            self.loop.call_soon_threadsafe(self._queue.put_nowait, None)
        try:
            self._main.result(15)
        except Exception:  # noqa: BLE001 - the daemon may be gone already
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


def proc_counts(pid: int) -> tuple[int, int]:
    """(threads, open fds) of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    threads = int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))
    return threads, len(os.listdir(f"/proc/{pid}/fd"))


def health(d: Daemon, timeout: float = 10.0) -> dict[str, Any]:
    r = httpx.get(d.url + "/health", headers=d.headers(), timeout=timeout)
    body = r.json()
    body["_status"] = r.status_code
    return body


def wait_drained(d: Daemon, timeout: float = 180.0) -> int:
    """Poll /health until no embedding is pending; returns the last pending count."""
    deadline = time.monotonic() + timeout
    pending = -1
    while time.monotonic() < deadline:
        pending = health(d)["pending_embeddings"]
        if pending == 0:
            return 0
        time.sleep(0.25)
    return pending


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(0.95 * len(s) + 0.999999) - 1))]


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
