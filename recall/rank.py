"""After fusion: predicate-aware reranking and supersession order (lang/predicates.py holds the pure scoring),
the optional context expansion that lends score to a hit's neighbours in its thread, and the rule that
lanes earn their rank."""

from __future__ import annotations

import re

import entity_resolve as er
from lang import facts
from lang import predicates as rr
from lang import supersession as sup
from recall import relevance as rel
from recall.fusion import RRF_K, Fused
from recall.query import Plan
from recall.reads import Reads
from recall.relevance import Terms
from store.protocol import Store

RERANK_DEPTH = 50  # fused candidates the reranker looks at
CONTEXT_HITS, CONTEXT_SHARE, CONTEXT_SPAN = 5, 0.5, 1  # context expansion: top hits, share lent, positions
ASKS = re.compile(r"[?？][\W_]*$")  # a sentence that is a question (closing quotes, brackets, emoji after it)


def ordered(scores: dict[int, float], fused: Fused) -> list[int]:
    """Candidates in their final order: by score, then by their best lane rank, then newest first."""
    return sorted(scores, key=lambda s: (-scores[s], min(fused.ranks.get(s, {}).values(), default=RRF_K), -s))


def rerank(store: Store, plan: Plan, scores: dict[int, float], reads: Reads | None = None) -> dict[int, float]:
    """Predicate-aware reranking of the fused top RERANK_DEPTH; a superseded memory sits just below its
    successor (after every later step too with successor_order: below_successors)."""
    top = sorted(scores, key=lambda s: -scores[s])[:RERANK_DEPTH]
    if not top:
        return scores
    sw = plan.cfg
    reads = reads or Reads(store)
    rows = reads.rank_rows(top)
    names = reads.alias_norms(top)
    info = plan.q.analysis
    q_classes = plan.q.predicate_classes if sw.rerank else frozenset()
    ordered = [(s, rows[s][0], rows[s][1]) for s in top if s in rows]
    newest = rr.newest_in_class(q_classes, ordered) if info.wants_now else set()
    dated = reads.dates_of(top) if info.wants_when and sw.time_grounding else {}
    out = dict(scores)
    for seq in top:
        if seq not in rows:
            continue
        content, valid_from, superseded_by, _, _ = rows[seq]
        cand = rr.Candidate(content=content, valid_from=valid_from, superseded=bool(superseded_by) and sw.supersession,
                            names=frozenset(names.get(seq, ())), newest_in_class=seq in newest,
                            dated=seq in dated)
        if sw.rerank:
            out[seq] = rr.rerank_score(info, q_classes, cand, scores[seq])
        elif cand.superseded:
            out[seq] = scores[seq] - rr.W_SUPERSEDED * rr.UNIT
    if sw.supersession and sw.supersession_scoring and info.wants_now:
        out = latest_first(ordered, out)
    if sw.supersession and not sw.successor_order:
        # A superseded memory ranks just below the memory that superseded it, when both are here (with
        # successor_order, below_successors does this after every later step instead).
        by_id = {rows[s][3]: s for s in top if s in rows}
        for seq in top:
            successor = rows[seq][2] if seq in rows else None
            newer = by_id.get(successor) if successor else None
            if newer is not None and out[seq] >= out[newer]:
                out[seq] = out[newer] - 1e-6
    return out


NOW_WINDOW = 10  # a question about the present: candidates among which the latest version goes first


def latest_first(cands: list[tuple[int, str, str]], scores: dict[int, float]) -> dict[int, float]:
    """A question about the present: of similar same-subject candidates among the top NOW_WINDOW (seq, content,
    valid_from), the latest takes the best place any of its older versions had, and they go just below it."""
    top = sorted(cands, key=lambda c: -scores[c[0]])[:NOW_WINDOW]
    newer = sup.newer_versions(top)
    if not newer:
        return scores
    out = dict(scores)
    for new in set(newer.values()):
        olds = [o for o, n in newer.items() if n == new]
        best = max(out[o] for o in olds)
        if best >= out[new]:
            out[new] = best + (abs(best) * 1e-6 or 1e-9)
        for o in olds:
            out[o] = min(out[o], out[new] - (abs(out[new]) * 2e-6 or 2e-9))
    return out


