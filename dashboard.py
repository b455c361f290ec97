"""The local web dashboard at /ui: static pages from ui/ and a small, paginated JSON API over one Memory.

The daemon mounts it with `routes += Dashboard(memory, config, token=token).routes()`. Writes go through
Memory's public methods (update, forget, rename_namespace); the read views that have no Memory method
(a memory's facts and relations, health series, namespace counts) are the store's public listings
(store/sqlite_browse.py), and the export is Memory's portable JSONL. Every list is bounded and paginated.

Auth: with a token set, every /ui path but /ui/login needs the bearer token or a session cookie. The
cookie is an HMAC of the token (stateless, so it survives a daemon restart and dies with a new token);
/ui/login accepts the one-time code the daemon prints at start, or the token itself.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from http.cookies import SimpleCookie
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

import i18n_messages as i18n
import memory as memory_module
import portable
import validate as v
from config import Config
from errors import InvalidArgument, MemlaneError, NotFound, TooLarge

log = logging.getLogger("memlane.dashboard")

UI_DIR = Path(__file__).with_name("ui")
COOKIE = "memlane_ui"
SESSION_MAX_AGE = 7 * 24 * 3600
PAGE_DEFAULT, PAGE_MAX = 50, 100
MAX_BODY = 256 * 1024  # content is ≤ 32,768 chars; 256 KiB leaves room for metadata and UTF-8
HISTORY_MAX = 200  # versions shown for one memory (the newest)
DETAIL_MAX = 200  # entities, facts, relations shown for one memory
LOG_SCAN_MAX = 200_000  # recall_log rows read for one latency plot
EXPORT_SPOOL_RAM = 8 * 1024 * 1024  # an export larger than this spools to a temporary file
EXPORT_BLOCK = 64 * 1024
STATUS = {"invalid_argument": 400, "not_found": 404, "too_large": 413, "conflict": 409,
          "unavailable": 503, "internal": 500}


# ---------------------------------------------------------------- sessions


def _session_key(token: str) -> bytes:
    return hashlib.sha256(b"memlane-ui-session\0" + token.encode("utf-8")).digest()


def session_cookie(token: str, now: float | None = None) -> str:
    """A new session value: issued time, nonce, and their HMAC under a key derived from the token."""
    issued = str(int(now if now is not None else time.time()))
    nonce = secrets.token_urlsafe(12)
    mac = hmac.new(_session_key(token), f"{issued}.{nonce}".encode(), hashlib.sha256).hexdigest()
    return f"{issued}.{nonce}.{mac}"


def session_ok(value: str | None, token: str, now: float | None = None) -> bool:
    """True when `value` is a session cookie made with `token` and not older than SESSION_MAX_AGE."""
    if not value or not token or value.count(".") != 2:
        return False
    issued, nonce, mac = value.split(".")
    want = hmac.new(_session_key(token), f"{issued}.{nonce}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want.encode(), mac.encode("utf-8", "replace")):
        return False
    age = (now if now is not None else time.time()) - int(issued)
    return -60 <= age <= SESSION_MAX_AGE


def scope_has_session(scope: Scope, token: str) -> bool:
    """For the daemon's token middleware: does this /ui request carry a valid session cookie?"""
    path = scope.get("path", "")
    if path != "/ui" and not path.startswith("/ui/"):
        return False  # the cookie opens the dashboard only, never the MCP endpoints
    for name, raw in scope.get("headers", []):
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(raw.decode("latin-1"))
            except Exception:  # a malformed cookie header is simply no session
                return False
            morsel = jar.get(COOKIE)
            return morsel is not None and session_ok(morsel.value, token)
    return False


def _bearer_ok(request: Request, token: str) -> bool:
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("bearer "):
        return False
    return hmac.compare_digest(auth[7:].strip().encode("utf-8", "replace"), token.encode("utf-8"))


# ---------------------------------------------------------------- argument helpers


