"""Full-fidelity export and import of a memlane database as JSON Lines.

One record per line, each with a `type`:
  header    {format, version, schema_version, embedder: {model, dim}, vectors}
  namespace {name}
  entity    every column of `entities`
  alias     every column of `entity_aliases`
  chunk     every column of `chunks` but the internal `seq`, plus `entities` (linked entity ids) and,
            with vectors on, `vector` (base64 float32) — every version, forgotten ones with their reason
  relation  every column of `relations`
  end       {counts}
Columns are exported by name from the live schema, so columns added by later migrations travel too.
Values are the stored ones (tags and metadata stay the JSON text memlane stored), so a round trip
gives an identical export. Import is idempotent: rows are keyed by their ids and never overwritten.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contract.errors import InvalidArgument

FORMAT = "memlane-export"
VERSION = 1
BATCH = 500  # records per write transaction on import
MAX_LINE_BYTES = 8 * 1024 * 1024
# The not-null columns without a default, per table: a record lacking one is reported, never inserted.
REQUIRED = {
    "entities": ("id", "namespace", "name", "norm", "created_at"),
    "entity_aliases": ("namespace", "norm", "alias", "entity_id"),
    "chunks": ("id", "namespace", "content", "content_hash", "created_at", "valid_from"),
    "relations": ("id", "namespace", "subject_id", "predicate", "object_id", "created_at", "valid_from"),
}


def _columns(db: Any, table: str) -> list[str]:
    """A table's columns; a PostgreSQL handle answers itself, a SQLite connection through pragma."""
    if hasattr(db, "columns"):
        return list(db.columns(table))
    return [r[1] for r in db.execute(f"pragma table_info({table})")]  # table names are constants here


def _vector_bytes(db: Any, seq: int) -> bytes | None:
    if hasattr(db, "vector_bytes"):
        return db.vector_bytes(seq)
    got = db.execute("select embedding from chunk_vec where rowid = ?", (seq,)).fetchone()
    return bytes(got[0]) if got else None


def _q(col: str) -> str:
    return '"' + col.replace('"', '""') + '"'


def namespaces(db: Any) -> list[str]:
    rows = db.execute("select namespace from chunks union select namespace from entities "
                      "union select namespace from relations order by 1").fetchall()
    return [r[0] for r in rows]


def export_records(db: Any, *, vectors: bool = False, namespace: str | None = None) -> Iterator[dict[str, Any]]:
    """Every record of the database (or of one namespace), in a deterministic order."""
    meta = dict(db.execute("select key, value from meta").fetchall())
    yield {"type": "header", "format": FORMAT, "version": VERSION,
           "schema_version": int(meta.get("schema_version", 0)),
           "embedder": {"model": meta.get("embedder_model"), "dim": int(meta.get("embedder_dim") or 0)},
           "vectors": vectors}
    where, args = ("where namespace = ?", (namespace,)) if namespace else ("", ())
    counts = {"namespace": 0, "entity": 0, "alias": 0, "chunk": 0, "relation": 0}
    for ns in namespaces(db):
        if namespace is None or ns == namespace:
            counts["namespace"] += 1
            yield {"type": "namespace", "name": ns}

    cols = _columns(db, "entities")
    for row in db.execute(f"select {', '.join(map(_q, cols))} from entities {where} order by namespace, norm, id",
                          args):
        counts["entity"] += 1
        yield {"type": "entity", **dict(zip(cols, row, strict=False))}
    cols = _columns(db, "entity_aliases")
    for row in db.execute(f"select {', '.join(map(_q, cols))} from entity_aliases {where} order by namespace, norm",
                          args):
        counts["alias"] += 1
        yield {"type": "alias", **dict(zip(cols, row, strict=False))}

    cols = [c for c in _columns(db, "chunks") if c != "seq"]
    links = db.cursor()
    for seq, *row in db.execute(f"select seq, {', '.join(map(_q, cols))} from chunks {where} order by seq", args):
        rec = {"type": "chunk", **dict(zip(cols, row, strict=False))}
        rec["entities"] = [r[0] for r in links.execute(
            "select entity_id from chunk_entities where chunk_seq = ? order by entity_id", (seq,))]
        if vectors:
            got = _vector_bytes(db, seq)
            rec["vector"] = base64.b64encode(got).decode("ascii") if got else None
        counts["chunk"] += 1
        yield rec

    cols = _columns(db, "relations")
    for row in db.execute(f"select {', '.join(map(_q, cols))} from relations {where} order by created_at, id",
                          args):
        counts["relation"] += 1
        yield {"type": "relation", **dict(zip(cols, row, strict=False))}
    yield {"type": "end", "counts": counts}


