"""One recall, start to end: the lanes side by side, fusion (of lanes, then of a compound question's
parts), rerank, optional context expansion, and hydration of the top k."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

import numpy as np

from recall import hydrate, lanes, rank, relevance
from recall.fusion import Fused, LaneResult, fuse_lanes, fuse_parts, rrf_merge
from recall.query import CONTEXT, RANKED, Plan
from recall.reads import Reads
from store.protocol import Store

R = TypeVar("R", LaneResult, LaneResult | None)


def _timed(fn: Callable[..., R], *args: Any) -> R:
    """fn(*args) with its wall time in `ms` (a graph walk that must wait for the vector hits is None)."""
    t0 = time.perf_counter()
    res = fn(*args)
    if res is not None:
        res.ms = (time.perf_counter() - t0) * 1000
    return res


class _Now:
    """A finished future, for the sequential mode (parallel_lanes off)."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self) -> Any:
        return self._value


def _entity_and_graph(store: Store, plan: Plan,
                      lexical: Future[LaneResult | None] | _Now | None) -> tuple[LaneResult, LaneResult | None]:
    """The entity lane, then the graph walk from the entities it matched or, when the question names no
    specific entity, from the meta lane's top hits' entities (`lexical`: its task, submitted before this
    one). None when the walk must start from the vector hits' (no lexical hit, or none that leads
    anywhere) or the graph lane is not asked for."""
    ent = _timed(lanes.entity, store, plan)
    if "graph" not in plan.lanes:
        return ent, None
    walked = _timed(lanes.graph, store, plan, ent, None)
    if walked is None and lexical is not None:
        found = lexical.result()
        if found is not None and found.seqs:
            walked = _timed(lanes.graph, store, plan, ent, found)
            if walked is not None and not walked.seqs:  # those hits lead nowhere: try the vector hits'
                walked = None
    return ent, walked


def _read_query(plan: Plan) -> None:
    """Compute what rerank and relevance read of the query (QueryInfo's cached readings), on the lane
    pool while the query is embedded, so that none of it waits until after the embedding."""
    if plan.cfg.rerank:
        plan.q.predicate_classes  # noqa: B018 (a cached property, computed here)
    plan.q.relevance_terms  # noqa: B018


def _meta_and_query(store: Store, plan: Plan, read_query: bool) -> LaneResult | None:
    """The meta lane (when asked for), then the query's readings for rerank and relevance."""
    res = _timed(lanes.meta, store, plan) if "meta" in plan.lanes else None
    if read_query:
        _read_query(plan)
    return res


def run_lanes(store: Store, plan: Plan, embed: Callable[[str], np.ndarray],
              pool: Executor | None, read_query: bool = False) -> tuple[dict[str, LaneResult], float]:
    """Run the lanes; returns their results in LANES order and the wall time in ms.

    With a pool, the meta lane and the entity lane with the graph walk from the question's entities run
    on it while the vector lane (the slowest: it embeds the query) runs in the calling thread, which
    spares the critical path a thread hand-off. A question that names no specific entity is walked from
    the meta lane's top hits' entities, also on the pool, and from the vector hits' entities once they
    are in only when the meta lane found nothing or its hits lead nowhere. With `read_query`, the meta
    lane's thread then computes what rerank and relevance read of the query (in its own task it would
    wake one more pool thread, and its SQLite connection, for 0.3 ms of work). Without a pool the same
    work runs one lane after another.
    """
    t0 = time.perf_counter()
    want = plan.lanes

    def submit(fn: Callable[..., Any], *args: Any) -> Future[Any] | _Now:
        return pool.submit(fn, *args) if pool is not None else _Now(fn(*args))

    # The meta lane first: a walk from no named entity waits for its hits (FIFO, so never for a queued task).
    meta = submit(_meta_and_query, store, plan, read_query) if "meta" in want or read_query else None
    early = submit(_entity_and_graph, store, plan, meta) if "entity" in want or "graph" in want else None
    results: dict[str, LaneResult] = {}
    vec = ctx = None
    if "vector" in want or "graph" in want:
        t_vec = time.perf_counter()
        qv = embed(plan.query)  # inside the vector lane's time
        ctx = (_timed(lanes.context, store, plan, qv) if "vector" in want and plan.cfg.context_vectors
               else None)
        vec = lanes.vector(store, plan, qv)
        vec.ms = (time.perf_counter() - t_vec) * 1000
        if "vector" in want:
            results["vector"] = vec
    if early is not None:
        ent, walked = early.result()
        if "graph" in want:
            if walked is None:  # from the vector hits' entities: no named entity, no lexical hit that leads anywhere
                walked = _timed(lanes.graph, store, plan, ent, vec)
            assert walked is not None
            results["graph"] = walked
        if "entity" in want:
            results["entity"] = ent
    if vec is not None and ctx is not None:
        # As a sub-list, RRF-merged inside the vector lane (graph seeds and the bridge still read the plain
        # vector list), or as a list of its own in the fusion of lanes. vec.ms already holds ctx.ms.
        if plan.cfg.context_fusion == "vector":
            results["vector"] = LaneResult(rrf_merge([vec.seqs, ctx.seqs])[: plan.depth], vec.ms)
        else:
            results[CONTEXT] = ctx
    if meta is not None and "meta" in want:
        results["meta"] = meta.result()
    wall = (time.perf_counter() - t0) * 1000  # the lanes' own wall time (recall_log.lane_wall_ms)
    if plan.cfg.crosslingual and "meta" in results and vec is not None:
        results["meta"] = lanes.with_bridge(store, plan, results["meta"], vec)
    return {name: results[name] for name in RANKED if name in results}, wall


