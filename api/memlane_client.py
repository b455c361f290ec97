"""memlane's Python client: the MCP tools of a running memlane daemon as plain method calls.

    from memlane_client import MemlaneClient
    c = MemlaneClient()                                  # http://127.0.0.1:8086, SSE transport
    c.remember('sh600089 build at 18.96', source='trading', importance=0.9)
    for h in c.recall('sh600089 建仓', top_k=5):         # recall() returns the list of hits
        print(h['ranks'], h['chunk_id'], h['content'][:60])
    c.last_recall['took_ms']                             # the full result of the last recall()
    c.recall_full('sh600089', top_k=5)['lanes']          # or ask for the full result directly

`MemlaneClient` is synchronous: it runs one asyncio loop in a background thread and keeps one MCP
session open. `AsyncMemlaneClient` has the same methods as coroutines. Both return the contract's
results (../shared/CONTRACT.md) as dicts and raise one exception class per contract error code.

This module imports only the `mcp` SDK (and what it depends on), never memlane's own modules, so
`pip install ./api` is enough to use it. That is also why it owns its messages (`client.*`, in
English and Chinese) instead of reading memlane's table (i18n_messages.py); tests/test_i18n.py holds
them to that table's rules. Tool errors keep the daemon's own text, in the daemon's language, behind
their stable `[code]` prefix.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import json
import logging
import os
import re
import sys
import threading
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import ClientSession, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, INVALID_PARAMS, INVALID_REQUEST, REQUEST_TIMEOUT

if sys.version_info < (3, 11):  # pragma: no cover - anyio installs the backport there
    from exceptiongroup import BaseExceptionGroup

__all__ = [
    "DEFAULT_URL",
    "AsyncMemlaneClient",
    "Conflict",
    "Internal",
    "InvalidArgument",
    "MemlaneClient",
    "MemlaneError",
    "NotFound",
    "TooLarge",
    "Unavailable",
]
__version__ = "0.1.0"

DEFAULT_URL = "http://127.0.0.1:8086"
DEFAULT_TIMEOUT = 30.0
TRANSPORTS = ("sse", "http")
# How long the SSE stream may stay silent before the SDK drops it; the next call then reconnects.
SSE_READ_TIMEOUT = 300.0

# A daemon restart makes the SDK log tracebacks ("Error in sse_reader"); the client recovers from
# it, so in a program that configured no logging they must not reach stderr via logging's
# last-resort handler. A program that configures logging still receives them.
logging.getLogger("mcp.client").addHandler(logging.NullHandler())

# --------------------------------------------------------------------------- messages
# The client's own messages, by the rules of i18n_messages.py (see the module docstring).
LOCALES = ("en", "zh")
MESSAGES: dict[str, dict[str, str]] = {
    "client.not_running": {
        "en": "no memlane daemon answers at {url} ({detail}); start it (python mcp_server.py) or pass the right url",
        "zh": "{url} 上没有 memlane 守护进程应答（{detail}）；请启动它（python mcp_server.py）或传入正确的 url",
    },
    "client.token_missing": {
        "en": "the daemon at {url} needs a token and none was found; pass token=, set MEMLANE_AUTH_TOKEN, or create {token_file}",
        "zh": "{url} 上的守护进程需要令牌，但没有找到；请传入 token=、设置 MEMLANE_AUTH_TOKEN，或创建 {token_file}",
    },
    "client.token_wrong": {
        "en": "the daemon at {url} rejected the token from {token_source} (HTTP 401); use the daemon's token (MEMLANE_AUTH_TOKEN or {token_file})",
        "zh": "{url} 上的守护进程拒绝了来自 {token_source} 的令牌（HTTP 401）；请使用守护进程的令牌（MEMLANE_AUTH_TOKEN 或 {token_file}）",
    },
    "client.timeout": {
        "en": "the daemon at {url} did not answer {tool} within {seconds} s; retry, or pass a larger timeout=",
        "zh": "{url} 上的守护进程在 {seconds} 秒内没有响应 {tool}；请重试，或传入更大的 timeout=",
    },
    "client.connect_failed": {
        "en": "cannot talk MCP to {url} ({detail}); check that memlane runs there and that transport= matches it",
        "zh": "无法与 {url} 进行 MCP 通信（{detail}）；请确认 memlane 在该地址运行，且 transport= 与之匹配",
    },
    "client.bad_response": {
        "en": "the daemon answered {tool} with something this client cannot read ({detail}); use a client and a daemon of the same version",
        "zh": "守护进程对 {tool} 的应答无法被此客户端解析（{detail}）；请使用相同版本的客户端和守护进程",
    },
    "client.protocol_error": {
        "en": "the daemon refused the {tool} call: {detail}",
        "zh": "守护进程拒绝了 {tool} 调用：{detail}",
    },
    "client.bad_option": {
        "en": "{name} must be {expected}, got {got}",
        "zh": "{name} 必须是 {expected}，实际为 {got}",
    },
    "client.closed": {
        "en": "this memlane client is closed; create a new one",
        "zh": "此 memlane 客户端已关闭，请新建一个",
    },
}


def detect_lang(environ: Mapping[str, str] | None = None) -> str:
    """The locale: MEMLANE_LANG, then LC_ALL, then LANG (zh_CN.UTF-8 → zh), then English."""
    env = os.environ if environ is None else environ
    for key in ("MEMLANE_LANG", "LC_ALL", "LANG"):
        value = (env.get(key) or "").strip()
        if not value or value in ("C", "POSIX"):
            continue
        code = value.split(".")[0].split("_")[0].split("-")[0].lower()
        if code in LOCALES:
            return code
    return "en"


def _t(msg_id: str, lang: str, **params: Any) -> str:
    """Render a message; falls back to English, then to the id, so a gap is visible."""
    entry = MESSAGES.get(msg_id)
    if entry is None:
        return msg_id
    template = entry.get(lang) or entry.get("en")
    if template is None:
        return msg_id
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):
        return f"{template} {params}"


# --------------------------------------------------------------------------- errors


class MemlaneError(Exception):
    """Base class of every error this client raises; `code` is the contract's error code."""

    code = "internal"

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        self.message = message
        self.tool = tool
        super().__init__(f"[{self.code}] {message}")