def below_successors(store: Store, plan: Plan, fused: Fused, scores: dict[int, float],
                     reads: Reads | None = None) -> dict[int, float]:
    """A superseded memory never ranks above the memory that superseded it when both are candidates: it
    is placed just below it (for a question about the present the reranker has already put it lower).

    Runs after every step that reorders (the reranker, context expansion, lanes earning their rank, the
    reply rule), so none of them can lift an old version back above its replacement.
    """
    if not plan.cfg.supersession:
        return scores
    top = ordered(scores, fused)[: max(RERANK_DEPTH, plan.k * rel.RELEVANCE_DEPTH)]
    rows = (reads or Reads(store)).rank_rows(top)
    by_id = {row[3]: s for s, row in rows.items()}
    pairs = [(s, by_id[row[2]]) for s, row in rows.items() if row[2] in by_id]
    if not pairs:
        return scores
    out = dict(scores)
    for _ in range(len(pairs)):  # a chain (a → b → c) settles in at most one pass per link
        moved = False
        for old, newer in pairs:
            if out[old] >= out[newer]:
                out[old] = out[newer] - (abs(out[newer]) * 1e-6 or 1e-9)
                moved = True
        if not moved:
            break
    return out


def expand_context(store: Store, plan: Plan, fused: Fused, scores: dict[int, float]) -> dict[int, float]:
    """A strong hit lends part of its score to its neighbours in its thread (the memories said just
    before and after it), never lowering a neighbour's own score."""
    top = sorted(scores, key=lambda s: -scores[s])[:CONTEXT_HITS]
    out = dict(scores)
    for seq, (before, after) in store.thread_neighbours(plan.flt, top, CONTEXT_SPAN).items():
        gain = CONTEXT_SHARE * scores[seq]
        for nseq in (*before, *after):
            if out.get(nseq, 0.0) < gain:
                out[nseq] = gain
                fused.ranks.setdefault(nseq, {})
    return out


def verbatim(store: Store, plan: Plan, scores: dict[int, float], reads: Reads | None = None) -> dict[int, float]:
    """A memory that holds the query (or a span it quotes) word for word ranks above every other: among
    near-identical memories ("note 7: … rack 7", "note 8: … rack 8") the lanes cannot tell the quoted one
    apart, since they read words and meaning, not the exact string."""
    quotes = plan.q.quotes
    if not quotes or not scores:
        return scores
    top = sorted(scores, key=lambda s: -scores[s])[:RERANK_DEPTH]
    contents = (reads or Reads(store)).contents(top)
    hits = [s for s in top if rel.quoted(quotes, contents.get(s, ""))]
    if not hits:
        return scores
    out = dict(scores)
    ceiling = max(scores.values())
    step = abs(ceiling) * 1e-6 or 1e-9
    for i, seq in enumerate(sorted(hits, key=lambda s: -scores[s])):
        out[seq] = ceiling + step * (len(hits) - i)
    return out


AGREEING = ("vector", "meta")  # the lanes that read the memory's own words and meaning
STRUCTURAL = frozenset({"graph", "entity"})  # the lanes that reach a memory through entities and relations


