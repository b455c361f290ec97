"""Query understanding: lexical terms without stop/question words, compound-question splitting, intents.

Pure functions over the query text (English and 中文); no database, no global state beyond the
read-only segmenter (rjieba, through entity_resolve).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import entity_resolve as er
from lang import crosslingual as xl
from lang.stopwords import EN_STOP, ZH_STOP

MAX_PARTS = 4  # a compound question fans out into at most this many sub-recalls

_WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f][0-9A-Za-z\u00c0-\u024f._+-]*[0-9A-Za-z\u00c0-\u024f+]|[0-9A-Za-z\u00c0-\u024f]")

NOW_WORDS_EN = re.compile(
    r"\b(now|currently|current|these days|nowadays|at the moment|latest|today|presently|still|anymore|right now|most recent)\b",
    re.I)
NOW_WORDS_ZH = re.compile(r"现在|目前|如今|当前|最新|眼下|这阵子|最近的|还在|现任")
QUANTITY_EN = re.compile(r"\b(how (many|much|long|far|often|old|big|large)|what (price|time|year|date|day)|"
                         r"at what price|when)\b", re.I)
WHEN_EN = re.compile(r"\bwhen\b|\bwhat (?:date|day|time|year|month|week)\b|\bhow long ago\b", re.I)
WHEN_ZH = re.compile(r"什么时候|何时|哪一?天|几号|哪一?年|几月|哪个月|哪一周|哪周")
QUANTITY_ZH = re.compile(r"多少|多久|多长|多大|多远|多高|几[个点号岁天次股手分年月周]?|什么时候|哪一?天|哪年|价格|价位|成本")

# Compound splitting. Strong separators always split; conjunctions split only between two parts that
# each carry content, and never between two capitalized words ("Johnson and Johnson").
_STRONG = re.compile(r"[?？；;]+|(?<=[。！!])")
_EN_CONJ = re.compile(r",?\s+\b(?:and also|and|also|as well as)\b\s+", re.I)
_ZH_CONJ = re.compile(r"以及|还有|并且|而且|另外|和|跟|与")


@dataclass
class Analysis:
    """What the reranker needs to know about a query (recall.query.QueryInfo builds it once per query)."""

    text: str
    lang: str
    latin: list[str]
    cjk: list[str]
    wants_now: bool
    wants_quantity: bool
    wants_when: bool = False  # "when …?", "什么时候": prefer memories that carry a date
    proper_nouns: list[str] = field(default_factory=list)


def content_terms(text: str) -> tuple[list[str], list[str]]:
    """(latin words, CJK words) that carry content: stop words and question words removed."""
    text = unicodedata.normalize("NFKC", text)
    latin = []
    for w in _WORD.findall(text):
        cf = w.casefold()
        if cf in EN_STOP or (cf.endswith(("'s", "’s")) and cf[:-2] in EN_STOP):
            continue
        if len(w) > 1 or w.isdigit():
            latin.append(w)
    cjk = []
    for w in er.cjk_words(text):
        w = w.strip()
        if not w or w in ZH_STOP or not er.has_cjk(w):
            continue
        if len(w) >= 2:
            cjk.append(w)
    return list(dict.fromkeys(latin))[:32], list(dict.fromkeys(cjk))[:16]


Terms = Callable[[str], tuple[list[str], list[str]]]


def _content_size(part: str, terms: Terms = content_terms) -> int:
    latin, cjk = terms(part)
    return len(latin) + len(cjk)


def _is_name_join(left: str, right: str) -> bool:
    """'Johnson and Johnson', 'Procter and Gamble': a capitalized word on both sides of the conjunction."""
    lw = re.findall(r"[A-Za-z][\w'’-]*", left)
    rw = re.findall(r"[A-Za-z][\w'’-]*", right)
    return bool(lw and rw and lw[-1][0].isupper() and rw[0][0].isupper()
                and lw[-1].casefold() not in EN_STOP and rw[0].casefold() not in EN_STOP)


def _split_conj(part: str, pattern: re.Pattern[str], min_content: int, terms: Terms) -> list[str]:
    pieces: list[str] = []
    pos = 0
    buf_start = 0
    for m in pattern.finditer(part):
        left, right = part[buf_start:m.start()], part[m.end():]
        pos = m.end()
        if _is_name_join(left, right):
            continue
        if _content_size(left, terms) >= min_content and _content_size(right, terms) >= min_content:
            pieces.append(left.strip(" ,，、"))
            buf_start = pos
    pieces.append(part[buf_start:].strip(" ,，、"))
    return [p for p in pieces if p]


def split_query(text: str, terms: Terms = content_terms) -> list[str]:
    """The sub-questions of a compound question, or [] when it is a single question.

    English splits on '?', ';', 'and', 'also'; Chinese on '？', '；', 和/以及/还有/并且. A conjunction
    splits only when both sides carry at least two content words, and never inside a name.
    """
    text = unicodedata.normalize("NFKC", text).strip()
    parts = [p.strip() for p in _STRONG.split(text) if p and p.strip()]
    out: list[str] = []
    for p in parts:
        for q in _split_conj(p, _EN_CONJ, 2, terms):
            out.extend(_split_conj(q, _ZH_CONJ, 2, terms) if er.has_cjk(q) else [q])
    out = [p for p in out if _content_size(p, terms) >= 1]
    out = list(dict.fromkeys(out))[:MAX_PARTS]
    return out if len(out) > 1 else []


def analyze(text: str, terms: Terms = content_terms) -> Analysis:
    latin, cjk = terms(text)
    norm = unicodedata.normalize("NFKC", text)
    proper = [m.name for m in er.extract_mentions(norm, xl.common_english(), xl.lexicon())
              if m.kind != "concept" or m.name[:1].isupper()]
    return Analysis(
        text=text,
        lang=er.detect_lang(text),
        latin=latin,
        cjk=cjk,
        wants_now=bool(NOW_WORDS_EN.search(norm) or NOW_WORDS_ZH.search(norm)),
        wants_quantity=bool(QUANTITY_EN.search(norm) or QUANTITY_ZH.search(norm)),
        wants_when=bool(WHEN_EN.search(norm) or WHEN_ZH.search(norm)),
        proper_nouns=proper,
    )


# ---------------------------------------------------------------- lexical precision

MIN_COVERAGE = 0.34  # a lexical hit must match at least this share of the query's idf-weighted words


def idf_weights(total: int, dfs: tuple[int, ...] | list[int]) -> list[float]:
    """BM25-style idf per term, from document counts in the namespace; never negative."""

    n = max(1, int(total or 0))
    return [round(max(0.05, math.log(1 + (n - (d or 0) + 0.5) / ((d or 0) + 0.5))), 4) for d in dfs]


def rank_like_rows(rows: list[Any], total: int, depth: int) -> list[int]:
    """Rows (seq, matched_word_1, matched_word_2, …): rank by idf-weighted matches, keep strong ones."""
    if not rows:
        return []
    n_words = len(rows[0]) - 1
    dfs = [sum(1 for r in rows if r[i + 1]) for i in range(n_words)]
    weights = idf_weights(total, dfs)
    need = MIN_COVERAGE * sum(weights)
    scored = [(sum(w for w, hit in zip(weights, r[1:], strict=True) if hit), r[0]) for r in rows]
    scored = [x for x in scored if x[0] >= need and x[0] > 0]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return [seq for _, seq in scored[:depth]]


# ---------------------------------------------------------------- plain lexical terms (lexical_precision off)

_PLAIN_WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+")
PLAIN_EN_STOP = frozenset(
    """a an the is are was were be been being am do does did of to in on at by for with from and or but
    not no it its this that these those i me my we our you your he him his she her they them their what
    when where who whom whose which why how there here as if so than then too very can could would should
    will shall may might must have has had about into over after before again once also just any some all
    each other such only own same both few more most s t don doesn didn isn aren wasn weren tell know
    please ever""".split()
)
PLAIN_ZH_STOP = frozenset(
    "的 了 是 在 吗 呢 吧 啊 和 与 及 或 也 都 就 还 又 我 你 他 她 它 我们 你们 他们 她们 这 那 哪 哪里 哪儿 什么 怎么 怎样 "
    "为什么 多少 几 谁 一个 一些 有 没有 把 被 对 从 到 给 让 上 下 中 里 个 吗 么 去 过 着 会 能 要 想 说 请 问".split()
)


def lexical_terms(query: str) -> tuple[list[str], list[str]]:
    """(latin words, CJK words) worth matching when lexical_precision is off: stop and question words out."""
    text = unicodedata.normalize("NFKC", query)
    latin = []
    for w in _PLAIN_WORD.findall(text):
        if w.casefold() not in PLAIN_EN_STOP and (len(w) > 1 or w.isdigit()):
            latin.append(w)
    cjk = [w for w in er.cjk_words(text) if w not in PLAIN_ZH_STOP and len(w) >= 2]
    return list(dict.fromkeys(latin))[:32], list(dict.fromkeys(cjk))[:16]