class InvalidArgument(MemlaneError):
    """An argument is missing, of the wrong type, or out of range."""

    code = "invalid_argument"


class NotFound(MemlaneError):
    """The id or entity named does not exist in this namespace."""

    code = "not_found"


class TooLarge(MemlaneError):
    """A value exceeds a size limit."""

    code = "too_large"


class Conflict(MemlaneError):
    """The request conflicts with the current state (e.g. updating a closed version)."""

    code = "conflict"


class Unavailable(MemlaneError):
    """The daemon cannot be reached or cannot serve now; `reason` says which case.

    reason is one of: "not_running" (nothing listens at the url), "token_missing" / "token_wrong"
    (HTTP 401), "timeout", "connect_failed" (something answers but not memlane's MCP), "closed"
    (this client was closed), "daemon" (the daemon itself reported `[unavailable]`).
    """

    code = "unavailable"

    def __init__(self, message: str, *, tool: str | None = None, reason: str = "daemon") -> None:
        self.reason = reason
        super().__init__(message, tool=tool)


class Internal(MemlaneError):
    """An unexpected failure in the daemon (its log has details) or an unreadable answer."""

    code = "internal"


ERRORS: dict[str, type[MemlaneError]] = {
    cls.code: cls for cls in (InvalidArgument, NotFound, TooLarge, Conflict, Unavailable, Internal)
}
_ERROR_TEXT = re.compile(r"^\s*\[([a-z_]+)\]\s*(.*)\Z", re.S)


def error_from_text(text: str, tool: str | None = None) -> MemlaneError:
    """The typed error for a tool's `[code] message` text; an unknown code becomes Internal."""
    match = _ERROR_TEXT.match(text or "")
    if match and match.group(1) in ERRORS:
        return ERRORS[match.group(1)](match.group(2), tool=tool)
    return Internal(text or "", tool=tool)