def dumps(record: dict[str, Any]) -> str:
    """One line of the export: stable key order, UTF-8 text kept readable."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass
class ImportReport:
    inserted: dict[str, int] = field(default_factory=lambda: {"entity": 0, "alias": 0, "chunk": 0, "relation": 0})
    skipped: dict[str, int] = field(default_factory=lambda: {"entity": 0, "alias": 0, "chunk": 0, "relation": 0})
    queued: int = 0  # chunks queued for embedding (no vector, or vectors of another model)
    vectors: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line number, rendered error)
    changes: int = 0  # rows SQLite changed in total


class _Importer:
    """Writes records into the database through `atomic` (the Memory's single write path)."""

    def __init__(self, store: Any, dim: int, model: str) -> None:
        self.atomic = store.atomic
        self.store = store
        self.derived = store.DERIVED  # the engine's owner of derived rows (store/sqlite/derived.py, store/postgres/derived.py)
        self.dim = dim
        self.model = model
        self.header: dict[str, Any] | None = None
        self.entity_map: dict[str, str] = {}  # imported entity id -> id in this database
        self.superseded: list[tuple[str, str]] = []  # (chunk id, superseded_by), set once all chunks exist
        self.report = ImportReport()
        self.cols: dict[str, list[str]] = {}

    def table_cols(self, db: Any, table: str) -> list[str]:
        if table not in self.cols:
            self.cols[table] = _columns(db, table)
        return self.cols[table]

    def _insert(self, db: Any, table: str, rec: dict[str, Any], skip: Iterable[str] = ()) -> int:
        missing = [c for c in REQUIRED[table] if rec.get(c) is None]
        if missing:  # refused here, as a bad record, on both engines (not as a constraint error)
            raise InvalidArgument("data.bad_record", kind=f"{table}.{missing[0]} missing")
        cols = [c for c in self.table_cols(db, table) if c in rec and c not in skip]
        cur = db.execute(f"insert into {table}({', '.join(map(_q, cols))}) "
                         f"values ({', '.join('?' * len(cols))}) on conflict do nothing", [rec[c] for c in cols])
        return cur.rowcount

    def record(self, db: Any, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "header":
            if rec.get("format") != FORMAT or rec.get("version") != VERSION:
                raise InvalidArgument("data.bad_header", got=f"{rec.get('format')} v{rec.get('version')}")
            self.header = rec
            return
        if self.header is None:
            raise InvalidArgument("data.bad_header", got=str(kind))
        if kind in ("namespace", "end"):
            return
        handler = {"entity": self._entity, "alias": self._alias, "chunk": self._chunk,
                   "relation": self._relation}.get(str(kind))
        if handler is None:
            raise InvalidArgument("data.bad_record", kind=str(kind)[:40])
        handler(db, rec)

    def _count(self, kind: str, inserted: bool) -> None:
        (self.report.inserted if inserted else self.report.skipped)[kind] += 1

    def _entity(self, db: Any, rec: dict[str, Any]) -> None:
        eid = rec["id"]
        if db.execute("select 1 from entities where id = ?", (eid,)).fetchone():
            self.entity_map[eid] = eid
            return self._count("entity", False)
        same = db.execute("select id from entities where namespace = ? and norm = ?",
                          (rec["namespace"], rec["norm"])).fetchone()
        if same:  # this database already knows the entity under another id: link to it
            self.entity_map[eid] = same[0]
            return self._count("entity", False)
        self._insert(db, "entities", rec)
        self.entity_map[eid] = eid
        self._count("entity", True)

    def _eid(self, db: Any, eid: str) -> str | None:
        if eid in self.entity_map:
            return self.entity_map[eid]
        return eid if db.execute("select 1 from entities where id = ?", (eid,)).fetchone() else None

    def _alias(self, db: Any, rec: dict[str, Any]) -> None:
        target = self._eid(db, rec["entity_id"])
        if target is None:
            raise InvalidArgument("data.missing_ref", what="entity", id=str(rec["entity_id"])[:64])
        self._count("alias", self._insert(db, "entity_aliases", {**rec, "entity_id": target}) > 0)

    def _chunk(self, db: Any, rec: dict[str, Any]) -> None:
        if rec.get("superseded_by"):
            self.superseded.append((rec["id"], rec["superseded_by"]))
        if db.execute("select 1 from chunks where id = ?", (rec["id"],)).fetchone():
            return self._count("chunk", False)
        for ref in ("previous_id", "parent_id"):
            if rec.get(ref) and not db.execute("select 1 from chunks where id = ?", (rec[ref],)).fetchone():
                raise InvalidArgument("data.missing_ref", what="chunk", id=str(rec[ref])[:64])
        row = {k: v for k, v in rec.items() if k not in ("type", "entities", "vector", "seq")}
        row["superseded_by"] = None  # may point forward; set after every chunk is in
        self._insert(db, "chunks", row)
        seq = db.execute("select seq from chunks where id = ?", (rec["id"],)).fetchone()[0]
        self.derived.add_text(db, seq, row["content"], row.get("tags") or "[]", row.get("source"), row.get("metadata") or "{}")
        self.derived.add_dates(db, seq, row["content"], row["valid_from"])  # derived: re-made, never imported
        if row.get("thread") is not None:
            self.derived.enqueue_context(db, [seq], row["created_at"])  # context vectors too
        for eid in rec.get("entities") or []:
            target = self._eid(db, eid)
            if target is None:
                raise InvalidArgument("data.missing_ref", what="entity", id=str(eid)[:64])
            db.execute("insert into chunk_entities(chunk_seq, entity_id) values (?, ?) on conflict do nothing",
                       (seq, target))
        vec = self._vector(rec.get("vector"))
        if vec is not None:
            self.store.put_vector(db, seq, row["namespace"], row.get("valid_until") is None, row.get("lang") or "en",
                                  vec)
            self.report.vectors += 1
        else:
            self.derived.enqueue(db, seq, row["created_at"])
            self.report.queued += 1
        self._count("chunk", True)

    def _vector(self, b64: Any) -> bytes | None:
        """The stored vector when it was made by this database's model and dimension, else None (re-embed)."""
        if not b64 or not self.header:
            return None
        emb = self.header.get("embedder") or {}
        if emb.get("model") != self.model or emb.get("dim") != self.dim:
            return None
        raw = base64.b64decode(b64, validate=True)
        if len(raw) != 4 * self.dim or not np.all(np.isfinite(np.frombuffer(raw, dtype=np.float32))):
            return None
        return raw

    def _relation(self, db: Any, rec: dict[str, Any]) -> None:
        s, o = self._eid(db, rec["subject_id"]), self._eid(db, rec["object_id"])
        if s is None or o is None:
            raise InvalidArgument("data.missing_ref", what="entity", id=str(rec["subject_id"] if s is None
                                                                          else rec["object_id"])[:64])
        if rec.get("chunk_id") and not db.execute("select 1 from chunks where id = ?", (rec["chunk_id"],)).fetchone():
            raise InvalidArgument("data.missing_ref", what="chunk", id=str(rec["chunk_id"])[:64])
        row = {k: v for k, v in rec.items() if k != "type"}
        self._count("relation", self._insert(db, "relations", {**row, "subject_id": s, "object_id": o}) > 0)

    def finish(self, db: Any) -> None:
        for cid, newer in self.superseded:
            if db.execute("select 1 from chunks where id = ?", (newer,)).fetchone():
                db.execute("update chunks set superseded_by = ? where id = ? and superseded_by is null", (newer, cid))


def parse_lines(lines: Iterable[bytes | str]) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record or None, error message id or None) for each non-empty line."""
    for n, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            if len(line) > MAX_LINE_BYTES:
                yield n, None, "data.line_too_long"
                continue
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                yield n, None, "data.bad_json"
                continue
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            yield n, None, "data.bad_json"
            continue
        if not isinstance(rec, dict):
            yield n, None, "data.bad_json"
            continue
        yield n, rec, None


def import_records(mem: Any, lines: Iterable[bytes | str], *, progress: Callable[[int], None] | None = None,
                   lang: str | None = None) -> ImportReport:
    """Import an export into `mem` (a Memory), in batches of BATCH records per transaction.

    A record that fails is reported with its line number and skipped; its batch is retried without it,
    so that one bad line never loses its neighbours.
    """
    store = mem.store
    imp = _Importer(store, mem.embedder.dim, mem.embedder.model)
    before = _total_changes(store)
    batch: list[tuple[int, dict[str, Any]]] = []

    def flush_batch() -> None:
        if not batch:
            return
        try:
            with store.atomic() as db:
                for _, rec in batch:
                    imp.record(db, rec)
        except (InvalidArgument, KeyError, TypeError, ValueError):
            # Replay one record per transaction to find the bad ones and keep the good ones.
            for n, rec in batch:
                try:
                    with store.atomic() as db:
                        imp.record(db, rec)
                except InvalidArgument as exc:
                    imp.report.errors.append((n, exc.render(lang)))
                except (KeyError, TypeError, ValueError) as exc:
                    imp.report.errors.append((n, InvalidArgument("data.bad_record", kind=repr(exc)[:60]).render(lang)))
        batch.clear()

    for n, rec, err in parse_lines(lines):
        if progress:
            progress(n)
        if err:
            imp.report.errors.append((n, InvalidArgument(err, line=n).render(lang)))
            continue
        assert rec is not None
        if rec.get("type") == "header":
            flush_batch()
            try:
                imp.record(None, rec)
            except InvalidArgument as exc:
                imp.report.errors.append((n, exc.render(lang)))
                break  # not a memlane export: stop before writing anything from it
            continue
        batch.append((n, rec))
        if len(batch) >= BATCH:
            flush_batch()
    flush_batch()
    with store.atomic() as db:
        imp.finish(db)
    imp.report.changes = _total_changes(store) - before
    return imp.report


def _total_changes(store: Any) -> int:
    """Rows changed so far: SQLite's counter on its writer; on PostgreSQL the rows of memlane's tables."""
    if hasattr(store, "rows_changed"):
        return int(store.rows_changed())
    with store.connection() as db:
        return int(db.execute("select (select count(*) from chunks) + (select count(*) from entities) + "
                              "(select count(*) from entity_aliases) + (select count(*) from relations) + "
                              "(select count(*) from chunk_entities)").fetchone()[0])