def fuse(store: Store, plan: Plan, results: dict[str, LaneResult]) -> Fused:
    parents = store.fact_parents({s for r in results.values() for s in r.seqs})
    return fuse_lanes(results, parents, plan.q.stock_codes, store.linked)


def asked_of(plan: Plan, seqs: list[int], reads: Reads) -> tuple[str, list[tuple[str, ...]]] | None:
    """What the query asks about the names the candidates share (relevance.common_names): its text
    without them and its content words outside them; None when it names none of them."""
    terms = plan.q.relevance_terms
    if not terms.names or not seqs:
        return None
    contents = reads.contents(seqs)
    common = relevance.common_names(terms, [contents.get(s, "") for s in seqs])
    text = relevance.without_names(plan.query, common) if common else None
    return (text, terms.without(common)) if text else None


def relevance_of(store: Store, plan: Plan, seqs: list[int], fused: Fused, qv: np.ndarray | None,
                 cohort: relevance.Cohort | None, reads: Reads | None = None,
                 asked: tuple[np.ndarray, list[tuple[str, ...]]] | None = None) -> dict[int, float]:
    """Relevance of each candidate (recall/relevance.py); a memory found through a fact takes the closer
    vector. `asked`: the vector and content words of what the query asks about the names its candidates
    share (asked_of), if any."""
    asked_v = asked[0] if asked is not None else None
    facts = {s: fused.matched_fact[s] for s in seqs if s in fused.matched_fact}
    zs_of: dict[int, float] = {}
    asked_zs: dict[int, float] = {}
    if qv is not None and cohort is not None:
        lead = [qv] if asked_v is None else [qv, asked_v]
        probe = cohort.probe(lead, plan.q.analysis.lang)
        sims = store.similarities([*seqs, *facts.values()], probe)
        if sims:
            n = len(lead)
            zs_of = relevance.symmetric_zs({s: (c[[0, *range(n, len(c))]], lang) for s, (c, lang) in sims.items()},
                                           cohort.stats(qv))
            if asked_v is not None:
                asked_zs = relevance.symmetric_zs({s: (c[1:], lang) for s, (c, lang) in sims.items()},
                                                  cohort.stats(asked_v))
    reads = reads or Reads(store)
    contents = reads.contents(seqs)
    terms = plan.q.relevance_terms
    names = reads.alias_norms(seqs) if terms.names else {}
    stored = relevance.names_stored(store, plan.flt, terms) if seqs else True

    def best(of: dict[int, float], seq: int) -> float | None:
        zs = [of[s] for s in (seq, facts.get(seq)) if s in of]
        return max(zs) if zs else None

    out = {}
    for seq in seqs:
        text = contents.get(seq, "")
        sig = relevance.Signals(best(zs_of, seq), relevance.coverage(terms, text),
                                relevance.names_found(terms, text, names.get(seq, set())), stored,
                                best(asked_zs, seq) if asked is not None else None,
                                relevance.asked_coverage(terms, text, asked[1], plan.q.predicate_classes)
                                if asked is not None else 1.0,
                                plan.cfg.verbatim and relevance.quoted(plan.q.quotes, text))
        out[seq] = relevance.score(sig)
    return out


Beside = Callable[[str, str], tuple[np.ndarray, np.ndarray | None]]