# --------------------------------------------------------------------------- settings


def _token_file(environ: Mapping[str, str]) -> Path:
    explicit = environ.get("MEMLANE_TOKEN_FILE")
    if explicit:
        return Path(os.path.expanduser(explicit))
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".memlane" / "auth_token"


def resolve_token(token: str | None, environ: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The token and where it came from: the argument, then MEMLANE_AUTH_TOKEN, then the token file."""
    env = os.environ if environ is None else environ
    if token:
        return token.strip(), "token="
    if env.get("MEMLANE_AUTH_TOKEN", "").strip():
        return env["MEMLANE_AUTH_TOKEN"].strip(), "MEMLANE_AUTH_TOKEN"
    path = _token_file(env)
    try:
        # Bounded read: a token is short; a huge file here is a mistake, not a token.
        text = path.read_text(encoding="utf-8")[:4096].strip()
    except (OSError, UnicodeDecodeError):
        return None, str(path)
    return (text or None), str(path)


def resolve_url(url: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The daemon's base url: the argument, else MEMLANE_HOST/MEMLANE_PORT as the daemon reads them."""
    if url:
        return url.rstrip("/")
    env = os.environ if environ is None else environ
    host = env.get("MEMLANE_HOST", "").strip()
    port = env.get("MEMLANE_PORT", "").strip()
    if not host and not port:
        return DEFAULT_URL
    host = host or "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"  # a daemon bound to every interface still answers on loopback
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port or 8086}"


def _base_and_endpoint(url: str, transport: str) -> tuple[str, str]:
    """The daemon's base url and the transport's endpoint (/sse or /mcp), whichever was given."""
    for suffix in ("/sse", "/mcp"):
        if url.endswith(suffix):
            return url[: -len(suffix)], url
    return url, url + ("/sse" if transport == "sse" else "/mcp")


def _drop_none(arguments: Mapping[str, Any]) -> dict[str, Any]:
    # None means "not given": the daemon treats an argument it does not expect as an error.
    return {k: v for k, v in arguments.items() if v is not None}


def _leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (possibly nested) exception groups, for the SDK's task-group failures."""
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out.extend(_leaf_exceptions(inner))
        return out
    return [exc]


# --------------------------------------------------------------------------- async client


