"""Fusion of a compound question's sub-recalls: reciprocal rank fusion over the parts' fused lists."""

from __future__ import annotations

from collections import defaultdict

RRF_K = 60


def fuse_parts(
    lists: list[tuple[dict[int, float], dict[int, dict[str, int]], dict[int, int]]],
) -> tuple[dict[int, float], dict[int, dict[str, int]], dict[int, int]]:
    """RRF over (scores, lane ranks, matched fact) of the whole question and each of its parts.

    The first list is the whole question: its lane ranks and matched facts win when a hit is in several.
    """
    scores: dict[int, float] = defaultdict(float)
    ranks: dict[int, dict[str, int]] = {}
    facts: dict[int, int] = {}
    for part_scores, part_ranks, part_facts in lists:
        order = sorted(part_scores, key=lambda s: (-part_scores[s], -s))
        for rank, seq in enumerate(order, 1):
            scores[seq] += 1.0 / (RRF_K + rank)
            ranks.setdefault(seq, part_ranks[seq])
            if seq in part_facts:
                facts.setdefault(seq, part_facts[seq])
    return dict(scores), ranks, facts