def _once(embed: Callable[[str], np.ndarray], beside: Beside | None = None,
          first: str = "", ahead: str | None = None) -> Callable[[str], np.ndarray]:
    """`embed`, computing each text once for one recall (with the query cache off, relevance embedded
    the query a second time: 15 ms of every recall at 10k). When `first` is asked for, `ahead` is made
    beside it (`beside`: on another core, or from the cache), so that a later reading of it costs nothing."""
    seen: dict[str, np.ndarray] = {}
    spare = [ahead] if beside is not None and ahead and ahead != first else []

    def get(text: str) -> np.ndarray:
        if text not in seen:
            if spare and text == first:
                assert beside is not None
                ahead_text = spare.pop()
                seen[text], later = beside(text, ahead_text)
                if later is not None:
                    seen.setdefault(ahead_text, later)
            else:
                seen[text] = embed(text)
        return seen[text]

    return get


def asked_ahead(plan: Plan, cohort: object) -> str | None:
    """The text "what is asked" would embed when all the query's names turn out common (asked_of): made
    beside the query's own vector, it costs no wall time; only when relevance will read it."""
    if cohort is None or not plan.cfg.asked_relevance:
        return None
    return relevance.without_names(plan.query, [group[0] for group in plan.q.relevance_terms.names])


def recall(store: Store, plan: Plan, embed: Callable[[str], np.ndarray], pool: Executor | None,
           cohort: Callable[[], relevance.Cohort] | None = None,
           full: bool = True, beside: Beside | None = None) -> tuple[list[dict[str, Any]], dict[str, LaneResult], float]:
    """The hits of one recall, the whole question's lane results, and their wall time (ms).

    Hits carry `relevance`; those below plan.min_relevance are left out, and the next candidates move up.
    Unless `full`, hits are made for hydrate.brief (no thread neighbours). `beside` (Memory.query_vector_beside)
    makes the query's "what is asked" text on another core while the query itself is embedded.
    """
    # The vector lane and relevance read the same query vector.
    embed = _once(embed, beside, plan.query, asked_ahead(plan, cohort) if beside is not None else None)
    results, wall = run_lanes(store, plan, embed, pool, read_query=True)
    fused = fuse(store, plan, results)
    if plan.cfg.query_split and plan.q.parts:
        # A compound question is also recalled part by part; the parts are fused by RRF.
        parts = [fuse(store, p, run_lanes(store, p, embed, pool)[0]) for p in map(plan.for_part, plan.q.parts)]
        fused = fuse_parts([fused, *parts])
    # The contract's `score` is the fused RRF score; reranking only decides the order (final_score).
    rrf = dict(fused.scores)
    scores = fused.scores
    reads = Reads(store)  # rerank, earned, replies and relevance read the same candidates' rows
    if plan.cfg.rerank or plan.cfg.supersession:
        scores = rank.rerank(store, plan, scores, reads)
    if plan.cfg.context_expansion:
        scores = rank.expand_context(store, plan, fused, scores)
    scores = rank.earned(store, plan, fused, scores, reads)
    if plan.cfg.thread_prior:
        scores = rank.thread_prior(store, plan, fused, scores, reads)
    if plan.cfg.replies:
        scores = rank.replies(store, plan, fused, scores, reads)
    if plan.cfg.verbatim:
        scores = rank.verbatim(store, plan, scores, reads)
    if plan.cfg.successor_order:
        scores = rank.below_successors(store, plan, fused, scores, reads)
    order = rank.ordered(scores, fused)
    cands = order[: plan.k * relevance.RELEVANCE_DEPTH]
    qv, group, asked = None, None, None
    if cands and cohort is not None:
        try:
            qv, group = embed(plan.query), cohort()
            text_words = asked_of(plan, cands, reads) if plan.cfg.asked_relevance else None
            asked = (embed(text_words[0]), text_words[1]) if text_words else None
        except Exception:  # the embedder is down: lexical lanes still answer, relevance reads the words alone
            qv, group, asked = None, None, None
    rel = relevance_of(store, plan, cands, fused, qv, group, reads, asked)
    if plan.cfg.relevance_order:  # a reply placed above the question it answers is as relevant as it
        for reply, question in fused.replied.items():
            if reply in rel and question in rel:
                rel[reply] = max(rel[reply], rel[question])
    kept = [s for s in cands if rel[s] >= plan.min_relevance][: plan.k]
    if plan.cfg.relevance_order:  # among the kept hits only: a low band never lets a deeper hit in
        kept = relevance.banded(kept, rel)
        rel = relevance.capped(kept, rel)
    return (hydrate.hits(store, kept, rrf, scores, fused, plan.flt.namespace, rel, threads=full, reads=reads),
            results, wall)
