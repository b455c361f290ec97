"""Near-duplicates: a live memory of the same namespace that says nearly what another says (issue 29).

Identical content is caught at write time by its hash (`duplicate_of`); a paraphrase is not. Its nearest
live neighbour by vector, above a calibrated cosine (config `near_duplicate_permille`, in thousandths), naming the same
numbers, is reported as a near-duplicate: a warning and a link, never a merge. It is read when asked
(memory_remember with `wait_embedded`, memory_history) from the vectors the worker already wrote, so the
write path does no extra work and a neighbour forgotten, purged or updated since drops out by itself.

Calibration: scripts/calibrate_near_duplicates.py (docs/QUALITY.md has its figures).
"""

from __future__ import annotations

import re
from typing import Any

import entity_resolve as er

NEIGHBOURS = 4  # nearest live memories looked at
MAX_LISTED = 3  # near-duplicates reported at most
CONTENT_CHARS = 200  # of a near-duplicate's content in a result
# Numbers, times, dates and the digits of codes: two memories that differ in one are different facts
# (PostgreSQL 14 / 16, 9:30 / 10:00), however close their vectors.
_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")


def particulars(text: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(text))


def near(cosine: float, text: str, other: str, threshold: float) -> bool:
    """True when `other` (cosine to `text`) is a near-duplicate of `text`."""
    return cosine >= threshold and particulars(text) == particulars(other)


def find(store: Any, db: Any, seq: int, threshold: float) -> list[dict[str, Any]]:
    """The near-duplicates of the live memory `seq`, most similar first: [{chunk_id, content, similarity}].

    Empty while its vector is queued, when it is not live, or when `threshold` is 0 (off). Memories linked
    to it by supersession are left out: that link already says how they relate.
    """
    if threshold <= 0:
        return []
    row = store.memory_vector(db, seq)
    if not row:
        return []
    cid, ns, content, _, emb = row
    found = [(s, 1.0 - float(d)) for s, d in store.nearest_live(db, emb, ns, er.detect_lang(content), NEIGHBOURS + 1)
             if s != seq]
    rows = store.live_memories(db, [seq, *(s for s, _ in found)])
    replaced_by = rows[seq][2] if seq in rows else None
    out = []
    for s, cos in found:
        other = rows.get(s)
        if other is None or other[2] == cid:
            continue
        oid, text = other[0], other[1]
        if oid != replaced_by and near(cos, content, text, threshold):
            out.append({"chunk_id": oid, "content": text[:CONTENT_CHARS], "similarity": round(cos, 3)})
    return out[:MAX_LISTED]
