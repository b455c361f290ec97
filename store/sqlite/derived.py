"""The one owner of a chunk's derived rows on SQLite.

A chunk row in `chunks` fans out into full-text rows (`chunks_fts`, `chunks_tri`, `chunks_bi`, and
`chunks_when` for the dates its relative times resolve to), vectors (`chunk_vec` for the exact scan,
`chunk_vec_f32` that the approximate index files of store/sqlite/ann.py are built from, each change noted
for them; `chunk_ctx_vec` for the memory with its thread neighbours) and, until its vectors exist, an
`embed_queue` row and a `ctx_queue` row. Every write, close, move and repair of those rows is a
function here, called inside the caller's write transaction. 0.1.0 had four copies of this fan-out,
and they drifted (an import without bigrams, a rename that left the bit index behind).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from typing import Any

from contract.errors import Unavailable
from lang import timeground
from store import search_index as si
from store.sqlite import ann

OWN_VEC_TABLES = ("chunk_vec",)  # vec0 tables of a chunk's own vector
VEC_TABLES = (*OWN_VEC_TABLES, "chunk_ctx_vec")  # vec0 tables with namespace and live columns
# A context vector embeds the text of the memory with its live neighbours within CONTEXT_BEFORE /
# CONTEXT_AFTER thread positions (docs/QUALITY.md); the worker makes it after the memories' own vectors.
CONTEXT_BEFORE, CONTEXT_AFTER = 1, 1
CONTEXT_THREADS = ("client", "session")  # threads.ASSERTED: only threads something asserts
# The chunks that get a context vector (bind CONTEXT_THREADS after it), and how a queued window is re-queued
# (plain SQL both engines run; store/postgres/derived.py adds its claim columns to the re-queue).
CTX_ELIGIBLE = f"kind = 'memory' and valid_until is null and thread_by in ({','.join('?' * len(CONTEXT_THREADS))})"
CTX_REQUEUE = "on conflict(chunk_seq) do update set gen = ctx_queue.gen + 1, attempts = 0, last_error = null"


def ctx_pending_sql(namespace: str | None) -> tuple[str, tuple[str, ...]]:
    """How many context windows are still to embed, in one namespace or all (memory_stats, /health)."""
    if namespace is None:
        return "select count(*) from ctx_queue", ()
    return "select count(*) from ctx_queue q join chunks c on c.seq = q.chunk_seq where c.namespace = ?", (namespace,)


_DIM = re.compile(r"\[\s*(\d+)\s*\]")  # a vector column's dimension in its create statement
FTS_INDEXES = ("chunks_fts", "chunks_tri", "chunks_bi", "chunks_when")  # every FTS5 table of chunk text


def add_text(db: Any, seq: int, content: str, tags_json: str, source: str | None, meta_json: str) -> None:
    """The full-text rows of a new chunk: words (porter), trigrams, and CJK bigrams."""
    db.execute("insert into chunks_fts(rowid, content, tags, source, metadata) values (?,?,?,?,?)",
               (seq, content, tags_json, source or "", meta_json))
    db.execute("insert into chunks_tri(rowid, content) values (?,?)", (seq, content))
    bigrams = si.cjk_bigrams(content)
    if bigrams:
        db.execute("insert into chunks_bi(rowid, bigrams) values (?,?)", (seq, bigrams))


def add_dates(db: Any, seq: int, content: str, valid_from: str) -> str:
    """The derived date text of a chunk's relative times (lang/timeground.py); returns it ('' when none)."""
    text = timeground.date_text(content, valid_from)
    if text:
        db.execute("insert into chunks_when(rowid, dates) values (?, ?)", (seq, text))
    return text


def enqueue(db: Any, seq: int, now: str) -> int:
    """Queue a chunk for embedding (no-op when already queued); returns rows added."""
    return db.execute("insert or ignore into embed_queue(chunk_seq, enqueued_at) values (?, ?)", (seq, now)).rowcount


def dequeue(db: Any, seq: int) -> None:
    db.execute("delete from embed_queue where chunk_seq = ?", (seq,))


