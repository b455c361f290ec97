"""The one owner of a chunk's derived rows on PostgreSQL (store/sqlite/derived.py's counterpart).

A chunk fans out into one `chunk_text` row (three tsvectors: stemmed Latin words, jieba's CJK words,
CJK bigram tokens), a `chunks_when` row for the dates its relative times resolve to (lang/timeground.py),
one `chunk_vec` row once embedded and until then an `embed_queue` row, and in an asserted thread a
`chunk_ctx_vec` row (the memory with its thread neighbours) and until then a `ctx_queue` row. Every
write, close, move and reset of those rows is a function here, called inside the caller's transaction
(a `postgres_db.Handle`). The trigram index over `chunks.content` is an index, not a row, so it needs
no code. The thread and window SQL is store/sqlite/derived.py's, which runs as written on both engines.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

import entity_resolve as er
from lang import timeground
from store import search_index as si
from store.sqlite import derived as sqlite_derived
from store.sqlite.derived import CONTEXT_THREADS, CTX_ELIGIBLE, CTX_REQUEUE

TS_CONFIG = "memlane_en"  # English stemming without a stop-word list, as FTS5's porter tokenizer
# The HNSW graph's degree and build beam. pgvector's defaults (16, 64) gave recall@10 0.85 at ef_search 400
# on 100k composed vectors; (32, 128) gave 0.97 there, at 4x the build time (docs/BENCHMARKS.md).
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 128


def hnsw_index_sql(m: int = HNSW_M, ef_construction: int = HNSW_EF_CONSTRUCTION, *, table: str = "chunk_vec") -> str:
    """The HNSW (cosine) index of a vector table (`<table>_hnsw`; `table` from VEC_TABLES)."""
    return (f"create index {table}_hnsw on {table} using hnsw (embedding vector_cosine_ops) "
            f"with (m = {int(m)}, ef_construction = {int(ef_construction)})")


VEC_TABLES = ("chunk_vec", "chunk_ctx_vec")  # a chunk's own vector, and its context vector
# A window queued again also loses its claim: whichever daemon is free embeds the new text.
CTX_REQUEUE_PG = f"{CTX_REQUEUE}, claimed_by = null, claimed_at = null"

TEXT_SQL = (f"insert into chunk_text(seq, latin, cjk, bigrams) values (?, to_tsvector('{TS_CONFIG}', ?), "
            "array_to_tsvector(?::text[]), array_to_tsvector(?::text[])) on conflict (seq) do nothing")


def fold(text: str) -> str:
    """Diacritics removed (é → e), as FTS5's `remove_diacritics 2`; for stored text and query words alike."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def latin_text(content: str, tags_json: str, source: str | None, meta_json: str) -> str:
    """What the Latin tsvector indexes: the columns FTS5's chunks_fts holds."""
    return fold(" ".join((content, tags_json, source or "", meta_json)))


def cjk_lexemes(content: str) -> list[str]:
    """jieba's words of the CJK runs (the segmenter the query side uses), each stored verbatim."""
    return sorted({w for w in er.cjk_words(content) if w.strip()})