def _page(request: Request) -> int:
    return v.int_arg(_q(request, "limit"), "limit", 1, PAGE_MAX, PAGE_DEFAULT)


def _q(request: Request, name: str) -> Any:
    """A query parameter, or None when absent or empty. Integers arrive as text; cast them."""
    raw = request.query_params.get(name)
    if raw is None or raw.strip() == "":
        return None
    if name in ("limit", "top_k", "depth", "days", "before") and raw.strip().lstrip("-").isdigit():
        return int(raw.strip())
    return raw


def _csv(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    return [p.strip() for p in str(raw).split(",") if p.strip()]


def _flag(raw: Any, name: str) -> bool:
    if raw is None:
        return False
    if str(raw).lower() in ("1", "true", "on", "yes"):
        return True
    if str(raw).lower() in ("0", "false", "off", "no"):
        return False
    raise InvalidArgument("arg.type", name=name, expected="true/false", got=repr(raw)[:40])


def _since_iso(hours: float) -> str:
    return v.to_iso(datetime.now(timezone.utc) - timedelta(hours=hours))


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    idx = min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))
    return round(float(values[idx]), 3)


def _json_cols(row: dict[str, Any], *cols: str) -> dict[str, Any]:
    for c in cols:
        if c in row and isinstance(row[c], str):
            try:
                row[c] = json.loads(row[c])
            except ValueError:  # stored by an older writer; show it as text rather than hide it
                pass
    return row


# ---------------------------------------------------------------- the dashboard


