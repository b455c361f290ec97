"""The one owner of a chunk's derived rows on SQLite.

A chunk row in `chunks` fans out into full-text rows (`chunks_fts`, `chunks_tri`, `chunks_bi`),
vectors (`chunk_vec` for the exact scan, `chunk_vec_f32` that the approximate index files of
store/ann.py are built from; each change is noted for them) and, until its vector exists, an
`embed_queue` row. Every write, close, move and repair of those rows is a
function here, called inside the caller's write transaction. 0.1.0 had four copies of this fan-out,
and they drifted (an import without bigrams, a rename that left the bit index behind).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import search_index as si
from errors import Unavailable
from store import ann

VEC_TABLES = ("chunk_vec",)  # vec0 tables with namespace and live columns
_DIM = re.compile(r"\[\s*(\d+)\s*\]")  # a vector column's dimension in its create statement


def add_text(db: Any, seq: int, content: str, tags_json: str, source: str | None, meta_json: str) -> None:
    """The full-text rows of a new chunk: words (porter), trigrams, and CJK bigrams."""
    db.execute("insert into chunks_fts(rowid, content, tags, source, metadata) values (?,?,?,?,?)",
               (seq, content, tags_json, source or "", meta_json))
    db.execute("insert into chunks_tri(rowid, content) values (?,?)", (seq, content))
    bigrams = si.cjk_bigrams(content)
    if bigrams:
        db.execute("insert into chunks_bi(rowid, bigrams) values (?,?)", (seq, bigrams))


def enqueue(db: Any, seq: int, now: str) -> int:
    """Queue a chunk for embedding (no-op when already queued); returns rows added."""
    return db.execute("insert or ignore into embed_queue(chunk_seq, enqueued_at) values (?, ?)", (seq, now)).rowcount


def dequeue(db: Any, seq: int) -> None:
    db.execute("delete from embed_queue where chunk_seq = ?", (seq,))


def write_vector(db: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes, center: np.ndarray) -> None:
    """Store one chunk's vector for the exact scan (chunk_vec) and as float32 (chunk_vec_f32), and note
    it for the approximate index. Re-embedding replaces both. `center` is no longer used (it placed the
    sign-bit codes the approximate index replaced)."""
    # A vec0 delete of a rowid that is not there is slow, so look in the plain table first.
    if db.execute("select 1 from chunk_vec_f32 where seq = ?", (seq,)).fetchone():
        drop_vector(db, seq)
    db.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (?, ?, ?, ?, ?)",
               (seq, namespace, int(live), lang, vec))
    db.execute("insert into chunk_vec_f32(seq, embedding) values (?, ?)", (seq, vec))
    if live:
        ann.note(db, "put", seq, namespace, vec)
    else:
        ann.note(db, "drop", seq)


def drop_vector(db: Any, seq: int) -> None:
    """Remove a chunk's vector from both tables and its index (its chunk is then re-queued by the caller)."""
    for table in VEC_TABLES:
        db.execute(f"delete from {table} where rowid = ?", (seq,))
    db.execute("delete from chunk_vec_f32 where seq = ?", (seq,))
    ann.note(db, "drop", seq)


def set_live(db: Any, seq: int, live: bool) -> None:
    """Mirror a chunk's liveness into chunk_vec (it filters on it inside the KNN) and the approximate index."""
    for table in VEC_TABLES:
        db.execute(f"update {table} set live = ? where rowid = ?", (int(live), seq))
    ann.note(db, "live" if live else "dead", seq)


def move_vectors(db: Any, seqs: list[int], dst: str) -> int:
    """Move these chunks' vectors to namespace `dst`. sqlite-vec refuses UPDATE of a partition key,
    so each vec0 row moves by delete + reinsert inside the caller's transaction."""
    marks = ",".join("?" * len(seqs))
    rows = db.execute(f"select rowid, live, lang, embedding from chunk_vec where rowid in ({marks})", seqs).fetchall()
    db.execute(f"delete from chunk_vec where rowid in ({marks})", seqs)
    db.executemany("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (?,?,?,?,?)",
                   [(r[0], dst, r[1], r[2], r[3]) for r in rows])
    for r in rows:  # the approximate index of `dst` gains them, that of the old namespace loses them
        if r[1]:
            ann.note(db, "put", r[0], dst, r[3])
        else:
            ann.note(db, "drop", r[0])
    return len(rows)


def vec_tables(db: Any) -> list[tuple[str, str]]:
    """(name, create statement) of every vec0 table, as SQLite stores it (migrations included)."""
    return [(r[0], r[1]) for r in db.execute(
        "select name, sql from sqlite_master where type = 'table' and sql like 'create virtual table%using vec0%' "
        "order by name")]


def reset_vectors(db: Any, dim: int, now: str) -> int:
    """Clear every vector, recreating each vec0 table whose dimension is not `dim`, and queue every
    chunk with its attempts reset. Re-embedding and a dimension repair start here. Returns the chunks queued."""
    for name, sql in vec_tables(db):
        dims = {int(d) for d in _DIM.findall(sql)}
        if dims and dims != {int(dim)}:
            db.execute(f'drop table "{name}"')
            db.execute(_DIM.sub(f"[{int(dim)}]", sql))
        elif not dims:
            raise Unavailable("db.open", path=name, detail="no [dimension] column in its definition")
        else:
            db.execute(f'delete from "{name}"')
    db.execute("delete from chunk_vec_f32")
    ann.note(db, "reset")
    db.execute("insert into embed_queue(chunk_seq, enqueued_at) select seq, ? from chunks where true "
               "on conflict(chunk_seq) do update set attempts = 0, last_error = null", (now,))
    return int(db.execute("select count(*) from embed_queue").fetchone()[0])


def relive_from_chunk(db: Any, seq: int) -> None:
    """Set both indexes' `live` from the chunk row itself (repair)."""
    (live,) = db.execute("select valid_until is null from chunks where seq = ?", (seq,)).fetchone() or (0,)
    set_live(db, seq, bool(live))
