"""The one owner of a chunk's derived rows on PostgreSQL (store/derived.py's counterpart).

A chunk fans out into one `chunk_text` row (three tsvectors: stemmed Latin words, jieba's CJK words,
CJK bigram tokens), one `chunk_vec` row once embedded, and until then an `embed_queue` row. Every
write, close, move and reset of those rows is a function here, called inside the caller's transaction
(a `postgres_db.Handle`). The trigram index over `chunks.content` is an index, not a row, so it needs
no code.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

import entity_resolve as er
import search_index as si
from store import derived as sqlite_derived
from store.postgres_db import TS_CONFIG

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
    db.execute("update chunk_vec set live = ? where seq = ?", (bool(live), seq))


def move_vectors(db: Any, src: str, dst: str) -> int:
    return int(db.execute("update chunk_vec set namespace = ? where namespace = ?", (dst, src)).rowcount)


def reset_vectors(db: Any, now: str) -> int:
    """Clear every vector and queue every chunk with its attempts reset (re-embedding starts here).
    The column's dimension is the model's (a new dimension needs a new database on PostgreSQL)."""
    db.execute("delete from chunk_vec")
    db.execute("insert into embed_queue(chunk_seq, enqueued_at) select seq, ? from chunks "
               "on conflict (chunk_seq) do update set attempts = 0, last_error = null, claimed_by = null, "
               "claimed_at = null", (now,))
    return int(db.execute("select count(*) from embed_queue").fetchone()[0])


def relive_from_chunk(db: Any, seq: int) -> None:
    db.execute("update chunk_vec v set live = (c.valid_until is null) from chunks c where c.seq = v.seq and v.seq = ?",
               (seq,))


# ---------------------------------------------------------------- threads (issue 17)
# Threads are kept on PostgreSQL (migration 2); context vectors and grounded dates are SQLite-only for
# now: these keep the engine-neutral write path, and recall gets no context list or dates here.

thread_window = sqlite_derived.thread_window  # plain SQL, the same on both engines


def add_dates(db: Any, seq: int, content: str, valid_from: str) -> str:
    """No grounded dates on PostgreSQL yet."""
    return ""


def enqueue_context(db: Any, seqs: list[int], now: str) -> int:
    """No context vectors on PostgreSQL yet."""
    return 0