def write_vector(db: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes) -> None:
    """Store one chunk's vector for the exact scan (chunk_vec) and as float32 (chunk_vec_f32), and note
    it for the approximate index. Re-embedding replaces both."""
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
    """Remove a chunk's own vector from both tables and its index (its chunk is then re-queued by the caller).
    Its context vector is another text's embedding, re-made only through ctx_queue."""
    for table in OWN_VEC_TABLES:
        db.execute(f"delete from {table} where rowid = ?", (seq,))
    db.execute("delete from chunk_vec_f32 where seq = ?", (seq,))
    ann.note(db, "drop", seq)


def set_live(db: Any, seq: int, live: bool) -> None:
    """Mirror a chunk's liveness into chunk_vec and chunk_ctx_vec (each KNN filters on it) and the
    approximate indexes of both."""
    for table in VEC_TABLES:
        db.execute(f"update {table} set live = ? where rowid = ?", (int(live), seq))
    ann.note(db, "live" if live else "dead", seq)
    ann.note(db, "live" if live else "dead", seq + ann.CTX_KEY)


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
    ctx = db.execute(f"select rowid, live, lang, embedding from chunk_ctx_vec where rowid in ({marks})",
                     seqs).fetchall()
    if ctx:
        db.execute(f"delete from chunk_ctx_vec where rowid in ({marks})", seqs)
        db.executemany("insert into chunk_ctx_vec(rowid, namespace, live, lang, embedding) values (?,?,?,?,?)",
                       [(r[0], dst, r[1], r[2], r[3]) for r in ctx])
        for r in ctx:
            if r[1]:
                ann.note(db, "put", r[0] + ann.CTX_KEY, ann.context_space(dst), r[3])
            else:
                ann.note(db, "drop", r[0] + ann.CTX_KEY)
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
    db.execute(f"insert into ctx_queue(chunk_seq, enqueued_at) select seq, ? from chunks where {CTX_ELIGIBLE} "
               f"{CTX_REQUEUE}", (now, *CONTEXT_THREADS))
    return int(db.execute("select count(*) from embed_queue").fetchone()[0])


def relive_from_chunk(db: Any, seq: int) -> None:
    """Set both indexes' `live` from the chunk row itself (repair)."""
    (live,) = db.execute("select valid_until is null from chunks where seq = ?", (seq,)).fetchone() or (0,)
    set_live(db, seq, bool(live))


# ---------------------------------------------------------------- threads and context vectors


def thread_window(db: Any, seq: int, before: int, after: int) -> tuple[list[int], list[int]]:
    """The live memories up to `before` positions before and `after` after `seq` in its thread,
    nearest first (the chunk itself may be closed: its neighbours are still found)."""
    row = db.execute("select namespace, thread, thread_pos from chunks where seq = ?", (seq,)).fetchone()
    if not row or row[1] is None:
        return [], []
    ns, thread, pos = row
    out: list[list[int]] = []
    for op, order, n in (("<", "desc", before), (">", "asc", after)):
        out.append([r[0] for r in db.execute(
            f"select seq from chunks where namespace = ? and thread = ? and thread_pos {op} ? "
            f"and valid_until is null and kind = 'memory' order by thread_pos {order} limit ?",
            (ns, thread, pos, n))] if n > 0 else [])
    return out[0], out[1]


def context_affected(db: Any, seqs: list[int]) -> list[int]:
    """The chunks whose context window contains one of `seqs` (and `seqs` themselves), in that order:
    at most 1 + BEFORE + AFTER per seq."""
    affected: dict[int, None] = {}
    for seq in seqs:
        affected[seq] = None
        # m's window holds seq when m is up to BEFORE positions after it, or up to AFTER before it.
        prev, nxt = thread_window(db, seq, CONTEXT_AFTER, CONTEXT_BEFORE)
        for m in (*prev, *nxt):
            affected[m] = None
    return list(affected)


