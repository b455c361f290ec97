"""The local web dashboard at /ui: static pages from ui/ and a small, paginated JSON API over one Memory.

The daemon mounts it with `routes += Dashboard(memory, config, token=token).routes()`. Writes go through
Memory's public methods (update, forget, rename_namespace); the read views that have no Memory method
(a memory's facts and relations, health series, namespace counts) are the store's public listings
(store/browse.py), and the export is Memory's portable JSONL. Every list is bounded and paginated.

Auth: with a token set, every /ui path but /ui/login needs the bearer token or a session cookie. The
cookie is an HMAC under a key derived from the token and a random epoch kept beside the database
(`<db>.ui-sessions`, mode 0600), so it survives a daemon restart and dies with a new token. Logout
revokes the cookie's nonce in that file. GET /ui/login accepts only the one-time code the daemon prints
at start, never the token itself (a URL ends up in history and logs); the token may be POSTed from the
sign-in form. Every /ui response carries a strict Content-Security-Policy and X-Frame-Options: DENY.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import logging
import math
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from http.cookies import SimpleCookie
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import entity_resolve as er
import i18n_messages as i18n
import memory as memory_module
from config import Config
from contract import validate as v
from contract.errors import InvalidArgument, MemlaneError, NotFound, TooLarge
from store import portable

log = logging.getLogger("memlane.dashboard")

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
COOKIE = "memlane_ui"
SESSION_MAX_AGE = 7 * 24 * 3600
PAGE_DEFAULT, PAGE_MAX = 50, 100
MAX_BODY = 256 * 1024  # content is ≤ 32,768 chars; 256 KiB leaves room for metadata and UTF-8
HISTORY_MAX = 200  # versions shown for one memory (the newest)
DETAIL_MAX = 200  # entities, facts, relations shown for one memory
LOG_SCAN_MAX = 200_000  # recall_log rows read for one latency plot
EXPORT_SPOOL_RAM = 8 * 1024 * 1024  # an export larger than this spools to a temporary file
EXPORT_BLOCK = 64 * 1024
LOGIN_BODY_MAX = 4096  # the sign-in form holds one token
REVOKED_MAX = 10_000  # logouts remembered within SESSION_MAX_AGE; past this every session is ended instead
# The pages' own CSS of the sign-in/refusal page (no stylesheet can load before signing in), allowed by hash.
PLAIN_CSS = "body{font-family:system-ui;max-width:40em;margin:4em auto}input{width:100%;margin:.5em 0}"
_PLAIN_CSS_HASH = base64.b64encode(hashlib.sha256(PLAIN_CSS.encode()).digest()).decode()
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'sha256-" + _PLAIN_CSS_HASH + "'; "
       "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-frame-options", b"DENY"),
                    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
STATUS = {"invalid_argument": 400, "not_found": 404, "too_large": 413, "conflict": 409,
          "unavailable": 503, "internal": 500}


# ---------------------------------------------------------------- sessions


def _session_key(token: str, epoch: str = "") -> bytes:
    return hashlib.sha256(b"memlane-ui-session\0" + token.encode("utf-8") + b"\0" + epoch.encode()).digest()


def session_cookie(token: str, now: float | None = None, epoch: str = "") -> str:
    """A new session value: issued time, nonce, and their HMAC under a key derived from the token."""
    issued = str(int(now if now is not None else time.time()))
    nonce = secrets.token_urlsafe(12)
    mac = hmac.new(_session_key(token, epoch), f"{issued}.{nonce}".encode(), hashlib.sha256).hexdigest()
    return f"{issued}.{nonce}.{mac}"


def session_ok(value: str | None, token: str, now: float | None = None, epoch: str = "") -> bool:
    """True when `value` is a session cookie made with `token` and not older than SESSION_MAX_AGE."""
    if not value or not token or value.count(".") != 2:
        return False
    issued, nonce, mac = value.split(".")
    if not issued.isdigit():
        return False
    want = hmac.new(_session_key(token, epoch), f"{issued}.{nonce}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want.encode(), mac.encode("utf-8", "replace")):
        return False
    age = (now if now is not None else time.time()) - int(issued)
    return -60 <= age <= SESSION_MAX_AGE


def cookie_value(scope: Scope) -> str | None:
    """The session cookie of a request, if it sent one."""
    for name, raw in scope.get("headers", []):
        if name == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(raw.decode("latin-1"))
            except Exception:  # a malformed cookie header is simply no session
                return None
            morsel = jar.get(COOKIE)
            return morsel.value if morsel is not None else None
    return None


def is_ui_path(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


class Sessions:
    """The session epoch and the revoked nonces, in one small private file beside the database.

    A logout adds its nonce; nonces older than SESSION_MAX_AGE are dropped, since their cookies have
    expired anyway. Past REVOKED_MAX the epoch changes instead, which ends every session: bounded, and
    never a revoked cookie accepted again.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.epoch = secrets.token_urlsafe(16)
        self.revoked: dict[str, int] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.epoch = str(data["epoch"])
                self.revoked = {str(k): int(v) for k, v in dict(data.get("revoked", {})).items()}
            except (OSError, ValueError, KeyError, TypeError):
                log.warning("unreadable %s: every dashboard session ends", path)
        self._save()

    def issue(self, token: str) -> str:
        return session_cookie(token, epoch=self.epoch)

    def valid(self, value: str | None, token: str) -> bool:
        if not session_ok(value, token, epoch=self.epoch):
            return False
        assert value is not None
        return value.split(".")[1] not in self.revoked

    def revoke(self, value: str | None, token: str) -> None:
        if not self.valid(value, token):
            return
        assert value is not None
        issued, nonce, _ = value.split(".")
        with self._lock:
            cutoff = int(time.time()) - SESSION_MAX_AGE - 60
            self.revoked = {n: t for n, t in self.revoked.items() if t >= cutoff}
            self.revoked[nonce] = int(issued)
            if len(self.revoked) > REVOKED_MAX:
                self.epoch, self.revoked = secrets.token_urlsafe(16), {}
            self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"epoch": self.epoch, "revoked": self.revoked}, fh)
            os.chmod(tmp, 0o600)  # O_CREAT's mode applies to new files only
            os.replace(tmp, self.path)
        except OSError as exc:  # revocations still hold until the daemon stops
            log.warning("cannot write %s (%s): logouts last until the daemon stops", self.path, exc.strerror)


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
        self._sessions: Sessions | None = None
        # Asset URLs carry a fingerprint of ui/, so the browser may cache them for good (see _GuardedStatic).
        stamp = "".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns};" for p in sorted(UI_DIR.iterdir()))
        self.asset_version = hashlib.sha256(stamp.encode()).hexdigest()[:12]

    # ------------------------------------------------------------ plumbing

    @property
    def memory(self) -> Any:
        m = self._memory
        return m() if callable(m) and not hasattr(m, "recall") else m

    @property
    def sessions(self) -> Sessions:
        if self._sessions is None:
            with self._code_lock:
                if self._sessions is None:
                    path = getattr(self.memory, "path", None) if self.token else None
                    self._sessions = Sessions(Path(path).with_name(Path(path).name + ".ui-sessions") if path else None)
        return self._sessions

    def has_session(self, scope: Scope) -> bool:
        """Does this /ui request carry a valid, unrevoked session cookie? (Never true outside /ui.)"""
        if not self.token or not is_ui_path(scope.get("path", "")):
            return False  # the cookie opens the dashboard only, never the MCP endpoints
        return self.sessions.valid(cookie_value(scope), self.token)

    def secured(self, app: ASGIApp) -> ASGIApp:
        """`app` with the dashboard's security headers on every /ui response, refusals included."""

        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or not is_ui_path(scope.get("path", "")):
                await app(scope, receive, send)
                return

            async def send_secured(message: Message) -> None:
                if message["type"] == "http.response.start":
                    names = {k for k, _ in SECURITY_HEADERS}
                    kept = [(k, val) for k, val in message.get("headers", []) if k.lower() not in names]
                    message = {**message, "headers": kept + SECURITY_HEADERS}
                await send(message)

            await app(scope, receive, send_secured)

        return wrapped

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
        return self.has_session(scope)

    def _lang(self, request: Request) -> str:
        asked = request.headers.get("x-memlane-lang") or request.query_params.get("lang")
        return i18n.normalize_lang(asked) if asked else self.lang

    def _authed(self, request: Request) -> bool:
        if not self.token:
            return True
        return _bearer_ok(request, self.token) or self.has_session(request.scope)

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
            except ClientDisconnect:  # the browser went away mid-body: nothing to answer, nothing wrong here
                log.debug("dashboard %s %s: client disconnected", request.method, request.url.path)
                return Response(status_code=400)
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
        return HTMLResponse(_plain_page(msg, lang, login_form=bool(self.token)), 401, headers=headers)

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
        except RecursionError:  # a body nested thousands deep; json.loads recurses per level
            raise InvalidArgument("ui.json_too_deep") from None
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
            Route("/ui/login", self._login_form, methods=["POST"]),
            Route("/ui/logout", self._logout, methods=["POST"]),
            Route("/ui/api/login-link", self._new_login_link, methods=["POST"]),
            Route("/ui/api/meta", api(self.api_meta), methods=["GET"]),
            Route("/ui/api/recall", api(self.api_recall), methods=["GET"]),
            Route("/ui/api/memories", api(self.api_memories), methods=["GET"]),
            Route("/ui/api/memory/{id}", api(self.api_memory), methods=["GET"]),
            Route("/ui/api/memory/{id}/update", api(self.api_update), methods=["POST"]),
            Route("/ui/api/memory/{id}/forget", api(self.api_forget), methods=["POST"]),
            Route("/ui/api/memory/{id}/restore", api(self.api_restore), methods=["POST"]),
            Route("/ui/api/memory/{id}/purge", api(self.api_purge), methods=["POST"]),
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
        """GET /ui/login?token=<one-time code>: the link the daemon printed. The token itself is refused here."""
        given = request.query_params.get("token", "")
        ok = False
        if self.token and given:
            with self._code_lock:
                if self._login_code and hmac.compare_digest(given.encode("utf-8", "replace"),
                                                            self._login_code.encode()):
                    self._login_code = ""  # one-time: the printed link stops working once used
                    ok = True
        return self._signed_in(request, ok)

    async def _new_login_link(self, request: Request) -> Response:
        """POST /ui/api/login-link with the bearer token: a fresh one-time link (`memlane dashboard-link`).

        Under a service the link printed at start is only in the log, and it works once. The bearer token
        alone is accepted here, not a session cookie: the link is for a browser that has no session yet."""
        if self.token and not _bearer_ok(request, self.token):
            return self._refused(request, api=True)
        with self._code_lock:
            if self.token:
                self._login_code = secrets.token_urlsafe(24)  # the previous link, used or not, stops working
            path = self.login_url("")
        return JSONResponse({"path": path}, headers={"cache-control": "no-store"})

    async def _login_form(self, request: Request) -> Response:
        """POST /ui/login with token=<the bearer token> from the sign-in form: the token never sits in a URL."""
        body, size = b"", 0
        try:
            async for part in request.stream():
                size += len(part)
                if size > LOGIN_BODY_MAX:
                    return self._signed_in(request, False)
                body += part
        except ClientDisconnect:
            return Response(status_code=400)
        given = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0].strip()
        ok = bool(self.token and given) and hmac.compare_digest(given.encode("utf-8", "replace"),
                                                                self.token.encode("utf-8"))
        return self._signed_in(request, ok)

    def _signed_in(self, request: Request, ok: bool) -> Response:
        if not self.token:
            return RedirectResponse("/ui/", 303)
        if not ok:
            lang = self._lang(request)
            return HTMLResponse(_plain_page(i18n.t("ui.login_failed", lang), lang, login_form=True), 401,
                                headers={"cache-control": "no-store"})
        resp = RedirectResponse("/ui/", 303, headers={"cache-control": "no-store"})
        resp.set_cookie(COOKIE, self.sessions.issue(self.token), max_age=SESSION_MAX_AGE, path="/ui",
                        httponly=True, samesite="strict")
        return resp

    async def _logout(self, request: Request) -> Response:
        """End the session for good: its nonce is revoked, so a copy of the cookie is refused afterwards."""
        if self.token:
            await run_in_threadpool(self.sessions.revoke, cookie_value(request.scope), self.token)
        resp = RedirectResponse("/ui/", 303)
        resp.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
        return resp

    # ------------------------------------------------------------ API: search and memories

    async def api_meta(self, request: Request) -> dict[str, Any]:
        mem = self.memory

        # The first page only: the header's suggestions, not a full listing.
        names = await run_in_threadpool(mem.store.namespaces, PAGE_MAX)
        start = await run_in_threadpool(self._start_namespace) if names else "default"
        return {"lang": self.lang, "version": memory_module.__version__, "namespaces": names, "start_namespace": start,
                "embedder": {"model": mem.embedder.model, "dim": mem.embedder.dim}, "auth": bool(self.token),
                "page_max": PAGE_MAX}

    def _start_namespace(self) -> str:
        """Where the page opens: `default`, or while it has no live memory the namespace with the most
        (among the first page of namespaces), so a new user whose memories live elsewhere sees them."""
        live = {x["namespace"]: x["live_chunks"]
                for x in self.memory.store.namespaces_page(after="", limit=PAGE_MAX)["items"]}
        if live.get("default") or not any(live.values()):
            return "default"
        return max(live, key=lambda ns: live[ns])

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
        history = mem.history(cid, namespace=ns)
        versions = history["versions"]
        out = {**detail, "versions": versions[-HISTORY_MAX:], "versions_total": len(versions),
               "current_id": next((x["chunk_id"] for x in reversed(versions) if not x["valid_until"]), None)}
        # Its thread neighbours, the older memories it replaced, and the newer one that replaced it.
        for key in ("thread", "supersedes", "superseded_by"):
            if key in history:
                out[key] = history[key]
        return out

    async def api_update(self, request: Request) -> dict[str, Any]:
        body = await self._body(request, ("namespace", "content", "source", "importance", "tags", "metadata",
                                          "reinstate"))
        cid = v.id_arg(request.path_params["id"])
        content = body.pop("content", None)
        return await run_in_threadpool(lambda: self.memory.update(cid, content, **body))

    async def api_forget(self, request: Request) -> dict[str, Any]:
        body = await self._body(request, ("namespace", "reason"))
        cid = v.id_arg(request.path_params["id"])
        return await run_in_threadpool(lambda: self.memory.forget(cid, **body))

    async def api_purge(self, request: Request) -> dict[str, Any]:
        """Delete a memory and every version of it for good (Memory.purge); the body must say confirm: true."""
        body = await self._body(request, ("namespace", "confirm"))
        cid = v.id_arg(request.path_params["id"])
        return await run_in_threadpool(lambda: self.memory.purge(cid, **body))

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
            if row is None:  # history() just listed it; gone only if purged meanwhile
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
        """One namespace in the portable JSONL format (store/portable.py), written whole on this worker thread.

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


def _plain_page(message: str, lang: str, *, login_form: bool = False) -> str:
    form = ""
    if login_form:  # POST, so that the token never sits in a URL (history, logs, Referer)
        form = (f'<form method="post" action="/ui/login"><label>{html.escape(i18n.t("ui.token_label", lang))}'
                '<input type="password" name="token" autocomplete="current-password" required></label>'
                f'<button type="submit">{html.escape(i18n.t("ui.sign_in", lang))}</button></form>')
    return (f'<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>memlane</title>'
            f'<style>{PLAIN_CSS}</style><body><h1>memlane</h1>'
            f'<p id="msg">{html.escape(message)}</p>{form}</body></html>')


def routes(memory: Any, config: Config, *, token: str = "", lang: str | None = None) -> list[BaseRoute]:
    """The dashboard's Starlette routes (see Dashboard); use Dashboard directly to print the login URL."""
    return Dashboard(memory, config, token=token, lang=lang).routes()