class AsyncMemlaneClient:
    """An asyncio client for one memlane daemon. Use it as `async with AsyncMemlaneClient() as c:`.

    Args:
        url: the daemon's base url (default http://127.0.0.1:8086, or MEMLANE_HOST/MEMLANE_PORT);
            a url ending in /sse or /mcp is used as the endpoint as is.
        transport: "sse" (GET /sse + POST /messages/) or "http" (Streamable HTTP at /mcp).
        token: the bearer token; default MEMLANE_AUTH_TOKEN, then ~/.memlane/auth_token
            (MEMLANE_TOKEN_FILE names another file).
        timeout: seconds to wait for a connection and for each call's answer.
        namespace: the default namespace of every call (each call's namespace= overrides it).
        lang: "en" or "zh" for the client's own messages; default MEMLANE_LANG, LC_ALL, LANG.
        environ: where to read MEMLANE_*, HOME and the locale from (default os.environ).

    The session opens on the first call (or `connect()`). When the daemon restarts, the next call
    opens a new session and is retried once. A call cut off mid-flight by a daemon crash may
    therefore run twice: remember() deduplicates identical content, and forget() is idempotent;
    purge() run twice answers NotFound the second time.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        transport: str = "sse",
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        namespace: str | None = None,
        lang: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.lang = lang if lang in LOCALES else detect_lang(env)
        if transport not in TRANSPORTS:
            raise InvalidArgument(_t("client.bad_option", self.lang, name="transport", expected="'sse' | 'http'",
                                     got=repr(transport)))
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            raise InvalidArgument(_t("client.bad_option", self.lang, name="timeout",
                                     expected="a number of seconds in (0, 3600]", got=repr(timeout)))
        self.url = resolve_url(url, env)
        self.transport = transport
        self.base_url, self.endpoint = _base_and_endpoint(self.url, transport)
        self.token, self.token_source = resolve_token(token, env)
        self.token_file = str(_token_file(env))
        self.timeout = float(timeout)
        self.namespace = namespace
        self.last_recall: dict[str, Any] | None = None
        """The full result of the last recall() / recall_full(): hits, took_ms, lanes, skipped."""
        self.server_info: dict[str, Any] | None = None
        self._session: ClientSession | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._generation = 0
        self._closed = False

    # ------------------------------------------------------------ connection

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def __aenter__(self) -> AsyncMemlaneClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Open the MCP session now instead of at the first call; raises Unavailable if it cannot."""
        if self._closed:
            raise Unavailable(_t("client.closed", self.lang), reason="closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._session is None:
                await self._open()

    async def close(self) -> None:
        """Close the session. The client cannot be used afterwards."""
        self._closed = True
        await self._drop()

    async def _drop(self) -> None:
        """End the current session (if any) and wait, bounded, for its task to finish."""
        holder, stop = self._holder, self._stop
        self._session = self._holder = self._stop = None
        if holder is None:
            return
        if stop is not None:
            stop.set()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(holder), timeout=5.0)
        if not holder.done():
            holder.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(holder, timeout=5.0)

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[ClientSession] = loop.create_future()
        stop = asyncio.Event()
        holder = loop.create_task(self._hold(ready, stop), name="memlane-client-session")
        try:
            session = await asyncio.wait_for(asyncio.shield(ready), timeout=self.timeout + 1.0)
        except BaseException as exc:
            stop.set()
            holder.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(holder, timeout=5.0)
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
            raise await self._diagnose(exc) from exc
        self._session, self._holder, self._stop = session, holder, stop
        self._generation += 1

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        """Own one session from start to end: the SDK's contexts must exit in the task that entered them."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.transport == "sse":
                    read, write = await stack.enter_async_context(sse_client(
                        self.endpoint, headers=self._headers(), timeout=self.timeout, sse_read_timeout=SSE_READ_TIMEOUT))
                else:
                    http = await stack.enter_async_context(httpx2.AsyncClient(
                        headers=self._headers(), timeout=httpx2.Timeout(self.timeout, read=SSE_READ_TIMEOUT)))
                    read, write = await stack.enter_async_context(streamable_http_client(self.endpoint, http_client=http))
                session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=self.timeout))
                with anyio.fail_after(self.timeout):
                    init = await session.initialize()
                info = getattr(init, "server_info", None)
                self.server_info = info.model_dump() if info is not None else None
                if not ready.done():
                    ready.set_result(session)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                else:
                    ready.cancel()
            if not isinstance(exc, Exception):
                raise
            # After the session was handed out, a transport failure surfaces at the next call as a
            # closed connection, which reconnects; nothing else to do here.

    async def _diagnose(self, exc: BaseException) -> MemlaneError:
        """Turn a failure to connect into Unavailable saying why: daemon down, token, or other."""
        leaves = _leaf_exceptions(exc)
        for leaf in leaves:
            if isinstance(leaf, MemlaneError):
                return leaf
        status = next((leaf.response.status_code for leaf in leaves if isinstance(leaf, httpx2.HTTPStatusError)), None)
        if status is None:
            # The SDK turns some HTTP failures into JSON-RPC errors; ask the daemon directly.
            status = await self._probe_status()
        if status == 401:
            if self.token:
                return Unavailable(_t("client.token_wrong", self.lang, url=self.base_url, token_source=self.token_source,
                                      token_file=self.token_file), reason="token_wrong")
            return Unavailable(_t("client.token_missing", self.lang, url=self.base_url, token_file=self.token_file),
                               reason="token_missing")
        if status == -1 or any(isinstance(leaf, (httpx2.ConnectError, ConnectionError)) for leaf in leaves):
            detail = next((str(leaf) for leaf in leaves if str(leaf)), type(exc).__name__)
            return Unavailable(_t("client.not_running", self.lang, url=self.base_url, detail=detail[:200]),
                               reason="not_running")
        if any(isinstance(leaf, (TimeoutError, asyncio.TimeoutError)) for leaf in leaves):
            return Unavailable(_t("client.timeout", self.lang, url=self.base_url, tool="initialize",
                                  seconds=f"{self.timeout:g}"), reason="timeout")
        detail = "; ".join(f"{type(leaf).__name__}: {leaf}" for leaf in leaves)[:300]
        return Unavailable(_t("client.connect_failed", self.lang, url=self.endpoint, detail=detail),
                           reason="connect_failed")

    async def _probe_status(self) -> int | None:
        """The HTTP status of a bare request to the endpoint with our headers; -1 when nothing listens."""
        try:
            async with httpx2.AsyncClient(headers=self._headers(), timeout=min(self.timeout, 10.0)) as http:
                async with http.stream("GET", self.endpoint) as response:
                    return response.status_code
        except httpx2.ConnectError:
            return -1
        except (httpx2.HTTPError, OSError):
            return None

    # ------------------------------------------------------------ calls

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Call one MCP tool by its full name (e.g. "memory_stats") and return its structured result."""
        if self._closed:
            raise Unavailable(_t("client.closed", self.lang), tool=tool, reason="closed")
        args = _drop_none(arguments)
        if self.namespace is not None and "namespace" not in args:
            args["namespace"] = self.namespace
        for attempt in (1, 2):
            if self._session is None:
                await self.connect()
            session, generation = self._session, self._generation
            if session is None:  # closed concurrently
                raise Unavailable(_t("client.closed", self.lang), tool=tool, reason="closed")
            try:
                result = await session.call_tool(tool, args, read_timeout_seconds=self.timeout)
            except MCPError as exc:
                if exc.code == REQUEST_TIMEOUT:
                    raise Unavailable(_t("client.timeout", self.lang, url=self.base_url, tool=tool,
                                         seconds=f"{self.timeout:g}"), tool=tool, reason="timeout") from exc
                if not _is_disconnect(exc):
                    raise _protocol_error(exc, tool, self.lang) from exc
                if attempt == 2:
                    raise await self._diagnose(exc) from exc
            except (httpx2.HTTPError, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
                if attempt == 2:
                    raise await self._diagnose(exc) from exc
            else:
                return _unwrap(result, tool, self.lang)
            # The session died (daemon restarted or connection lost): reconnect once and retry.
            async with self._lock or asyncio.Lock():
                if self._generation == generation:
                    await self._drop()
        raise AssertionError("unreachable")  # pragma: no cover

    async def remember(
        self,
        content: str,
        *,
        namespace: str | None = None,
        source: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        entities: Sequence[str | Mapping[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
        valid_from: str | None = None,
        thread: str | None = None,
        wait_embedded: bool | None = None,
    ) -> dict[str, Any]:
        """Store a memory. Returns {chunk_id, namespace, created, duplicate_of, entities, facts, embedding, warnings},
        and with `wait_embedded` its `near_duplicates` when it has any."""
        return await self.call("memory_remember", {
            "content": content, "namespace": namespace, "source": source, "importance": importance,
            "tags": _list(tags), "entities": _list(entities), "metadata": _dict(metadata), "valid_from": valid_from,
            "thread": thread, "wait_embedded": wait_embedded,
        })

    async def recall(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Recall memories: the list of hits. The full result is in `last_recall` (or use recall_full())."""
        return (await self.recall_full(query, **kwargs))["hits"]

    async def recall_full(
        self,
        query: str,
        *,
        namespace: str | None = None,
        top_k: int | None = None,
        lanes: Sequence[str] | None = None,
        as_of: str | None = None,
        include_history: bool | None = None,
        source: str | None = None,
        tags: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        min_relevance: float | None = None,
        detail: str = "full",
    ) -> dict[str, Any]:
        """Recall memories: the full result {hits, took_ms, lanes: {lane: {hits, ms}}}.

        A program reads every field, so this client asks for detail "full" (the daemon's default for agents
        is "brief"). Hits below `min_relevance` (the daemon's default when None) are left out. Results are
        compact: a field that would be null or an empty list is absent.
        """
        result = await self.call("memory_recall", {
            "query": query, "namespace": namespace, "top_k": top_k, "lanes": _list(lanes), "as_of": as_of,
            "include_history": include_history, "source": source, "tags": _list(tags), "since": since,
            "until": until, "min_relevance": min_relevance, "detail": detail,
        })
        if not isinstance(result.get("hits"), list):
            raise Internal(_t("client.bad_response", self.lang, tool="memory_recall", detail="no hits list"),
                           tool="memory_recall")
        self.last_recall = result
        return result

    async def relate(
        self,
        subject: str,
        predicate: str,
        object: str,  # noqa: A002 - the contract's argument name
        *,
        namespace: str | None = None,
        subject_kind: str | None = None,
        object_kind: str | None = None,
        confidence: float | None = None,
        chunk_id: str | None = None,
        valid_from: str | None = None,
    ) -> dict[str, Any]:
        """Relate two entities. Returns {relation_id, subject, object, created}."""
        return await self.call("memory_relate", {
            "subject": subject, "predicate": predicate, "object": object, "namespace": namespace,
            "subject_kind": subject_kind, "object_kind": object_kind, "confidence": confidence,
            "chunk_id": chunk_id, "valid_from": valid_from,
        })

    async def forget(self, id: str, *, namespace: str | None = None, reason: str | None = None) -> dict[str, Any]:  # noqa: A002
        """Close a memory or relation. Returns {id, forgotten, valid_until}."""
        return await self.call("memory_forget", {"id": id, "namespace": namespace, "reason": reason})

    async def purge(self, id: str, confirm: bool, *, namespace: str | None = None) -> dict[str, Any]:  # noqa: A002
        """Delete a memory for good: every version, its facts and derived rows (confirm must be True).
        Returns {purged: [chunk_id], relations, entities, recall_log}; a retried call after a restart may
        raise NotFound when the first one went through."""
        return await self.call("memory_purge", {"id": id, "namespace": namespace, "confirm": confirm})

    async def update(
        self,
        id: str,  # noqa: A002 - the contract's argument name
        content: str,
        *,
        namespace: str | None = None,
        source: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        valid_from: str | None = None,
        reinstate: bool | None = None,
    ) -> dict[str, Any]:
        """Replace a memory (a chunk id; not a relation) with a new version. Returns {chunk_id, previous_id,
        namespace, superseded_by?}: a new version of a superseded memory stays superseded unless `reinstate`
        is true."""
        return await self.call("memory_update", {
            "id": id, "content": content, "namespace": namespace, "source": source, "importance": importance,
            "tags": _list(tags), "metadata": _dict(metadata), "valid_from": valid_from, "reinstate": reinstate,
        })

    async def history(self, id: str, *, namespace: str | None = None) -> dict[str, Any]:  # noqa: A002
        """Every version of a memory, oldest first. Returns {versions: [...], supersedes?, superseded_by?}."""
        return await self.call("memory_history", {"id": id, "namespace": namespace})

    async def graph_query(
        self,
        entity: str,
        *,
        namespace: str | None = None,
        depth: int | None = None,
        predicates: Sequence[str] | None = None,
        limit: int | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """The entity graph around one entity. Returns {root, nodes, edges, truncated}."""
        return await self.call("memory_graph_query", {
            "entity": entity, "namespace": namespace, "depth": depth, "predicates": _list(predicates),
            "limit": limit, "as_of": as_of,
        })

    async def stats(self, *, namespace: str | None = None) -> dict[str, Any]:
        """Counts, sizes and recent recall latency: of one namespace (the only one listed) when given, else of all."""
        return await self.call("memory_stats", {"namespace": namespace})


def _list(value: Any) -> Any:
    # A str is a Sequence too; pass it (and any non-sequence) through unchanged so that the
    # daemon reports the type error in its own words instead of this client guessing.
    if isinstance(value, (Sequence, AbstractSet)) and not isinstance(value, (str, bytes)):
        return list(value)
    return value


def _dict(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _is_disconnect(exc: MCPError) -> bool:
    if exc.code == CONNECTION_CLOSED:
        return True
    # Streamable HTTP: a restarted daemon does not know the old session id (HTTP 404); the SDK
    # reports that as "Session not found" or "Session terminated". The call never ran.
    text = (exc.message or "").lower()
    return "session not found" in text or (exc.code == INVALID_REQUEST and "session terminated" in text)


def _protocol_error(exc: MCPError, tool: str, lang: str) -> MemlaneError:
    """An MCP-level error (not a tool result): a `[code]` text keeps its class, else by JSON-RPC code."""
    if _ERROR_TEXT.match(exc.message or ""):
        return error_from_text(exc.message, tool)
    text = _t("client.protocol_error", lang, tool=tool, detail=exc.message)
    if exc.code == INVALID_PARAMS:
        return InvalidArgument(text, tool=tool)
    if exc.code == CONNECTION_CLOSED:
        return Unavailable(text, tool=tool, reason="connect_failed")
    return Internal(text, tool=tool)


def _unwrap(result: Any, tool: str, lang: str) -> dict[str, Any]:
    """A tool result as a dict, or the typed error its `[code] message` text names."""
    texts = [getattr(block, "text", "") for block in (result.content or []) if getattr(block, "type", "") == "text"]
    if result.is_error:
        raise error_from_text("\n".join(texts).strip(), tool)
    data = result.structured_content
    if data is None and texts:
        try:
            data = json.loads(texts[0])
        except ValueError as exc:
            raise Internal(_t("client.bad_response", lang, tool=tool, detail=f"not JSON: {exc}"), tool=tool) from exc
    if not isinstance(data, dict):
        raise Internal(_t("client.bad_response", lang, tool=tool, detail=f"{type(data).__name__} instead of an object"),
                       tool=tool)
    return data


# --------------------------------------------------------------------------- sync client

_T = TypeVar("_T")


class _LoopThread:
    """One asyncio loop running in a daemon thread, so sync code can drive the async client."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(started.set)
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="memlane-client-loop", daemon=True)
        self.thread.start()
        started.wait(10.0)

    def run(self, coro: Coroutine[Any, Any, _T], timeout: float) -> _T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def stop(self, client: AsyncMemlaneClient) -> None:
        if not self.loop.is_running():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(client.close(), self.loop).result(10.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5.0)


def _shutdown(loop_thread: _LoopThread, client: AsyncMemlaneClient) -> None:
    loop_thread.stop(client)


class MemlaneClient:
    """A synchronous client for one memlane daemon; the same arguments and methods as AsyncMemlaneClient.

    It keeps one MCP session open on an asyncio loop in a background thread, opened at the first
    call. `recall()` returns the list of hits; the full result of the last recall (took_ms, lanes,
    skipped) is `client.last_recall`, and `recall_full()` returns it directly. Call `close()` (or
    use `with MemlaneClient() as c:`) to end the session; it also ends when the process exits.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        transport: str = "sse",
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        namespace: str | None = None,
        lang: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._async = AsyncMemlaneClient(url, transport=transport, token=token, timeout=timeout,
                                         namespace=namespace, lang=lang, environ=environ)
        self._loop = _LoopThread()
        self._finalizer = weakref.finalize(self, _shutdown, self._loop, self._async)

    def _run(self, coro: Coroutine[Any, Any, _T], tool: str) -> _T:
        # The async side bounds every step by `timeout`; this outer bound only guards against a hang
        # (a connect, a call, a reconnect and a retried call, plus slack).
        bound = 4 * self._async.timeout + 15.0
        try:
            return self._loop.run(coro, bound)
        except concurrent.futures.TimeoutError:
            raise Unavailable(_t("client.timeout", self._async.lang, url=self._async.base_url, tool=tool,
                                 seconds=f"{bound:g}"), tool=tool, reason="timeout") from None

    def __enter__(self) -> MemlaneClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        return self._async.url

    @property
    def transport(self) -> str:
        return self._async.transport

    @property
    def timeout(self) -> float:
        return self._async.timeout

    @property
    def last_recall(self) -> dict[str, Any] | None:
        """The full result of the last recall() / recall_full(): {hits, took_ms, lanes, skipped}."""
        return self._async.last_recall

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The daemon's MCP server info (name, version) once connected."""
        return self._async.server_info

    def connect(self) -> None:
        """Open the session now instead of at the first call; raises Unavailable if it cannot."""
        self._run(self._async.connect(), "connect")

    def close(self) -> None:
        """End the session and stop the background loop. The client cannot be used afterwards."""
        self._finalizer()

    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Call one MCP tool by its full name (e.g. "memory_stats") and return its structured result."""
        if not self._finalizer.alive:
            raise Unavailable(_t("client.closed", self._async.lang), tool=tool, reason="closed")
        return self._run(self._async.call(tool, arguments), tool)

    def remember(self, content: str, **kwargs: Any) -> dict[str, Any]:
        """Store a memory (arguments as AsyncMemlaneClient.remember)."""
        return self._sync("remember", content, **kwargs)

    def recall(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        """Recall memories: the list of hits; the full result is then in `last_recall`."""
        return self._sync("recall_full", query, **kwargs)["hits"]

    def recall_full(self, query: str, **kwargs: Any) -> dict[str, Any]:
        """Recall memories: the full result {hits, took_ms, lanes, skipped}."""
        return self._sync("recall_full", query, **kwargs)

    def relate(self, subject: str, predicate: str, object: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        """Relate two entities (arguments as AsyncMemlaneClient.relate)."""
        return self._sync("relate", subject, predicate, object, **kwargs)

    def forget(self, id: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        """Close a memory or relation."""
        return self._sync("forget", id, **kwargs)

    def purge(self, id: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        """Delete a memory and every version of it for good (pass confirm=True)."""
        return self._sync("purge", id, **kwargs)

    def update(self, id: str, content: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        """Replace a memory with a new version."""
        return self._sync("update", id, content, **kwargs)

    def history(self, id: str, **kwargs: Any) -> dict[str, Any]:  # noqa: A002
        """Every version of a memory, oldest first."""
        return self._sync("history", id, **kwargs)

    def graph_query(self, entity: str, **kwargs: Any) -> dict[str, Any]:
        """The entity graph around one entity."""
        return self._sync("graph_query", entity, **kwargs)

    def stats(self, **kwargs: Any) -> dict[str, Any]:
        """Counts, sizes and recent recall latency."""
        return self._sync("stats", **kwargs)

    def _sync(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self._finalizer.alive:
            raise Unavailable(_t("client.closed", self._async.lang), tool=method, reason="closed")
        # Binding the coroutine here checks the arguments (a TypeError) before anything is sent.
        coro = getattr(self._async, method)(*args, **kwargs)
        return self._run(coro, method)


# The sync methods take **kwargs for brevity; give them the async methods' signatures so that
# help() and IDEs show the contract's argument names.
for _name in ("remember", "recall", "recall_full", "relate", "forget", "purge", "update", "history", "graph_query",
              "stats"):
    _source = AsyncMemlaneClient.recall_full if _name == "recall" else getattr(AsyncMemlaneClient, _name)
    _sig = inspect.signature(_source)
    if _name == "recall":
        _sig = _sig.replace(return_annotation="list[dict[str, Any]]")
    getattr(MemlaneClient, _name).__signature__ = _sig

AsyncMemlaneClient.recall.__signature__ = inspect.signature(AsyncMemlaneClient.recall_full).replace(  # type: ignore[attr-defined]
    return_annotation="list[dict[str, Any]]")
del _name, _source, _sig
