"""Hits as the contract shows them: the stored fields plus score, final_score, lane ranks and entities."""

from __future__ import annotations

from typing import Any

from ingest import threads as th
from recall.fusion import Fused
from recall.query import RANKED
from recall.reads import Reads
from store.protocol import Store

HIT_THREAD_SPAN = 1  # neighbours a hit names on each side


# `dates`: the days a memory's words name, grounded (lang/timeground.py), which an agent needs to read it.
BRIEF = ("chunk_id", "content", "relevance", "status", "superseded_by", "valid_from", "valid_until", "dates",
         "entities")


def status(row: dict[str, Any]) -> str:
    """current, superseded (a newer memory or version replaced it) or forgotten (closed without a successor)."""
    if row["superseded_by"]:
        return "superseded"
    return "forgotten" if row["valid_until"] else "current"


def brief(hit: dict[str, Any]) -> dict[str, Any]:
    """What an agent reads of a hit (memory_recall detail "brief"): times to the minute in UTC
    (2026-01-31T09:00Z) and relevance to two decimals, since every character is paid on every call."""
    out = {k: hit[k] for k in BRIEF if k in hit}
    for k in ("valid_from", "valid_until"):
        if out.get(k):
            out[k] = out[k][:16] + "Z"  # stored times are fixed-width UTC: YYYY-MM-DDTHH:MM:SS.ffffff+00:00
    if "relevance" in out:
        out["relevance"] = round(out["relevance"], 2)
    return out


def hits(store: Store, order: list[int], rrf: dict[int, float], final: dict[int, float],
         fused: Fused, namespace: str | None = None,
         relevance: dict[int, float] | None = None, threads: bool = True,
         reads: Reads | None = None) -> list[dict[str, Any]]:
    """The full hits (memory_recall detail "full"), in `order`. Without `threads` a hit names no thread
    neighbours (brief() leaves them out anyway: one to four queries a hit saved). `reads`: the recall's
    reads, whose grounded dates the reranker may have read already."""
    if not order:
        return []
    rows = store.hit_rows(list(order) + [fused.matched_fact[s] for s in order if s in fused.matched_fact])
    ents = store.entity_names(order)
    dates = (reads or Reads(store)).dates_of(order)
    out = []
    for seq in order:
        r = rows[seq]
        hit = {
            "chunk_id": r["chunk_id"], "content": r["content"], "score": round(rrf.get(seq, 0.0), 6),
            "final_score": round(final[seq], 6),
            "ranks": {lane: fused.ranks[seq][lane] for lane in RANKED if lane in fused.ranks.get(seq, {})},
            "source": r["source"], "importance": r["importance"], "tags": r["tags"], "metadata": r["metadata"],
            "entities": ents.get(seq, []), "created_at": r["created_at"], "valid_from": r["valid_from"],
            "valid_until": r["valid_until"], "status": status(r),
        }
        if relevance is not None:
            hit["relevance"] = relevance.get(seq, 0.0)
        if r["superseded_by"]:
            hit["superseded_by"] = r["superseded_by"]
        if seq in dates:
            hit["dates"] = dates[seq]
        view = store.thread_view(namespace, r["chunk_id"], HIT_THREAD_SPAN) if namespace and threads else None
        if view is not None:
            hit["thread"] = th.view_ids(view)
        fact = fused.matched_fact.get(seq)
        if fact is not None and fact in rows:
            hit["matched_fact"] = rows[fact]["content"]
        out.append(hit)
    return out
