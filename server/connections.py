"""The daemon's HTTP connections: deadlines for a request's head and body, and a cap on open sockets.

uvicorn's h11 protocol has a keep-alive timeout but no deadline before the first request, none on a
head or body trickled one byte at a time, and no cap on idle sockets (its `limit_concurrency` only
answers 503 once a request has arrived, while the idle socket keeps its descriptor). Without them, a
few hundred idle connections used up a 256-descriptor limit and the daemon stopped answering.

`protocol_class(...)` returns an H11Protocol subclass with:
- a head deadline: a connection must deliver a complete request head within `header_timeout` seconds
  of opening (or of its previous response), however slowly the bytes arrive;
- a body deadline: a request body must be complete within `body_timeout` seconds of its head;
- a cap: past `cap` open connections, the oldest one still waiting for a request head is closed to
  make room (so /health from a new connection gets through); if every connection is busy with a
  request or a stream, the new one is closed instead.
A response being streamed (an SSE stream, a long tool call) has no deadline: the client is done sending.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("memlane.connections")

MIN_CAP = 8
HEAD, BODY, BUSY = "head", "body", "busy"


def connection_cap(configured: int, reserve: int) -> int:
    """`configured`, lowered to what the descriptor limit leaves after the files already open and
    `reserve` more (the SQLite readers each tool thread opens, the log, the model); at least MIN_CAP."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return configured
    try:
        in_use = len(os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"))
    except OSError:
        in_use = 64
    return max(MIN_CAP, min(configured, soft - in_use - reserve))


def protocol_class(header_timeout: float, body_timeout: float, cap: int) -> type[H11Protocol]:
    """An H11Protocol with head and body deadlines and a connection cap (see the module docstring)."""

    class LimitedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._phase = HEAD
            self._timer: asyncio.TimerHandle | None = None
            self._opened = self.loop.time()
            super().connection_made(transport)
            if len(self.connections) > cap and not self._make_room():
                log.warning("connection cap (%d) reached and every connection is busy: refusing one", cap)
                transport.abort()
                return
            self._arm(header_timeout)

        def _make_room(self) -> bool:
            """Close the oldest connection still waiting for a request head; False if there is none."""
            waiting = [c for c in self.connections
                       if c is not self and getattr(c, "_phase", BUSY) == HEAD and not c.transport.is_closing()]
            if not waiting:
                return False
            oldest = min(waiting, key=lambda c: c._opened)  # type: ignore[union-attr]
            oldest.transport.abort()
            return True

        def _arm(self, seconds: float) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expired(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                log.debug("closing a connection that sent no complete request %s in time", self._phase)
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.SEND_BODY:
                if self._phase != BODY:
                    self._phase = BODY
                    self._arm(body_timeout)
            elif state is not h11.IDLE:  # the request is in (DONE), or the connection is ending
                self._phase = BUSY
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._phase = HEAD  # keep-alive: the next request's head gets the same deadline
                self._opened = self.loop.time()
                self._arm(header_timeout)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return LimitedH11Protocol


def uvicorn_options(cfg: Any, reserve: int) -> dict[str, Any]:
    """The uvicorn.Config arguments that bound connections, from memlane's Config."""
    cap = connection_cap(cfg.max_connections, reserve)
    return {
        "http": protocol_class(float(cfg.header_timeout_s), float(cfg.body_timeout_s), cap),
        "timeout_keep_alive": cfg.keepalive_timeout_s,
        "h11_max_incomplete_event_size": 16 * 1024,  # a request head over 16 KiB is refused (400)
    }
