"""Index helpers that keep recall fast as a namespace grows: CJK bigrams and the two-pass vector KNN.

`memory.py` owns the tables (schema.sql); these functions only build the values it stores and run
the two read queries whose shape matters for speed. Measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

# The same CJK ranges entity_resolve uses to segment Chinese, so a 2-character word that jieba
# produces from a query is always a bigram of the stored text exactly when LIKE '%word%' matches.
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")

# Above this many live chunks in a namespace the vector lane uses the coarse bit pass + rescoring;
# below it the exact float32 scan is fast enough and exact.
COARSE_MIN_CHUNKS = 20_000
# vec0's partition key `bucket` = seq % BUCKETS. vec0's top-k selection costs rows x k per query,
# so asking 8 buckets for k/8 each costs an eighth of one query for k.
BUCKETS = 8
# Candidates the coarse pass hands to float32 rescoring, as a multiple of the lane depth.
OVERSAMPLE = 4


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


def write_vector(db: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes) -> None:
    """Store one chunk's vector three ways: exact (chunk_vec), coarse sign bits (chunk_vec_bit) and
    float32 for rescoring (chunk_vec_f32). Re-embedding replaces all three."""
    # A vec0 delete of a rowid that is not there costs ~1 ms (measured), so look in the plain table first.
    if db.execute("select 1 from chunk_vec_f32 where seq = ?", (seq,)).fetchone():
        db.execute("delete from chunk_vec where rowid = ?", (seq,))
        db.execute("delete from chunk_vec_bit where rowid = ?", (seq,))
        db.execute("delete from chunk_vec_f32 where seq = ?", (seq,))
    db.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (?, ?, ?, ?, ?)",
               (seq, namespace, int(live), lang, vec))
    db.execute(
        "insert into chunk_vec_bit(rowid, namespace, bucket, live, embedding) "
        "values (?, ?, ?, ?, vec_quantize_binary(?))",
        (seq, namespace, seq % BUCKETS, int(live), vec),
    )
    db.execute("insert into chunk_vec_f32(seq, embedding) values (?, ?)", (seq, vec))


def coarse_knn(db: Any, namespace: str, qv: np.ndarray, depth: int) -> list[int]:
    """Live chunks nearest to `qv`: Hamming top-k per bucket, then exact cosine over those candidates."""
    per_bucket = max(4, math.ceil(depth * OVERSAMPLE / BUCKETS))
    qb = np.asarray(qv, dtype=np.float32).tobytes()
    cands: list[int] = []
    for bucket in range(BUCKETS):
        cands += [r[0] for r in db.execute(
            "select rowid from chunk_vec_bit where embedding match vec_quantize_binary(?) and k = ? "
            "and namespace = ? and bucket = ? and live = 1",
            (qb, per_bucket, namespace, bucket))]
    if not cands:
        return []
    seqs: list[int] = []
    blobs: list[bytes] = []
    for i in range(0, len(cands), 500):
        part = cands[i : i + 500]
        marks = ",".join("?" * len(part))
        for seq, blob in db.execute(f"select seq, embedding from chunk_vec_f32 where seq in ({marks})", part):
            seqs.append(seq)
            blobs.append(blob)
    if not seqs:
        return []
    mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(seqs), -1)
    sims = mat @ np.asarray(qv, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[:depth]
    return [seqs[i] for i in order]