class Dashboard:
    """The dashboard's routes over one Memory (or a callable that returns it once the daemon opened it)."""

    def __init__(self, memory: Any, config: Config, *, token: str = "", lang: str | None = None) -> None:
        self._memory = memory
        self.config = config
        self.token = token or ""
        self.lang = i18n.normalize_lang(lang or config.lang or i18n.current_lang())
        self._login_code = secrets.token_urlsafe(24) if self.token else ""
        self._code_lock = threading.Lock()
        # Asset URLs carry a fingerprint of ui/, so the browser may cache them for good (see _GuardedStatic).
        stamp = "".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns};" for p in sorted(UI_DIR.iterdir()))
        self.asset_version = hashlib.sha256(stamp.encode()).hexdigest()[:12]

    # ------------------------------------------------------------ plumbing

    @property
    def memory(self) -> Any:
        m = self._memory
        return m() if callable(m) and not hasattr(m, "recall") else m

    def login_url(self, base_url: str) -> str:
        """The URL to print at start: a one-time login link when a token is set, else the page itself."""
        base = base_url.rstrip("/")
        if not self.token:
            return f"{base}/ui/"
        return f"{base}/ui/login?token={quote(self._login_code)}"

    def guard_allows(self, scope: Scope) -> bool:
        """For the daemon's token check: a session cookie opens /ui paths only, never the MCP endpoints."""
        if scope.get("path") in ("/ui/login", "/ui", "/ui/"):
            return True  # login checks its code; the page itself refuses with a readable 401 (see _index)
        return bool(self.token) and scope_has_session(scope, self.token)

    def _lang(self, request: Request) -> str:
        asked = request.headers.get("x-memlane-lang") or request.query_params.get("lang")
        return i18n.normalize_lang(asked) if asked else self.lang

    def _authed(self, request: Request) -> bool:
        if not self.token:
            return True
        return _bearer_ok(request, self.token) or scope_has_session(request.scope, self.token)

    def _error(self, request: Request, exc: MemlaneError) -> JSONResponse:
        lang = self._lang(request)
        return JSONResponse({"error": {"code": exc.code, "message": exc.message(lang),
                                       "text": exc.render(lang)}}, status_code=STATUS.get(exc.code, 500))

    def _api(self, fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        """Wrap a blocking handler: auth, run off the event loop, map errors to statuses in one place."""

        async def endpoint(request: Request) -> Response:
            if not self._authed(request):
                return self._refused(request, api=True)
            try:
                result = await fn(request)
            except MemlaneError as exc:
                return self._error(request, exc)
            except Exception as exc:
                log.exception("dashboard %s %s failed", request.method, request.url.path)
                return self._error(request, MemlaneError("internal.unexpected", kind=type(exc).__name__))
            if isinstance(result, Response):
                return result
            return JSONResponse(result, headers={"cache-control": "no-store"})

        return endpoint

    def _refused(self, request: Request, *, api: bool) -> Response:
        lang = self._lang(request)
        msg = i18n.t("ui.login_required", lang)
        headers = {"www-authenticate": 'Bearer realm="memlane"', "cache-control": "no-store"}
        if api:
            return JSONResponse({"error": {"code": "unauthorized", "message": msg}}, 401, headers=headers)
        return HTMLResponse(_plain_page(msg, lang), 401, headers=headers)

    async def _body(self, request: Request, allowed: tuple[str, ...]) -> dict[str, Any]:
        """A JSON object body, capped in size; only application/json (a cross-site form cannot send it)."""
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise InvalidArgument("ui.json_required")
        chunks, size = [], 0
        async for part in request.stream():
            size += len(part)
            if size > MAX_BODY:
                raise TooLarge("arg.too_long", name="body", got=size, limit=MAX_BODY)
            chunks.append(part)
        try:
            data = json.loads(b"".join(chunks) or b"{}")
        except ValueError as exc:
            raise InvalidArgument("ui.bad_json", detail=str(exc)[:120]) from exc
        if not isinstance(data, dict):
            raise InvalidArgument("ui.bad_json", detail=type(data).__name__)
        extra = sorted(set(data) - set(allowed))
        if extra:
            raise InvalidArgument("arg.unknown", name=extra[0], allowed=", ".join(allowed))
        return data

    # ------------------------------------------------------------ routes

    def routes(self) -> list[BaseRoute]:
        api = self._api
        return [
            Route("/ui", self._index, methods=["GET"]),
            Route("/ui/", self._index, methods=["GET"]),
            Route("/ui/login", self._login, methods=["GET"]),
            Route("/ui/logout", self._logout, methods=["POST"]),
            Route("/ui/api/meta", api(self.api_meta), methods=["GET"]),
            Route("/ui/api/recall", api(self.api_recall), methods=["GET"]),
            Route("/ui/api/memories", api(self.api_memories), methods=["GET"]),
            Route("/ui/api/memory/{id}", api(self.api_memory), methods=["GET"]),
            Route("/ui/api/memory/{id}/update", api(self.api_update), methods=["POST"]),
            Route("/ui/api/memory/{id}/forget", api(self.api_forget), methods=["POST"]),
            Route("/ui/api/memory/{id}/restore", api(self.api_restore), methods=["POST"]),
            Route("/ui/api/entities", api(self.api_entities), methods=["GET"]),
            Route("/ui/api/graph", api(self.api_graph), methods=["GET"]),
            Route("/ui/api/health", api(self.api_health), methods=["GET"]),
            Route("/ui/api/namespaces", api(self.api_namespaces), methods=["GET"]),
            Route("/ui/api/namespaces/{ns}/export", api(self.api_export), methods=["GET"]),
            Route("/ui/api/namespaces/{ns}/rename", api(self.api_rename), methods=["POST"]),
            Mount("/ui/static", app=_GuardedStatic(self, directory=str(UI_DIR)), name="ui-static"),
        ]

    # ------------------------------------------------------------ pages

    async def _index(self, request: Request) -> Response:
        if not self._authed(request):
            return self._refused(request, api=False)
        html = ((UI_DIR / "index.html").read_text(encoding="utf-8").replace("{{lang}}", self.lang)
                .replace("{{v}}", self.asset_version))
        return HTMLResponse(html, headers={"cache-control": "no-store"})

    async def _login(self, request: Request) -> Response:
        given = request.query_params.get("token", "")
        ok = False
        if self.token and given:
            with self._code_lock:
                if self._login_code and hmac.compare_digest(given.encode("utf-8", "replace"),
                                                            self._login_code.encode()):
                    self._login_code = ""  # one-time: the printed link stops working once used
                    ok = True
            ok = ok or hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode("utf-8"))
        if not self.token:
            return RedirectResponse("/ui/", 303)
        if not ok:
            lang = self._lang(request)
            return HTMLResponse(_plain_page(i18n.t("ui.login_failed", lang), lang), 401,
                                headers={"cache-control": "no-store"})
        resp = RedirectResponse("/ui/", 303, headers={"cache-control": "no-store"})
        resp.set_cookie(COOKIE, session_cookie(self.token), max_age=SESSION_MAX_AGE, path="/ui",
                        httponly=True, samesite="strict")
        return resp

    async def _logout(self, request: Request) -> Response:
        resp = RedirectResponse("/ui/", 303)
        resp.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
        return resp

    # ------------------------------------------------------------ API: search and memories

    async def api_meta(self, request: Request) -> dict[str, Any]:
        mem = self.memory

        # The first page only: the header's suggestions, not a full listing.
        names = await run_in_threadpool(mem.store.namespaces, PAGE_MAX)
        return {"lang": self.lang, "version": memory_module.__version__, "namespaces": names,
                "embedder": {"model": mem.embedder.model, "dim": mem.embedder.dim}, "auth": bool(self.token),
                "page_max": PAGE_MAX}

    async def api_recall(self, request: Request) -> dict[str, Any]:
        q = request.query_params
        args = {
            "namespace": _q(request, "namespace"), "top_k": _q(request, "top_k"),
            "lanes": _csv(_q(request, "lanes")), "as_of": _q(request, "as_of"),
            "include_history": _flag(_q(request, "include_history"), "include_history"),
            "source": _q(request, "source"), "tags": _csv(_q(request, "tags")),
            "since": _q(request, "since"), "until": _q(request, "until"),
            "detail": "full",  # the cards show scores, lane ranks, tags and supersession (issue 14)
        }
        return await run_in_threadpool(self.memory.recall, q.get("q", ""), **args)

    async def api_memories(self, request: Request) -> dict[str, Any]:
        ns = v.namespace_arg(_q(request, "namespace"))
        limit = _page(request)
        before = v.int_arg(_q(request, "before"), "before", 1, 2**62, 2**62)
        live = not _flag(_q(request, "all"), "all")

        def run() -> dict[str, Any]:
            page = self.memory.store.memories_page(ns, before=before, limit=limit, live_only=live)
            page["items"] = [_json_cols(x, "tags") for x in page["items"]]
            return page

        return await run_in_threadpool(run)

    async def api_memory(self, request: Request) -> dict[str, Any]:
        ns = v.namespace_arg(_q(request, "namespace"))
        cid = v.id_arg(request.path_params["id"])
        return await run_in_threadpool(self._memory_detail, ns, cid)

    def _memory_detail(self, ns: str, cid: str) -> dict[str, Any]:
        mem = self.memory
        detail = mem.store.memory_detail(ns, cid, DETAIL_MAX)
        if detail is None:
            raise NotFound("nf.chunk", id=cid, namespace=ns)
        _json_cols(detail["memory"], "tags", "metadata")
        versions = mem.history(cid, namespace=ns)["versions"]
        return {**detail, "versions": versions[-HISTORY_MAX:], "versions_total": len(versions),
                "current_id": next((x["chunk_id"] for x in reversed(versions) if not x["valid_until"]), None)}

    async def api_update(self, request: Request) -> dict[str, Any]:
        body = await self._body(request, ("namespace", "content", "source", "importance", "tags", "metadata"))
        cid = v.id_arg(request.path_params["id"])
        content = body.pop("content", None)
        return await run_in_threadpool(lambda: self.memory.update(cid, content, **body))

    async def api_forget(self, request: Request) -> dict[str, Any]:
        body = await self._body(request, ("namespace", "reason"))
        cid = v.id_arg(request.path_params["id"])
        return await run_in_threadpool(lambda: self.memory.forget(cid, **body))

    async def api_restore(self, request: Request) -> dict[str, Any]:
        """Restore an old version as a new one: update the current version with the old content."""
        body = await self._body(request, ("namespace", "version_id"))
        cid = v.id_arg(request.path_params["id"])
        ns = v.namespace_arg(body.get("namespace"))
        version_id = v.id_arg(body.get("version_id"), "version_id")

        def run() -> dict[str, Any]:
            mem = self.memory
            versions = mem.history(cid, namespace=ns)["versions"]
            old = next((x for x in versions if x["chunk_id"] == version_id), None)
            if old is None:
                raise NotFound("ui.restore_not_in_chain", version=version_id, id=cid)
            current = next((x["chunk_id"] for x in reversed(versions) if not x["valid_until"]), None)
            if current is None:  # the whole chain was forgotten; update() would refuse, and say why
                current = versions[-1]["chunk_id"]
            row = mem.store.chunk_fields(version_id)
            if row is None:  # history() just listed it and chunks are never deleted; kept for the type
                raise NotFound("ui.restore_not_in_chain", version=version_id, id=cid)
            return mem.update(current, old["content"], namespace=ns, tags=json.loads(row["tags"]),
                              metadata=json.loads(row["metadata"]), source=row["source"], importance=row["importance"])

        return await run_in_threadpool(run)

    # ------------------------------------------------------------ API: graph

    async def api_entities(self, request: Request) -> dict[str, Any]:
        ns = v.namespace_arg(_q(request, "namespace"))
        limit = _page(request)
        prefix = v.text_arg(_q(request, "q"), "q", 200, required=False) or ""
        after = request.query_params.get("after", "")

        def run() -> dict[str, Any]:
            import entity_resolve as er

            return self.memory.store.entities_page(ns, er.norm(prefix), after=after, limit=limit)

        return await run_in_threadpool(run)

    async def api_graph(self, request: Request) -> dict[str, Any]:
        args = {"namespace": _q(request, "namespace"), "depth": _q(request, "depth"),
                "predicates": _csv(_q(request, "predicates")), "limit": _q(request, "limit"),
                "as_of": _q(request, "as_of")}
        entity = request.query_params.get("entity", "")
        return await run_in_threadpool(lambda: self.memory.graph_query(entity, **args))

    # ------------------------------------------------------------ API: health

    async def api_health(self, request: Request) -> dict[str, Any]:
        ns = None if _q(request, "namespace") is None else v.namespace_arg(_q(request, "namespace"))
        days = v.int_arg(_q(request, "days"), "days", 1, 90, 7)
        return await run_in_threadpool(self._health, ns, days)

    def _health(self, ns: str | None, days: int) -> dict[str, Any]:
        mem = self.memory
        stats = mem.stats(namespace=ns)
        width = 13 if days <= 2 else 10  # bucket by hour (YYYY-MM-DDTHH) or by day (YYYY-MM-DD)
        act = mem.store.activity(ns, since=_since_iso(24 * days), bucket_width=width, scan_limit=LOG_SCAN_MAX,
                                 growth_since=_since_iso(24 * 90), log_since=_since_iso(24))
        latency = [{"t": b, "calls": len(xs), "p50_ms": _percentile(xs, 0.5), "p95_ms": _percentile(xs, 0.95)}
                   for b, xs in sorted(act["latency"].items())]
        facts = {
            "status": "degraded" if act["queue"]["failing"] else "ok",  # embeddings are failing (see queue.errors)
            "version": stats["version"], "schema_version": stats["schema_version"],
            "db_path": str(mem.path), "db_bytes": stats["db_bytes"], "embedder": stats["embedder"],
            "chunks": stats["chunks"], "live_chunks": stats["live_chunks"], "vectors": stats["vectors"],
            "entities": stats["entities"], "relations": stats["relations"],
            "namespaces": len(stats["namespaces"]), "recall_24h": stats["recall_24h"],
        }
        return {"facts": facts, "latency": latency, "bucket": "hour" if width == 13 else "day",
                "growth": act["growth"], "entity_kinds": act["entity_kinds"], "queue": act["queue"],
                "slowest_24h": [_json_cols(r, "lanes") for r in act["slowest"]],
                "empty_24h": [_json_cols(r, "lanes") for r in act["empty"]]}

    # ------------------------------------------------------------ API: namespaces

    async def api_namespaces(self, request: Request) -> dict[str, Any]:
        limit = _page(request)
        after = request.query_params.get("after", "")

        return await run_in_threadpool(lambda: self.memory.store.namespaces_page(after=after, limit=limit))

    async def api_rename(self, request: Request) -> dict[str, Any]:
        body = await self._body(request, ("new",))
        old = request.path_params["ns"]
        return await run_in_threadpool(self.memory.rename_namespace, old, body.get("new"))

    async def api_export(self, request: Request) -> Response:
        ns = v.namespace_arg(request.path_params["ns"])
        mem = self.memory
        if not await run_in_threadpool(mem.store.has_namespace, ns):
            raise NotFound("ui.rename_missing", namespace=ns)
        spool = await run_in_threadpool(self._export_spool, ns)
        return StreamingResponse(_spooled_lines(spool), media_type="application/x-ndjson", headers={
            "content-disposition": f'attachment; filename="memlane-{ns}.jsonl"', "cache-control": "no-store"})

    def _export_spool(self, ns: str) -> IO[bytes]:
        """One namespace in the portable JSONL format (portable.py), written whole on this worker thread.

        The export keeps cursors open on this thread's reader; writing it out here, not while the browser
        downloads, means no other thread shares that connection and a slow download pins no WAL snapshot.
        A failure is an error status, not a cut-off file sent with 200."""
        spool = tempfile.SpooledTemporaryFile(max_size=EXPORT_SPOOL_RAM)
        try:
            for rec in self.memory.export_records(namespace=ns):
                spool.write((portable.dumps(rec) + "\n").encode("utf-8"))
            spool.seek(0)
        except BaseException:
            spool.close()
            raise
        return spool


