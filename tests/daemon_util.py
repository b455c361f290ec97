"""Start the real memlane daemon as a subprocess, for end-to-end tests.

    from daemon_util import running_daemon, mcp_session

    def test_something(tmp_path):
        with running_daemon(tmp_path, token="s3cret") as d:    # waits for the ready line
            httpx.get(d.url + "/health")                       # d.url == "http://127.0.0.1:<port>"
            ...                                                # d.headers() == {"Authorization": "Bearer s3cret"}
        # leaving the block sends SIGTERM and waits (d.returncode is then 0 on a clean stop)

    async def calls(d):
        async with mcp_session(d, "sse") as session:           # or "http" (Streamable HTTP)
            result = await session.call_tool("memory_stats", {})

The daemon runs `python mcp_server.py --port 0` with HOME inside tmp_path (so no user config or token file
is read), every inherited MEMLANE_* variable removed, and the database at tmp_path/"memory.db" unless
`db_path` is given. The port is read from the ready line, so there is no free-port race. All output
(stdout and stderr) is kept in `Daemon.lines` for assertions and failure reports.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup
else:  # pragma: no cover - anyio depends on the backport on 3.10
    from exceptiongroup import BaseExceptionGroup

ROOT = Path(__file__).resolve().parent.parent
# What a client session may raise when the daemon goes away under it (a stop, a crash test).
SESSION_ERRORS = (Exception, BaseExceptionGroup)
SERVER = ROOT / "mcp_server.py"
READY_RE = re.compile(r"🟢 .*?(http://(\S+?):(\d+))")
START_TIMEOUT_S = 180.0  # loading the model on a busy 2-core machine can be slow
STOP_TIMEOUT_S = 15.0


class DaemonError(RuntimeError):
    """The daemon exited or did not become ready; the message carries its output."""


@dataclass
class Daemon:
    """A running daemon subprocess."""

    proc: subprocess.Popen[str]
    home: Path
    db_path: Path
    token: str | None
    lines: list[str] = field(default_factory=list)
    port: int = 0
    ready_line: str = ""
    started_at: float = 0.0  # time.monotonic() just before the process was spawned
    ready_at: float = 0.0  # time.monotonic() when the ready line was read
    returncode: int | None = None
    db_url: str = ""  # MEMLANE_DB_URL when the daemon runs on PostgreSQL
    _ready: threading.Event = field(default_factory=threading.Event)

    @property
    def db_label(self) -> str:
        """What /health shows as db_path: the file, or the URL with its password as ***."""
        from store.util import redact_url

        return redact_url(self.db_url) if self.db_url else str(self.db_path)

    def open_db(self) -> Any:
        """A connection to the daemon's database taking memlane's `?` SQL (sqlite3-style execute), on either engine."""
        if not self.db_url:
            from store.sqlite.db import connect

            return connect(self.db_path)
        import psycopg

        from store.postgres.db import Handle

        conn = psycopg.connect(self.db_url, autocommit=True)
        handle = Handle(conn)
        handle.close = conn.close  # type: ignore[attr-defined]
        return handle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def sse_url(self) -> str:
        return self.url + "/sse"

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def headers(self) -> dict[str, str]:
        """The Authorization header when a token is set, else {}."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def output(self) -> str:
        return "\n".join(self.lines)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> int:
        """Send `sig`, wait for the exit and return the exit code (kills it and raises after `timeout`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise DaemonError(f"daemon did not stop within {timeout} s after signal {sig}:\n{self.output()}") from None
        self.returncode = self.proc.returncode
        return self.returncode


def daemon_env(home: Path, *, token: str | None = None, lang: str = "en",
               env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the daemon gets: ours minus MEMLANE_*, HOME in tmp, language and token set."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    out.update(HOME=str(home), MEMLANE_LANG=lang, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    if token:
        out["MEMLANE_AUTH_TOKEN"] = token
    out.update(env or {})
    return out


def spawn_daemon(tmp_path: Path, *, db_path: Path | None = None, token: str | None = None,
                 env: Mapping[str, str] | None = None, args: Sequence[str] = (), lang: str = "en",
                 preexec_fn: Callable[[], None] | None = None) -> Daemon:
    """Start the daemon without waiting for it (see `wait_ready`); for tests that expect a refusal.

    `preexec_fn` runs in the child before the daemon starts (e.g. to lower a resource limit)."""
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    db = db_path or tmp_path / "memory.db"
    # A daemon given MEMLANE_DB_URL (the PostgreSQL engine) gets no --db: a file on the command line would win.
    db_args = [] if "MEMLANE_DB_URL" in (env or {}) else ["--db", str(db)]
    cmd = [sys.executable, str(SERVER), "--port", "0", *db_args, *args]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=str(ROOT), env=daemon_env(home, token=token, lang=lang, env=env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
                            errors="replace", bufsize=1, preexec_fn=preexec_fn)
    d = Daemon(proc=proc, home=home, db_path=db, token=token, started_at=started,
               db_url=(env or {}).get("MEMLANE_DB_URL", ""))

    def pump() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            d.lines.append(line)
            m = READY_RE.search(line)
            if m and not d._ready.is_set():
                d.port, d.ready_line, d.ready_at = int(m.group(3)), line, time.monotonic()
                d._ready.set()

    threading.Thread(target=pump, name="daemon-output", daemon=True).start()
    return d


def wait_ready(d: Daemon, timeout: float = START_TIMEOUT_S) -> Daemon:
    """Block until the ready line appears; raise DaemonError (with the output) if it exits or times out."""
    deadline = time.monotonic() + timeout
    while not d._ready.wait(0.05):
        if d.proc.poll() is not None:
            time.sleep(0.2)  # let the pump read the last lines
            raise DaemonError(f"daemon exited with {d.proc.returncode} before it was ready:\n{d.output()}")
        if time.monotonic() > deadline:
            d.proc.kill()
            raise DaemonError(f"daemon not ready within {timeout} s:\n{d.output()}")
    return d


def start_daemon(tmp_path: Path, **kwargs: Any) -> Daemon:
    """Spawn the daemon and wait until it is ready. Keyword arguments as for `spawn_daemon`."""
    timeout = kwargs.pop("timeout", START_TIMEOUT_S)
    return wait_ready(spawn_daemon(tmp_path, **kwargs), timeout)


@contextlib.contextmanager
def running_daemon(tmp_path: Path, **kwargs: Any) -> Iterator[Daemon]:
    """`start_daemon` as a context manager that stops the daemon with SIGTERM on exit."""
    d = start_daemon(tmp_path, **kwargs)
    try:
        yield d
    finally:
        if d.proc.poll() is None:
            d.stop()
        d.returncode = d.proc.returncode


def module_daemon(name: str, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
    """A module-scoped fixture: one real daemon for the test module, on the engine under test
    (`engine_env`), stopped at the end and required to exit cleanly (code 0).

        daemon = module_daemon("neardup")
    """

    @pytest.fixture(scope="module")
    def daemon(tmp_path_factory: pytest.TempPathFactory, engine_env: Any) -> Iterator[Daemon]:
        with running_daemon(tmp_path_factory.mktemp(name), env={**engine_env(), **(env or {})}, **kwargs) as d:
            yield d
        assert d.returncode == 0, d.output()

    return daemon


@contextlib.asynccontextmanager
async def mcp_session(d: Daemon, transport: str = "sse", headers: Mapping[str, str] | None = None) -> AsyncIterator[Any]:
    """An initialized official-SDK `ClientSession` to the daemon over "sse" or "http" (Streamable HTTP)."""
    from mcp.client.session import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    hdrs = {**d.headers(), **(headers or {})}
    if transport == "sse":
        async with sse_client(d.sse_url, headers=hdrs, timeout=30) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session
    elif transport == "http":
        async with create_mcp_http_client(headers=hdrs) as http:
            async with streamable_http_client(d.mcp_url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    yield session
    else:
        raise ValueError(f"transport must be 'sse' or 'http', got {transport!r}")