def enqueue_context(db: Any, seqs: list[int], now: str, requeue: str = CTX_REQUEUE) -> int:
    """Queue the context windows that contain one of `seqs` (and their own) for embedding, after a memory
    was written, or a neighbour closed or updated. A window already queued gets a new `gen`, so a batch
    that was embedding its old text does not dequeue it. Bounded: 1 + BEFORE + AFTER windows per seq.
    `requeue` is the engine's upsert clause (store/postgres/derived.py also drops a claim)."""
    affected = context_affected(db, seqs)
    if not affected:
        return 0
    marks = ",".join("?" * len(affected))
    return db.execute(f"insert into ctx_queue(chunk_seq, enqueued_at) select seq, ? from chunks "
                      f"where seq in ({marks}) and {CTX_ELIGIBLE} {requeue}",
                      (now, *affected, *CONTEXT_THREADS)).rowcount


def requeue_context(db: Any, seqs: list[int], now: str, requeue: str = CTX_REQUEUE) -> int:
    """Queue exactly these memories' windows, those that get a context vector (repair)."""
    if not seqs:
        return 0
    return db.execute(f"insert into ctx_queue(chunk_seq, enqueued_at) select seq, ? from chunks "
                      f"where seq in ({','.join('?' * len(seqs))}) and {CTX_ELIGIBLE} {requeue}",
                      (now, *seqs, *CONTEXT_THREADS)).rowcount


def drop_context(db: Any, seq: int) -> None:
    """Remove one context vector (repair; the caller re-queues its window)."""
    db.execute("delete from chunk_ctx_vec where rowid = ?", (seq,))
    ann.note(db, "drop", seq + ann.CTX_KEY)


def context_windows(db: Any, limit: int, skip: Collection[int] = ()) -> list[tuple[int, int, list[str]]]:
    """Up to `limit` queued windows not in `skip` (another worker's), fewest failures first: (seq, gen, texts
    in thread order). `texts` is empty when the memory gets no context vector (closed, in no asserted thread,
    or alone in it)."""
    return [(seq, gen, window_texts(db, seq)) for seq, gen in ctx_queue_head(db, limit, skip)]


def ctx_queue_head(db: Any, limit: int, skip: Collection[int] = (), unmade: bool = False) -> list[tuple[int, int]]:
    """(seq, gen) of up to `limit` queued windows not in `skip`, fewest failures first; with `unmade`, only
    those with no context vector yet (context_mode "staged": a queued window with one has its provisional
    vector, or an older one, until its text vector replaces it)."""
    cond = " and not exists (select 1 from chunk_ctx_vec v where v.rowid = ctx_queue.chunk_seq)" if unmade else ""
    return db.execute("select chunk_seq, gen from ctx_queue where chunk_seq not in (select value from json_each(?))"
                      f"{cond} order by attempts, chunk_seq limit ?", (json.dumps(sorted(skip)), limit)).fetchall()


def window_seqs(db: Any, seq: int) -> list[tuple[int, int]]:
    """(seq, thread distance) of each member of `seq`'s context window in thread order, itself at
    distance 0; [] when it gets no context vector (closed, in no asserted thread, or alone in it)."""
    row = db.execute(f"select 1 from chunks where seq = ? and {CTX_ELIGIBLE}", (seq, *CONTEXT_THREADS)).fetchone()
    prev, nxt = thread_window(db, seq, CONTEXT_BEFORE, CONTEXT_AFTER) if row else ([], [])
    if not (prev or nxt):
        return []
    return ([(s, i + 1) for i, s in reversed(list(enumerate(prev)))] + [(seq, 0)]
            + [(s, i + 1) for i, s in enumerate(nxt)])


def window_texts(db: Any, seq: int) -> list[str]:
    """The texts of `seq`'s context window in thread order, or [] when it gets no context vector."""
    members = [s for s, _ in window_seqs(db, seq)]
    if not members:
        return []
    text = dict(db.execute(f"select seq, content from chunks where seq in ({','.join('?' * len(members))})",
                           members).fetchall())
    return [text[s] for s in members]


def window_vectors(db: Any, seq: int, table: str) -> list[tuple[int, Any]]:
    """(thread distance, own vector as stored in `table`, or None while it is not written) of each member
    of `seq`'s context window in thread order, or [] when it gets no context vector (context_mode "mean")."""
    members = window_seqs(db, seq)
    if not members:
        return []
    vecs = dict(db.execute(f"select seq, embedding from {table} where seq in ({','.join('?' * len(members))})",
                           [s for s, _ in members]).fetchall())
    return [(dist, vecs.get(s)) for s, dist in members]


