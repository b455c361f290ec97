"""Reciprocal rank fusion: the one place RRF_K lives, for lanes, sub-lists inside a lane, and the parts
of a compound question."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

RRF_K = 60
STOCK_BOOST = 0.05  # + STOCK_BOOST / sqrt(entity-lane rank) for a hit linked to a stock code the query names


@dataclass
class LaneResult:
    """One lane's candidates, best first."""

    seqs: list[int]
    ms: float = 0.0
    matched_entities: list[tuple[str, str]] = field(default_factory=list)  # (entity_id, kind)
    lane_scores: list[float] | None = None  # equal scores share one rank in fusion


@dataclass
class Fused:
    """Fused scores of one recall: seq → score, seq → {lane: rank}, memory seq → the fact seq that matched."""

    scores: dict[int, float]
    ranks: dict[int, dict[str, int]]
    matched_fact: dict[int, int]
    replied: dict[int, int] = field(default_factory=dict)  # a reply placed above a hit (rank.replies) → that hit


def rrf_merge(lists: list[list[int]]) -> list[int]:
    """Fuse sub-lists inside one lane by reciprocal rank."""
    if len(lists) == 1:
        return lists[0]
    score: dict[int, float] = defaultdict(float)
    for lst in lists:
        for rank, seq in enumerate(lst, 1):
            score[seq] += 1.0 / (RRF_K + rank)
    return sorted(score, key=lambda s: -score[s])


def fuse_lanes(results: dict[str, LaneResult], parents: dict[int, int], stock_codes: list[str],
               stock_linked: Any) -> Fused:
    """RRF over the lanes plus the stock-code boost; facts collapse into their memory.

    `parents` maps fact seqs to their memory; `stock_linked(seqs, entity_ids)` returns the seqs linked
    to those entities (called only when the query names a stock code the entity lane matched).
    """
    scores: dict[int, float] = defaultdict(float)
    ranks: dict[int, dict[str, int]] = defaultdict(dict)
    matched_fact: dict[int, int] = {}
    for lane, res in results.items():
        rank = 0
        seen: set[int] = set()
        last: tuple[float, int] | None = None  # (lane score, rank) of the previous hit
        for i, seq in enumerate(res.seqs):
            target = parents.get(seq, seq)
            if target in seen:
                continue
            seen.add(target)
            rank += 1
            if res.lane_scores is not None:
                # Hits the lane cannot tell apart (same entity score) share the better rank, so neither
                # RRF nor the stock boost depends on an arbitrary tie order.
                rank_used = last[1] if last is not None and res.lane_scores[i] == last[0] else rank
                last = (res.lane_scores[i], rank_used)
            else:
                rank_used = rank
            scores[target] += 1.0 / (RRF_K + rank_used)
            ranks[target][lane] = rank_used
            if target != seq:
                matched_fact.setdefault(target, seq)
    if stock_codes and "entity" in results:
        stock_ents = [eid for eid, kind in results["entity"].matched_entities if kind == "stock"]
        if stock_ents:
            for seq in stock_linked([s for s in scores if "entity" in ranks[s]], stock_ents):
                scores[seq] += STOCK_BOOST / math.sqrt(ranks[seq]["entity"])
    return Fused(scores, ranks, matched_fact)


def fuse_parts(lists: list[Fused]) -> Fused:
    """RRF over the fused lists of the whole question and each of its parts.

    The first list is the whole question: its lane ranks and matched facts win when a hit is in several.
    """
    scores: dict[int, float] = defaultdict(float)
    ranks: dict[int, dict[str, int]] = {}
    facts: dict[int, int] = {}
    for part in lists:
        order = sorted(part.scores, key=lambda s: (-part.scores[s], -s))
        for rank, seq in enumerate(order, 1):
            scores[seq] += 1.0 / (RRF_K + rank)
            ranks.setdefault(seq, part.ranks[seq])
            if seq in part.matched_fact:
                facts.setdefault(seq, part.matched_fact[seq])
    return Fused(dict(scores), ranks, facts)
