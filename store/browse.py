"""Listings for the dashboard and tools, on either engine: pages of memories, entities and namespaces, one
memory in detail, and the activity report. A mixin of both stores (it uses `self.reader()`).

Values are the stored ones (tags, metadata and lanes stay the JSON text memlane stored); callers decode
what they show. Pages are keyset pages: each returns `items` and `next`, the key to pass for the next page
(None on the last one).
"""

from __future__ import annotations

from typing import Any

from store.util import escape_like

DETAIL_COLS = ("seq", "id", "namespace", "content", "source", "importance", "tags", "metadata", "lang", "kind",
               "parent_id", "created_at", "valid_from", "valid_until", "previous_id", "superseded_by",
               "forgotten_reason")
LOG_COLS = ("created_at", "namespace", "query", "took_ms", "hit_count", "lanes_json")
LOG_KEYS = ("created_at", "namespace", "query", "took_ms", "hits", "lanes")  # as the dashboard names them


def _in_marks(items: list[Any]) -> str:
    """Placeholders for `in (...)`; `null` when empty, so the list matches nothing."""
    return ",".join("?" * len(items)) or "null"


class Browse:
    """Read-only listings; every method reads through this thread's reader connection. The SQL is
    what both engines accept (PostgreSQL's Handle translates the placeholders)."""

    HAS_VECTOR_SQL = "select 1 from chunk_vec where rowid = ?"

    def reader(self) -> Any:  # provided by SqliteStore
        raise NotImplementedError

    def memories_page(self, namespace: str, *, before: int, limit: int, live_only: bool) -> dict[str, Any]:
        """The newest memories of a namespace below key `before`, the first 300 characters of each."""
        live = " and valid_until is null" if live_only else ""
        rows = self.reader().execute(
            "select seq, id, substr(content, 1, 300), source, tags, created_at, valid_until from chunks "
            f"where namespace = ? and kind = 'memory' and seq < ?{live} order by seq desc limit ?",
            (namespace, before, limit + 1)).fetchall()
        items = [{"chunk_id": r[1], "content": r[2], "source": r[3], "tags": r[4], "created_at": r[5],
                  "valid_until": r[6]} for r in rows[:limit]]
        return {"items": items, "next": rows[limit - 1][0] if len(rows) > limit else None}

    def memory_detail(self, namespace: str, chunk_id: str, limit: int) -> dict[str, Any] | None:
        """One chunk with its embedding state, linked entities, facts and relations (up to `limit` each)."""
        db = self.reader()
        row = db.execute(f"select {', '.join(DETAIL_COLS)} from chunks where id = ? and namespace = ?",
                         (chunk_id, namespace)).fetchone()
        if not row:
            return None
        chunk = dict(zip(DETAIL_COLS, row, strict=True))
        seq = chunk.pop("seq")
        chunk["chunk_id"] = chunk.pop("id")
        chunk["embedding"] = ("queued" if db.execute("select 1 from embed_queue where chunk_seq = ?", (seq,)).fetchone()
                              else "done" if db.execute(self.HAS_VECTOR_SQL, (seq,)).fetchone()
                              else "missing")
        entities = [{"id": r[0], "name": r[1], "kind": r[2]} for r in db.execute(
            "select e.id, e.name, e.kind from chunk_entities ce join entities e on e.id = ce.entity_id "
            "where ce.chunk_seq = ? order by e.name limit ?", (seq, limit))]
        facts = [{"chunk_id": r[0], "content": r[1], "valid_from": r[2], "valid_until": r[3]} for r in db.execute(
            "select id, content, valid_from, valid_until from chunks where parent_id = ? and kind = 'fact' "
            "order by seq limit ?", (chunk_id, limit))]
        ent_ids = [e["id"] for e in entities]
        marks = _in_marks(ent_ids)
        # The chunk's own evidence first, then live relations of its entities.
        relations = [{"relation_id": r[0], "subject": r[1], "predicate": r[2], "object": r[3], "confidence": r[4],
                      "valid_from": r[5], "valid_until": r[6], "evidence": r[7] == chunk_id} for r in db.execute(
            "select r.id, s.name, r.predicate, o.name, r.confidence, r.valid_from, r.valid_until, r.chunk_id "
            "from relations r join entities s on s.id = r.subject_id join entities o on o.id = r.object_id "
            f"where r.namespace = ? and (r.chunk_id = ? or (r.valid_until is null and "
            f"(r.subject_id in ({marks}) or r.object_id in ({marks})))) "
            "order by (r.chunk_id = ?) desc, r.confidence desc, r.id limit ?",
            (namespace, chunk_id, *ent_ids, *ent_ids, chunk_id, limit))]
        return {"memory": chunk, "entities": entities, "facts": facts, "relations": relations}

    def chunk_fields(self, chunk_id: str) -> dict[str, Any] | None:
        """The stored tags, metadata (JSON text), source and importance of one chunk version."""
        row = self.reader().execute("select tags, metadata, source, importance from chunks where id = ?",
                                    (chunk_id,)).fetchone()
        return None if row is None else dict(zip(("tags", "metadata", "source", "importance"), row, strict=True))

    def entities_page(self, namespace: str, norm_part: str, *, after: str, limit: int) -> dict[str, Any]:
        """Entities whose normalized name contains `norm_part`, by normalized name after `after`."""
        rows = self.reader().execute(
            "select e.id, e.name, e.kind, e.norm, (select count(*) from chunk_entities ce where ce.entity_id = e.id) "
            "from entities e where e.namespace = ? and e.norm like ? escape '\\' and e.norm > ? "
            "order by e.norm limit ?", (namespace, f"%{escape_like(norm_part)}%", after, limit + 1)).fetchall()
        items = [{"id": r[0], "name": r[1], "kind": r[2], "chunks": r[4]} for r in rows[:limit]]
        return {"items": items, "next": rows[limit - 1][3] if len(rows) > limit else None}

    def namespaces_page(self, *, after: str, limit: int) -> dict[str, Any]:
        """Namespaces after `after` with their chunk, live chunk, entity and live relation counts."""
        db = self.reader()
        rows = db.execute(
            "select namespace, count(*), count(*) filter (where valid_until is null) from chunks "
            "where namespace > ? group by namespace order by namespace limit ?", (after, limit + 1)).fetchall()
        page = rows[:limit]
        names = [r[0] for r in page]
        marks = _in_marks(names)
        ents = dict(db.execute(f"select namespace, count(*) from entities where namespace in ({marks}) "
                               "group by namespace", names).fetchall())
        rels = dict(db.execute(f"select namespace, count(*) from relations where namespace in ({marks}) "
                               "and valid_until is null group by namespace", names).fetchall())
        items = [{"namespace": n, "chunks": c, "live_chunks": lc, "entities": ents.get(n, 0),
                  "relations": rels.get(n, 0)} for n, c, lc in page]
        return {"items": items, "next": page[-1][0] if len(rows) > limit else None}

    def activity(self, namespace: str | None, *, since: str, bucket_width: int, scan_limit: int,
                 growth_since: str, log_since: str) -> dict[str, Any]:
        """What the health view plots: recall latencies by time bucket, growth per day, entity kinds,
        the embedding queue, and the slowest and empty recalls since `log_since` (20 of each)."""
        db = self.reader()
        nsq, nsa = (" and namespace = ?", [namespace]) if namespace else ("", [])
        buckets: dict[str, list[float]] = {}
        # bucket_width 13 cuts created_at to the hour (YYYY-MM-DDTHH), 10 to the day (YYYY-MM-DD)
        for bucket, took in db.execute(
                f"select substr(created_at, 1, ?), took_ms from recall_log where created_at >= ?{nsq} "
                "and skipped is null order by created_at limit ?", [bucket_width, since, *nsa, scan_limit]):
            buckets.setdefault(bucket, []).append(took)
        total = db.execute(f"select count(*) from chunks where created_at < ?{nsq}",
                           [growth_since, *nsa]).fetchone()[0]
        growth = []
        for day, n in db.execute(f"select substr(created_at, 1, 10) d, count(*) from chunks where created_at >= ?{nsq} "
                                 "group by d order by d limit 100", [growth_since, *nsa]):
            total += n
            growth.append({"day": day, "added": n, "total": total})
        kinds = [{"kind": k, "count": n} for k, n in db.execute(
            f"select kind, count(*) from entities where true{nsq} group by kind order by 2 desc, 1 limit 50", nsa)]
        qrow = db.execute("select count(*), min(enqueued_at), count(*) filter (where attempts > 0), "
                          "max(attempts) from embed_queue").fetchone()
        errors = [r[0] for r in db.execute("select distinct last_error from embed_queue where last_error is not null "
                                           "limit 5")]
        cols = ", ".join(LOG_COLS)
        slowest = db.execute(f"select {cols} from recall_log where created_at >= ?{nsq} and skipped is null "
                             "order by took_ms desc limit 20", [log_since, *nsa]).fetchall()
        empty = db.execute(f"select {cols} from recall_log where created_at >= ?{nsq} and hit_count = 0 "
                           "order by created_at desc limit 20", [log_since, *nsa]).fetchall()
        return {"latency": buckets, "growth": growth, "entity_kinds": kinds,
                "queue": {"pending": qrow[0], "oldest": qrow[1], "failing": qrow[2], "max_attempts": qrow[3] or 0,
                          "errors": errors},
                "slowest": [dict(zip(LOG_KEYS, r, strict=True)) for r in slowest],
                "empty": [dict(zip(LOG_KEYS, r, strict=True)) for r in empty]}