def write_context(db: Any, seq: int, gen: int, vec: bytes | None, keep: bool = False) -> bool:
    """Store (or, with no vector, remove) one window's context vector and dequeue it, unless it was
    re-queued (`gen` moved on) while it was embedded. With `keep` (context_mode "staged": a provisional
    vector) the window stays queued for its text vector. A closed memory keeps its row, marked not live
    (as_of recall), and gets no new vector. Returns True when written or removed."""
    if keep:
        if not db.execute("select 1 from ctx_queue where chunk_seq = ? and gen = ?", (seq, gen)).fetchone():
            return False
    elif not db.execute("delete from ctx_queue where chunk_seq = ? and gen = ?", (seq, gen)).rowcount:
        return False
    row = db.execute("select namespace, lang, valid_until is null from chunks where seq = ?", (seq,)).fetchone()
    if row is None or not row[2]:
        return False
    if db.execute("select 1 from chunk_ctx_vec where rowid = ?", (seq,)).fetchone():  # see write_vector
        db.execute("delete from chunk_ctx_vec where rowid = ?", (seq,))
        ann.note(db, "drop", seq + ann.CTX_KEY)
    if vec is not None:
        db.execute("insert into chunk_ctx_vec(rowid, namespace, live, lang, embedding) values (?, ?, 1, ?, ?)",
                   (seq, row[0], row[1], vec))
        ann.note(db, "put", seq + ann.CTX_KEY, ann.context_space(row[0]), vec)
    return True


def embed_failed(db: Any, seqs: Sequence[int], error: str) -> None:
    """Count a failed embedding attempt on queued chunks; the queue serves the fewest failures first."""
    db.executemany("update embed_queue set attempts = attempts + 1, last_error = ? where chunk_seq = ?",
                   [(error[:500], s) for s in seqs])


def context_failed(db: Any, seqs: list[int], error: str) -> None:
    db.executemany("update ctx_queue set attempts = attempts + 1, last_error = ? where chunk_seq = ?",
                   [(error[:500], s) for s in seqs])


# ---------------------------------------------------------------- purge (issue 29)


def purge_rows(db: Any, seqs: list[int]) -> None:
    """Delete every derived row of these chunks for good (memory_purge), before their chunk rows go:
    full text, dates, both vectors (vec0 zeroes a deleted vector's bytes), the float32 copy, both queues,
    and their keys in the approximate indexes. The external-content and contentless FTS5 tables are told
    the exact values they indexed, as FTS5 requires; purge_done then merges the deletions away."""
    for i in range(0, len(seqs), 500):
        part = seqs[i:i + 500]
        rows = db.execute(f"select seq, content, tags, source, metadata from chunks where seq in "
                          f"({','.join('?' * len(part))})", part).fetchall()
        for seq, content, tags, source, meta in rows:
            db.execute("insert into chunks_fts(chunks_fts, rowid, content, tags, source, metadata) "
                       "values ('delete', ?, ?, ?, ?, ?)", (seq, content, tags or "[]", source or "", meta or "{}"))
            db.execute("insert into chunks_tri(chunks_tri, rowid, content) values ('delete', ?, ?)", (seq, content))
            bigrams = si.cjk_bigrams(content)
            if bigrams:
                db.execute("insert into chunks_bi(chunks_bi, rowid, bigrams) values ('delete', ?, ?)", (seq, bigrams))
            db.execute("delete from chunks_when where rowid = ?", (seq,))
            if db.execute("select 1 from chunk_vec_f32 where seq = ?", (seq,)).fetchone():
                drop_vector(db, seq)
            if db.execute("select 1 from chunk_ctx_vec where rowid = ?", (seq,)).fetchone():  # see write_vector
                drop_context(db, seq)
            db.execute("delete from embed_queue where chunk_seq = ?", (seq,))
            db.execute("delete from ctx_queue where chunk_seq = ?", (seq,))


def purge_done(db: Any) -> None:
    """Merge each FTS5 index into one segment, so that no older segment still holds a purged chunk's
    words (a delete only adds a tombstone). It rewrites the indexes, so it grows with the database."""
    for table in FTS_INDEXES:
        db.execute(f"insert into {table}({table}) values ('optimize')")
