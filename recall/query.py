"""What one recall asks: the Plan (filter, depth, lanes, switches) and the QueryInfo read from its text.

QueryInfo reads the query once: every lane and the reranker take what they need from it, and each
reading (terms, codes, entity candidates, language, intent, parts) is computed at most once, on first
use, in whichever lane thread asks first.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from functools import cached_property

import entity_resolve as er
from config import Config
from lang import crosslingual as xl
from lang import predicates as rr
from lang import query_plan as qp
from recall import relevance as rel
from store.protocol import Filter

LANES = ("vector", "graph", "meta", "entity")
CONTEXT = "context"  # the context-vector list: runs with the vector lane (a list of its own with context_fusion "lane")
RANKED = (*LANES, CONTEXT)  # every list a hit's `ranks` can name
LANE_DEPTH = 50  # candidates each lane contributes to fusion


class QueryInfo:
    """The readings of one query text. Parts of a compound question share the term cache."""

    def __init__(self, text: str, _terms: dict[str, tuple[list[str], list[str]]] | None = None) -> None:
        self.text = text
        self._terms = {} if _terms is None else _terms
        self._lock = threading.Lock()

    def terms(self, text: str) -> tuple[list[str], list[str]]:
        """query_plan.content_terms of `text` (this query or a piece of it), computed once."""
        with self._lock:
            got = self._terms.get(text)
        if got is None:
            got = qp.content_terms(text)
            with self._lock:
                self._terms[text] = got
        return got

    @property
    def content(self) -> tuple[list[str], list[str]]:
        """(latin, CJK) content words: stop and question words removed."""
        return self.terms(self.text)

    @cached_property
    def plain(self) -> tuple[list[str], list[str]]:
        """The plain lexical terms, used when lexical_precision is off."""
        return qp.lexical_terms(self.text)

    @cached_property
    def stock_codes(self) -> list[str]:
        return er.stock_codes_in(self.text)

    @cached_property
    def entity_candidates(self) -> list[str]:
        return er.query_candidates(self.text)

    @cached_property
    def lang_order(self) -> tuple[str, str]:
        return xl.lang_order(self.text)

    @cached_property
    def analysis(self) -> qp.Analysis:
        return qp.analyze(self.text, terms=self.terms)

    @cached_property
    def predicate_classes(self) -> frozenset[str]:
        return rr.predicate_classes(self.text)

    @cached_property
    def relevance_terms(self) -> rel.Terms:
        latin, cjk = self.content
        return rel.Terms.of(latin, cjk, self.analysis.proper_nouns)

    @cached_property
    def quotes(self) -> tuple[str, ...]:
        """What a memory that the query quotes would hold word for word (relevance.quotes)."""
        return rel.quotes(self.text)

    @cached_property
    def parts(self) -> list[QueryInfo]:
        """The sub-questions of a compound question ([] for a single one)."""
        return [QueryInfo(p, self._terms) for p in qp.split_query(self.text, terms=self.terms)]


@dataclass(frozen=True)
class Plan:
    """One recall: what it may see, how deep each lane reads, which lanes run, and the query."""

    flt: Filter
    q: QueryInfo
    k: int
    lanes: tuple[str, ...] = LANES
    cfg: Config = field(default_factory=Config)  # the recall techniques' switches (docs/QUALITY.md)
    min_relevance: float = 0.0  # hits below this relevance are left out (recall/relevance.py)

    @property
    def depth(self) -> int:
        return max(LANE_DEPTH, self.k * 2)

    @property
    def query(self) -> str:
        return self.q.text

    def for_part(self, part: QueryInfo) -> Plan:
        return dataclasses.replace(self, q=part)
