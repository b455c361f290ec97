"""Keeping a memlane database safe: online backup, restore, the vector consistency check and repair,
the export snapshot, the re-embedding bookkeeping and the file's schema version.

The commands (commands/backup.py, restore.py, repair_vectors.py, export_jsonl.py, reembed.py, init_db.py)
are thin adapters over these and run no SQL of their own. SQLite files go through `connect()`, so the
pragmas and sqlite-vec are the daemon's; PostgreSQL goes through store/postgres/db.py.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from contract import validate
from contract.errors import InvalidArgument, Unavailable
from server import private
from store.sqlite import derived
from store.sqlite.db import connect

BACKUP_GLOB = "{stem}-*.db"
_VEC_DIM = re.compile(r"float\[(\d+)\]")


def lock_path(db_path: Path) -> Path:
    """The lock file a running daemon holds (filelock) beside its database: `<db>.lock`."""
    return db_path.with_name(db_path.name + ".lock")


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def quick_check(path: Path) -> str:
    """SQLite's quick_check of a file: 'ok' or the first problem found."""
    conn = connect(path, readonly=True)
    try:
        rows = [r[0] for r in conn.execute("pragma quick_check").fetchall()]
        return "ok" if rows == ["ok"] else "; ".join(str(r) for r in rows[:5])
    finally:
        conn.close()


def _require_db(path: Path) -> None:
    if not path.is_file():
        raise Unavailable("data.no_db", path=str(path))


@dataclass
class BackupResult:
    path: Path
    bytes: int
    check: str
    removed: list[Path] = field(default_factory=list)


def backup(db_path: Path, dest_dir: Path, keep: int = 7) -> BackupResult:
    """Copy a live database with SQLite's online backup API, verify it, keep the newest `keep` backups.

    The copy is one consistent snapshot even while the daemon writes (WAL readers do not block the
    writer). It is written under a temporary name, switched to a single-file journal, checked with
    quick_check, and only then renamed into place; a failed check leaves no backup behind.
    """
    if keep < 1:
        raise InvalidArgument("arg.range", name="keep", low=1, high=10_000, got=keep)
    _require_db(db_path)
    private.make_dir(dest_dir)
    final = dest_dir / f"{db_path.stem}-{_stamp()}.db"
    partial = final.with_name("." + final.name + ".partial")
    try:
        with closing(connect(db_path)) as src:
            _copy(src, partial, "pragma journal_mode = delete")  # one self-contained file, no -wal beside it
    except Exception:
        partial.unlink(missing_ok=True)
        raise
    check = quick_check(partial)
    if check != "ok":
        partial.unlink(missing_ok=True)
        raise Unavailable("data.backup_bad", path=str(final), detail=check)
    private.tighten([partial])  # a backup is the whole database: never readable by others
    partial.rename(final)
    removed = rotate(dest_dir, db_path.stem, keep)
    return BackupResult(final, final.stat().st_size, check, removed)


def _copy(src: Any, dest: Path, pragma: str) -> None:
    """Copy the open database `src` into the file `dest` with SQLite's online backup, then run `pragma` there."""
    with closing(connect(dest)) as dst:
        src.backup(dst)
        dst.execute(pragma)


def rotate(dest_dir: Path, stem: str, keep: int) -> list[Path]:
    """Delete all but the newest `keep` backups of `stem` (names sort by their UTC timestamp)."""
    backups = sorted(p for p in dest_dir.glob(BACKUP_GLOB.format(stem=stem)) if p.is_file())
    old = backups[:-keep] if keep else backups
    for p in old:
        p.unlink()
    return old


def restore(backup_path: Path, db_path: Path) -> tuple[Path | None, str]:
    """Replace `db_path` with a verified backup; the caller holds the daemon's lock.

    The current database is first copied beside itself (`<db>.pre-restore-<time>`) so that a restore
    never loses data. Returns (that safety copy or None, quick_check of the restored file).
    """
    if not backup_path.is_file():
        raise Unavailable("data.no_db", path=str(backup_path))
    check = quick_check(backup_path)
    if check != "ok":
        raise Unavailable("data.backup_bad", path=str(backup_path), detail=check)
    src = connect(backup_path, readonly=True)
    try:
        has_meta = src.execute("select 1 from sqlite_master where type = 'table' and name = 'meta'").fetchone()
        if not has_meta:
            raise InvalidArgument("data.not_memlane", path=str(backup_path))
        safety = None
        if db_path.is_file():
            safety = db_path.with_name(f"{db_path.name}.pre-restore-{_stamp()}")
            with closing(connect(db_path)) as cur:
                _copy(cur, safety, "pragma journal_mode = delete")
            private.tighten([safety])
        private.make_dir(db_path.parent)
        # The approximate index files describe the database being replaced; a restored file could
        # carry the same vector generation, so they go and are rebuilt from the restored vectors.
        shutil.rmtree(Path(f"{db_path}.ann"), ignore_errors=True)
        _copy(src, db_path, "pragma wal_checkpoint(truncate)")
    finally:
        src.close()
    private.tighten(private.database_files(db_path))
    return safety, quick_check(db_path)


