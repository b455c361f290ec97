"""The store methods whose SQL both engines run as written (store/protocol.py; qmark placeholders).

A mixin of SqliteStore and PgStore. Each engine provides `reader()` (a connection, or on PostgreSQL a
handle that borrows one per statement), `atomic()`,
`TAG_SQL` (one tag filter), `DERIVED` (the module that owns its derived rows), `NO_INDEX` (SQLite's `+` that keeps a column from
driving a plan; empty on PostgreSQL), `ROW_LOCK` (what a read-modify-write appends to its select) and
`db_bytes()`, `_move_vectors(db, src, dst)`, and `VECTORS` (the table holding each chunk's vector as
`seq, embedding`).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from contract.errors import Conflict, NotFound
from store.protocol import Filter, NewChunk, ThreadView
from store.sqlite.derived import CONTEXT_THREADS, window_vectors
from store.util import content_hash, escape_like, new_id, predicate_key

LIVE_COUNT_EXACT_BELOW = 20_000  # larger namespaces reuse a live-chunk count for up to 30 s
NS_TABLES = ("chunks", "entities", "entity_aliases", "relations")


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def _chunks_of(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _as_array(vec: Any) -> np.ndarray:
    """A stored vector (SQLite's float32 blob, pgvector's Vector) as a float32 array."""
    if isinstance(vec, (bytes, bytearray, memoryview)):
        return np.frombuffer(vec, dtype=np.float32)
    return np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32)


def normalise_keys(db: Any) -> None:
    """Recompute every content hash and predicate spelling (store/util.py) inside a migration (issue 14).

    Runs on either engine's migration connection (qmark SQL). Two live edges that now have one spelling
    are merged: the first keeps the higher confidence, the other is closed, as one live edge per
    (subject, predicate, object) is what upsert_relation keeps (PostgreSQL enforces it with an index).
    """
    for seq, content in db.execute("select seq, content from chunks").fetchall():
        db.execute("update chunks set content_hash = ? where seq = ?", (content_hash(content), seq))
    live: dict[tuple[str, str, str, str], tuple[str, float]] = {}
    closed: list[tuple[str, str]] = []
    renamed: list[tuple[str, str]] = []
    merged: set[tuple[str, str, str, str]] = set()
    rows = db.execute("select id, namespace, subject_id, predicate, object_id, confidence, valid_until, created_at "
                      "from relations order by created_at, id").fetchall()
    for rid, ns, subj, pred, obj, conf, until, created in rows:
        key = predicate_key(pred)
        edge = (ns, subj, key, obj)
        if until is None and edge in live:
            closed.append((created, rid))
            live[edge] = (live[edge][0], max(live[edge][1], conf))
            merged.add(edge)
            continue
        if until is None:
            live[edge] = (rid, conf)
        if key != pred:
            renamed.append((key, rid))
    # Close before renaming: a renamed edge must never meet a second live one, even for a moment.
    for when, rid in closed:
        db.execute("update relations set valid_until = ?, forgotten_reason = 'merged: one predicate spelling' "
                   "where id = ?", (when, rid))
    for rid, conf in (live[e] for e in merged):
        db.execute("update relations set confidence = ? where id = ? and confidence < ?", (conf, rid, conf))
    for key, rid in renamed:
        db.execute("update relations set predicate = ? where id = ?", (key, rid))


class SharedSql:
    """Reads and writes written once for both engines."""

    DERIVED: Any
    VECTORS: str
    NO_INDEX = ""
    ROW_LOCK = ""
    TAG_SQL: str
    _ns_counts: dict[str, tuple[Any, ...]]  # namespace -> (time, live count, ...engine's own fields)

    def reader(self) -> Any:
        raise NotImplementedError

    def atomic(self) -> Any:
        raise NotImplementedError

    def _where(self, flt: Filter) -> tuple[str, list[Any]]:
        """SQL over chunks `c` for a Filter (the engine supplies NO_INDEX and TAG_SQL)."""
        if flt.as_of:
            sql, args = "c.valid_from <= ? and (c.valid_until is null or c.valid_until > ?)", [flt.as_of, flt.as_of]
        elif flt.include_history:
            sql, args = "true", []
        else:
            sql, args = "c.valid_until is null", []
        if flt.source:
            sql += " and c.source = ?"
            args.append(flt.source)
        for tag in flt.tags:
            sql += f" and {self.TAG_SQL}"
            args.append(tag)
        if flt.since:
            sql += " and c.created_at >= ?"
            args.append(flt.since)
        if flt.until:
            sql += " and c.created_at <= ?"
            args.append(flt.until)
        return f"{self.NO_INDEX}c.namespace = ? and {sql}", [flt.namespace, *args]

    def db_bytes(self) -> int:
        raise NotImplementedError

    def pending_context(self, namespace: str | None = None) -> int:
        """Context windows still to embed (each engine counts its own queue)."""
        raise NotImplementedError

    def index_building(self, namespace: str | None = None) -> int:
        """Approximate-index builds and compactions running now (each engine says)."""
        raise NotImplementedError

    def _move_vectors(self, db: Any, src: str, dst: str) -> int:
        raise NotImplementedError

    def _serialize(self, tx: Any, key: str) -> None:
        """Make writers of `key` take turns until commit (SQLite has one writer: nothing to do)."""

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
            f"where {self.NO_INDEX}r.namespace = ? and {valid} and (r.subject_id in ({marks}) or r.object_id in ({marks})) "
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
        # Only facts have a parent: without any (facts are off by default) one index probe answers, where
        # the join looked up every fused candidate (0.2-0.35 ms a recall at 10k).
        if not ids or db.execute("select 1 from chunks where parent_id is not null limit 1").fetchone() is None:
            return out
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

    def rank_rows(self, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None, str, str | None]]:
        if not seqs:  # `in ()` is an error on PostgreSQL
            return {}
        asserted = _marks(CONTEXT_THREADS)
        return {r[0]: r[1:] for r in self.reader().execute(
            f"select seq, content, valid_from, superseded_by, id, "
            f"case when thread_by in ({asserted}) then thread end from chunks where seq in ({_marks(seqs)})",
            (*CONTEXT_THREADS, *seqs))}

    def _entity_rows(self, column: str, join: str, seqs: Sequence[int], ordered: bool = False) -> list[tuple[int, str]]:
        """(chunk_seq, `column`) of every entity linked to `seqs`; `join` brings in the table it comes from."""
        if not seqs:  # `in ()` is an error on PostgreSQL
            return []
        order = f" order by {column}" if ordered else ""
        return self.reader().execute(
            f"select ce.chunk_seq, {column} from chunk_entities ce join {join} "
            f"where ce.chunk_seq in ({_marks(seqs)}){order}", list(seqs)).fetchall()

    def alias_norms(self, seqs: Sequence[int]) -> dict[int, set[str]]:
        names: dict[int, set[str]] = defaultdict(set)
        for seq, norm in self._entity_rows("a.norm", "entity_aliases a on a.entity_id = ce.entity_id", seqs):
            names[seq].add(norm)
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
                f"and c.kind = 'memory' and c.source is not distinct from ? order by c.seq {order} limit 1", (seq, *args, src)).fetchone()
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

    def similarities(self, seqs: Sequence[int], qv: np.ndarray) -> dict[int, tuple[np.ndarray, str]]:
        if not seqs:
            return {}
        q = np.atleast_2d(np.asarray(qv, dtype=np.float32))
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        db = self.reader()
        rows: list[tuple[Any, ...]] = []
        for part in _chunks_of(list(seqs)):
            rows += db.execute(
                f"select v.seq, v.embedding, c.lang from {self.VECTORS} v join chunks c on c.seq = v.seq "
                f"where v.seq in ({_marks(part)})", list(part)).fetchall()
        if not rows:
            return {}
        # One product for every candidate (a numpy call per memory cost about 0.3 ms a recall).
        mat = np.stack([_as_array(r[1]) for r in rows])
        norms = np.linalg.norm(mat, axis=1)
        sims = (q @ mat.T) / np.where(norms == 0.0, 1.0, norms)
        return {int(r[0]): (sims[:, i], r[2]) for i, r in enumerate(rows)}

    def _window_vectors(self, db: Any, seq: int) -> list[tuple[int, np.ndarray | None]]:
        """context_queued_vectors' members of one window: (thread distance, own vector or None)."""
        return [(d, None if v is None else _as_array(v)) for d, v in window_vectors(db, seq, self.VECTORS)]

    def entity_names(self, seqs: Sequence[int]) -> dict[int, list[str]]:
        ents: dict[int, list[str]] = defaultdict(list)
        for seq, name in self._entity_rows("e.name", "entities e on e.id = ce.entity_id", seqs, ordered=True):
            ents[seq].append(name)
        return ents

    def recall_log(self, after_id: int = 0, limit: int = 1000) -> list[dict[str, Any]]:
        """recall_log rows after `after_id`, oldest first (benchmarks and the dashboard read them)."""
        cols = ("id", "namespace", "query", "created_at", "took_ms", "lanes_json", "lane_wall_ms", "hit_count",
                "skipped", "recall_details_json")
        return [dict(zip(cols, r, strict=True)) for r in self.reader().execute(
            f"select {', '.join(cols)} from recall_log where id > ? order by id limit ?", (after_id, limit))]

    def last_recall_id(self) -> int:
        return int(self.reader().execute("select coalesce(max(id), 0) from recall_log").fetchone()[0])

    def live_duplicate(self, tx: Any, namespace: str, content_hash: str) -> str | None:
        # Two daemons storing the same text at once: the second waits here, then sees the first's row.
        self._serialize(tx, f"chunk:{namespace}:{content_hash}")
        row = tx.execute("select id from chunks where namespace = ? and content_hash = ? and valid_until is null "
                         "and kind = 'memory' limit 1", (namespace, content_hash)).fetchone()
        return row[0] if row else None

    def insert_chunk(self, tx: Any, chunk: NewChunk) -> tuple[str, int]:
        cid = new_id("m")
        tags_json = json.dumps(chunk.tags, ensure_ascii=False)
        meta_json = json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True)
        (seq,) = tx.execute(
            "insert into chunks(id, namespace, content, content_hash, source, importance, tags, metadata, lang, "
            "kind, parent_id, created_at, valid_from, previous_id, thread, thread_pos, thread_by) "
            "values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) returning seq",
            (cid, chunk.namespace, chunk.content, chunk.content_hash, chunk.source, chunk.importance, tags_json,
             meta_json, chunk.lang, chunk.kind, chunk.parent_id, chunk.created_at, chunk.valid_from,
             chunk.previous_id, chunk.thread, chunk.thread_pos, chunk.thread_by)).fetchone()
        if chunk.thread is not None and chunk.thread_pos is None:
            tx.execute("update chunks set thread_pos = seq where seq = ?", (seq,))
        self.DERIVED.add_text(tx, seq, chunk.content, tags_json, chunk.source, meta_json)
        self.DERIVED.add_dates(tx, seq, chunk.content, chunk.valid_from)
        self.DERIVED.enqueue(tx, seq, chunk.created_at)
        if chunk.thread is not None:
            self.DERIVED.enqueue_context(tx, [seq], chunk.created_at)  # its window and its neighbours'
        return cid, int(seq)

    def resolve_entity(self, tx: Any, namespace: str, display: str, key: str, kind: str | None,
                       aliases: Sequence[tuple[str, str]], now: str) -> dict[str, Any]:
        # Entity writes in one namespace take turns (held to commit): two daemons never create the same
        # entity twice, and alias rows written in different orders cannot deadlock.
        self._serialize(tx, f"entities:{namespace}")
        row = tx.execute(
            "select e.id, e.name, e.kind from entity_aliases a join entities e on e.id = a.entity_id "
            "where a.namespace = ? and a.norm = ?", (namespace, key)).fetchone()
        if row:
            eid, ename, ekind = row
            if kind and ekind == "concept" and kind != "concept":
                tx.execute("update entities set kind = ? where id = ? and kind = 'concept'", (kind, eid))
                ekind = kind
        else:
            eid, ename, ekind = new_id("e"), display, kind or "concept"
            got = tx.execute("insert into entities(id, namespace, name, norm, kind, created_at) values (?,?,?,?,?,?) "
                             "on conflict (namespace, norm) do nothing returning id",
                             (eid, namespace, display, key, ekind, now)).fetchone()
            if got is None:  # an entity with this norm but no alias row (imported data): use it
                eid, ename, ekind = tx.execute("select id, name, kind from entities where namespace = ? and norm = ?",
                                               (namespace, key)).fetchone()
            tx.execute("insert into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?) "
                       "on conflict do nothing", (namespace, key, display, eid))
        for akey, alias in aliases:
            tx.execute("insert into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?) "
                       "on conflict do nothing", (namespace, akey, alias, eid))
        return {"id": eid, "name": ename, "kind": ekind}

    def link_entity(self, tx: Any, seq: int, entity_id: str) -> None:
        tx.execute("insert into chunk_entities(chunk_seq, entity_id) values (?, ?) on conflict do nothing",
                   (seq, entity_id))

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
            "select seq, source, importance, tags, metadata, valid_until, kind, thread, thread_pos, thread_by, "
            f"superseded_by from chunks where id = ? and namespace = ?{self.ROW_LOCK if tx else ''}",
            (chunk_id, namespace)).fetchone()
        if not row:
            return None
        return {"seq": row[0], "source": row[1], "importance": row[2], "tags": json.loads(row[3]),
                "metadata": json.loads(row[4]), "valid_until": row[5], "kind": row[6], "thread": row[7],
                "thread_pos": row[8], "thread_by": row[9], "superseded_by": row[10]}

    def successor(self, tx: Any, chunk_id: str) -> str | None:
        row = tx.execute("select id from chunks where previous_id = ?", (chunk_id,)).fetchone()
        return row[0] if row else None

    def close_chunk(self, tx: Any, seq: int, chunk_id: str, now: str, reason: str | None) -> None:
        children = [r[0] for r in tx.execute(
            "select seq from chunks where parent_id = ? and valid_until is null", (chunk_id,))]
        for s in [seq, *children]:
            tx.execute("update chunks set valid_until = ?, forgotten_reason = ? where seq = ?", (now, reason, s))
            self.DERIVED.set_live(tx, s, False)
        self.DERIVED.enqueue_context(tx, [seq], now)  # its neighbours' windows close over the gap
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

    def pending(self, namespace: str | None = None) -> int:
        if namespace is None:
            return int(self.reader().execute("select count(*) from embed_queue").fetchone()[0])
        return int(self.reader().execute("select count(*) from embed_queue q join chunks c on c.seq = q.chunk_seq "
                                         "where c.namespace = ?", (namespace,)).fetchone()[0])

    def older_current(self, tx: Any, seq: int, before: str) -> tuple[str, str] | None:
        """(id, content) of a live, not yet superseded memory that started before `before`."""
        return tx.execute("select id, content from chunks where seq = ? and kind = 'memory' and valid_until is null "
                          "and superseded_by is null and valid_from < ?", (seq, before)).fetchone()

    def live_memories(self, db: Any, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None]]:
        """seq -> (id, content, superseded_by) of those of `seqs` that are live memories (not facts)."""
        if not seqs:  # `in ()` is an error on PostgreSQL
            return {}
        return {r[0]: (r[1], r[2], r[3]) for r in db.execute(
            f"select seq, id, content, superseded_by from chunks where seq in ({_marks(seqs)}) "
            "and kind = 'memory' and valid_until is null", list(seqs))}

    def mark_superseded(self, tx: Any, old_id: str, new_id_: str) -> None:
        tx.execute("update chunks set superseded_by = ? where id = ? and superseded_by is null", (new_id_, old_id))

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
            " select c0.id, 0 from chunks c0 where c0.id = ? union all select c.id, fwd.n + 1 from chunks c join fwd on c.previous_id = fwd.id"
            " where fwd.n < 10000)"
            " select c.id, c.content, c.valid_from, c.valid_until, c.forgotten_reason, c.created_at, c.superseded_by "
            " from fwd join chunks c on c.id = fwd.id order by fwd.n", (first,)).fetchall()
        out = [{"chunk_id": r[0], "content": r[1], "valid_from": r[2], "valid_until": r[3],
                "forgotten_reason": r[4], "created_at": r[5]} for r in chain]
        for version, r in zip(out, chain, strict=True):
            if r[6]:
                version["superseded_by"] = r[6]
        return out

    def superseded_by_any(self, namespace: str, chunk_ids: Sequence[str], limit: int) -> list[dict[str, Any]]:
        """The memories a newer one among `chunk_ids` superseded, the newest such version of each, oldest first.

        A predecessor that was updated while superseded has several versions linked here; only the last of
        them is listed, and at most `limit` predecessors.
        """
        db, rows = self.reader(), []
        for part in _chunks_of(list(chunk_ids)):
            rows += db.execute(
                f"select id, content, valid_from, valid_until, previous_id, seq from chunks where namespace = ? "
                f"and superseded_by in ({_marks(part)}) order by seq limit ?", (namespace, *part, 4 * limit)).fetchall()
        replaced = {r[4] for r in rows}
        out = []
        for r in sorted(rows, key=lambda r: (r[2], r[5])):
            if r[0] not in replaced:
                out.append({"chunk_id": r[0], "content": r[1], "valid_from": r[2]}
                           | ({"valid_until": r[3]} if r[3] else {}))
        return out[:limit]

    def people_without_alias(self, first_char: str, after: str, limit: int) -> list[tuple[str, str, str]]:
        rows = self.reader().execute(
            "select e.id, e.namespace, e.name from entities e where e.kind = 'person' and e.id > ? and not exists "
            "(select 1 from entity_aliases a where a.entity_id = e.id and substr(a.norm, 1, 1) = ?) "
            "order by e.id limit ?", (after, first_char, limit)).fetchall()
        return [(str(i), str(ns), str(name)) for i, ns, name in rows]

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
        return {"chunks": chunks, "live_chunks": live, "entities": entities, "relations": relations,
                "vectors": vectors, "pending_embeddings": self.pending(namespace),
                "pending_context": self.pending_context(namespace), "index_building": self.index_building(namespace),
                # With a namespace, only it (when it holds memories): namespaces never see each other.
                "namespaces": ([namespace] if chunks else []) if namespace else self.namespaces(1000),
                "db_bytes": self.db_bytes(), "latencies": lat, "empty": empty}

    def namespaces(self, limit: int) -> list[str]:
        return [r[0] for r in self.reader().execute("select distinct namespace from chunks order by 1 limit ?",
                                                    (limit,))]

    def has_namespace(self, namespace: str) -> bool:
        return self.reader().execute("select 1 from chunks where namespace = ? limit 1", (namespace,)).fetchone() \
            is not None

    def move_namespace(self, src: str, dst: str) -> dict[str, int]:
        """Move every row of namespace `src` to the empty namespace `dst`, in one transaction."""
        with self.atomic() as db:
            if not any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (src,)).fetchone()
                       for t in NS_TABLES):
                raise NotFound("ui.rename_missing", namespace=src)
            if any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (dst,)).fetchone() for t in NS_TABLES):
                raise Conflict("ui.rename_exists", namespace=dst)
            moved: dict[str, int] = {"vectors": self._move_vectors(db, src, dst)}
            for t in (*NS_TABLES, "recall_log"):
                moved[t] = db.execute(f"update {t} set namespace = ? where namespace = ?", (dst, src)).rowcount
        self._ns_counts.pop(src, None)
        self._ns_counts.pop(dst, None)
        return moved

    # ------------------------------------------------------------ purge (issue 29)

    def purge(self, namespace: str, chunk_id: str, now: str) -> dict[str, Any] | None:
        """Delete the memory `chunk_id` for good, in one transaction: every version of its chain and the facts
        derived from them, their derived rows (DERIVED.purge_rows), entity links, the relations they are
        evidence for, co_occurs edges and entities only they supported, and the recall_log rows that name or
        quote them. Neighbours' context vectors, which embed its text, are dropped and re-queued.
        Returns {purged: [chunk ids], relations, entities, recall_log}, or None when the id is not there."""
        with self.atomic() as db:
            chain = self._purge_chain(db, namespace, chunk_id)
            if not chain:
                return None
            seqs, ids = [s for s, _ in chain], [c for _, c in chain]
            texts = {r[0] for part in _chunks_of(seqs) for r in db.execute(
                f"select content from chunks where seq in ({_marks(part)})", list(part))}
            gone = set(seqs)
            neighbours = [s for s in self.DERIVED.context_affected(db, seqs) if s not in gone]
            for s in neighbours:  # their context vectors embed the purged text
                self.DERIVED.drop_context(db, s)
            self.DERIVED.purge_rows(db, seqs)
            relations, entities = self._purge_links(db, seqs, ids)
            logged = self._purge_log(db, namespace, ids, texts)
            for part in _chunks_of(ids):
                marks = _marks(part)
                db.execute(f"update chunks set superseded_by = null where superseded_by in ({marks})", list(part))
                db.execute(f"update chunks set previous_id = null, parent_id = null where id in ({marks})", list(part))
            for part in _chunks_of(seqs):
                db.execute(f"delete from chunks where seq in ({_marks(part)})", list(part))
            self.DERIVED.requeue_context(db, neighbours, now)
            self.DERIVED.purge_done(db)
        self._ns_counts.pop(namespace, None)
        return {"purged": ids, "relations": relations, "entities": entities, "recall_log": logged}

    def _purge_chain(self, db: Any, namespace: str, chunk_id: str) -> list[tuple[int, str]]:
        """(seq, id) of every version of `chunk_id`'s chain (back to the first, then every successor) and of
        the facts derived from them, locked for the purge; [] when the id is not in the namespace."""
        if not db.execute(f"select seq from chunks where id = ? and namespace = ?{self.ROW_LOCK}",
                          (chunk_id, namespace)).fetchone():
            return []
        versions = db.execute(
            "with recursive back(id, prev, n) as ("
            " select id, previous_id, 0 from chunks where id = ?"
            " union all select c.id, c.previous_id, back.n + 1 from chunks c join back on c.id = back.prev"
            " where back.n < 10000),"
            " fwd(id, n) as (select id, 0 from back where prev is null"
            " union all select c.id, fwd.n + 1 from chunks c join fwd on c.previous_id = fwd.id where fwd.n < 10000)"
            " select distinct c.seq, c.id from fwd join chunks c on c.id = fwd.id where c.namespace = ?",
            (chunk_id, namespace)).fetchall()
        ids = [r[1] for r in versions]
        facts = [r for part in _chunks_of(ids) for r in db.execute(
            f"select seq, id from chunks where parent_id in ({_marks(part)})", list(part)).fetchall()]
        chain = sorted({(int(s), c) for s, c in [*versions, *facts]})
        if self.ROW_LOCK:  # other daemons' updates of these rows wait, then find them gone
            for part in _chunks_of([s for s, _ in chain]):
                db.execute(f"select seq from chunks where seq in ({_marks(part)}){self.ROW_LOCK}", list(part))
        return chain

    def _purge_links(self, db: Any, seqs: list[int], ids: list[str]) -> tuple[int, int]:
        """Remove the chunks' entity links, the relations they are evidence for, the co_occurs edges no other
        chunk supports, and the entities of those links and relations that nothing else links or relates;
        returns (relations, entities) removed."""
        ents: set[str] = set()
        for part in _chunks_of(seqs):
            marks = _marks(part)
            ents.update(r[0] for r in db.execute(f"select entity_id from chunk_entities where chunk_seq in ({marks})",
                                                 list(part)))
            db.execute(f"delete from chunk_entities where chunk_seq in ({marks})", list(part))
        relations = 0
        for part in _chunks_of(ids):
            marks = _marks(part)
            for subj, obj in db.execute(f"select subject_id, object_id from relations where chunk_id in ({marks})",
                                        list(part)).fetchall():
                ents.update((subj, obj))
            relations += db.execute(f"delete from relations where chunk_id in ({marks})", list(part)).rowcount
        linked = sorted(ents)
        entities = 0
        for part in _chunks_of(linked, 250):
            marks = _marks(part)
            relations += db.execute(
                f"delete from relations where predicate = 'co_occurs' and chunk_id is null and subject_id in ({marks}) "
                "and not exists (select 1 from chunk_entities a join chunk_entities b on b.chunk_seq = a.chunk_seq "
                "where a.entity_id = relations.subject_id and b.entity_id = relations.object_id)", list(part)).rowcount
            orphans = [r[0] for r in db.execute(
                f"select e.id from entities e where e.id in ({marks}) "
                "and not exists (select 1 from chunk_entities ce where ce.entity_id = e.id) "
                "and not exists (select 1 from relations r where r.subject_id = e.id or r.object_id = e.id)",
                list(part))]
            if orphans:
                db.execute(f"delete from entity_aliases where entity_id in ({_marks(orphans)})", orphans)
                entities += db.execute(f"delete from entities where id in ({_marks(orphans)})", orphans).rowcount
        return relations, entities

    def _purge_log(self, db: Any, namespace: str, ids: list[str], texts: set[str]) -> int:
        """Delete the namespace's recall_log rows whose hits name one of `ids` or whose query quotes one of
        `texts` (a logged query is at most 2,000 characters, so longer texts cannot be in one)."""
        pats = [f"%{escape_like(i)}%" for i in ids]
        quoted = [f"%{escape_like(t)}%" for t in texts if len(t) <= 2000]
        n = 0
        for col, part in [*(("recall_details_json", p) for p in _chunks_of(pats, 100)),
                          *(("query", p) for p in _chunks_of(quoted, 100))]:
            any_sql = " or ".join(f"{col} like ? escape '\\'" for _ in part)
            n += db.execute(f"delete from recall_log where namespace = ? and ({any_sql})", (namespace, *part)).rowcount
        return n

    # ------------------------------------------------------------ threads

    def last_memory(self, tx: Any, namespace: str) -> dict[str, Any] | None:
        row = tx.execute("select thread, thread_by, source, metadata, valid_from, created_at from chunks "
                         "where namespace = ? and kind = 'memory' order by seq desc limit 1", (namespace,)).fetchone()
        if not row:
            return None
        return {"thread": row[0], "thread_by": row[1], "source": row[2], "metadata": json.loads(row[3]),
                "valid_from": row[4], "created_at": row[5]}

    def thread_neighbours(self, flt: Filter, seqs: Sequence[int], span: int,
                          asserted: bool = False) -> dict[int, tuple[list[int], list[int]]]:
        db = self.reader()
        out: dict[int, tuple[list[int], list[int]]] = {}
        if asserted and seqs:
            ok = {r[0] for r in db.execute(f"select seq from chunks where seq in ({_marks(seqs)}) and thread_by in "
                                           f"({_marks(CONTEXT_THREADS)})", (*seqs, *CONTEXT_THREADS))}
            seqs = [s for s in seqs if s in ok]
        for seq in seqs:
            before, after = self.DERIVED.thread_window(db, seq, span, span)
            if before or after:
                if flt.narrowed:
                    ok = self._filter_seqs(db, flt, [*before, *after])
                    before, after = [s for s in before if s in ok], [s for s in after if s in ok]
                out[seq] = (before, after)
        return out

    def thread_view(self, namespace: str, chunk_id: str, span: int) -> ThreadView | None:
        db = self.reader()
        row = db.execute("select seq, thread from chunks where id = ? and namespace = ?", (chunk_id, namespace)).fetchone()
        if not row or row[1] is None:
            return None
        before, after = self.DERIVED.thread_window(db, row[0], span, span)
        both = [*before, *after]
        texts = {r[0]: (r[1], r[2]) for r in db.execute(
            f"select seq, id, content from chunks where seq in ({_marks(both)})", both)} if both else {}
        return ThreadView(row[1], [texts[s] for s in before if s in texts], [texts[s] for s in after if s in texts])
