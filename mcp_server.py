"""memlane's daemon: one `Memory` served over MCP on one port.

`GET /sse` + `POST /messages/` (HTTP+SSE), `/mcp` (Streamable HTTP) and `GET /health` live in one
Starlette app under uvicorn. This module is a thin adapter: it translates arguments and errors and
nothing else. The tools, their schemas and hints come from one table (contract/tools.py); `Memory` checks every
argument against it, so the SDK's own pydantic pass is skipped. Errors map to tool results in
one place, `MemlaneMCP.call_tool`.

    python mcp_server.py [--host 127.0.0.1] [--port 8086] [--db PATH] [--transport both] [--lang en]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import hmac
import ipaddress
import json
import logging
import os
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import i18n_messages
from config import Config, env_warnings, load_config
from contract.errors import InvalidArgument, MemlaneError, Unavailable
from contract.tools import BY_NAME, TOOLS, ToolSpec
from i18n_messages import t
from memory import Memory, __version__
from server import (
    dashboard,  # dashboard (issue 9)
    heaptrim,
    private,
)
from server.connections import uvicorn_options
from server.heaptrim import HeapTrimmer
from server.logbound import BoundedLog, ClippedFormatter
from store import daemon_lock

log = logging.getLogger("memlane.server")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
GRACEFUL_DRAIN_S = 6.0  # in-flight tool calls get this long to finish after SIGTERM
# Tool calls run on fixed pools of long-lived threads: Memory keeps one read connection per thread, so
# threads that come and go (as anyio's idle workers do) would leave a connection behind each time.
# Two pools, so that slow searches cannot starve everything else: recall and graph queries (whose cost
# depends on the query and the data) get CALL_THREADS; the bounded calls (writes, history, stats) get
# LIGHT_THREADS of their own. A call that finds its pool full waits at most call_queue_timeout_s, then
# is refused with [unavailable] instead of queueing for ever. /health uses neither pool (HealthFacts).
CALL_THREADS = 8
LIGHT_THREADS = 4
# Descriptors kept back from the connection cap: a SQLite reader (database + WAL) per worker thread and per
# thread of the dashboard's pool (anyio's default 40), plus the log and the model (connections.connection_cap).
DASHBOARD_THREADS = 40
FD_RESERVE = 2 * (CALL_THREADS + LIGHT_THREADS + 1 + DASHBOARD_THREADS) + 16
HEALTH_WAIT_S = 0.5  # /health waits this long for a fresh pending-embedding count, else answers the last one
HEALTH_STALE_S = 15.0  # facts older than this mean the database did not answer: /health says degraded
# The GIL's switch interval in the daemon (CPython's default is 5 ms). The query embedding beside a thread
# running Python: +5.3 / +6.2 ms p50 at 5 ms, +1.3 / -1.5 ms (noise) at 0.5 ms (docs/BENCHMARKS.md, eighth pass).
SWITCH_INTERVAL_S = 0.0005
GRACEFUL_CLOSE_S = 2  # then open streams (idle SSE connections) get this long before they are cancelled

INSTRUCTIONS = (
    "memlane is your long-term memory. Call memory_recall before answering anything about the user, their "
    "projects or past conversations; call memory_remember when you learn a durable fact, preference or decision. "
    "Every tool takes `namespace` (1-64 of A-Z a-z 0-9 _ . : -, default 'default'): use one per user or project "
    "(e.g. 'user:alice'); namespaces never see each other's data. Ids are opaque strings. Times are ISO-8601 "
    "(UTC if no zone). Errors start with [code]. Never store secrets. The prompt memlane-guide has the details."
)

# ---------------------------------------------------------------- the MCP server


def _result(name: str) -> Callable[..., dict[str, Any]]:
    """A stand-in named like the tool, whose return type (a JSON object) the SDK makes its output schema."""

    def result(**arguments: Any) -> dict[str, Any]:
        raise AssertionError("MemlaneMCP.call_tool calls the Memory method")  # pragma: no cover

    result.__name__ = result.__qualname__ = name
    return result


def hints(spec: ToolSpec) -> ToolAnnotations:
    """The table's hints, for clients that auto-approve safe tools (destructive only said of writes)."""
    return ToolAnnotations(read_only_hint=spec.read_only, destructive_hint=None if spec.read_only else spec.destructive,
                           idempotent_hint=spec.idempotent or None, open_world_hint=False)


