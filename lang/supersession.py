"""Supersession without an LLM: decide whether a new memory replaces an older one.

A newer memory supersedes an older one only when all of these hold (a false supersession hides a
true memory, so every test must pass):
- the newer text signals a change (moved to, switched to, no longer, 改成, 换成, 改期, 不再, …);
- the older memory is among the newer one's closest neighbours (the caller finds those by vector);
- the older one's predicate classes (rerank.predicate_classes) are all restated by the newer one,
  so an update of one detail never hides a memory that says more;
- their subjects do not differ (a named person versus "I", or two different names);
- both name a stock code they share, or neither names one.
"""

from __future__ import annotations

import re
from typing import Any

import entity_resolve as er
from lang import crosslingual as xl
from lang import predicates as rr

NEIGHBOURS = 3  # the older memory must be among the new one's closest this many

CHANGE_EN = re.compile(
    r"\b(moved|moving|relocated|relocate|switched|switch(ed)? to|changed|change(d)? to|now|these days|nowadays|"
    r"no longer|not anymore|anymore|instead|replaced|replacing|migrated|rescheduled|postponed|moved to|"
    r"raised|lowered|cut|increased|decreased|reduced|bumped|updated|new|upgraded|downgraded|"
    r"dropped|scrapped|abandoned|cancelled|canceled|went with|ended up)\b", re.I)
CHANGE_ZH = re.compile(r"改成|改为|改用|换成|换了|换到|搬到|搬去|改期|不再|现在|如今|已经改|调到|上调|下调|上移|下移|"
                       r"提高到|降到|降低到|作废|取消|放弃|迁到|迁移|替换|新的|更新|改了|换用")

_FIRST_PERSON = re.compile(r"^\s*(i|i'm|i've|my|we|we're|our)\b|^\s*(我|我们)", re.I)
_LEADING_NAME = re.compile(r"^\s*(?:my\s+\w+\s+)?([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\b")
# Classes that name who the memory is about rather than what it states.
SUBJECT_CLASSES = frozenset({"family"})


def signals_change(text: str) -> bool:
    return bool(CHANGE_EN.search(text) or CHANGE_ZH.search(text))


def subject_of(text: str) -> str | None:
    """'self' for first-person text, a leading name for third-person text, None when unclear."""
    if _FIRST_PERSON.search(text):
        return "self"
    m = _LEADING_NAME.match(text)
    if m and m.group(1).casefold() not in er.FUNCTION_WORDS:
        return m.group(1).casefold()
    if er.has_cjk(text[:8]):
        for mention in er.chinese_mentions(text[:12]):
            if mention.kind == "person" and text.lstrip().startswith(mention.name):
                return mention.name
    return None


def supersedes(new_text: str, old_text: str) -> bool:
    """True when `new_text` (newer) replaces `old_text` (older). The caller checks they are neighbours."""
    if not signals_change(new_text):
        return False
    old_cls, new_cls = rr.predicate_classes(old_text), rr.predicate_classes(new_text)
    if not old_cls or not old_cls <= new_cls:
        return False
    if (old_cls & SUBJECT_CLASSES) != (new_cls & SUBJECT_CLASSES):
        return False
    s_old, s_new = subject_of(old_text), subject_of(new_text)
    if s_old and s_new and s_old != s_new:
        return False
    codes_old, codes_new = set(er.stock_codes_in(old_text)), set(er.stock_codes_in(new_text))
    if bool(codes_old) != bool(codes_new) or (codes_old and not codes_old & codes_new):
        return False
    return True


def detect(store: Any, tx: Any, seqs: list[int]) -> None:
    """Link an older memory as superseded by a newer neighbour that restates it with a new value.

    Runs inside the embedding batch's transaction, on the vectors it just wrote (store protocol:
    memory_vector, nearest_live, older_current, mark_superseded).
    """
    for seq in seqs:
        row = store.memory_vector(tx, seq)
        if not row or not signals_change(row[2]):
            continue
        cid, ns, content, vfrom, emb = row
        per_lang = [store.nearest_live(tx, emb, ns, lang, 12) for lang in xl.lang_order(content)]
        near = [r[0] for r in xl.interleave(per_lang) if r[0] != seq]
        olds = []
        for other in near[: 4 * NEIGHBOURS]:
            o = store.older_current(tx, other, vfrom)
            if o:
                olds.append(o)
            if len(olds) >= NEIGHBOURS:
                break
        for old_id, old_content in olds:
            if supersedes(content, old_content):
                store.mark_superseded(tx, old_id, cid)
                break