def earned(store: Store, plan: Plan, fused: Fused, scores: dict[int, float],
           reads: Reads | None = None) -> dict[int, float]:
    """Lanes earn their rank: a hit that only the graph or entity lane found ranks below every hit that the
    vector and text lanes agree on, unless the memory carries a name the query itself names.

    Automatic entities are noisy ("Deploys", "Dana's"), and one wrong link lets a memory that neither
    reads like the question nor shares its words take the first place (issue 14's trial). Those hits keep
    their order among themselves, just below the lowest agreed hit.
    """
    agreed = [s for s in scores if all(lane in fused.ranks.get(s, {}) for lane in AGREEING)]
    if not agreed:
        return scores
    floor = min(scores[s] for s in agreed)
    lone = [s for s in scores if scores[s] >= floor and (r := fused.ranks.get(s)) and set(r) <= STRUCTURAL]
    if not lone:
        return scores
    named = {er.norm(n) for group in plan.q.relevance_terms.names for n in group}
    norms = (reads or Reads(store)).alias_norms(lone) if named else {}
    out = dict(scores)
    demoted = sorted((s for s in lone if not named & norms.get(s, set())), key=lambda s: (-scores[s], -s))
    step = abs(floor) * 1e-6 or 1e-9
    for i, seq in enumerate(demoted, 1):
        out[seq] = floor - step * i
    return out


THREAD_PRIOR_DEPTH = 30  # candidates whose threads share out the prior
W_THREAD = 0.5  # the prior of a thread that holds all of them, in UNITs (half a rank-1 hit in one lane)


def thread_prior(store: Store, plan: Plan, fused: Fused, scores: dict[int, float],
                 reads: Reads | None = None) -> dict[int, float]:
    """A conversation's turns lend each other weight: each of the top THREAD_PRIOR_DEPTH candidates gains
    W_THREAD × UNIT × its thread's share of their fused scores, so a turn from the session that most of the
    question's best matches come from moves up past a stray turn of another. Only a thread a client or a
    session asserts counts; a memory in none is a thread of its own (its own share), so threaded memories
    gain nothing over the others for being threaded. No candidate in an asserted thread: scores unchanged."""
    top = ordered(scores, fused)[:THREAD_PRIOR_DEPTH]
    threads = (reads or Reads(store)).threads(top)
    total = sum(fused.scores.get(s, 0.0) for s in top)
    if not threads or total <= 0:
        return scores
    group: dict[int, str | int] = {s: threads.get(s, s) for s in top}
    weight: dict[str | int, float] = {}
    for seq in top:
        weight[group[seq]] = weight.get(group[seq], 0.0) + fused.scores.get(seq, 0.0)
    return {**scores, **{s: scores[s] + W_THREAD * rr.UNIT * weight[group[s]] / total for s in top}}


def asks(terms: Terms, text: str) -> bool:
    """Whether a memory matches the query by what it asks: its questions hold more of the query's words
    than its statements do ("Love the necklace, any special meaning to it?" for "What does the necklace
    mean?"), so the memory itself states nothing about them."""
    said = facts.sentences(text)
    asked = [x for x in said if ASKS.search(x)]
    if not asked:
        return False
    stated = " ".join(x for x in said if not ASKS.search(x))
    return rel.found(terms, " ".join(asked)) > rel.found(terms, stated)


def replies(store: Store, plan: Plan, fused: Fused, scores: dict[int, float],
            reads: Reads | None = None) -> dict[int, float]:
    """A top hit that asks what the query asks hands its place to the memory that follows it in its thread.

    In a dialogue the turn that asks what the user is now asking matches the question best, but it states
    nothing: the answer is the reply after it. The reply is placed just above the question, which keeps
    its own score.
    """
    top = ordered(scores, fused)[: plan.k]
    contents = (reads or Reads(store)).contents(top)
    asking = [s for s in top if asks(plan.q.relevance_terms, contents.get(s, ""))]
    if not asking:
        return scores
    out = dict(scores)
    for seq, (_, after) in store.thread_neighbours(plan.flt, asking, 1, asserted=True).items():
        if after:
            step = abs(scores[seq]) * 1e-6 or 1e-9
            reply = after[0]
            out[reply] = max(out.get(reply, float("-inf")), scores[seq] + step)
            fused.ranks.setdefault(reply, {})
            fused.replied.setdefault(reply, seq)
    return out
