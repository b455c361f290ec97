"""PgStore: the store protocol (store/protocol.py) on PostgreSQL with pgvector, tsvector and pg_trgm.

Several daemons may serve one database. Every write is one transaction on a pooled connection; where
a write reads first, it locks what it read (`for update`, an advisory lock per namespace for entity
resolution, `on conflict` for the rows two daemons may create at once). The embedding queue is shared:
a daemon claims rows with `for update skip locked` and a lease, so each chunk is embedded once and a
daemon that dies leaves its claim to the others when the lease expires.

SQL shared with SQLite lives in store/shared.py and store/browse.py; this module holds what
differs: the filter, the candidate lists (HNSW or exact vectors, tsvector, trigram), the writes that
must be safe across processes, and the queue. Derived rows go through store/postgres/derived.py only.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from contract.errors import MemlaneError, Unavailable
from store import search_index as si
from store.browse import Browse
from store.postgres import derived as pg_derived
from store.postgres.db import VERSION_TABLE, Handle, Reader, db_error, migrate, open_pool
from store.postgres.derived import TS_CONFIG
from store.protocol import Filter, Neighbours, QueuedChunk
from store.shared import SharedSql, _marks
from store.sqlite.derived import ctx_pending_sql
from store.util import escape_like, new_id, redact_url

log = logging.getLogger("memlane")

EXACT_BELOW = 20_000  # namespaces with fewer live chunks are searched exactly (an index scan over the namespace)
# hnsw.ef_search: at least the store's `ef_search` (config pg_ef_search, default EF_SEARCH_MIN), 2 x k,
# at most EF_SEARCH_MAX. Synthetic 384-d vectors at 20k (docs/BENCHMARKS.md): ef 40 gives recall@10 0.60,
# 100 gives 0.82, 400 gives 0.995; at 1M 400 gives a distance recall of 0.93, 500 0.950 and 600 0.962 in
# 42 ms p50 (docs/BENCHMARKS.md, "Sixth pass"): the default keeps 0.95 with a margin at 1M.
EF_SEARCH_MIN, EF_SEARCH_MAX = 600, 1000
LIKE_SCAN_LIMIT = 20000
DEFAULT_LEASE_S = 60
# The queued windows with no context vector yet (context_mode "staged": the provisional mean pass's share).
UNMADE = " and not exists (select 1 from chunk_ctx_vec v where v.seq = ctx_queue.chunk_seq)"


def _latin_query(words: Sequence[str]) -> tuple[str, list[str]]:
    """A tsquery over any of `words`, each a phrase of its stemmed tokens (as an FTS5 string token)."""
    sql = " || ".join(f"phraseto_tsquery('{TS_CONFIG}', ?)" for _ in words)
    return f"({sql})", [pg_derived.fold(w) for w in words]


class PgStore(SharedSql, Browse):
    """The PostgreSQL engine. Thread-safe; any number of instances and processes per database."""

    DERIVED = pg_derived
    VECTORS = "chunk_vec"
    ROW_LOCK = " for update"
    TAG_SQL = "c.tags::jsonb @> jsonb_build_array(?::text)"
    HAS_VECTOR_SQL = "select 1 from chunk_vec where seq = ?"

    def __init__(self, url: str, dim: int, *, model: str = "", lease_s: float = DEFAULT_LEASE_S,
                 pool_size: int = 8, ef_search: int = EF_SEARCH_MIN, supersession_scoring: bool = False) -> None:
        self._url = url
        self.supersession_scoring = supersession_scoring
        self.path = redact_url(url)  # what messages, /health and the dashboard show
        self.dim = int(dim)
        self._model = model
        self.lease_s = float(lease_s)
        self.ef_search = int(ef_search)
        # Who claims queue rows: unique per process and store (host, pid, random).
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.migrations_applied = migrate(url, self.dim)
        self._pool = open_pool(url, max_size=pool_size)
        self._closed = False
        self._ns_counts: dict[str, tuple[float, int]] = {}
        self._local = threading.local()
        self.log_write_ms: list[float] = []
        # PostgreSQL's own record (memlane_schema), not SQLite's numbering: /health and memory_stats show it.
        row = self.reader().execute(f"select max(version) from {VERSION_TABLE}").fetchone()
        self.schema_version = int(row[0] or 0) if row else 0

    # ------------------------------------------------------------ connections and transactions

    @contextmanager
    def connection(self) -> Iterator[Handle]:
        """A pooled autocommit connection for reads (the store's own; reader() for tools)."""
        if self._closed:
            raise Unavailable("db.closed")
        # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
        import psycopg

        try:
            with self._pool.connection() as conn:
                yield Handle(conn)
        except psycopg.Error as exc:
            raise db_error(exc, self._url) from None

    def reader(self) -> Reader:
        if self._closed:
            raise Unavailable("db.closed")
        return Reader(self)

    @contextmanager
    def atomic(self) -> Iterator[Handle]:
        """One write transaction on a pooled connection. Nested calls join the outer transaction."""
        if self._closed:
            raise Unavailable("db.closed")
        outer = getattr(self._local, "tx", None)
        if outer is not None:
            yield outer
            return
        # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
        import psycopg

        try:
            with self._pool.connection() as conn, conn.transaction():
                handle = Handle(conn)
                self._local.tx = handle
                try:
                    yield handle
                finally:
                    self._local.tx = None
        except MemlaneError:
            raise
        except psycopg.Error as exc:
            raise db_error(exc, self._url) from None

    def check_writable(self) -> None:
        with self.atomic() as db:
            db.execute("update meta set value = value where key = 'schema_version'")

    def close(self) -> None:
        """Hand this daemon's claimed queue rows back (the others need not wait for the lease), then close."""
        if self._closed:
            return
        try:
            self.release_claims()
        except MemlaneError as exc:
            log.warning("%s", exc.message())
        self._closed = True
        self._pool.close()

    def checkpoint(self) -> None:
        """Nothing to do: PostgreSQL checkpoints on its own."""

    def vacuum_into(self, dest: Any) -> None:
        raise Unavailable("pg.no_file_backup", url=self.path)

    def set_trace(self, callback: Any) -> None:
        """Statement tracing is SQLite's; on PostgreSQL use auto_explain or pg_stat_statements."""

    def meta(self, keys: Sequence[str]) -> dict[str, str]:
        with self.connection() as db:
            return dict(db.execute(f"select key, value from meta where key in ({_marks(keys)})", list(keys)).fetchall())

    def set_meta(self, tx: Any, values: dict[str, str]) -> None:
        tx.executemany("insert into meta(key, value) values (?, ?) on conflict (key) do update set value = "
                       "excluded.value", list(values.items()))

    def db_bytes(self) -> int:
        with self.connection() as db:
            return int(db.execute("select pg_database_size(current_database())").fetchone()[0])

    @contextmanager
    def snapshot(self) -> Iterator[Handle]:
        """One read-only repeatable-read transaction: a consistent export while daemons write."""
        with self.atomic() as db:
            db.execute("set transaction isolation level repeatable read, read only")
            yield db

    def put_vector(self, tx: Any, seq: int, namespace: str, live: bool, lang: str, vec: bytes) -> None:
        """An imported vector (store/portable.py)."""
        pg_derived.write_vector(tx, seq, namespace, live, lang, vec)

    # ------------------------------------------------------------ filters

    # ------------------------------------------------------------ candidate lists

    def nearest(self, flt: Filter, qv: np.ndarray, k: int, depth: int | None = None) -> Neighbours:
        """Exact cosine over the namespace when it is small; else HNSW with iterative scans, so the
        namespace and validity filters still yield k rows (pgvector >= 0.8)."""
        rows, exact = self._knn("chunk_vec", flt, qv, k)
        return Neighbours(rows, exact=exact)

    def _knn(self, table: str, flt: Filter, qv: np.ndarray, k: int) -> tuple[list[tuple[int, float, str]], bool]:
        """(seq, cosine distance, lang) of the `k` nearest rows of a vector table (`chunk_vec` or
        `chunk_ctx_vec`, constants only) that pass `flt`, and whether the search was exact."""
        q = np.asarray(qv, dtype=np.float32)
        where, args = self._where(flt)
        with self.connection() as db:
            big = self._live_count(db, flt.namespace, exact_below=0) >= EXACT_BELOW
        if not big:
            # Exact: `(a <=> b) + 0` is not an ordering the HNSW index offers, so this scans the namespace
            # (`<table>_ns`) and keeps the top k in memory. Joining chunks only when a filter needs it
            # (and not materialising the vectors, which spilled to disk) made it 4x faster at 10k
            # (docs/BENCHMARKS.md).
            with self.connection() as db:
                if not flt.narrowed:
                    rows = db.execute(
                        f"select seq, (embedding <=> ?) + 0 as d, lang from {table} where namespace = ? and live "
                        f"order by d, seq limit ?", (q, flt.namespace, k)).fetchall()
                else:
                    rows = db.execute(
                        f"select v.seq, (v.embedding <=> ?) + 0 as d, v.lang from {table} v join chunks c "
                        f"on c.seq = v.seq where v.namespace = ? and {where} order by d, v.seq limit ?",
                        (q, flt.namespace, *args, k)).fetchall()
            return [(int(r[0]), float(r[1]), r[2]) for r in rows], True
        live = " and v.live" if flt.live_only else ""
        with self.atomic() as db:  # set_config(..., true) lasts for this transaction only
            db.execute("select set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                       "set_config('hnsw.ef_search', ?, true)",
                       (str(min(EF_SEARCH_MAX, max(self.ef_search, 2 * k))),))
            rows = db.execute(
                f"select v.seq, v.embedding <=> ? as d, v.lang from {table} v join chunks c on c.seq = v.seq "
                f"where v.namespace = ?{live} and {where} order by v.embedding <=> ? limit ?",
                (q, flt.namespace, *args, q, k)).fetchall()
        rows.sort(key=lambda r: (r[1], r[0]))  # relaxed_order: nearly sorted; make it sorted
        return [(int(r[0]), float(r[1]), r[2]) for r in rows], False

    def text_top(self, flt: Filter, field: str, words: Sequence[str], depth: int) -> list[int]:
        where, args = self._where(flt)
        with self.connection() as db:
            if field == "when":  # the dates relative times were grounded to (store/pg_derived.add_dates)
                tsq, targs = _latin_query(words)
                return [r[0] for r in db.execute(
                    f"select c.seq from chunks_when w join chunks c on c.seq = w.seq, (select {tsq} as q) x "
                    f"where w.tsv @@ x.q and {where} order by ts_rank(w.tsv, x.q) desc, c.seq desc limit ?",
                    (*targs, *args, depth))]
            if field == "latin":
                tsq, targs = _latin_query(words)
                return [r[0] for r in db.execute(
                    f"select c.seq from chunk_text t join chunks c on c.seq = t.seq, (select {tsq} as q) x "
                    f"where t.latin @@ x.q and {where} order by ts_rank(t.latin, x.q) desc, c.seq desc limit ?",
                    (*targs, *args, depth))]
            # CJK words of 3+ characters: jieba's word, or the substring anywhere (the trigram index),
            # which finds what SQLite's trigram FTS finds.
            pats = [f"%{escape_like(w)}%" for w in words]
            like = " or ".join("c.content like ?" for _ in words)
            return [r[0] for r in db.execute(
                f"select c.seq from chunks c join chunk_text t on t.seq = c.seq, (select ?::tsquery q) x "
                f"where (t.cjk @@ x.q or {like}) and {where} "
                f"order by ts_rank(t.cjk, x.q) desc, c.seq desc limit ?",
                (pg_derived.tsquery_any(words), *pats, *args, depth))]

    def term_stats(self, field: str, words: Sequence[str], seqs: Sequence[int]) -> tuple[int, list[int], list[set[int]]]:
        dfs: list[int] = []
        has: list[set[int]] = []
        with self.connection() as db:
            total = db.execute("select count(*) from chunks").fetchone()[0]
            for w in words:
                if field == "latin":
                    cond, a = f"t.latin @@ phraseto_tsquery('{TS_CONFIG}', ?)", [pg_derived.fold(w)]
                else:
                    cond, a = "(t.cjk @@ ?::tsquery or c.content like ?)", [pg_derived.tsquery_any([w]),
                                                                          f"%{escape_like(w)}%"]
                dfs.append(db.execute(f"select count(*) from chunk_text t join chunks c on c.seq = t.seq "
                                      f"where {cond}", a).fetchone()[0])
                has.append({r[0] for r in db.execute(
                    f"select t.seq from chunk_text t join chunks c on c.seq = t.seq where {cond} "
                    f"and t.seq in ({_marks(seqs)})", (*a, *seqs))} if seqs else set())
        return int(total), dfs, has

    def _bigram_query(self, words: Sequence[str]) -> str:

        return pg_derived.tsquery_any([si.bigram_token(w) for w in words])

    def short_cjk_rows(self, flt: Filter, words: Sequence[str], limit: int = LIKE_SCAN_LIMIT) -> list[tuple[Any, ...]]:
        where, args = self._where(flt)
        pats = [f"%{escape_like(w)}%" for w in words]
        cols = ", ".join("(c.content like ?)::int" for _ in words)
        any_sql = " or ".join("c.content like ?" for _ in words)
        with self.connection() as db:
            return db.execute(
                f"select c.seq, {cols} from chunk_text t join chunks c on c.seq = t.seq "
                f"where t.bigrams @@ ?::tsquery and {where} and ({any_sql}) limit ?",
                (*pats, self._bigram_query(words), *args, *pats, limit)).fetchall()

    def short_cjk_top(self, flt: Filter, words: Sequence[str], depth: int) -> list[int]:
        where, args = self._where(flt)
        pats = [f"%{escape_like(w)}%" for w in words]
        score_sql = " + ".join("(c.content like ?)::int" for _ in words)
        with self.connection() as db:
            return [r[0] for r in db.execute(
                f"select seq from (select c.seq, c.importance, ({score_sql}) as s from chunk_text t "
                f"join chunks c on c.seq = t.seq where t.bigrams @@ ?::tsquery and {where}) x where s > 0 "
                f"order by s desc, importance desc, seq desc limit ?",
                (*pats, self._bigram_query(words), *args, depth))]

    # ------------------------------------------------------------ recall log

    def log_recall(self, row: tuple[Any, ...]) -> None:
        """One short autocommit insert: it never waits for another daemon's transaction."""
        try:
            with self.connection() as db:
                db.execute("insert into recall_log(namespace, query, created_at, took_ms, lanes_json, lane_wall_ms, "
                           "hit_count, skipped, recall_details_json) values (?,?,?,?,?,?,?,?,?)", row)
        except MemlaneError as exc:  # a failed log row must not turn a good recall into an error
            log.warning("recall_log not written: %s", exc.message())

    def drain_log(self, wait: bool = False) -> None:
        """Nothing is held back on PostgreSQL (log_recall writes at once)."""

    # ------------------------------------------------------------ writes safe across daemons





    def _serialize(self, tx: Any, key: str) -> None:
        """An advisory lock held to commit: other daemons writing `key` wait for this transaction."""
        tx.execute("select pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    def bump_cooccur(self, tx: Any, namespace: str, a: str, b: str, now: str, predicate: str = "co_occurs") -> None:
        s_id, o_id = min(a, b), max(a, b)
        tx.execute("insert into relations(id, namespace, subject_id, predicate, object_id, confidence, chunk_id, "
                   "created_at, valid_from) values (?,?,?,?,?,?,?,?,?) "
                   "on conflict (namespace, subject_id, predicate, object_id) where valid_until is null "
                   "do update set confidence = relations.confidence + (1 - relations.confidence) * 0.5",
                   (new_id("r"), namespace, s_id, predicate, o_id, 0.5, None, now, now))

    def upsert_relation(self, tx: Any, namespace: str, subject_id: str, predicate: str, object_id: str,
                        confidence: float, chunk_id: str | None, now: str, valid_from: str) -> tuple[str, bool]:
        rid, inserted = tx.execute(
            "insert into relations(id, namespace, subject_id, predicate, object_id, confidence, chunk_id, "
            "created_at, valid_from) values (?,?,?,?,?,?,?,?,?) "
            "on conflict (namespace, subject_id, predicate, object_id) where valid_until is null do update set "
            "confidence = greatest(relations.confidence, excluded.confidence), "
            "chunk_id = coalesce(excluded.chunk_id, relations.chunk_id) returning id, (xmax = 0)",
            (new_id("r"), namespace, subject_id, predicate, object_id, confidence, chunk_id, now,
             valid_from)).fetchone()
        return rid, bool(inserted)

    def _move_vectors(self, db: Any, src: str, dst: str) -> int:
        return pg_derived.move_vectors(db, src, dst)

    # ------------------------------------------------------------ the shared embedding queue

    def _claim(self, db: Any, queue: str, limit: int, cols: str, skip: Collection[int],
               also: str = "") -> list[tuple[Any, ...]]:
        """Claim up to `limit` rows of a shared queue (embed_queue or ctx_queue) for this daemon: rows
        nobody holds, or whose lease expired, and not in `skip` (another of this daemon's workers holds
        them, maybe past the lease), and that pass `also` (a constant condition). Returns (seq, *cols of q
        and chunks c), fewest failures first."""
        rows = db.execute(
            f"with picked as (select chunk_seq from {queue} "
            "where (claimed_at is null or claimed_at < now() - make_interval(secs => ?)) "
            f"and chunk_seq <> all(?::bigint[]){also} order by attempts, chunk_seq limit ? for update skip locked) "
            f"update {queue} q set claimed_by = ?, claimed_at = now() from picked, chunks c "
            f"where q.chunk_seq = picked.chunk_seq and c.seq = q.chunk_seq returning q.attempts, q.chunk_seq, {cols}",
            (self.lease_s, sorted(skip), limit, self.instance)).fetchall()
        rows.sort(key=lambda r: (r[0], r[1]))
        return [r[1:] for r in rows]

    def queued(self, limit: int, skip: Collection[int] = ()) -> list[QueuedChunk]:
        """Claim up to `limit` queued chunks for this daemon (`_claim`)."""
        with self.atomic() as db:
            rows = self._claim(db, "embed_queue", limit, "c.namespace, c.content, c.lang", skip)
        return [QueuedChunk(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def embed_failed(self, seqs: Sequence[int], error: str) -> None:
        with self.atomic() as db:
            pg_derived.embed_failed(db, seqs, error, self.instance)

    def write_vectors(self, tx: Any, items: Sequence[tuple[QueuedChunk, np.ndarray]]) -> list[int]:
        """Write the vectors of rows this daemon still holds; a row whose lease passed to another daemon
        is skipped, so a chunk gets one vector from one daemon."""
        written = []
        for item, vec in items:
            # `for share of c`: a forget that closes the chunk meanwhile waits for this write (and then
            # marks the new vector not live), or commits first and is read here; never a live orphan.
            still = tx.execute("select c.valid_until is null from embed_queue q join chunks c on c.seq = q.chunk_seq "
                               "where q.chunk_seq = ? and q.claimed_by = ? for update of q for share of c",
                               (item.seq, self.instance)).fetchone()
            if not still:
                continue
            pg_derived.write_vector(tx, item.seq, item.namespace, bool(still[0]), item.lang, vec, self.instance)
            pg_derived.dequeue(tx, item.seq)
            written.append(item.seq)
        return written

    # ------------------------------------------------------------ context vectors and dates

    def context_queued(self, limit: int, skip: Collection[int] = ()) -> list[tuple[int, int, list[str]]]:
        """Claim up to `limit` queued windows as `queued` claims chunks: (seq, gen, texts in thread order),
        fewest failures first. A window re-queued meanwhile loses the claim (store/postgres/derived.py)."""
        with self.atomic() as db:
            return [(int(seq), int(gen), pg_derived.window_texts(db, seq))
                    for seq, gen in self._claim(db, "ctx_queue", limit, "q.gen", skip)]

    def context_queued_vectors(self, limit: int,
                               unmade: bool = False) -> list[tuple[int, int, list[tuple[int, np.ndarray | None]]]]:
        """Claim queued windows as context_queued does, with their members' own vectors (context_mode "mean");
        with `unmade`, only windows with no context vector yet ("staged")."""
        with self.atomic() as db:
            claimed = self._claim(db, "ctx_queue", limit, "q.gen", (), UNMADE if unmade else "")
            return [(int(seq), int(gen), self._window_vectors(db, seq)) for seq, gen in claimed]

    def index_building(self, namespace: str | None = None) -> int:
        """None deferred: PostgreSQL keeps its HNSW indexes up to date in each write."""
        return 0

    def pending_context(self, namespace: str | None = None) -> int:
        sql, args = ctx_pending_sql(namespace)
        with self.connection() as db:
            return int(db.execute(sql, args).fetchone()[0])

    def write_contexts(self, tx: Any, items: Sequence[tuple[int, int, np.ndarray | None]], keep: bool = False) -> int:
        """Write the windows this daemon still holds at the `gen` it embedded; returns how many."""
        return sum(pg_derived.write_context(tx, seq, gen, vec, self.instance, keep) for seq, gen, vec in items)

    def context_failed(self, seqs: Sequence[int], error: str) -> None:
        with self.atomic() as db:
            pg_derived.context_failed(db, list(seqs), error, self.instance)

    def nearest_context(self, flt: Filter, qv: np.ndarray, k: int) -> list[int]:
        """The context vectors nearest `qv`, searched as `nearest` searches the own vectors."""
        return [seq for seq, _, _ in self._knn("chunk_ctx_vec", flt, qv, k)[0]]

    def dates_of(self, seqs: Sequence[int]) -> dict[int, str]:
        if not seqs:
            return {}
        with self.connection() as db:
            return dict(db.execute(f"select seq, dates from chunks_when where seq in ({_marks(seqs)})",
                                   list(seqs)).fetchall())

    def release_claims(self) -> int:
        """Hand this daemon's claimed rows of both queues back at a clean stop (others need not wait for
        the lease); returns how many."""
        with self.atomic() as db:
            return sum(int(db.execute(f"update {queue} set claimed_by = null, claimed_at = null where claimed_by = ?",
                                      (self.instance,)).rowcount) for queue in ("embed_queue", "ctx_queue"))

    # ------------------------------------------------------------ supersession (inside the vector batch)

    def memory_vector(self, tx: Any, seq: int) -> tuple[str, str, str, str, np.ndarray] | None:
        return tx.execute("select c.id, c.namespace, c.content, c.valid_from, v.embedding from chunks c "
                          "join chunk_vec v on v.seq = c.seq where c.seq = ? and c.kind = 'memory' "
                          "and c.valid_until is null", (seq,)).fetchone()

    def nearest_live(self, tx: Any, vec: Any, namespace: str, lang: str, k: int) -> list[tuple[int, float]]:
        q = pg_derived.as_vector(vec)
        return [(int(r[0]), float(r[1])) for r in tx.execute(
            "select seq, (embedding <=> ?) + 0 as d from chunk_vec where namespace = ? and live and lang = ? "
            "order by d, seq limit ?", (q, namespace, lang, k))] if self._small(tx, namespace) else [(int(r[0]), float(r[1])) for r in tx.execute(
            "select seq, embedding <=> ? from chunk_vec where namespace = ? and live and lang = ? "
            "order by embedding <=> ? limit ?", (q, namespace, lang, q, k))]

    def _small(self, db: Any, namespace: str) -> bool:
        return self._live_count(db, namespace, exact_below=0) < EXACT_BELOW

    # ------------------------------------------------------------ maintenance

    def reset_vectors(self, tx: Any, dim: int, now: str) -> int:
        return pg_derived.reset_vectors(tx, dim, now)