def tsquery_any(words: Sequence[str]) -> str:
    """A tsquery literal matching any of `words` verbatim (quoted: user text never becomes syntax)."""
    return " | ".join("'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words)


def add_text(db: Any, seq: int, content: str, tags_json: str, source: str | None, meta_json: str) -> None:
    db.execute(TEXT_SQL, (seq, latin_text(content, tags_json, source, meta_json), cjk_lexemes(content),
                          si.cjk_bigrams(content).split()))


def add_dates(db: Any, seq: int, content: str, valid_from: str) -> str:
    """The derived date text of a chunk's relative times, with its tsvector; returns it ('' when none)."""
    text = timeground.date_text(content, valid_from)
    if text:
        db.execute(f"insert into chunks_when(seq, dates, tsv) values (?, ?, to_tsvector('{TS_CONFIG}', ?)) "
                   "on conflict (seq) do nothing", (seq, text, fold(text)))
    return text


def enqueue(db: Any, seq: int, now: str) -> int:
    """Queue a chunk for embedding (no-op when already queued); returns rows added."""
    return db.execute("insert into embed_queue(chunk_seq, enqueued_at) values (?, ?) on conflict do nothing",
                      (seq, now)).rowcount


def dequeue(db: Any, seq: int) -> None:
    db.execute("delete from embed_queue where chunk_seq = ?", (seq,))


def as_vector(vec: Any) -> np.ndarray:
    """float32 bytes (the portable format), an array, or pgvector's Vector as read back, as an array."""
    if isinstance(vec, (bytes, bytearray, memoryview)):
        return np.frombuffer(vec, dtype=np.float32)
    if hasattr(vec, "to_numpy"):
        return np.asarray(vec.to_numpy(), dtype=np.float32)
    return np.asarray(vec, dtype=np.float32)


def write_vector(db: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes | np.ndarray,
                 by: str | None = None) -> None:
    """Store (or replace, when re-embedding) one chunk's vector."""
    db.execute("insert into chunk_vec(seq, namespace, live, lang, embedding, written_by) values (?, ?, ?, ?, ?, ?) "
               "on conflict (seq) do update set namespace = excluded.namespace, live = excluded.live, "
               "lang = excluded.lang, embedding = excluded.embedding, written_by = excluded.written_by",
               (seq, namespace, bool(live), lang, as_vector(vec), by))


def drop_vector(db: Any, seq: int) -> None:
    db.execute("delete from chunk_vec where seq = ?", (seq,))


def set_live(db: Any, seq: int, live: bool) -> None:
    """Mirror a chunk's liveness into both vector tables (recall filters on it)."""
    for table in VEC_TABLES:
        db.execute(f"update {table} set live = ? where seq = ?", (bool(live), seq))


def move_vectors(db: Any, src: str, dst: str) -> int:
    """Move a namespace's vectors, own and context, to `dst`; returns the own vectors moved."""
    db.execute("update chunk_ctx_vec set namespace = ? where namespace = ?", (dst, src))
    return int(db.execute("update chunk_vec set namespace = ? where namespace = ?", (dst, src)).rowcount)


def table_dim(db: Any, table: str = "chunk_vec") -> int:
    """The dimension of a vector table's embedding (pgvector keeps it as the column's type modifier)."""
    row = db.execute("select a.atttypmod from pg_attribute a where a.attrelid = ?::regclass "
                     "and a.attname = 'embedding'", (table,)).fetchone()
    return int(row[0]) if row and row[0] and int(row[0]) > 0 else 0


def reset_vectors(db: Any, dim: int, now: str) -> int:
    """Clear every vector, own and context, and queue every chunk and every window with its attempts
    reset (re-embedding and a dimension repair start here). A new dimension changes a table's column
    type and rebuilds its HNSW index, inside the caller's transaction. Returns the chunks queued."""
    for table in VEC_TABLES:
        db.execute(f"delete from {table}")
        if table_dim(db, table) != int(dim):
            db.execute(f"drop index if exists {table}_hnsw")
            db.execute(f"alter table {table} alter column embedding type vector({int(dim)})")
            db.execute(hnsw_index_sql(table=table))
    db.execute("insert into embed_queue(chunk_seq, enqueued_at) select seq, ? from chunks "
               "on conflict (chunk_seq) do update set attempts = 0, last_error = null, claimed_by = null, "
               "claimed_at = null", (now,))
    db.execute(f"insert into ctx_queue(chunk_seq, enqueued_at) select seq, ? from chunks where {CTX_ELIGIBLE} "
               f"{CTX_REQUEUE_PG}", (now, *CONTEXT_THREADS))
    return int(db.execute("select count(*) from embed_queue").fetchone()[0])


def relive_from_chunk(db: Any, seq: int) -> None:
    """Set both vector tables' `live` from the chunk row itself (repair)."""
    for table in VEC_TABLES:
        db.execute(f"update {table} v set live = (c.valid_until is null) from chunks c "
                   "where c.seq = v.seq and v.seq = ?", (seq,))


# ---------------------------------------------------------------- threads and context vectors (issue 17)

thread_window = sqlite_derived.thread_window  # plain SQL, the same on both engines
context_affected = sqlite_derived.context_affected
window_texts = sqlite_derived.window_texts


def enqueue_context(db: Any, seqs: list[int], now: str) -> int:
    """store/derived.enqueue_context, whose re-queue here also drops a daemon's claim on the window."""
    return sqlite_derived.enqueue_context(db, seqs, now, CTX_REQUEUE_PG)


def requeue_context(db: Any, seqs: list[int], now: str) -> int:
    return sqlite_derived.requeue_context(db, seqs, now, CTX_REQUEUE_PG)


def drop_context(db: Any, seq: int) -> None:
    db.execute("delete from chunk_ctx_vec where seq = ?", (seq,))


def write_context(db: Any, seq: int, gen: int, vec: bytes | np.ndarray | None, by: str, keep: bool = False) -> bool:
    """Store (or, with no vector, remove) one window's context vector and dequeue it, unless it was
    re-queued (`gen` moved on) or its claim passed to another daemon (`by`) while it was embedded. With
    `keep` (context_mode "staged": a provisional vector) the window stays queued, its claim handed back for
    its text vector. A closed memory keeps its row, marked not live (as_of recall), and gets no new vector.
    Returns True when written or removed."""
    done = ("update ctx_queue set claimed_by = null, claimed_at = null" if keep else "delete from ctx_queue")
    if not db.execute(f"{done} where chunk_seq = ? and gen = ? and claimed_by = ?", (seq, gen, by)).rowcount:
        return False
    # `for share`, as in write_vectors: a forget committing meanwhile is waited for, never missed.
    row = db.execute("select namespace, lang, valid_until is null from chunks where seq = ? for share",
                     (seq,)).fetchone()
    if row is None or not row[2]:
        return False
    if vec is None:
        db.execute("delete from chunk_ctx_vec where seq = ?", (seq,))
        return True
    db.execute("insert into chunk_ctx_vec(seq, namespace, live, lang, embedding) values (?, ?, true, ?, ?) "
               "on conflict (seq) do update set namespace = excluded.namespace, live = true, "
               "lang = excluded.lang, embedding = excluded.embedding", (seq, row[0], row[1], as_vector(vec)))
    return True


def embed_failed(db: Any, seqs: Sequence[int], error: str, by: str) -> None:
    """Count a failed embedding attempt on the chunks `by` holds, and hand them back to every daemon."""
    db.executemany("update embed_queue set attempts = attempts + 1, last_error = ?, claimed_by = null, "
                   "claimed_at = null where chunk_seq = ? and claimed_by = ?", [(error[:500], s, by) for s in seqs])


def context_failed(db: Any, seqs: list[int], error: str, by: str) -> None:
    """Count a failed attempt on the windows `by` holds, and hand them back to every daemon."""
    db.executemany("update ctx_queue set attempts = attempts + 1, last_error = ?, claimed_by = null, "
                   "claimed_at = null where chunk_seq = ? and claimed_by = ?", [(error[:500], s, by) for s in seqs])


# ---------------------------------------------------------------- purge (issue 29)

PURGED = (("chunk_text", "seq"), ("chunks_when", "seq"), ("chunk_vec", "seq"), ("chunk_ctx_vec", "seq"),
          ("embed_queue", "chunk_seq"), ("ctx_queue", "chunk_seq"))  # (table, chunk column): identifiers only


def purge_rows(db: Any, seqs: list[int]) -> None:
    """Delete every derived row of these chunks (memory_purge), before their chunk rows go. The trigram
    index over chunks.content is an index: the chunk row's delete removes its entries."""
    for i in range(0, len(seqs), 500):
        part = seqs[i:i + 500]
        for table, col in PURGED:
            db.execute(f"delete from {table} where {col} in ({','.join('?' * len(part))})", part)


def purge_done(db: Any) -> None:
    """Nothing to merge: PostgreSQL's indexes drop a deleted row's entries when (auto)vacuum runs."""
