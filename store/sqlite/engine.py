"""SqliteStore: the store protocol (store/protocol.py) on one SQLite file with sqlite-vec and FTS5.

One writer connection behind a lock, one reader per thread (WAL lets them run beside the writer).
The SQL of every lane, write and listing lives here, as plain lowercase strings beside the code that
runs it; derived rows go through store/sqlite/derived.py only.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from contract.errors import MemlaneError, Unavailable
from store import search_index as si
from store.browse import Browse
from store.protocol import Filter, Neighbours, QueuedChunk
from store.shared import LIVE_COUNT_EXACT_BELOW, SharedSql, _chunks_of, _marks
from store.sqlite import ann, derived
from store.sqlite.db import CACHE_KIB, connect, migrate, sql_error
from store.sqlite.gencache import GenerationCache
from store.util import escape_like, fts_quote, new_id

log = logging.getLogger("memlane")

LIKE_SCAN_LIMIT = 20000  # matching rows a 2-character CJK lookup reads at most
# meta.data_gen counts committed write transactions of every process on the file (atomic() bumps it when
# the transaction changed a row; the recall log, which changes no memory, does not). What is cached by it
# is exact: a reader sees a commit and its bump together.
DATA_GEN = "data_gen"
BUMP_DATA_GEN = ("insert into meta(key, value) values ('data_gen', '1') "
                 "on conflict(key) do update set value = cast(value as integer) + 1")
ENTITY_COUNTS_MAX = 100_000  # entities whose chunk counts are kept for one generation
TERM_COUNTS_MAX = 100_000  # words whose document frequencies are kept for one generation
MEMORY_COUNTS_MAX = 10_000  # namespaces whose live memories are counted once per generation
HAS_SCAN_MAX = 1000  # term_stats reads a word's whole posting list up to this document frequency
FTS_TABLES = {"latin": "chunks_fts", "cjk": "chunks_tri", "when": "chunks_when"}  # identifiers from constants only


class SqliteStore(SharedSql, Browse):
    """The SQLite engine. Thread-safe; one instance per process per file."""

    DERIVED = derived
    VECTORS = "chunk_vec_f32"  # float32 copies; chunk_vec (vec0) is the exact-scan index
    # `+c.namespace`: never drive a lane from the (namespace, valid_until) index, which walks the whole
    # namespace; FTS, entity and id lookups find the rows.
    NO_INDEX = "+"
    TAG_SQL = "exists (select 1 from json_each(c.tags) where json_each.value = ?)"

    def db_bytes(self) -> int:
        db = self.reader()
        return int(db.execute("pragma page_count").fetchone()[0]) * int(db.execute("pragma page_size").fetchone()[0])

    def _move_vectors(self, db: Any, src: str, dst: str) -> int:
        moved, last = 0, 0
        while True:  # bounded: each batch advances `last` past at least one chunk of `src`
            seqs = [r[0] for r in db.execute(
                "select seq from chunks where namespace = ? and seq > ? order by seq limit 500", (src, last))]
            if not seqs:
                return moved
            last = seqs[-1]
            moved += derived.move_vectors(db, seqs, dst)

    def __init__(self, path: str | Path, dim: int, *, model: str = "", cache_mib: int | None = None,
                 ef_search: int | None = None, supersession_scoring: bool = False) -> None:
        self.path = Path(path)
        self.supersession_scoring = supersession_scoring
        self._cache_kib = int(cache_mib * 1024) if cache_mib else CACHE_KIB
        self.dim = int(dim)
        self._model = model
        self._write_lock = threading.RLock()
        self._log_lock = threading.Lock()
        self._log_rows: deque[tuple[Any, ...]] = deque(maxlen=10_000)  # recall_log rows not yet written
        self._closed = False
        self._writer = connect(self.path, factory=ann.connection_factory, cache_kib=self._cache_kib)
        try:
            with self._write_lock:
                self.migrations_applied = migrate(self._writer, self.dim)
                self.schema_version = int(self._writer.execute("pragma user_version").fetchone()[0])
        except BaseException:
            self._writer.close()
            raise
        self._writer.vector_log = []  # vector changes of the open transaction (store/sqlite/derived.py notes them)
        self.ann = ann.AnnIndexes(self.path, self.dim, self.reader)
        if ef_search:
            self.ann.set_expansion_search(ef_search)
        self.ann.open(ann.generation(self._writer))
        self._local = threading.local()
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._ns_counts: dict[str, tuple[float, int, int]] = {}  # namespace -> (monotonic time, live chunks, data_gen)
        self._memory_counts = GenerationCache(MEMORY_COUNTS_MAX)  # namespace -> live memories
        self._gen_bumps = 0  # data_gen bumps on the writer, which SQLite counts as changed rows (rows_changed)
        self._entity_counts = GenerationCache(ENTITY_COUNTS_MAX)  # entity id -> memories linked
        self._term_counts = GenerationCache(TERM_COUNTS_MAX)  # (index, word) -> rows matching; "chunks" -> rows
        self._trace: Callable[[str], None] | None = None
        # Milliseconds each recall spent queueing and (when the writer was free) writing its log row;
        # read by benchmarks, bounded.
        self.log_write_ms: deque[float] = deque(maxlen=100_000)

    # ------------------------------------------------------------ connections and transactions

    @property
    def writer(self) -> Any:
        """The writer connection (SQLite tools and tests; writes go through atomic())."""
        return self._writer

    def reader(self) -> Any:
        """This thread's read connection (each lane thread has its own, so lanes run side by side)."""
        # Checked first: a long-lived thread (the daemon's call pool) keeps its cached, now closed, connection.
        if self._closed:
            raise Unavailable("db.closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, cache_kib=self._cache_kib)
            self._local.conn = conn
            self._local.trace = None
            with self._readers_lock:
                self._readers.append(conn)
        trace = self._trace
        if self._local.trace is not trace:  # set_trace: applied by the thread that owns the connection
            conn.set_trace_callback(trace)
            self._local.trace = trace
        return conn

    def set_trace(self, callback: Callable[[str], None] | None, writer: bool = False) -> None:
        """Call `callback` with every statement the read connections run (benchmarks explain them), and
        with `writer` the writer's too; None stops.

        Each read connection takes the change at its thread's next reader() call. Setting it from here on a
        connection another thread is running a statement on deadlocked: this thread held the GIL and waited
        for the connection's mutex, the other held the mutex and waited for the GIL to call the callback."""
        self._trace = callback
        if writer:
            with self._write_lock:
                self._writer.set_trace_callback(callback)

    def check_writable(self) -> None:
        """Refuse at start, not at the first write, when the file is read-only (SQLite opens it anyway)."""
        try:
            self._writer.execute("begin immediate")
            try:
                self._writer.execute("update meta set value = value where key = 'schema_version'")
            finally:
                self._writer.execute("rollback")
        except Exception as exc:
            err = sql_error(exc)
            raise (Unavailable("db.readonly", path=str(self.path)) if err.msg_id == "db.readonly" else err) from exc

    @contextmanager
    def atomic(self) -> Iterator[Any]:
        """The single write path: one BEGIN IMMEDIATE transaction on the writer connection."""
        if self._closed:
            raise Unavailable("db.closed")
        with self._write_lock:
            try:
                self._writer.execute("begin immediate")
            except Exception as exc:
                raise sql_error(exc) from exc
            start = self._writer.total_changes
            try:
                yield self._writer
                if self._writer.total_changes != start:  # a transaction that changed nothing leaves it
                    self._writer.execute(BUMP_DATA_GEN)
                    self._gen_bumps += 1
                self._writer.execute("commit")
            except BaseException as exc:
                self._writer.vector_log.clear()
                try:
                    self._writer.execute("rollback")
                except Exception:  # the transaction may already be gone (e.g. SQLITE_FULL)
                    pass
                if isinstance(exc, MemlaneError) or not isinstance(exc, Exception):
                    raise
                if type(exc).__name__ in ("OperationalError", "DatabaseError", "IntegrityError"):
                    raise sql_error(exc) from exc
                raise
            if self._writer.vector_log:  # committed: the approximate indexes follow
                changes = list(self._writer.vector_log)
                self._writer.vector_log.clear()
                self.ann.apply(changes, ann.generation(self._writer), self._vector_of)
        if self._log_rows:  # recall_log rows a recall left because this transaction held the writer
            self.drain_log()

    def close(self) -> None:
        """Write what recalls left, checkpoint the WAL and close every connection."""
        if self._closed:
            return
        with self._write_lock:  # wait for the writer once, then write what recalls left
            self.drain_log()
            self.ann.save()
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except Exception:  # already closed by its thread
                    pass
            self._readers.clear()
        with self._write_lock:
            try:
                self._writer.execute("pragma wal_checkpoint(truncate)")
            except Exception as exc:  # a checkpoint that fails leaves a valid WAL behind
                log.warning("wal checkpoint failed: %s", exc)
            self._writer.close()
            self._closed = True

    def checkpoint(self) -> None:
        with self._write_lock:
            self._writer.execute("pragma wal_checkpoint(truncate)")

    def vacuum_into(self, dest: str | Path) -> None:
        """A compact copy of the whole database (benchmarks save their built stores this way)."""
        with self._write_lock:
            self._writer.execute("vacuum into ?", (str(dest),))

    def meta(self, keys: Sequence[str]) -> dict[str, str]:
        return dict(self._writer.execute(f"select key, value from meta where key in ({_marks(keys)})",
                                         list(keys)).fetchall())

    def put_vector(self, tx: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes) -> None:
        """An imported vector (store/portable.py), written by store/sqlite/derived.py."""
        derived.write_vector(tx, seq, namespace, live, lang, vec)

    def set_meta(self, tx: Any, values: dict[str, str]) -> None:
        tx.executemany("insert or replace into meta(key, value) values (?, ?)", list(values.items()))

    def _vector_of(self, key: int) -> tuple[str, bytes] | None:
        """(index name, vector) of a live chunk's own or (key seq + CTX_KEY) context vector: a vector made
        live again rejoins its index."""
        if key >= ann.CTX_KEY:
            row = self._writer.execute("select c.namespace, v.embedding from chunks c join chunk_ctx_vec v "
                                       "on v.rowid = c.seq where c.seq = ? and c.valid_until is null",
                                       (key - ann.CTX_KEY,)).fetchone()
            return (ann.context_space(row[0]), row[1]) if row else None
        return self._writer.execute("select c.namespace, f.embedding from chunks c join chunk_vec_f32 f "
                                    "on f.seq = c.seq where c.seq = ? and c.valid_until is null", (key,)).fetchone()

    # ------------------------------------------------------------ filters and counts

    def _live_count(self, db: Any, namespace: str, exact_below: int = LIVE_COUNT_EXACT_BELOW) -> int:
        """Live chunks in a namespace: exact below `exact_below` (recounted only when the data generation
        moved: a commit by any process), else recounted at most every 30 s, since the count walks the
        namespace's index (tens of ms at 1M)."""
        now, gen = time.monotonic(), self.data_gen(db)  # read before counting: a commit meanwhile invalidates
        cached = self._ns_counts.get(namespace)
        if cached is None or (cached[2] != gen and (cached[1] < exact_below or now - cached[0] > 30.0)):
            n = db.execute("select count(*) from chunks c where c.namespace = ? and c.valid_until is null",
                           (namespace,)).fetchone()[0]
            cached = (now, int(n), gen)
            self._ns_counts[namespace] = cached
        return cached[1]

    def rows_changed(self) -> int:
        """Rows this store's writes changed since it opened, its own data_gen bumps left out."""
        with self._write_lock:
            return int(self._writer.total_changes) - self._gen_bumps

    def data_gen(self, db: Any | None = None) -> int:
        """Write transactions committed to the file by any process (meta.data_gen), as `db` sees it."""
        row = (db or self.reader()).execute("select value from meta where key = ?", (DATA_GEN,)).fetchone()
        return int(row[0]) if row else 0

    def entity_chunk_counts(self, entity_ids: Sequence[str]) -> dict[str, int]:
        """Linked memories per entity (those with none left out), counted once per data generation: the
        graph lane asks for the same hubs on every recall (1.0 of its 4.9 ms CPU at 10k)."""
        if not entity_ids:
            return {}
        db = self.reader()

        def count(missing: list[Any]) -> dict[Any, int]:
            found = dict(super(SqliteStore, self).entity_chunk_counts(missing))
            return {e: int(found.get(e, 0)) for e in missing}

        got = self._entity_counts.get_many(self.data_gen(db), entity_ids, count)
        return {e: got[e] for e in entity_ids if got[e]}

    def count_memories(self, namespace: str) -> int:
        """Live memories in a namespace, counted once per data generation (the graph lane asks twice a
        recall); a commit by another process moves the generation too."""
        def count(missing: list[Any]) -> dict[Any, int]:
            return {ns: int(super(SqliteStore, self).count_memories(ns)) for ns in missing}

        return int(self._memory_counts.get_many(self.data_gen(), [namespace], count)[namespace])

    # ------------------------------------------------------------ candidate lists

    def nearest(self, flt: Filter, qv: np.ndarray, k: int, depth: int | None = None) -> Neighbours:
        """The exact vec0 KNN, or from ANN_MIN_CHUNKS live chunks the namespace's approximate index
        (store/sqlite/ann.py), its hits checked against `chunks`; exact again when too few pass the filter."""
        db = self.reader()
        if flt.live_only and self._live_count(db, flt.namespace, exact_below=0) >= si.ANN_MIN_CHUNKS:
            found = self.ann.search(flt.namespace, qv, k * si.ANN_OVERSAMPLE if flt.narrowed else k + 32)
            if found is not None:
                where, args = self._where(flt)
                langs: dict[int, str] = {}
                for part in _chunks_of([s for s, _ in found]):
                    langs.update(db.execute(f"select c.seq, c.lang from chunks c where c.seq in ({_marks(part)}) "
                                            f"and {where}", (*part, *args)).fetchall())
                rows = [(s, d, langs[s]) for s, d in found if s in langs][:k]
                if len(rows) >= min(k, depth or k) or not flt.narrowed:
                    return Neighbours(rows, exact=False)
        live = " and live = 1" if flt.live_only else ""
        rows = db.execute(
            f"select rowid, distance, lang from chunk_vec where embedding match ? and k = ? and namespace = ?{live}",
            (np.asarray(qv, dtype=np.float32).tobytes(), k, flt.namespace)).fetchall()
        if rows and flt.narrowed:
            ok = self._filter_seqs(db, flt, [r[0] for r in rows])
            rows = [r for r in rows if r[0] in ok]
        return Neighbours([(r[0], r[1], r[2]) for r in rows])

    def text_top(self, flt: Filter, field: str, words: Sequence[str], depth: int) -> list[int]:
        where, args = self._where(flt)
        match = " OR ".join(fts_quote(w) for w in words)
        return si.fts_top(self.reader(), FTS_TABLES[field], match, where, args, depth)

    def term_stats(self, field: str, words: Sequence[str], seqs: Sequence[int]) -> tuple[int, list[int], list[set[int]]]:
        table = FTS_TABLES[field]
        db = self.reader()
        marks = _marks(seqs)

        def count(missing: list[Any]) -> dict[Any, int]:
            # Document frequency over the whole index (a join to filter the namespace costs ~100x more):
            # a common word's count reads its whole posting list, so it is read once per data generation.
            found = {}
            for key in missing:
                sql, args = (("select count(*) from chunks", ()) if key == "chunks" else
                             (f"select count(*) from {table} where {table} match ?", (fts_quote(key[1]),)))
                found[key] = db.execute(sql, args).fetchone()[0]
            return found

        got = self._term_counts.get_many(self.data_gen(db), ["chunks", *((table, w) for w in words)], count)
        dfs = [got[(table, w)] for w in words]
        wanted = set(seqs)
        has: list[set[int]] = []
        for w, df in zip(words, dfs, strict=True):
            # The rowid filter is not pushed into FTS5 (the IN list is checked row by row) and costs about
            # 0.3 ms before the first row: a word in at most HAS_SCAN_MAX rows is read whole and intersected.
            if not df:
                has.append(set())
            elif df <= HAS_SCAN_MAX:
                rows = db.execute(f"select rowid from {table} where {table} match ?", (fts_quote(w),))
                has.append({r[0] for r in rows if r[0] in wanted})
            else:
                has.append({r[0] for r in db.execute(
                    f"select rowid from {table} where {table} match ? and rowid in ({marks})", (fts_quote(w), *seqs))})
        return got["chunks"], dfs, has

    def short_cjk_rows(self, flt: Filter, words: Sequence[str], limit: int = LIKE_SCAN_LIMIT) -> list[tuple[Any, ...]]:
        # Trigram FTS cannot match two characters: the bigram index (chunks_bi) finds the rows that
        # contain them, exactly the rows LIKE would match; LIKE (escaped) then flags each word.
        where, args = self._where(flt)
        pats = [f"%{escape_like(w)}%" for w in words]
        cols = ", ".join("(c.content like ? escape '\\')" for _ in words)
        any_sql = " or ".join("c.content like ? escape '\\'" for _ in words)
        return self.reader().execute(
            f"select c.seq, {cols} from chunks_bi b join chunks c on c.seq = b.rowid "
            f"where chunks_bi match ? and {where} and ({any_sql}) limit ?",
            (*pats, si.bigram_match(list(words)), *args, *pats, limit)).fetchall()

    def short_cjk_top(self, flt: Filter, words: Sequence[str], depth: int) -> list[int]:
        where, args = self._where(flt)
        pats = [f"%{escape_like(w)}%" for w in words]
        score_sql = " + ".join("(c.content like ? escape '\\')" for _ in words)
        return [r[0] for r in self.reader().execute(
            f"select c.seq, ({score_sql}) as s from chunks_bi b join chunks c on c.seq = b.rowid "
            f"where chunks_bi match ? and {where} and s > 0 "
            f"order by s desc, c.importance desc, c.seq desc limit ?",
            (*pats, si.bigram_match(list(words)), *args, depth))]

    # ------------------------------------------------------------ recall log

    def log_recall(self, row: tuple[Any, ...]) -> None:
        t0 = time.perf_counter()
        with self._log_lock:
            self._log_rows.append(row)
        # A recall never waits for the writer (measured: 44 ms p50 while another thread remembers,
        # docs/BENCHMARKS.md). When the writer is busy, whoever holds it writes the row on release.
        self.drain_log()
        self.log_write_ms.append((time.perf_counter() - t0) * 1000)

    def drain_log(self, wait: bool = False) -> None:
        """Write the pending recall_log rows if the writer is free right now; a recall never waits for it,
        `wait` (memory_stats, which counts the rows) waits for the transaction that holds it."""
        if not self._write_lock.acquire(blocking=wait):
            return
        try:
            if self._closed or self._writer.in_transaction:  # nested in an open transaction: leave them
                return
            with self._log_lock:
                rows = list(self._log_rows)
                self._log_rows.clear()
            if not rows:
                return
            try:
                self._writer.execute("begin immediate")
                self._writer.executemany(
                    "insert into recall_log(namespace, query, created_at, took_ms, lanes_json, lane_wall_ms, "
                    "hit_count, skipped, recall_details_json) values (?,?,?,?,?,?,?,?,?)", rows)
                self._writer.execute("commit")
            except Exception as exc:  # a full disk must not turn a good recall into an error
                try:
                    self._writer.execute("rollback")
                except Exception:  # already rolled back
                    pass
                log.warning("recall_log not written: %s", sql_error(exc).message())
        finally:
            self._write_lock.release()

    # ------------------------------------------------------------ purge (issue 29)

    def purge(self, namespace: str, chunk_id: str, now: str) -> dict[str, Any] | None:
        """SharedSql.purge with SQLite's own care of the bytes: pending recall_log rows are written first
        (so the purge reaches them), freed pages are zeroed (secure_delete), the WAL is checkpointed and
        truncated (it holds the pages as they were), and the namespace's approximate-index files are
        built anew without the purged vectors."""
        self.drain_log(wait=True)
        with self._write_lock:
            (before,) = self._writer.execute("pragma secure_delete").fetchone()
            self._writer.execute("pragma secure_delete = on")
            try:
                got = super().purge(namespace, chunk_id, now)
            finally:
                self._writer.execute(f"pragma secure_delete = {('off', 'on', 'fast')[int(before)]}")
            if got is None:
                return None
            ids = got["purged"]
            with self._log_lock:  # rows of recalls that ran meanwhile and returned it
                kept = [r for r in self._log_rows if not any(i in str(r[-1]) for i in ids)]
                self._log_rows.clear()
                self._log_rows.extend(kept)
            # Best effort: a reader in the middle of a snapshot keeps the WAL from being truncated.
            self._writer.execute("pragma wal_checkpoint(truncate)").fetchall()
        self.ann.rebuild(namespace)
        self.ann.rebuild(ann.context_space(namespace))
        return got

    # ------------------------------------------------------------ writes




    def bump_cooccur(self, tx: Any, namespace: str, a: str, b: str, now: str, predicate: str = "co_occurs") -> None:
        """A co-occurrence relation whose confidence grows with each memory naming both entities."""
        s_id, o_id = min(a, b), max(a, b)
        row = tx.execute("select id from relations where namespace = ? and subject_id = ? and predicate = ? "
                         "and object_id = ? and valid_until is null", (namespace, s_id, predicate, o_id)).fetchone()
        if row:
            tx.execute("update relations set confidence = confidence + (1 - confidence) * 0.5 where id = ?", (row[0],))
        else:
            tx.execute("insert into relations(id, namespace, subject_id, predicate, object_id, confidence, "
                       "chunk_id, created_at, valid_from) values (?,?,?,?,?,?,?,?,?)",
                       (new_id("r"), namespace, s_id, predicate, o_id, 0.5, None, now, now))

    def upsert_relation(self, tx: Any, namespace: str, subject_id: str, predicate: str, object_id: str,
                        confidence: float, chunk_id: str | None, now: str, valid_from: str) -> tuple[str, bool]:
        row = tx.execute(
            "select id from relations where namespace = ? and subject_id = ? and predicate = ? and object_id = ? "
            "and valid_until is null", (namespace, subject_id, predicate, object_id)).fetchone()
        if row:
            tx.execute("update relations set confidence = max(confidence, ?), chunk_id = coalesce(?, chunk_id) "
                       "where id = ?", (confidence, chunk_id, row[0]))
            return row[0], False
        rid = new_id("r")
        tx.execute("insert into relations(id, namespace, subject_id, predicate, object_id, confidence, chunk_id, "
                   "created_at, valid_from) values (?,?,?,?,?,?,?,?,?)",
                   (rid, namespace, subject_id, predicate, object_id, confidence, chunk_id, now, valid_from))
        return rid, True

    # ------------------------------------------------------------ the embedding queue and vectors

    def queued(self, limit: int, skip: Collection[int] = ()) -> list[QueuedChunk]:
        return [QueuedChunk(*r) for r in self.reader().execute(
            "select q.chunk_seq, c.namespace, c.content, c.lang from embed_queue q join chunks c on c.seq = q.chunk_seq "
            "where q.chunk_seq not in (select value from json_each(?)) order by q.attempts, q.chunk_seq limit ?",
            (json.dumps(sorted(skip)), limit))]

    def embed_failed(self, seqs: Sequence[int], error: str) -> None:
        with self.atomic() as db:
            derived.embed_failed(db, seqs, error)

    def write_vectors(self, tx: Any, items: Sequence[tuple[QueuedChunk, np.ndarray]]) -> list[int]:
        written = []
        for item, vec in items:
            # Liveness is read again here: a forget or update may have closed the chunk while it was
            # being embedded, and a stale live=1 would let the vector lane return a closed chunk.
            still = tx.execute("select c.valid_until is null from embed_queue q join chunks c on c.seq = "
                               "q.chunk_seq where q.chunk_seq = ?", (item.seq,)).fetchone()
            if not still:
                continue
            derived.write_vector(tx, item.seq, item.namespace, bool(still[0]), item.lang,
                                 np.asarray(vec, dtype=np.float32).tobytes())
            derived.dequeue(tx, item.seq)
            written.append(item.seq)
        return written

    def context_queued(self, limit: int, skip: Collection[int] = ()) -> list[tuple[int, int, list[str]]]:
        return derived.context_windows(self.reader(), limit, skip)

    def context_queued_vectors(self, limit: int,
                               unmade: bool = False) -> list[tuple[int, int, list[tuple[int, np.ndarray | None]]]]:
        db = self.reader()
        return [(seq, gen, self._window_vectors(db, seq)) for seq, gen in derived.ctx_queue_head(db, limit, (), unmade)]

    def index_building(self, namespace: str | None = None) -> int:
        return self.ann.building(namespace)

    def pending_context(self, namespace: str | None = None) -> int:
        sql, args = derived.ctx_pending_sql(namespace)
        return int(self.reader().execute(sql, args).fetchone()[0])

    def write_contexts(self, tx: Any, items: Sequence[tuple[int, int, np.ndarray | None]], keep: bool = False) -> int:
        return sum(derived.write_context(tx, seq, gen, None if vec is None else
                                         np.asarray(vec, dtype=np.float32).tobytes(), keep) for seq, gen, vec in items)

    def context_failed(self, seqs: Sequence[int], error: str) -> None:
        with self.atomic() as db:
            derived.context_failed(db, list(seqs), error)

    # ------------------------------------------------------------ threads and context

    def nearest_context(self, flt: Filter, qv: np.ndarray, k: int) -> list[int]:
        """The nearest context vectors: from ANN_MIN_CHUNKS live chunks through the namespace's context
        index (store/sqlite/ann.py), its hits checked against `chunks`, else (or when too few pass) vec0's KNN."""
        db = self.reader()
        if flt.live_only and self._live_count(db, flt.namespace, exact_below=0) >= si.ANN_MIN_CHUNKS:
            found = self.ann.search(ann.context_space(flt.namespace), qv,
                                    k * si.ANN_OVERSAMPLE if flt.narrowed else k + 32)
            if found is not None:
                keys = [key - ann.CTX_KEY for key, _ in found]
                where, args = self._where(flt)
                ok: set[int] = set()
                for part in _chunks_of(keys):
                    ok.update(r[0] for r in db.execute(f"select c.seq from chunks c where c.seq in ({_marks(part)}) "
                                                       f"and {where}", (*part, *args)))
                hits = [s for s in keys if s in ok][:k]
                if len(hits) >= k or not flt.narrowed:
                    return hits
        live = " and live = 1" if flt.live_only else ""
        seqs = [r[0] for r in db.execute(
            f"select rowid from chunk_ctx_vec where embedding match ? and k = ? and namespace = ?{live}",
            (np.asarray(qv, dtype=np.float32).tobytes(), k, flt.namespace))]
        if seqs and flt.narrowed:
            ok = self._filter_seqs(db, flt, seqs)
            seqs = [s for s in seqs if s in ok]
        return seqs

    def dates_of(self, seqs: Sequence[int]) -> dict[int, str]:
        if not seqs:
            return {}
        return dict(self.reader().execute(f"select rowid, dates from chunks_when where rowid in ({_marks(seqs)})",
                                          list(seqs)).fetchall())

    # ------------------------------------------------------------ supersession (inside the vector batch)

    def memory_vector(self, tx: Any, seq: int) -> tuple[str, str, str, str, bytes] | None:
        """(id, namespace, content, valid_from, vector) of a live memory that has its vector."""
        return tx.execute("select c.id, c.namespace, c.content, c.valid_from, v.embedding from chunks c "
                          "join chunk_vec v on v.rowid = c.seq where c.seq = ? and c.kind = 'memory' "
                          "and c.valid_until is null", (seq,)).fetchone()

    def nearest_live(self, tx: Any, vec: Any, namespace: str, lang: str, k: int) -> list[tuple[int, float]]:
        if not isinstance(vec, bytes):  # a vector in hand (supersession.neighbours), not one read back
            vec = np.asarray(vec, dtype=np.float32).tobytes()
        return tx.execute("select rowid, distance from chunk_vec where embedding match ? and k = ? and namespace = ? "
                          "and live = 1 and lang = ?", (vec, k, namespace, lang)).fetchall()

    # ------------------------------------------------------------ history, graph, stats

    # ------------------------------------------------------------ moving a namespace