# ---------------------------------------------------------------- vectors


@dataclass
class VectorReport:
    """What is wrong between chunks and their vectors. Each list holds chunk seqs (rowids)."""

    model_dim: int
    table_dim: int
    chunks: int = 0
    vectors: int = 0
    queued: int = 0
    missing_live: list[int] = field(default_factory=list)  # live chunk, no vector, not queued
    missing_closed: list[int] = field(default_factory=list)  # closed version, no vector, not queued
    orphans: list[int] = field(default_factory=list)  # vector whose chunk does not exist
    wrong_dim: list[int] = field(default_factory=list)  # vector of another dimension
    wrong_meta: list[int] = field(default_factory=list)  # vector whose namespace or lang differs from its chunk
    wrong_live: list[int] = field(default_factory=list)  # live flag disagrees with the chunk's validity
    # Context vectors (a memory with its thread neighbours, issue 17), the same checks:
    ctx_table_dim: int = 0
    ctx_vectors: int = 0
    ctx_queued: int = 0
    ctx_missing: list[int] = field(default_factory=list)  # a live memory with a window, no context vector, not queued
    ctx_orphans: list[int] = field(default_factory=list)
    ctx_wrong_dim: list[int] = field(default_factory=list)
    ctx_wrong_meta: list[int] = field(default_factory=list)
    ctx_wrong_live: list[int] = field(default_factory=list)

    LISTS: ClassVar[tuple[str, ...]] = ("missing_live", "missing_closed", "orphans", "wrong_dim", "wrong_meta", "wrong_live",
             "ctx_missing", "ctx_orphans", "ctx_wrong_dim", "ctx_wrong_meta", "ctx_wrong_live")

    @property
    def table_wrong(self) -> bool:
        """A vector table declared with another dimension than the model's (a reset rebuilds both)."""
        return self.table_dim != self.model_dim or self.ctx_table_dim not in (0, self.model_dim)

    @property
    def problems(self) -> int:
        return int(self.table_wrong) + sum(len(getattr(self, k)) for k in self.LISTS)

    def as_dict(self) -> dict[str, Any]:
        return {"model_dim": self.model_dim, "table_dim": self.table_dim, "ctx_table_dim": self.ctx_table_dim,
                "chunks": self.chunks, "vectors": self.vectors, "queued": self.queued,
                "ctx_vectors": self.ctx_vectors, "ctx_queued": self.ctx_queued,
                **{k: len(getattr(self, k)) for k in self.LISTS}, "problems": self.problems}


def table_dim(db: Any, table: str = "chunk_vec") -> int:
    row = db.execute("select sql from sqlite_master where name = ?", (table,)).fetchone()
    m = _VEC_DIM.search(row[0] if row else "")
    return int(m.group(1)) if m else 0


def check_vectors(db: Any, engine: Any = derived) -> VectorReport:
    """Compare chunk_vec with chunks and the embedding queue. `engine` is the store's derived-rows
    module (`store.DERIVED`): store/sqlite/derived.py for SQLite, store/postgres/derived.py for PostgreSQL.

    The invariant (every version keeps its vector, closed ones too, for as_of recall): each chunk has
    exactly one vector or is queued; each vector belongs to a chunk, has the model's dimension, its
    chunk's namespace and lang, and `live` = the chunk is open.
    """
    pg = engine is not derived
    meta = dict(db.execute("select key, value from meta").fetchall())
    rep = VectorReport(model_dim=int(meta.get("embedder_dim") or 0),
                       table_dim=engine.table_dim(db) if pg else table_dim(db))
    rep.chunks = db.execute("select count(*) from chunks").fetchone()[0]
    rep.queued = db.execute("select count(*) from embed_queue").fetchone()[0]
    rows_sql = ("select seq, namespace, live, lang, vector_dims(embedding) from chunk_vec" if pg
                else "select rowid, namespace, live, lang, vec_length(embedding) from chunk_vec")
    vec: dict[int, tuple[str, int, str, int]] = {r[0]: (r[1], r[2], r[3], r[4]) for r in db.execute(rows_sql)}
    rep.vectors = len(vec)
    queued = {r[0] for r in db.execute("select chunk_seq from embed_queue")}
    seen: set[int] = set()
    for seq, ns, lang, live in db.execute("select seq, namespace, lang, valid_until is null from chunks"):
        seen.add(seq)
        got = vec.get(seq)
        if got is None:
            if seq not in queued:
                (rep.missing_live if live else rep.missing_closed).append(seq)
            continue
        _classify(rep, "", seq, got, (ns, lang, live))
    rep.orphans = sorted(set(vec) - seen)
    _check_context(db, rep, pg, engine)
    return rep


