"""Threads: which memories were said together (one conversation, one session).

A client may name the thread (`thread` on memory_remember). Without it, a memory joins the thread of
the namespace's previous memory when both come from the same source and either carry the same
`metadata.session` or, without sessions, name a source and were written and dated close together. Everything else
starts a thread of its own. Pure: the store reads the previous memory, this module decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.protocol import ThreadView

MAX_THREAD_CHARS = 128
VIEW_SPAN = 2  # neighbours shown on each side in memory_history, a full hit and the dashboard
INFERRED_PREFIX = "auto:"  # inferred thread ids; a client's own thread may not start with it
# How a memory came to its thread (chunks.thread_by). Context vectors are made only in threads that
# something asserts: the client's name or a shared session. Memories merely written close together
# may be unrelated (a burst of separate facts), and mixing their vectors cost bilingual-dev 0.14 top-1.
BY_CLIENT, BY_SESSION, BY_TIME = "client", "session", "time"
ASSERTED = (BY_CLIENT, BY_SESSION)
THREAD_GAP_S = 1800  # at most this far apart, in write time and in valid_from, to share a thread (measured)
SESSION_KEY = "session"  # metadata key that names a conversation's session
WINDOW_TOKENS = 500  # a context window's text: e5's 512 positions less "passage: " and the special tokens
CHARS_PER_TOKEN = 2  # clipping by characters, for an embedder that cannot count its tokens


@dataclass(frozen=True)
class Previous:
    """The namespace's latest memory, as inference needs it."""

    thread: str | None
    thread_by: str | None
    source: str | None
    session: str | None
    valid_from: str
    created_at: str


def session_of(metadata: dict[str, Any]) -> str | None:
    """The metadata's session as text (LoCoMo uses numbers), or None."""
    value = metadata.get(SESSION_KEY)
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)[:128]


def _gap_s(a: str, b: str) -> float:
    return abs((datetime.fromisoformat(a) - datetime.fromisoformat(b)).total_seconds())


def joins(prev: Previous | None, source: str | None, session: str | None, valid_from: str, created_at: str) -> bool:
    """True when a memory without an explicit thread continues the previous memory's thread."""
    if prev is None or not prev.thread or prev.thread_by == BY_CLIENT:
        return False  # a client's named thread is joined only by name
    if prev.source != source:
        return False
    if session is not None and prev.session is not None:
        return session == prev.session
    if source is None:
        return False  # no source, no session: nothing says these memories belong to one conversation
    return _gap_s(created_at, prev.created_at) <= THREAD_GAP_S and _gap_s(valid_from, prev.valid_from) <= THREAD_GAP_S


def choose(explicit: str | None, prev: Previous | None, source: str | None, session: str | None,
           valid_from: str, created_at: str, fresh_id: str) -> tuple[str, str]:
    """(thread, thread_by) of a new memory: the client's, the previous memory's, or a new inferred one."""
    if explicit:
        return explicit, BY_CLIENT
    by = BY_SESSION if session is not None else BY_TIME
    if joins(prev, source, session, valid_from, created_at):
        assert prev is not None and prev.thread
        return prev.thread, by
    return INFERRED_PREFIX + fresh_id, by


def window_text(parts: list[str], clip: Callable[[str, int], str] | None = None) -> str:
    """The passage a context vector embeds: the window's turns in thread order, one a line, each clipped
    to an equal share of WINDOW_TOKENS (`clip(text, tokens)`; by characters without one), so a long
    neighbour cannot push the memory itself out of the model's window."""
    share = WINDOW_TOKENS // max(1, len(parts))
    return "\n".join(clip(p, share) if clip else p[: share * CHARS_PER_TOKEN] for p in parts)


def view_ids(view: ThreadView) -> dict[str, Any]:
    """A hit's thread, compact: {id, before: [chunk_id], after: [chunk_id]}, nearest first."""
    out: dict[str, Any] = {"id": view.thread}
    for key, rows in (("before", view.before), ("after", view.after)):
        if rows:
            out[key] = [cid for cid, _ in rows]
    return out


def view_dict(view: ThreadView) -> dict[str, Any]:
    """The contract's shape of a thread: {id, before: [{chunk_id, content}], after: [...]}, nearest first."""
    out: dict[str, Any] = {"id": view.thread}
    for key, rows in (("before", view.before), ("after", view.after)):
        if rows:
            out[key] = [{"chunk_id": cid, "content": text} for cid, text in rows]
    return out
