"""Index helpers that keep recall fast as a namespace grows: CJK bigrams, the FTS top-k, and the size
from which the vector lane uses the approximate index (store/sqlite/ann.py).

store/sqlite/derived.py writes the rows (schema.sql owns the tables); these functions only build the values
it stores and run the two read queries whose shape matters for speed. Measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import re
from typing import Any

# The same CJK ranges entity_resolve uses to segment Chinese, so a 2-character word that jieba
# produces from a query is always a bigram of the stored text exactly when LIKE '%word%' matches.
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")

# From this many live chunks in a namespace the vector lane searches its approximate index
# (store/sqlite/ann.py, usearch HNSW) instead of the exact vec0 scan; measured in docs/BENCHMARKS.md.
ANN_MIN_CHUNKS = 5_000  # `memlane bench ann`: 7x faster than vec0 at 5k, recall@10 0.986 (docs/BENCHMARKS.md)
# With filters beyond namespace and liveness, the index is asked for this many times k, then filtered.
ANN_OVERSAMPLE = 4



def bigram_token(word: str) -> str:
    """An ASCII token for a 2-character CJK word, so the FTS5 tokenizer can never split or fold it."""
    return "b" + "".join(f"{ord(ch):05x}" for ch in word)  # fixed width: one token, no separators


def cjk_bigrams(text: str) -> str:
    """Every adjacent pair of CJK characters in `text`, as space-separated tokens ('' when none)."""
    seen: dict[str, None] = {}
    for run in _CJK_RUN.findall(text):
        for i in range(len(run) - 1):
            seen[bigram_token(run[i : i + 2])] = None
    return " ".join(seen)


def bigram_match(words: list[str]) -> str:
    """An FTS5 MATCH expression: any of the 2-character words (ASCII tokens, quoted)."""
    return " OR ".join(f'"{bigram_token(w)}"' for w in words)


# The BM25 top of an FTS table is read this many times the lane depth before the namespace and
# validity filters; only if too few survive is the exact (slower) form run.
FTS_OVERFETCH = 8


def fts_top(db: Any, table: str, match: str, where: str, args: list[Any], depth: int) -> list[int]:
    """The `depth` best BM25 matches of `match` in `table` (chunks_fts or chunks_tri) that pass `where`.

    Ranking inside FTS5 first and joining `chunks` only for the best rows avoids a primary-key lookup
    per match (a common word matches 10% of a large namespace). The result is exact: when at least
    `depth` of the first depth x FTS_OVERFETCH rows pass the filter they are the filtered top; when
    fewer do (other namespaces, closed versions) the full join runs instead.
    """
    n = depth * FTS_OVERFETCH
    rows = db.execute(
        f"select c.seq from (select rowid, rank from {table} where {table} match ? order by rank limit ?) f "
        f"join chunks c on c.seq = f.rowid where {where} order by f.rank limit ?",
        (match, n, *args, depth)).fetchall()
    if len(rows) < depth and db.execute(
            f"select count(*) from (select 1 from {table} where {table} match ? limit ?)",
            (match, n)).fetchone()[0] >= n:
        rows = db.execute(
            f"select c.seq from {table} f join chunks c on c.seq = f.rowid "
            f"where {table} match ? and {where} order by bm25({table}) limit ?",
            (match, *args, depth)).fetchall()
    return [r[0] for r in rows]
