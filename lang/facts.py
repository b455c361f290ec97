"""Atomic facts without an LLM: split content into sentences and clauses, carry pronouns over to the
last named person, and label each fact with the kinds it states (location, role, preference, decision,
quantity, date, …) in English and Chinese.

Pure functions. memory.py stores each fact as a child chunk (kind='fact', parent_id) with its own vector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import entity_resolve as er
from lang import predicates as rr

MAX_FACTS = 16  # per memory
MIN_FACT_CHARS = 8  # shorter pieces ("Thanks!", "好的。") are not facts
MIN_FACT_CJK = 4

# Sentence ends: . ! ? followed by space and a capital/digit/CJK (not "Dr. Sousa", "18.96", "e.g. x"),
# and the Chinese 。！？； always.
_ABBREV = re.compile(r"\b(?:dr|mr|mrs|ms|prof|st|vs|etc|e\.g|i\.e|inc|ltd|co|jr|sr|no|fig|approx)\.$", re.I)
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(]?[A-Z0-9\u4e00-\u9fff])|(?<=[。！？；!?])|\n+")
# Clauses: "; " always; English ", and " / " and " / Chinese "，" between clauses that each state something.
_CLAUSE_EN = re.compile(r";\s+|,?\s+and\s+(?=(?:he|she|they|i|we|[A-Z][a-z]+)\b)|,\s+(?=(?:but|while|whereas)\b)")
_CLAUSE_ZH = re.compile(r"，|,(?=\S)")

_LABEL = re.compile(r"^[A-Z][\w .'-]{0,40}:\s+(?=\S)")  # a speaker or topic label: "Caroline: …"
_PRONOUN_EN = re.compile(r"^(she|he)(?:'s|’s)?\b|^(her|his)\b", re.I)
_PRONOUN_ZH = re.compile(r"^(她|他)(的)?")

QUANTITY = re.compile(r"\d|[一二三四五六七八九十百千万两]+[个次天年月周岁点号股手分元块公里小时]")
DATE = re.compile(r"\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d|"
                  r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|last week|"
                  r"next week)\b|\d+\s*年|\d+\s*月|\d+\s*[日号]|周[一二三四五六日]|星期|昨天|明天|下周|上周", re.I)
# Fact kinds the issue names, mapped from rerank's predicate classes.
KIND_OF_CLASS = {"residence": "location", "travel": "location", "work": "role", "preference": "preference",
                 "decision": "decision", "buy": "decision", "sell": "decision"}


@dataclass(frozen=True)
class Fact:
    text: str
    kinds: tuple[str, ...] = field(default_factory=tuple)


def sentences(text: str) -> list[str]:
    """Split on . ! ? and 。！？； (keeping abbreviations and decimals whole)."""
    out: list[str] = []
    buf = ""
    for piece in _SENT_END.split(text):
        if piece is None:
            continue
        buf = f"{buf} {piece}".strip() if buf else piece.strip()
        if buf and not _ABBREV.search(buf):
            out.append(buf)
            buf = ""
    if buf:
        out.append(buf)
    return [s for s in out if s]


def _clauses(sentence: str) -> list[str]:
    """A sentence that states several things ("X lives in A and works at B") split into clauses."""
    pattern = _CLAUSE_ZH if er.has_cjk(sentence) else _CLAUSE_EN
    parts = [p.strip(" ,，;；") for p in pattern.split(sentence) if p and p.strip(" ,，;；")]
    if len(parts) < 2:
        return [sentence]
    # Split only when every clause states a predicate of its own; otherwise keep the sentence whole.
    if all(rr.predicate_classes(p) or QUANTITY.search(p) for p in parts) and all(_big_enough(p) for p in parts):
        return parts
    return [sentence]


def _big_enough(text: str) -> bool:
    if er.has_cjk(text):
        return len(re.findall(r"[\u4e00-\u9fff]", text)) >= MIN_FACT_CJK or len(text) >= MIN_FACT_CHARS
    return len(text) >= MIN_FACT_CHARS and len(text.split()) >= 2


def _named_person(text: str) -> str | None:
    """The person a piece of text is about: its first English proper noun or Chinese personal name."""
    first: tuple[int, str] | None = None
    for m in er.english_proper_nouns(text):
        if m.name.split()[0].casefold() not in er.FUNCTION_WORDS:
            first = (text.find(m.name), m.name)
            break
    if er.has_cjk(text):
        for m in er.chinese_mentions(text):
            if m.kind == "person":
                pos = text.find(m.name)
                if first is None or pos < first[0]:
                    first = (pos, m.name)
                break
    return first[1] if first else None


def carry_pronoun(fact: str, person: str | None) -> str:
    """Replace a leading he/she/his/her (他/她/他的/她的) with the last named person."""
    if not person:
        return fact
    m = _PRONOUN_EN.match(fact)
    if m:
        word = m.group(0)
        if m.group(2):  # her/his
            return f"{person}'s{fact[len(word):]}"
        if word.lower().endswith(("'s", "’s")):
            return f"{person} is{fact[len(word):]}"
        return f"{person}{fact[len(word):]}"
    z = _PRONOUN_ZH.match(fact)
    if z:
        return person + ("的" if z.group(2) else "") + fact[len(z.group(0)):]
    return fact


def kinds_of(text: str) -> tuple[str, ...]:
    kinds = {KIND_OF_CLASS[c] for c in rr.predicate_classes(text) if c in KIND_OF_CLASS}
    if QUANTITY.search(text):
        kinds.add("quantity")
    if DATE.search(text):
        kinds.add("date")
    return tuple(sorted(kinds))


def extract(text: str) -> list[Fact]:
    """The atomic facts of `text`: [] when it holds a single fact (the memory itself is that fact)."""
    pieces: list[str] = []
    for s in sentences(text):
        pieces.extend(_clauses(s))
    pieces = [p for p in pieces if _big_enough(p)]
    if len(pieces) < 2:
        return []
    label = _LABEL.match(text)
    out: list[Fact] = []
    person: str | None = None
    for p in pieces:
        fact = carry_pronoun(p, person)
        person = _named_person(fact) or person
        kinds = kinds_of(fact)
        # Only a piece that states something a pattern recognizes is a fact; small talk is not.
        if not kinds or fact.strip() == text.strip():
            continue
        fact = fact.strip(" ;；,，")
        if label and not fact.startswith(label.group(0).strip()):
            fact = label.group(0) + fact  # "Caroline: " stays with every fact of her turn
        out.append(Fact(fact, kinds))
        if len(out) >= MAX_FACTS:
            break
    if len(out) < 2 and not (out and len(pieces) >= 3):
        return []  # one fact out of two pieces adds little beside the memory itself
    return list({f.text: f for f in out}.values())