def _classify(rep: VectorReport, prefix: str, seq: int, vector: tuple[str, int, str, int],
              chunk: tuple[str, str, int]) -> None:
    """File one vector row (namespace, live, lang, dimension) against its chunk (namespace, lang, open)
    under the first thing wrong with it, in the report's lists named with `prefix`."""
    vns, vlive, vlang, vdim = vector
    ns, lang, live = chunk
    if vdim != rep.model_dim:
        getattr(rep, prefix + "wrong_dim").append(seq)
    elif vns != ns or vlang != lang:
        getattr(rep, prefix + "wrong_meta").append(seq)
    elif int(vlive) != int(live):
        getattr(rep, prefix + "wrong_live").append(seq)


def _check_context(db: Any, rep: VectorReport, pg: bool, engine: Any) -> None:
    """The context vectors against their chunks: each live memory of an asserted thread with another live
    memory in it has a context vector or a queued window; each context vector belongs to a chunk, has the
    model's dimension, its chunk's namespace and lang, and `live` = the chunk is open."""
    rep.ctx_table_dim = engine.table_dim(db, "chunk_ctx_vec") if pg else table_dim(db, "chunk_ctx_vec")
    rows_sql = ("select seq, namespace, live, lang, vector_dims(embedding) from chunk_ctx_vec" if pg
                else "select rowid, namespace, live, lang, vec_length(embedding) from chunk_ctx_vec")
    ctx: dict[int, tuple[str, int, str, int]] = {r[0]: (r[1], r[2], r[3], r[4]) for r in db.execute(rows_sql)}
    rep.ctx_vectors = len(ctx)
    queued = {r[0] for r in db.execute("select chunk_seq from ctx_queue")}
    rep.ctx_queued = len(queued)
    # Unqualified names in CTX_ELIGIBLE are the outer row's: the subquery names its own columns.
    windowed = {r[0] for r in db.execute(
        f"select seq from chunks where {derived.CTX_ELIGIBLE} and exists (select 1 from chunks o "
        "where o.namespace = chunks.namespace and o.thread = chunks.thread and o.seq <> chunks.seq "
        "and o.valid_until is null and o.kind = 'memory')", derived.CONTEXT_THREADS)}
    rep.ctx_missing = sorted(windowed - set(ctx) - queued)
    seen: set[int] = set()
    for seq, ns, lang, live in db.execute("select seq, namespace, lang, valid_until is null from chunks"):
        got = ctx.get(seq)
        if got is None:
            continue
        seen.add(seq)
        _classify(rep, "ctx_", seq, got, (ns, lang, live))
    rep.ctx_orphans = sorted(set(ctx) - seen)


def repair_vectors(db: Any, rep: VectorReport, now: str, engine: Any = derived) -> dict[str, int]:
    """Fix what `check_vectors` found, inside the caller's write transaction. Returns counts done.
    `engine` as in check_vectors.

    Vectors are only ever derived data: removing one and queueing its chunk loses nothing.
    """
    done = {"requeued": 0, "removed": 0, "relived": 0, "table_rebuilt": 0, "ctx_requeued": 0, "ctx_removed": 0}
    if rep.model_dim and rep.table_wrong:
        # The vector table itself has the wrong dimension: rebuild it empty and queue every chunk.
        done["requeued"] = engine.reset_vectors(db, rep.model_dim, now)
        done["table_rebuilt"] = 1
        return done
    for seq in rep.orphans + rep.wrong_dim + rep.wrong_meta:
        engine.drop_vector(db, seq)
        done["removed"] += 1
    for seq in rep.missing_live + rep.missing_closed + rep.wrong_dim + rep.wrong_meta:
        engine.enqueue(db, seq, now)
        done["requeued"] += 1
    for seq in rep.wrong_live:
        engine.relive_from_chunk(db, seq)
        done["relived"] += 1
    for seq in rep.ctx_orphans + rep.ctx_wrong_dim + rep.ctx_wrong_meta:
        engine.drop_context(db, seq)
        done["ctx_removed"] += 1
    done["ctx_requeued"] = engine.requeue_context(db, rep.ctx_missing + rep.ctx_wrong_dim + rep.ctx_wrong_meta, now)
    for seq in rep.ctx_wrong_live:
        if seq not in rep.wrong_live:
            engine.relive_from_chunk(db, seq)
            done["relived"] += 1
    return done


