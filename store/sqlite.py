"""SqliteStore: the store protocol (store/protocol.py) on one SQLite file with sqlite-vec and FTS5.

One writer connection behind a lock, one reader per thread (WAL lets them run beside the writer).
The SQL of every lane, write and listing lives here, as plain lowercase strings beside the code that
runs it; derived rows go through store/derived.py only.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

import search_index as si
from errors import Conflict, MemlaneError, NotFound, Unavailable
from store import derived
from store.protocol import Filter, Neighbours, NewChunk, QueuedChunk
from store.sqlite_browse import SqliteBrowse
from store.sqlite_db import connect, migrate, sql_error
from store.util import escape_like, fts_quote, new_id

log = logging.getLogger("memlane")

LIVE_COUNT_EXACT_BELOW = 20_000  # larger namespaces reuse a live-chunk count for up to 30 s
LIKE_SCAN_LIMIT = 20000  # matching rows a 2-character CJK lookup reads at most
FTS_TABLES = {"latin": "chunks_fts", "cjk": "chunks_tri"}  # identifiers from constants only
NS_TABLES = ("chunks", "entities", "entity_aliases", "relations")


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def _chunks_of(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class SqliteStore(SqliteBrowse):
    """The SQLite engine. Thread-safe; one instance per process per file."""

    def __init__(self, path: str | Path, dim: int, *, compute_center: Callable[[], np.ndarray] | None = None,
                 model: str = "") -> None:
        self.path = Path(path)
        self.dim = int(dim)
        self._model = model
        self._compute_center = compute_center
        self._write_lock = threading.RLock()
        self._log_lock = threading.Lock()
        self._log_rows: deque[tuple[Any, ...]] = deque(maxlen=10_000)  # recall_log rows not yet written
        self._closed = False
        self._writer = connect(self.path)
        try:
            with self._write_lock:
                self.migrations_applied = migrate(self._writer, self.dim)
        except BaseException:
            self._writer.close()
            raise
        self._local = threading.local()
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._ns_counts: dict[str, tuple[float, int]] = {}  # namespace -> (monotonic time, live chunks)
        self._center: np.ndarray | None = None
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
            conn = connect(self.path)
            conn.set_trace_callback(self._trace)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def set_trace(self, callback: Callable[[str], None] | None) -> None:
        """Call `callback` with every statement the read connections run (benchmarks explain them); None stops."""
        self._trace = callback
        with self._readers_lock:
            for conn in self._readers:
                conn.set_trace_callback(callback)

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
            try:
                yield self._writer
                self._writer.execute("commit")
            except BaseException as exc:
                try:
                    self._writer.execute("rollback")
                except Exception:  # the transaction may already be gone (e.g. SQLITE_FULL)
                    pass
                if isinstance(exc, MemlaneError) or not isinstance(exc, Exception):
                    raise
                if type(exc).__name__ in ("OperationalError", "DatabaseError", "IntegrityError"):
                    raise sql_error(exc) from exc
                raise
        if self._log_rows:  # recall_log rows a recall left because this transaction held the writer
            self.drain_log()

    def close(self) -> None:
        """Write what recalls left, checkpoint the WAL and close every connection."""
        if self._closed:
            return
        with self._write_lock:  # wait for the writer once, then write what recalls left
            self.drain_log()
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

    def set_meta(self, tx: Any, values: dict[str, str]) -> None:
        tx.executemany("insert or replace into meta(key, value) values (?, ?)", list(values.items()))

    def center(self) -> np.ndarray:
        """The centre of the coarse sign-bit codes for this store's model, stored in `meta` on first use."""
        if self._center is None:
            rows = self.meta(("vec_center", "vec_center_model"))
            if rows.get("vec_center_model") == self._model and rows.get("vec_center"):
                self._center = np.frombuffer(bytes.fromhex(rows["vec_center"]), dtype=np.float32).copy()
            else:
                if self._compute_center is None:
                    raise Unavailable("db.open", path=str(self.path), detail="no embedder for the vector centre")
                center = self._compute_center()  # outside any transaction: it may embed
                with self.atomic() as db:
                    self.set_meta(db, {"vec_center": center.tobytes().hex(), "vec_center_model": self._model})
                self._center = center
        return self._center

    # ------------------------------------------------------------ filters and counts

    @staticmethod
    def _where(flt: Filter) -> tuple[str, list[Any]]:
        """SQL over chunks `c` for a Filter. `+c.namespace`: never drive a lane from the (namespace,
        valid_until) index, which walks the whole namespace; FTS, entity and id lookups find the rows."""
        if flt.as_of:
            sql, args = "c.valid_from <= ? and (c.valid_until is null or c.valid_until > ?)", [flt.as_of, flt.as_of]
        elif flt.include_history:
            sql, args = "1", []
        else:
            sql, args = "c.valid_until is null", []
        if flt.source:
            sql += " and c.source = ?"
            args.append(flt.source)
        for tag in flt.tags:
            sql += " and exists (select 1 from json_each(c.tags) where json_each.value = ?)"
            args.append(tag)
        if flt.since:
            sql += " and c.created_at >= ?"
            args.append(flt.since)
        if flt.until:
            sql += " and c.created_at <= ?"
            args.append(flt.until)
        return f"+c.namespace = ? and {sql}", [flt.namespace, *args]

    def _live_count(self, db: Any, namespace: str, exact_below: int = LIVE_COUNT_EXACT_BELOW) -> int:
        """Live chunks in a namespace: exact below `exact_below`, else recounted at most every 30 s,
        since the count walks the namespace's index (tens of ms at 1M)."""
        now = time.monotonic()
        cached = self._ns_counts.get(namespace)
        if cached is None or cached[1] < exact_below or now - cached[0] > 30.0:
            n = db.execute("select count(*) from chunks c where c.namespace = ? and c.valid_until is null",
                           (namespace,)).fetchone()[0]
            cached = (now, int(n))
            self._ns_counts[namespace] = cached
        return cached[1]

    def count(self, flt: Filter) -> int:
        db = self.reader()
        if flt.live_only and not flt.narrowed:
            return self._live_count(db, flt.namespace)
        where, args = self._where(flt)
        return db.execute(f"select count(*) from chunks c where {where.lstrip('+')}", args).fetchone()[0]

    def count_memories(self, namespace: str) -> int:
        return self.reader().execute("select count(*) from chunks c where c.namespace = ? and c.valid_until is null "
                                     "and c.kind = 'memory'", (namespace,)).fetchone()[0]

    def _filter_seqs(self, db: Any, flt: Filter, seqs: list[int]) -> set[int]:
        where, args = self._where(flt)
        out: set[int] = set()
        for part in _chunks_of(seqs):
            out.update(r[0] for r in db.execute(
                f"select c.seq from chunks c where c.seq in ({_marks(part)}) and {where}", (*part, *args)))
        return out

    # ------------------------------------------------------------ candidate lists

    def nearest(self, flt: Filter, qv: np.ndarray, k: int, depth: int | None = None) -> Neighbours:
        """Exact vec0 KNN, or from COARSE_MIN_CHUNKS live chunks the sign-bit pass (its `depth` best)."""
        db = self.reader()
        if not flt.narrowed and self._live_count(db, flt.namespace, exact_below=0) >= si.COARSE_MIN_CHUNKS:
            seqs = si.coarse_knn(db, flt.namespace, qv, depth or k, self.center())
            return Neighbours([(s, 0.0, "") for s in seqs], exact=False)
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
        total = db.execute("select count(*) from chunks").fetchone()[0]
        dfs: list[int] = []
        has: list[set[int]] = []
        for w in words:
            q = fts_quote(w)
            # Document frequency over the whole index (a join to filter the namespace costs ~100x more).
            dfs.append(db.execute(f"select count(*) from {table} where {table} match ?", (q,)).fetchone()[0])
            has.append({r[0] for r in db.execute(
                f"select rowid from {table} where {table} match ? and rowid in ({marks})", (q, *seqs))})
        return total, dfs, has

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

    def match_aliases(self, namespace: str, norms: Sequence[str]) -> list[tuple[str, str, str]]:
        found: dict[str, tuple[str, str, str]] = {}
        db = self.reader()
        for part in _chunks_of(list(norms)):
            for eid, kind, key in db.execute(
                f"select a.entity_id, e.kind, a.norm from entity_aliases a join entities e on e.id = a.entity_id "
                f"where a.namespace = ? and a.norm in ({_marks(part)})", (namespace, *part)):
                found.setdefault(eid, (eid, kind, key))
        return list(found.values())

    def entity_chunk_counts(self, entity_ids: Sequence[str]) -> dict[str, int]:
        if not entity_ids:
            return {}
        return dict(self.reader().execute(
            f"select entity_id, count(*) from chunk_entities where entity_id in ({_marks(entity_ids)}) "
            f"group by entity_id", list(entity_ids)))

    def chunks_by_entity_weight(self, flt: Filter, weights: dict[str, float], depth: int) -> list[tuple[int, float]]:
        where, args = self._where(flt)
        values = ",".join("(?, ?)" for _ in weights)
        wargs: list[Any] = []
        for eid, w in weights.items():
            wargs += [eid, w]
        return self.reader().execute(
            f"with q(entity_id, w) as (values {values}) "
            f"select c.seq, sum(q.w) as s from q join chunk_entities ce on ce.entity_id = q.entity_id "
            f"join chunks c on c.seq = ce.chunk_seq where {where} "
            f"group by c.seq order by s desc, c.importance desc, c.seq desc limit ?",
            (*wargs, *args, depth)).fetchall()

    def entities_of(self, seqs: Sequence[int]) -> list[str]:
        if not seqs:
            return []
        return [r[0] for r in self.reader().execute(
            f"select entity_id from chunk_entities where chunk_seq in ({_marks(seqs)})", list(seqs))]

    def relations_touching(self, namespace: str, entity_ids: Sequence[str], as_of: str | None, limit: int,
                           weak_predicate: str, weak_min: float) -> list[tuple[str, str, float, str | None]]:
        if as_of:
            valid, vargs = "r.valid_from <= ? and (r.valid_until is null or r.valid_until > ?)", [as_of, as_of]
        else:
            valid, vargs = "r.valid_until is null", []
        part = list(entity_ids)
        marks = _marks(part)
        # No ORDER BY in SQL: it made SQLite gather and sort every relation of a hub before the limit.
        return self.reader().execute(
            f"select r.subject_id, r.object_id, r.confidence, r.chunk_id from relations r "
            f"where +r.namespace = ? and {valid} and (r.subject_id in ({marks}) or r.object_id in ({marks})) "
            f"and (r.predicate != ? or r.confidence >= ?) limit ?",
            (namespace, *vargs, *part, *part, weak_predicate, weak_min, limit)).fetchall()

    def chunks_of_entities(self, flt: Filter, entity_ids: Sequence[str], limit: int) -> list[tuple[int, str]]:
        where, args = self._where(flt)
        return self.reader().execute(
            f"select c.seq, ce.entity_id from chunk_entities ce join chunks c on c.seq = ce.chunk_seq "
            f"where ce.entity_id in ({_marks(entity_ids)}) and {where} limit ?",
            (*entity_ids, *args, limit)).fetchall()

    def seqs_of_ids(self, flt: Filter, chunk_ids: Sequence[str]) -> list[tuple[int, str]]:
        where, args = self._where(flt)
        return self.reader().execute(f"select c.seq, c.id from chunks c where c.id in ({_marks(chunk_ids)}) "
                                     f"and {where}", (*chunk_ids, *args)).fetchall()

    def fact_parents(self, seqs: Iterable[int]) -> dict[int, int]:
        ids = list(seqs)
        out: dict[int, int] = {}
        db = self.reader()
        for part in _chunks_of(ids):
            for seq, pseq in db.execute(
                f"select c.seq, p.seq from chunks c join chunks p on p.id = c.parent_id "
                f"where c.seq in ({_marks(part)}) and c.kind = 'fact'", part):
                out[seq] = pseq
        return out

    def linked(self, seqs: Sequence[int], entity_ids: Sequence[str]) -> set[int]:
        if not seqs or not entity_ids:
            return set()
        return {r[0] for r in self.reader().execute(
            f"select distinct chunk_seq from chunk_entities where chunk_seq in ({_marks(seqs)}) "
            f"and entity_id in ({_marks(entity_ids)})", (*seqs, *entity_ids))}

    def contents(self, seqs: Sequence[int]) -> dict[int, str]:
        if not seqs:
            return {}
        return dict(self.reader().execute(f"select seq, content from chunks where seq in ({_marks(seqs)})",
                                          list(seqs)).fetchall())

    def rank_rows(self, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None, str]]:
        return {r[0]: r[1:] for r in self.reader().execute(
            f"select seq, content, valid_from, superseded_by, id from chunks where seq in ({_marks(seqs)})",
            list(seqs))}

    def alias_norms(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        names: dict[int, set[str]] = defaultdict(set)
        for seq, alias in self.reader().execute(
                f"select ce.chunk_seq, a.norm from chunk_entities ce join entity_aliases a on a.entity_id = ce.entity_id "
                f"where ce.chunk_seq in ({_marks(seqs)})", list(seqs)):
            names[seq].add(alias)
        return names

    def neighbours_in_time(self, flt: Filter, seq: int, window_s: float) -> list[int]:
        """The memories written just before and after `seq` with the same source, within `window_s`."""
        db = self.reader()
        row = db.execute("select source, created_at from chunks where seq = ?", (seq,)).fetchone()
        if not row:
            return []
        src, created = row
        where, args = self._where(flt)
        out = []
        for op, order in (("<", "desc"), (">", "asc")):
            n = db.execute(
                f"select c.seq, c.created_at from chunks c where c.seq {op} ? and {where.lstrip('+')} "
                f"and c.kind = 'memory' and c.source is ? order by c.seq {order} limit 1", (seq, *args, src)).fetchone()
            if n and abs((datetime.fromisoformat(n[1]) - datetime.fromisoformat(created)).total_seconds()) <= window_s:
                out.append(n[0])
        return out

    def hit_rows(self, seqs: Sequence[int]) -> dict[int, dict[str, Any]]:
        if not seqs:
            return {}
        return {r[0]: {"chunk_id": r[1], "content": r[2], "source": r[3], "importance": r[4],
                       "tags": json.loads(r[5]), "metadata": json.loads(r[6]), "created_at": r[7],
                       "valid_from": r[8], "valid_until": r[9], "superseded_by": r[10]}
                for r in self.reader().execute(
                    f"select c.seq, c.id, c.content, c.source, c.importance, c.tags, c.metadata, c.created_at, "
                    f"c.valid_from, c.valid_until, coalesce(c.superseded_by, "
                    f"(select n.id from chunks n where n.previous_id = c.id limit 1)) "
                    f"from chunks c where c.seq in ({_marks(seqs)})", list(seqs))}

    def similarities(self, seqs: Sequence[int], qv: np.ndarray) -> dict[int, tuple[float, str]]:
        if not seqs:
            return {}
        q = np.asarray(qv, dtype=np.float32)
        q = q / (float(np.linalg.norm(q)) or 1.0)
        out: dict[int, tuple[float, str]] = {}
        for part in _chunks_of(list(seqs)):
            for seq, blob, lang in self.reader().execute(
                    f"select f.seq, f.embedding, c.lang from chunk_vec_f32 f join chunks c on c.seq = f.seq "
                    f"where f.seq in ({_marks(part)})", list(part)):
                v = np.frombuffer(blob, dtype=np.float32)
                out[seq] = (float(v @ q) / (float(np.linalg.norm(v)) or 1.0), lang)
        return out

    def entity_names(self, seqs: Sequence[int]) -> dict[int, list[str]]:
        ents: dict[int, list[str]] = defaultdict(list)
        if not seqs:
            return ents
        for seq, name in self.reader().execute(
            f"select ce.chunk_seq, e.name from chunk_entities ce join entities e on e.id = ce.entity_id "
            f"where ce.chunk_seq in ({_marks(seqs)}) order by e.name", list(seqs)):
            ents[seq].append(name)
        return ents

    # ------------------------------------------------------------ recall log

    def log_recall(self, row: tuple[Any, ...]) -> None:
        t0 = time.perf_counter()
        with self._log_lock:
            self._log_rows.append(row)
        # A recall never waits for the writer (measured: 44 ms p50 while another thread remembers,
        # docs/BENCHMARKS.md). When the writer is busy, whoever holds it writes the row on release.
        self.drain_log()
        self.log_write_ms.append((time.perf_counter() - t0) * 1000)

    def drain_log(self) -> None:
        """Write the pending recall_log rows if the writer is free right now (never waits for it)."""
        if not self._write_lock.acquire(blocking=False):
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

    def recall_log(self, after_id: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        """recall_log rows after `after_id`, oldest first (benchmarks and the dashboard read them)."""
        cols = ("id", "namespace", "query", "created_at", "took_ms", "lanes_json", "lane_wall_ms", "hit_count",
                "skipped", "recall_details_json")
        return [dict(zip(cols, r, strict=True)) for r in self.reader().execute(
            f"select {', '.join(cols)} from recall_log where id > ? order by id limit ?", (after_id, limit))]

    def last_recall_id(self) -> int:
        return int(self.reader().execute("select coalesce(max(id), 0) from recall_log").fetchone()[0])

    # ------------------------------------------------------------ writes

    def live_duplicate(self, tx: Any, namespace: str, content_hash: str) -> str | None:
        row = tx.execute("select id from chunks where namespace = ? and content_hash = ? and valid_until is null "
                         "and kind = 'memory' limit 1", (namespace, content_hash)).fetchone()
        return row[0] if row else None

    def insert_chunk(self, tx: Any, chunk: NewChunk) -> tuple[str, int]:
        cid = new_id("m")
        tags_json = json.dumps(chunk.tags, ensure_ascii=False)
        meta_json = json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True)
        cur = tx.execute(
            "insert into chunks(id, namespace, content, content_hash, source, importance, tags, metadata, lang, "
            "kind, parent_id, created_at, valid_from, previous_id) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cid, chunk.namespace, chunk.content, chunk.content_hash, chunk.source, chunk.importance, tags_json,
             meta_json, chunk.lang, chunk.kind, chunk.parent_id, chunk.created_at, chunk.valid_from,
             chunk.previous_id))
        seq = cur.lastrowid
        derived.add_text(tx, seq, chunk.content, tags_json, chunk.source, meta_json)
        derived.enqueue(tx, seq, chunk.created_at)
        return cid, seq

    def resolve_entity(self, tx: Any, namespace: str, display: str, key: str, kind: str | None,
                       aliases: Sequence[tuple[str, str]], now: str) -> dict[str, Any]:
        row = tx.execute(
            "select e.id, e.name, e.kind from entity_aliases a join entities e on e.id = a.entity_id "
            "where a.namespace = ? and a.norm = ?", (namespace, key)).fetchone()
        if row:
            eid, ename, ekind = row
            if kind and ekind == "concept" and kind != "concept":
                tx.execute("update entities set kind = ? where id = ?", (kind, eid))
                ekind = kind
        else:
            eid, ename, ekind = new_id("e"), display, kind or "concept"
            tx.execute("insert into entities(id, namespace, name, norm, kind, created_at) values (?,?,?,?,?,?)",
                       (eid, namespace, display, key, ekind, now))
            tx.execute("insert into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?)",
                       (namespace, key, display, eid))
        for akey, alias in aliases:
            tx.execute("insert or ignore into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?)",
                       (namespace, akey, alias, eid))
        return {"id": eid, "name": ename, "kind": ekind}

    def link_entity(self, tx: Any, seq: int, entity_id: str) -> None:
        tx.execute("insert or ignore into chunk_entities(chunk_seq, entity_id) values (?, ?)", (seq, entity_id))

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

    def chunk_exists(self, tx: Any, chunk_id: str, namespace: str) -> bool:
        return tx.execute("select 1 from chunks where id = ? and namespace = ?", (chunk_id, namespace)).fetchone() \
            is not None

    def relation_closed_at(self, tx: Any, relation_id: str, namespace: str) -> tuple[bool, str | None]:
        """(exists, valid_until) of a relation."""
        row = tx.execute("select valid_until from relations where id = ? and namespace = ?",
                         (relation_id, namespace)).fetchone()
        return (row is not None, row[0] if row else None)

    def close_relation(self, tx: Any, relation_id: str, now: str, reason: str | None) -> None:
        tx.execute("update relations set valid_until = ?, forgotten_reason = ? where id = ?", (now, reason, relation_id))

    def chunk_row(self, tx: Any, chunk_id: str, namespace: str) -> dict[str, Any] | None:
        """The fields a forget or an update reads from a version."""
        row = (tx or self.reader()).execute(
            "select seq, source, importance, tags, metadata, valid_until, kind from chunks "
            "where id = ? and namespace = ?", (chunk_id, namespace)).fetchone()
        if not row:
            return None
        return {"seq": row[0], "source": row[1], "importance": row[2], "tags": json.loads(row[3]),
                "metadata": json.loads(row[4]), "valid_until": row[5], "kind": row[6]}

    def successor(self, tx: Any, chunk_id: str) -> str | None:
        row = tx.execute("select id from chunks where previous_id = ?", (chunk_id,)).fetchone()
        return row[0] if row else None

    def close_chunk(self, tx: Any, seq: int, chunk_id: str, now: str, reason: str | None) -> None:
        children = [r[0] for r in tx.execute(
            "select seq from chunks where parent_id = ? and valid_until is null", (chunk_id,))]
        for s in [seq, *children]:
            tx.execute("update chunks set valid_until = ?, forgotten_reason = ? where seq = ?", (now, reason, s))
            derived.set_live(tx, s, False)
        if reason is not None:
            tx.execute("update relations set valid_until = ?, forgotten_reason = ? "
                       "where chunk_id = ? and valid_until is null", (now, reason or "evidence forgotten", chunk_id))

    def chunk_entity_kinds(self, tx: Any, seq: int) -> list[tuple[str, str]]:
        return tx.execute("select e.name, e.kind from chunk_entities ce join entities e on e.id = ce.entity_id "
                          "where ce.chunk_seq = ?", (seq,)).fetchall()

    def chunk_entities(self, tx: Any, chunk_id: str) -> list[dict[str, Any]]:
        rows = (tx or self.reader()).execute(
            "select e.id, e.name, e.kind from chunks c join chunk_entities ce on ce.chunk_seq = c.seq "
            "join entities e on e.id = ce.entity_id where c.id = ? order by e.name", (chunk_id,)).fetchall()
        return [{"id": r[0], "name": r[1], "kind": r[2]} for r in rows]

    def embedding_state(self, tx: Any, chunk_id: str) -> str:
        row = (tx or self.reader()).execute(
            "select 1 from embed_queue q join chunks c on c.seq = q.chunk_seq where c.id = ?", (chunk_id,)).fetchone()
        return "queued" if row else "done"

    # ------------------------------------------------------------ the embedding queue and vectors

    def queued(self, limit: int) -> list[QueuedChunk]:
        return [QueuedChunk(*r) for r in self.reader().execute(
            "select q.chunk_seq, c.namespace, c.content, c.lang "
            "from embed_queue q join chunks c on c.seq = q.chunk_seq order by q.attempts, q.chunk_seq limit ?",
            (limit,))]

    def pending(self, namespace: str | None = None) -> int:
        if namespace is None:
            return int(self.reader().execute("select count(*) from embed_queue").fetchone()[0])
        return int(self.reader().execute("select count(*) from embed_queue q join chunks c on c.seq = q.chunk_seq "
                                         "where c.namespace = ?", (namespace,)).fetchone()[0])

    def embed_failed(self, seqs: Sequence[int], error: str) -> None:
        with self.atomic() as db:
            db.executemany("update embed_queue set attempts = attempts + 1, last_error = ? where chunk_seq = ?",
                           [(error[:500], s) for s in seqs])

    def write_vectors(self, tx: Any, items: Sequence[tuple[QueuedChunk, np.ndarray]], center: np.ndarray) -> list[int]:
        written = []
        for item, vec in items:
            # Liveness is read again here: a forget or update may have closed the chunk while it was
            # being embedded, and a stale live=1 would let the vector lane return a closed chunk.
            still = tx.execute("select c.valid_until is null from embed_queue q join chunks c on c.seq = "
                               "q.chunk_seq where q.chunk_seq = ?", (item.seq,)).fetchone()
            if not still:
                continue
            derived.write_vector(tx, item.seq, item.namespace, bool(still[0]), item.lang,
                                 np.asarray(vec, dtype=np.float32).tobytes(), center)
            derived.dequeue(tx, item.seq)
            written.append(item.seq)
        return written

    # ------------------------------------------------------------ supersession (inside the vector batch)

    def memory_vector(self, tx: Any, seq: int) -> tuple[str, str, str, str, bytes] | None:
        """(id, namespace, content, valid_from, vector) of a live memory that has its vector."""
        return tx.execute("select c.id, c.namespace, c.content, c.valid_from, v.embedding from chunks c "
                          "join chunk_vec v on v.rowid = c.seq where c.seq = ? and c.kind = 'memory' "
                          "and c.valid_until is null", (seq,)).fetchone()

    def nearest_live(self, tx: Any, vec: bytes, namespace: str, lang: str, k: int) -> list[tuple[int, float]]:
        return tx.execute("select rowid, distance from chunk_vec where embedding match ? and k = ? and namespace = ? "
                          "and live = 1 and lang = ?", (vec, k, namespace, lang)).fetchall()

    def older_current(self, tx: Any, seq: int, before: str) -> tuple[str, str] | None:
        """(id, content) of a live, not yet superseded memory that started before `before`."""
        return tx.execute("select id, content from chunks where seq = ? and kind = 'memory' and valid_until is null "
                          "and superseded_by is null and valid_from < ?", (seq, before)).fetchone()

    def mark_superseded(self, tx: Any, old_id: str, new_id_: str) -> None:
        tx.execute("update chunks set superseded_by = ? where id = ? and superseded_by is null", (new_id_, old_id))

    # ------------------------------------------------------------ history, graph, stats

    def version_chain(self, namespace: str, chunk_id: str) -> list[dict[str, Any]] | None:
        db = self.reader()
        if not db.execute("select 1 from chunks where id = ? and namespace = ?", (chunk_id, namespace)).fetchone():
            return None
        # Walk back to the first version, then forward along previous_id links.
        first = db.execute(
            "with recursive back(id, prev, n) as ("
            " select id, previous_id, 0 from chunks where id = ?"
            " union all select c.id, c.previous_id, back.n + 1 from chunks c join back on c.id = back.prev"
            " where back.n < 10000)"
            " select id from back where prev is null", (chunk_id,)).fetchone()[0]
        chain = db.execute(
            "with recursive fwd(id, n) as ("
            " select ?, 0 union all select c.id, fwd.n + 1 from chunks c join fwd on c.previous_id = fwd.id"
            " where fwd.n < 10000)"
            " select c.id, c.content, c.valid_from, c.valid_until, c.forgotten_reason, c.created_at "
            " from fwd join chunks c on c.id = fwd.id order by fwd.n", (first,)).fetchall()
        return [{"chunk_id": r[0], "content": r[1], "valid_from": r[2], "valid_until": r[3],
                 "forgotten_reason": r[4], "created_at": r[5]} for r in chain]

    def find_entity(self, namespace: str, name: str, key: str) -> tuple[str, str, str] | None:
        """(id, name, kind) of the entity with this id, else the one answering to the normalized name."""
        db = self.reader()
        root = db.execute("select id, name, kind from entities where id = ? and namespace = ?",
                          (name, namespace)).fetchone()
        return root or db.execute(
            "select e.id, e.name, e.kind from entity_aliases a join entities e on e.id = a.entity_id "
            "where a.namespace = ? and a.norm = ?", (namespace, key)).fetchone()

    def neighbourhood(self, namespace: str, root: tuple[str, str, str], root_key: str, depth: int,
                      predicates: Sequence[str], limit: int, as_of: str | None) -> dict[str, Any]:
        """Breadth-first walk over relations from `root`, up to `depth` hops and `limit` nodes."""
        db = self.reader()
        if as_of:
            valid, vargs = "r.valid_from <= ? and (r.valid_until is null or r.valid_until > ?)", [as_of, as_of]
        else:
            valid, vargs = "r.valid_until is null", []
        pred_sql = f" and r.predicate in ({_marks(predicates)})" if predicates else ""
        nodes: dict[str, int] = {root[0]: 0}
        edges: dict[str, dict[str, Any]] = {}
        frontier = [root[0]]
        truncated = False
        for hop in range(1, depth + 1):
            if not frontier or truncated:
                break
            nxt = []
            for part in _chunks_of(frontier, 400):
                marks = _marks(part)
                rows = db.execute(
                    f"select r.id, r.subject_id, r.predicate, r.object_id, r.confidence, r.valid_from, r.valid_until "
                    f"from relations r where r.namespace = ? and {valid}{pred_sql} "
                    f"and (r.subject_id in ({marks}) or r.object_id in ({marks})) order by r.confidence desc, r.id "
                    f"limit ?", (namespace, *vargs, *predicates, *part, *part, limit * 4 + 1)).fetchall()
                for rid, s, p, o, conf, vf, vu in rows:
                    for other in (s, o):
                        if other not in nodes:
                            if len(nodes) >= limit:
                                truncated = True
                                continue
                            nodes[other] = hop
                            nxt.append(other)
                    if s in nodes and o in nodes and rid not in edges:
                        edges[rid] = {"relation_id": rid, "subject": s, "predicate": p, "object": o,
                                      "confidence": conf, "valid_from": vf, "valid_until": vu}
            frontier = nxt
        ids = list(nodes)
        info: dict[str, tuple[str, str]] = {}
        for part in _chunks_of(ids):
            for eid, ename, ekind in db.execute(f"select id, name, kind from entities where id in ({_marks(part)})",
                                                part):
                info[eid] = (ename, ekind)
        aliases = [r[0] for r in db.execute(
            "select alias from entity_aliases where entity_id = ? and norm != ? order by alias limit 100",
            (root[0], root_key))]
        for e in edges.values():
            e["subject"] = info.get(e["subject"], (e["subject"],))[0]
            e["object"] = info.get(e["object"], (e["object"],))[0]
        return {
            "root": {"id": root[0], "name": root[1], "kind": root[2], "aliases": aliases},
            "nodes": [{"id": eid, "name": info[eid][0], "kind": info[eid][1], "depth": nodes[eid]} for eid in ids],
            "edges": list(edges.values()),
            "truncated": truncated,
        }

    def counts(self, namespace: str | None, since: str) -> dict[str, Any]:
        """What memory_stats reports, before formatting: counts, recall latencies of the last day, size."""
        db = self.reader()
        where, args = ("where namespace = ?", [namespace]) if namespace else ("", [])
        chunks, live = db.execute(
            f"select count(*), count(*) filter (where valid_until is null) from chunks {where}", args).fetchone()
        entities = db.execute(f"select count(*) from entities {where}", args).fetchone()[0]
        relations = db.execute(
            f"select count(*) from relations {where + (' and' if where else 'where')} valid_until is null",
            args).fetchone()[0]
        if namespace:
            vectors = db.execute("select count(*) from chunk_vec where namespace = ?", (namespace,)).fetchone()[0]
        else:
            vectors = db.execute("select count(*) from chunk_vec").fetchone()[0]
        nsq = "and namespace = ?" if namespace else ""
        lat = [r[0] for r in db.execute(
            f"select took_ms from recall_log where created_at >= ? {nsq} "
            f"and skipped is null order by took_ms limit 100000", [since, *args])]
        empty = db.execute(f"select count(*) from recall_log where created_at >= ? {nsq} and hit_count = 0",
                           [since, *args]).fetchone()[0]
        page_count = db.execute("pragma page_count").fetchone()[0]
        page_size = db.execute("pragma page_size").fetchone()[0]
        return {"chunks": chunks, "live_chunks": live, "entities": entities, "relations": relations,
                "vectors": vectors, "pending_embeddings": self.pending(namespace), "namespaces": self.namespaces(1000),
                "db_bytes": page_count * page_size, "latencies": lat, "empty": empty}

    def namespaces(self, limit: int) -> list[str]:
        return [r[0] for r in self.reader().execute("select distinct namespace from chunks order by 1 limit ?",
                                                    (limit,))]

    def has_namespace(self, namespace: str) -> bool:
        return self.reader().execute("select 1 from chunks where namespace = ? limit 1", (namespace,)).fetchone() \
            is not None

    # ------------------------------------------------------------ moving a namespace

    def move_namespace(self, src: str, dst: str) -> dict[str, int]:
        """Move every row of namespace `src` to the empty namespace `dst`, in one transaction."""
        with self.atomic() as db:
            if not any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (src,)).fetchone()
                       for t in NS_TABLES):
                raise NotFound("ui.rename_missing", namespace=src)
            if any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (dst,)).fetchone() for t in NS_TABLES):
                raise Conflict("ui.rename_exists", namespace=dst)
            moved: dict[str, int] = {"vectors": 0}
            last = 0
            while True:  # bounded: each batch advances `last` past at least one chunk of `src`
                seqs = [r[0] for r in db.execute(
                    "select seq from chunks where namespace = ? and seq > ? order by seq limit 500", (src, last))]
                if not seqs:
                    break
                last = seqs[-1]
                moved["vectors"] += derived.move_vectors(db, seqs, dst)
            for t in (*NS_TABLES, "recall_log"):
                moved[t] = db.execute(f"update {t} set namespace = ? where namespace = ?", (dst, src)).rowcount
        self._ns_counts.pop(src, None)
        self._ns_counts.pop(dst, None)
        return moved