def _spooled_lines(spool: IO[bytes]) -> Iterator[bytes]:
    """The spooled export in blocks, closing (and so deleting) it when done or when the client goes away."""
    with spool:
        while block := spool.read(EXPORT_BLOCK):
            yield block


class _GuardedStatic(StaticFiles):
    """ui/ assets, behind the same auth as the pages."""

    def __init__(self, dash: Dashboard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._dash = dash

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._dash._authed(Request(scope)):
            await self._dash._refused(Request(scope), api=True)(scope, receive, send)
            return
        if b"v=" + self._dash.asset_version.encode() not in scope.get("query_string", b""):
            await super().__call__(scope, receive, send)
            return

        async def send_cached(message: Any) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 200:
                message["headers"] = [*message.get("headers", []),
                                      (b"cache-control", b"private, max-age=31536000, immutable")]
            await send(message)

        await super().__call__(scope, receive, send_cached)


def _plain_page(message: str, lang: str) -> str:
    import html

    return (f'<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>memlane</title>'
            f'<body style="font-family:system-ui;max-width:40em;margin:4em auto"><h1>memlane</h1>'
            f'<p id="msg">{html.escape(message)}</p></body></html>')


def routes(memory: Any, config: Config, *, token: str = "", lang: str | None = None) -> list[BaseRoute]:
    """The dashboard's Starlette routes (see Dashboard); use Dashboard directly to print the login URL."""
    return Dashboard(memory, config, token=token, lang=lang).routes()