def check_file(db_path: Path, apply: bool) -> tuple[VectorReport, dict[str, int] | None]:
    """check_vectors on a SQLite file in one read transaction; with `apply` and problems, check again and
    repair in one BEGIN IMMEDIATE transaction, as Memory.atomic does (no embedder is loaded for this)."""
    _require_db(db_path)
    db = connect(db_path)
    try:
        db.execute("begin")
        rep = check_vectors(db)
        db.execute("commit")
    finally:
        db.close()
    done = None
    if apply and rep.problems:
        db = connect(db_path)
        try:
            db.execute("begin immediate")
            rep = check_vectors(db)  # again, inside the write transaction
            done = repair_vectors(db, rep, validate.now_iso())
            db.execute("commit")
        except BaseException:
            db.execute("rollback")
            raise
        finally:
            db.close()
    return rep, done


def check_pg(url: str, label: str, apply: bool) -> tuple[VectorReport, dict[str, int] | None]:
    """The same check and repair on PostgreSQL, each in one transaction (repeatable read for the
    check; the repair locks the vector tables and their queues against the daemons' workers)."""
    import psycopg  # the PostgreSQL driver is an optional dependency, loaded only for that engine

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres import derived as pg_derived
    from store.postgres.db import Handle, connect_once, db_error

    conn = connect_once(url)
    try:
        if conn.execute("select to_regclass('chunk_vec')").fetchone()[0] is None:
            raise Unavailable("data.no_db", path=label)
        with conn.transaction():
            conn.execute("set transaction isolation level repeatable read")
            rep = check_vectors(Handle(conn), pg_derived)
        done = None
        if apply and rep.problems:
            with conn.transaction():
                conn.execute("lock table chunk_vec, embed_queue, chunk_ctx_vec, ctx_queue in share row exclusive mode")
                rep = check_vectors(Handle(conn), pg_derived)  # again, under the lock
                done = repair_vectors(Handle(conn), rep, validate.now_iso(), pg_derived)
        return rep, done
    except psycopg.Error as exc:
        raise db_error(exc, url) from None
    finally:
        conn.close()


# ---------------------------------------------------------------- export, re-embedding, schema


@contextmanager
def file_snapshot(db_path: Path) -> Iterator[Any]:
    """One read transaction on a SQLite file: a consistent export while the daemon writes."""
    _require_db(db_path)
    db = connect(db_path)
    try:
        db.execute("begin")
        yield db
        db.execute("commit")
    finally:
        db.close()


@contextmanager
def pg_snapshot(url: str, label: str) -> Iterator[Any]:
    """One repeatable-read snapshot of an existing PostgreSQL memlane database (never creates one)."""
    from store.postgres.db import connect_once  # loads psycopg: an optional dependency, for that engine only

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres.engine import PgStore

    conn = connect_once(url)
    try:
        row = conn.execute("select value from meta where key = 'embedder_dim'").fetchone()
    except Exception:  # no meta table: not a memlane database
        row = None
    finally:
        conn.close()
    if not row:
        raise Unavailable("data.no_db", path=label)
    store = PgStore(url, int(row[0]), pool_size=2)
    try:
        with store.snapshot() as db:
            yield db
    finally:
        store.close()


def chunk_count(db: Any) -> int:
    """Every chunk version in the database (an export's progress total)."""
    return int(db.execute("select count(*) from chunks").fetchone()[0])


def stored_model(db: Any) -> tuple[str | None, int | None]:
    """The embedding model and dimension the database records: (model, dim), None where unset."""
    rows = dict(db.execute("select key, value from meta where key in ('embedder_model', 'embedder_dim')").fetchall())
    dim = rows.get("embedder_dim")
    return rows.get("embedder_model"), int(dim) if dim else None


def reset_vectors(db: Any, model: str, dim: int, engine: Any = derived) -> int:
    """Inside the caller's transaction: clear (or, for a new dimension, recreate) every vector table, queue
    every chunk for embedding, and record the new model. `engine` is the store's derived-rows module
    (`store.DERIVED`). Returns the number of chunks queued."""
    queued = engine.reset_vectors(db, dim, validate.now_iso())
    db.executemany("insert into meta(key, value) values (?, ?) on conflict (key) do update set value = excluded.value",
                   [("embedder_model", model), ("embedder_dim", str(dim))])
    return int(queued)


def queue_size(db: Any) -> int:
    """Chunks waiting for their vector, read inside the caller's transaction."""
    return int(db.execute("select count(*) from embed_queue").fetchone()[0])


def last_embed_error(db: Any) -> str | None:
    """One recorded embedding error of the queue, if any."""
    row = db.execute("select last_error from embed_queue where last_error is not null limit 1").fetchone()
    return str(row[0]) if row else None


def file_schema_version(path: Path) -> int:
    """A SQLite file's schema version (`pragma user_version`), read without migrating it."""
    conn = connect(path, readonly=True)
    try:
        return int(conn.execute("pragma user_version").fetchone()[0])
    finally:
        conn.close()