def build_tools(memory: Memory) -> list[Tool]:
    """The contract's tools (contract/tools.py) as the SDK lists them. MemlaneMCP.call_tool runs each in a
    worker thread: the table's Memory method, with the table's arguments by name."""
    tools = []
    for spec in TOOLS:
        tool = Tool.from_function(_result(spec.name), name=spec.name, description=spec.desc, structured_output=True,
                                  annotations=hints(spec))
        tool.parameters = spec.input_schema(memory.config)
        tools.append(tool)
    return tools


class MemlaneMCP(MCPServer):
    """MCPServer whose tool calls follow the contract: strict arguments, `[code] message` errors."""

    def __init__(self, memory: Memory, lang: str) -> None:
        self.memory = memory
        self.lang = lang
        self.inflight = 0
        self.draining = False
        # Hands the heap a burst of calls freed, and the model's token table pages, back to the OS (server/heaptrim.py).
        release = getattr(memory.embedder, "release_pages", None)
        self.heap = HeapTrimmer(also=[release] if release is not None else [])
        self._tools = {tool.name: tool for tool in build_tools(memory)}
        self._pool = ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="memlane-call")
        self._light = ThreadPoolExecutor(max_workers=LIGHT_THREADS, thread_name_prefix="memlane-light")
        # One slot per thread, so that a call waits here (bounded) and never in the executor's own queue.
        self._slots = {id(self._pool): asyncio.Semaphore(CALL_THREADS), id(self._light): asyncio.Semaphore(LIGHT_THREADS)}
        self.queue_timeout = float(memory.config.call_queue_timeout_s)
        super().__init__("memlane", version=__version__, instructions=INSTRUCTIONS, tools=list(self._tools.values()),
                         log_level="INFO")
        self._add_guide_prompt()

    def warm_call_thread(self) -> None:
        """The first tool call runs on a new call thread, which opens its own read connection (sqlite-vec
        loaded, pragmas set): open it at start-up, with one recall on that thread, not in the first call."""
        self._pool.submit(self.memory.warm_up, cohort=False).result()

    async def run_blocking(self, fn: Callable[..., Any], *, light: bool = False, **kwargs: Any) -> Any:
        """Run a blocking Memory call off the event loop, on one of the daemon's own thread pools."""
        pool = self._light if light else self._pool
        slots = self._slots[id(pool)]
        try:
            await asyncio.wait_for(slots.acquire(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise Unavailable("server.busy", seconds=round(self.queue_timeout)) from None
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, functools.partial(fn, **kwargs))
        finally:
            slots.release()

    def close(self) -> None:
        """Wait for calls still running in the pools (the server has stopped sending new ones)."""
        self._pool.shutdown(wait=True)
        self._light.shutdown(wait=True)

    def error_result(self, exc: BaseException) -> CallToolResult:
        """The one place errors become tool results: `[code] message` in the daemon's language."""
        if isinstance(exc, MemlaneError):
            log.info("tool call refused: [%s] %s", exc.code, exc.msg_id)  # ids only: arguments may be private
            text = exc.render(self.lang)
        else:
            log.error("unexpected error in a tool call", exc_info=exc)
            text = MemlaneError("internal.unexpected", kind=type(exc).__name__).render(self.lang)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        spec = BY_NAME.get(name)
        try:
            if spec is None:
                raise InvalidArgument("server.unknown_tool", name=name, allowed=", ".join(self._tools))
            if self.draining:
                raise Unavailable("server.shutting_down")
            if not isinstance(arguments, Mapping):
                raise InvalidArgument("server.arguments_type", got=type(arguments).__name__)
            unknown = sorted(set(arguments) - set(spec.arg))
            if unknown:
                raise InvalidArgument("arg.unknown", name=unknown[0], allowed=", ".join(spec.arg))
            # An omitted (or null) argument takes the tool's default; a missing required one is passed as
            # None so that Memory reports it (arg.required) in our words.
            kwargs = {n: a.default if arguments.get(n) is None else arguments[n] for n, a in spec.arg.items()}
            self.inflight += 1
            try:
                result = await self.run_blocking(getattr(self.memory, spec.method), light=not spec.heavy, **kwargs)
            finally:
                self.inflight -= 1
                self.heap.touch()
            data = compact(result)
            return CallToolResult(content=[TextContent(type="text", text=compact_json(data))],
                                  structured_content=data)
        except Exception as exc:
            return self.error_result(exc)

    def _add_guide_prompt(self) -> None:
        lang_default = self.lang

        @self.prompt(name="memlane-guide", title="How to use memlane",
                     description="How an agent should use memlane: when to remember and recall, namespaces, "
                                 "what never to store. Argument lang: en or zh (default: the daemon's language).")
        def guide(lang: str | None = None) -> str:
            return t("server.guide", i18n_messages.normalize_lang(lang or lang_default))


# Kept when empty: an agent reads "no hits" or "no versions" from them.
KEEP_EMPTY = frozenset({"hits", "versions", "nodes", "edges"})


def compact(value: Any) -> Any:
    """A result without nulls or empty lists and objects (contract v2), every token being paid by the agent."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            c = compact(v)
            if c is None or (c in ([], {}) and k not in KEEP_EMPTY):
                continue
            out[k] = c
        return out
    if isinstance(value, (list, tuple)):
        return [compact(v) for v in value]
    return value


def compact_json(value: Any) -> str:
    """The text copy of a result: the same data, no indentation, Chinese kept readable."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------- HTTP: health, guard, app


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(value: str) -> str:
    """The host part of a Host header value: '127.0.0.1:8086' → '127.0.0.1', '[::1]:8086' → '::1'."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class HealthFacts:
    """What /health reports, read on one thread of its own, so that /health never waits for the tool
    pools (however busy) and never runs SQL on the event loop.

    Each /health starts a refresh unless one is running (concurrent checks share it) and waits for it
    at most HEALTH_WAIT_S; otherwise it answers with the last facts. A refresh that fails is reported
    (degraded, with the error); one that has been running for over HEALTH_STALE_S (a locked database)
    makes /health degraded too.
    """

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.pending: int | None = None
        self.pending_context: int | None = None  # context windows still to embed: recall not at full strength
        self.index_building: int | None = None  # approximate-index builds running: recall exact and slower
        self.error: BaseException | None = None
        self._since = 0.0  # monotonic start of the refresh in flight
        self._inflight: asyncio.Future[None] | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlane-health")

    def _read(self) -> None:
        try:
            self.pending, self.pending_context = self.memory.pending_embeddings(), self.memory.pending_context()
            self.index_building = self.memory.index_building()
            self.error = None
        except Exception as exc:  # reported by /health, which never raises
            self.error = exc

    async def fresh(self) -> float:
        """Refresh (waiting at most HEALTH_WAIT_S); return for how long a refresh has hung, or 0."""
        if self._inflight is None or self._inflight.done():
            self._since = time.monotonic()
            self._inflight = asyncio.get_running_loop().run_in_executor(self._thread, self._read)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._inflight), HEALTH_WAIT_S)
        return 0.0 if self._inflight.done() else time.monotonic() - self._since

    def close(self) -> None:
        self._thread.shutdown(wait=False)


class Guard:
    """Host/Origin checks (DNS rebinding), bearer token and body size, on every path of the app.

    Order: a foreign Host gets 421, a foreign Origin 403, a missing or wrong token 401 (every path but
    /health), a declared body over the limit 413. Bodies without Content-Length are counted by the SDK
    transports, which get the same limit.
    """

    def __init__(self, app: ASGIApp, *, lang: str, bind_host: str, token: str | None, max_body: int,
                 ui_allows: Callable[[Scope], bool] | None = None) -> None:
        self.app = app
        self.ui_allows = ui_allows  # dashboard (issue 9): lets /ui/login and a /ui session cookie past the token
        self.lang = lang
        self.token = token
        self.max_body = max_body
        host = bind_host.lower().strip("[]")
        # Bound to every interface (only allowed with a token): any Host name may reach us, the token guards.
        self.any_host = host in ("0.0.0.0", "::", "")
        self.allowed = set(LOOPBACK_NAMES)
        if not is_loopback(host) and not self.any_host:
            self.allowed.add(host)

    def host_ok(self, value: str | None) -> bool:
        if not value:
            return False
        return self.any_host or _host_name(value) in self.allowed

    def origin_ok(self, value: str | None) -> bool:
        if value is None:
            return True  # not a browser, or a same-origin GET
        try:
            parts = urlsplit(value.strip())
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.allowed

    def token_ok(self, header: str | None) -> bool:
        assert self.token is not None
        if not header or not header[:7].lower() == "bearer ":
            return False
        return hmac.compare_digest(header[7:].strip().encode("utf-8"), self.token.encode("utf-8"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no endpoint speaks WebSocket; refuse before any check is needed
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        response: Response | None = None
        if not self.host_ok(headers.get("host")):
            response = _error(421, t("server.bad_host", self.lang, host=repr(headers.get("host"))[:80]))
        elif not self.origin_ok(headers.get("origin")):
            response = _error(403, t("server.bad_origin", self.lang, origin=repr(headers.get("origin"))[:80]))
        elif (self.token and scope["path"] != "/health" and not self.token_ok(headers.get("authorization"))
              and not (self.ui_allows and self.ui_allows(scope))):  # dashboard (issue 9)
            response = _error(401, t("server.unauthorized", self.lang))
            response.headers["WWW-Authenticate"] = 'Bearer realm="memlane"'
        else:
            length = headers.get("content-length", "")
            if length.strip().isdigit() and int(length) > self.max_body:
                response = _error(413, t("server.too_large", self.lang, limit=self.max_body))
        if response is not None:
            await response(scope, receive, send)
            return
        one = _OneResponse(send)
        try:
            await self.app(scope, receive, one.send)
        finally:
            await one.finish()


class _OneResponse:
    """Keep each connection to exactly one, completed response.

    The SDK's /sse endpoint returns `Response()` after its event stream ends, which Starlette then sends
    on top of the stream; and a stream cut at shutdown is left unterminated. The first extra response is
    dropped; an unterminated stream gets its final empty chunk.
    """

    def __init__(self, send: Send) -> None:
        self._send = send
        self.state = "idle"  # idle → streaming → done

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.state != "idle":
                return
            self.state = "streaming"
        elif kind == "http.response.body":
            if self.state == "done":
                return
            if not message.get("more_body", False):
                self.state = "done"
        await self._send(message)

    async def finish(self) -> None:
        if self.state == "streaming":
            with contextlib.suppress(Exception):
                await self.send({"type": "http.response.body", "body": b"", "more_body": False})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def transport_security(host: str) -> TransportSecuritySettings:
    """The Host and Origin values the SDK accepts on its own endpoints: loopback names (any port), plus
    the bound host when it is neither loopback nor a wildcard. The Guard in front covers every path."""
    hosts = [f"{n}:*" for n in ("127.0.0.1", "localhost", "[::1]")]
    origins = [f"{s}://{n}:*" for s in ("http", "https") for n in ("127.0.0.1", "localhost", "[::1]")]
    origins += [f"{s}://{n}" for s in ("http", "https") for n in ("127.0.0.1", "localhost", "[::1]")]
    hosts += ["127.0.0.1", "localhost", "[::1]"]
    wildcard = host in ("0.0.0.0", "::")
    if not is_loopback(host) and not wildcard:
        hosts += [host, f"{host}:*"]
        origins += [f"{s}://{host}{p}" for s in ("http", "https") for p in ("", ":*")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=not wildcard, allowed_hosts=hosts,
                                     allowed_origins=origins)


def create_app(
    memory: Memory,
    cfg: Config,
    *,
    lang: str = "en",
    token: str | None = None,
    transports: tuple[str, ...] = ("sse", "http"),
    extra_routes: Sequence[BaseRoute] = (),
    ui_allows: Callable[[Scope], bool] | None = None,  # dashboard (issue 9), see Guard
) -> tuple[ASGIApp, MemlaneMCP]:
    """The whole daemon as one ASGI app (also usable in-process, e.g. with httpx's ASGI transport).

    `extra_routes` (e.g. a dashboard) are mounted beside /health, behind the same Host/Origin/token guard.
    In-process clients must use a loopback base URL (http://127.0.0.1), or the Host check answers 421.
    """
    mcp = MemlaneMCP(memory, lang)
    started = time.monotonic()
    security = transport_security(cfg.host)
    facts = HealthFacts(memory)

    async def health(request: Request) -> JSONResponse:
        # Cached facts only: no thread pool, no SQL on the event loop (see HealthFacts).
        body: dict[str, Any] = {
            "status": "ok", "version": __version__, "uptime_s": round(time.monotonic() - started, 3),
            "db_path": str(memory.path), "schema_version": memory.schema_version,
            "embedder": {"model": memory.embedder.model, "dim": memory.embedder.dim},
            "pending_embeddings": facts.pending, "pending_context": facts.pending_context,
            "index_building": facts.index_building,
        }
        hung = await facts.fresh()
        body.update(pending_embeddings=facts.pending, pending_context=facts.pending_context,
                    index_building=facts.index_building)
        exc = facts.error
        if exc is not None:  # a health check reports the failure instead of raising it
            detail = exc.message(lang) if isinstance(exc, MemlaneError) else type(exc).__name__
            body.update(status="degraded", reason=t("server.degraded", lang, detail=detail))
        elif hung > HEALTH_STALE_S:
            body.update(status="degraded", reason=t("server.health_stale", lang, seconds=round(hung)))
        return JSONResponse(body, status_code=503 if body["status"] == "degraded" else 200)

    routes: list[BaseRoute] = [Route("/health", health, methods=["GET"]), *extra_routes]
    if "sse" in transports:
        routes += mcp.sse_app(transport_security=security, max_request_body_size=cfg.max_request_bytes).routes
    if "http" in transports:
        # A POST is answered with one JSON body, not an SSE stream of one event: no tool sends progress
        # notifications, and the stream's tasks cost a write about 6 ms (issue 30, docs/BENCHMARKS.md).
        routes += mcp.streamable_http_app(transport_security=security, json_response=True,
                                          max_request_body_size=cfg.max_request_bytes).routes

    async def trim_heap() -> None:
        while True:
            await asyncio.sleep(heaptrim.IDLE_S)
            if mcp.heap.due(busy=mcp.inflight > 0):
                await mcp.run_blocking(mcp.heap.trim, light=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        trimmer = asyncio.create_task(trim_heap()) if mcp.heap.available else None
        try:
            if "http" in transports:
                async with mcp.session_manager.run():
                    yield
            else:
                yield
        finally:
            if trimmer is not None:
                trimmer.cancel()
            facts.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    return Guard(app, lang=lang, bind_host=cfg.host, token=token, max_body=cfg.max_request_bytes,
                 ui_allows=ui_allows), mcp


# ---------------------------------------------------------------- process: token, lock, signals, main


def resolve_token(cfg: Config) -> str | None:
    """MEMLANE_AUTH_TOKEN, else the token file (which must be private to its owner), else None."""
    if cfg.auth_token:
        return cfg.auth_token
    path = Path(os.path.expanduser(str(cfg.token_file)))
    if not path.exists():
        return None
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise Unavailable("server.token_mode", path=str(path), mode=oct(mode))
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        token = ""
    if not token:
        raise Unavailable("server.token_empty", path=str(path))
    return token


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP; with proto 0 every
    # keep-alive response waited ~40 ms on Nagle + delayed ACK (found by scripts/bench_dashboard.py).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise Unavailable("server.bind_failed", host=host, port=port, detail=exc.strerror or str(exc)) from exc
    sock.set_inheritable(True)
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn, but a signal drains in-flight tool calls first and is not re-raised after shutdown."""

    mcp: MemlaneMCP | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            yield
            # uvicorn re-raises the captured signal on exit, which would kill us before Memory.close();
            # we exit 0 ourselves after closing the store.
            self._captured_signals.clear()
        # uvicorn has put back the handlers from before serve(): the default ones, under which a repeated
        # SIGTERM kills us and a repeated SIGINT raises inside asyncio's teardown. Stopping has begun, so every
        # later signal is ignored until run() has closed the store (tests/test_server_security.py).
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # stop accepting connections
        if self.mcp is not None:
            self.mcp.draining = True
            deadline = time.monotonic() + GRACEFUL_DRAIN_S
            while self.mcp.inflight and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        await super().shutdown(sockets)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="mcp_server.py", description="memlane daemon: long-term memory over MCP.")
    p.add_argument("--host", help="bind address (default 127.0.0.1; MEMLANE_HOST)")
    p.add_argument("--port", help="port (default 8086; 0 picks a free one; MEMLANE_PORT)")
    p.add_argument("--db", help="database file (default ~/.memlane/memory.db; MEMLANE_DB_PATH)")
    p.add_argument("--transport", help="sse, http or both (default both; MEMLANE_TRANSPORT)")
    p.add_argument("--lang", help="en or zh (default: MEMLANE_LANG, then LANG)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p.parse_args(argv)


def setup_logging(cfg: Config) -> None:
    targets: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if cfg.log_file is not None:
        private.make_dir(Path(cfg.log_file).parent)
        targets.append(logging.FileHandler(cfg.log_file, encoding="utf-8"))
        private.tighten([Path(cfg.log_file)])
    for target in targets:
        target.setFormatter(ClippedFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    # Every logger (uvicorn's and asyncio's too) goes through one bound: see server/logbound.py.
    logging.basicConfig(level=logging.INFO, handlers=[BoundedLog(targets, cfg.log_lines_per_minute)], force=True)
    # The SDK logs every session at INFO; a long-lived service keeps its warnings only.
    logging.getLogger("mcp").setLevel(logging.WARNING)


def _warm_up_beside(memory: Memory) -> Future[None]:
    """What the first recall would pay (the model, the relevance cohort: seconds) is paid before the ready
    line and /health, beside the rest of the start-up (the embedding runs without the GIL)."""
    warming = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlane-warm-up")
    warm = warming.submit(memory.warm_up)
    warming.submit(_name_readings, memory)  # after the warm-up, so after ready: it writes, and waits for none
    warming.shutdown(wait=False)
    return warm


def _name_readings(memory: Memory) -> None:
    """Memory.add_name_readings, once per database; a failure costs only the older names' pinyin."""
    try:
        memory.add_name_readings()
    except Exception:  # noqa: BLE001 - logged; the entity lane works without the older names' readings
        log.warning("reading the older Chinese names in pinyin failed; they are read when next written", exc_info=True)


def run(cfg: Config, lang: str, *, environ: Mapping[str, str] | None = None) -> int:
    """Start the daemon and block until a signal stops it. Raises MemlaneError when it cannot start."""
    token = resolve_token(cfg)
    if not is_loopback(cfg.host) and not token:
        raise Unavailable("server.no_token_remote", host=cfg.host, token_file=str(cfg.token_file))
    db_path = cfg.resolved_db_path()
    db_label = cfg.db_label()  # the file, or the URL with its password as ***
    transports = ("sse", "http") if cfg.transport == "both" else (cfg.transport,)
    # One daemon per SQLite file; on PostgreSQL any number of daemons share the database.
    with daemon_lock(cfg):
        sock = bind_socket(cfg.host, cfg.port)
        try:
            print(t("server.starting", lang, version=__version__, db=db_label), file=sys.stderr, flush=True)
            memory = Memory(None if cfg.db_url else db_path, config=cfg)
        except BaseException:
            sock.close()
            raise
        try:
            warm = _warm_up_beside(memory)
            # --- dashboard (issue 9): /ui pages and API; its session cookie opens /ui paths only ---
            dash = dashboard.Dashboard(memory, cfg, token=token or "", lang=lang)
            app, mcp = create_app(memory, cfg, lang=lang, token=token, transports=transports,
                                  extra_routes=dash.routes(), ui_allows=dash.guard_allows)
            app = dash.secured(app)  # CSP and X-Frame-Options on every /ui response, the Guard's refusals too
            # --- end dashboard ---
            # What start-up built (modules, mcp's pydantic models, the app) lives as long as the process: move
            # it out of the collector's sight, so a full collection during a recall scans only what
            # recalls made (gc.freeze, Python's documented use for long-lived servers).
            warm.result()
            mcp.warm_call_thread()
            gc.collect()
            gc.freeze()
            # A recall's lanes run Python beside the query's embedding (one C call without the GIL): with
            # CPython's 5 ms switch interval the embedding then waits up to 5 ms to take the GIL back.
            sys.setswitchinterval(SWITCH_INTERVAL_S)
            # log_config=None: uvicorn's loggers propagate to ours, so the log bound covers them too.
            server = _Uvicorn(uvicorn.Config(app, log_level="warning", log_config=None, access_log=False,
                                             lifespan="on", timeout_graceful_shutdown=GRACEFUL_CLOSE_S,
                                             server_header=False, **uvicorn_options(cfg, FD_RESERVE)))
            server.mcp = mcp
            port = sock.getsockname()[1]
            host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
            ready = t("server.ready", lang, url=f"http://{host}:{port}", transports=", ".join(transports),
                      db=db_label, model=memory.embedder.model)
            if token:
                ready += " · " + t("server.auth_on", lang)

            async def serve() -> None:
                task = asyncio.create_task(server.serve(sockets=[sock]))
                while not server.started and not task.done():
                    await asyncio.sleep(0.02)
                if server.started:
                    print(ready, flush=True)
                    # dashboard (issue 9): like Jupyter, a one-time login link when a token is set
                    print(t("ui.login_url" if token else "ui.open_url", lang,
                            url=dash.login_url(f"http://{host}:{port}")), flush=True)
                await task

            asyncio.run(serve())  # returns with SIGTERM and SIGINT ignored (_Uvicorn.capture_signals)
            print(t("server.stopping", lang), file=sys.stderr, flush=True)
        finally:
            sock.close()
            if "mcp" in locals():
                mcp.close()
            pending = None
            with contextlib.suppress(Exception):
                pending = memory.pending_embeddings()
            memory.close()
        print(t("server.stopped", lang, pending=pending if pending is not None else "?"), file=sys.stderr,
              flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.version:
        print(f"memlane {__version__}")
        return 0
    private.restrict_umask()  # the database, its WAL, the lock, the log: 0600 in 0700 folders
    heaptrim.cap_arenas()  # before Memory starts its threads (server/heaptrim.py, DAEMON_ARENAS)
    heaptrim.fix_mmap_threshold()  # before the model's first batch (DAEMON_MMAP_THRESHOLD)
    lang = i18n_messages.normalize_lang(args.lang) if args.lang else i18n_messages.detect_lang()
    try:
        cfg = load_config(overrides={"host": args.host, "port": args.port, "db_path": args.db,
                                     "transport": args.transport, "lang": args.lang})
        lang = cfg.lang or i18n_messages.detect_lang()
        i18n_messages.set_lang(lang)
        setup_logging(cfg)
        for warning in env_warnings(cfg, lang):
            log.warning(warning)
        return run(cfg, lang)
    except MemlaneError as exc:
        print(exc.render(lang), file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # anything unforeseen at start: one clear line, the traceback in the log
        logging.getLogger("memlane").exception("start failed")
        print(t("server.start_failed", lang, detail=f"{type(exc).__name__}: {exc}"), file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
