"""SQLite connections and schema: one `connect()` that sets every pragma and loads sqlite-vec, and
the append-only migrations keyed by `PRAGMA user_version` (schema.sql is version 1)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract.errors import MemlaneError, Unavailable
from store.shared import normalise_keys

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.sql"
BUSY_TIMEOUT_MS = 10_000
CACHE_KIB = 64 * 1024


# ---------------------------------------------------------------- connections


def _driver() -> Any:
    """sqlean (SQLite with extension loading); the stdlib sqlite3 only if it can load extensions."""
    try:
        # Deferred: the SQLite build with extension loading, or a clear error that says what to install.
        import sqlean

        return sqlean
    except ImportError:

        if hasattr(sqlite3.Connection, "enable_load_extension"):
            return sqlite3
        raise Unavailable("db.no_extension") from None


def connect(path: str | Path, *, readonly: bool = False, factory: Callable[[Any], type] | None = None,
            cache_kib: int = CACHE_KIB) -> Any:
    """Open a connection with every pragma memlane relies on, and sqlite-vec loaded; check each one.

    `factory(driver)` may return a subclass of the driver's Connection to open instead."""
    drv = _driver()
    path = Path(path)
    conn = None
    extra = {"factory": factory(drv)} if factory else {}
    try:
        if readonly:
            conn = drv.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                               isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, **extra)
        else:
            conn = drv.connect(str(path), check_same_thread=False, isolation_level=None,
                               timeout=BUSY_TIMEOUT_MS / 1000, **extra)
        conn.execute("pragma schema_version").fetchone()  # opens the file now, not at a later statement
    except drv.Error as exc:
        if conn is not None:
            conn.close()
        raise _open_error(path, exc, readonly) from exc
    if not readonly and not _writable(path):
        conn.close()
        raise Unavailable("db.readonly", path=str(path))
    try:
        conn.enable_load_extension(True)
        # Deferred: the extension, or a clear error that says what to install.
        import sqlite_vec

        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        (vec_version,) = conn.execute("select vec_version()").fetchone()
    except Exception as exc:
        conn.close()
        raise Unavailable("db.no_vec", detail=str(exc)) from exc
    if not vec_version:
        raise Unavailable("db.no_vec", detail="vec_version() returned nothing")
    try:
        conn.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("pragma foreign_keys = on")
        conn.execute(f"pragma cache_size = -{int(cache_kib)}")
        if not readonly:
            (mode,) = conn.execute("pragma journal_mode = wal").fetchone()
            if str(mode).lower() != "wal":
                raise Unavailable("db.pragma", pragma="journal_mode=wal", got=mode)
        conn.execute("pragma synchronous = normal")
        checks = {
            "foreign_keys": (conn.execute("pragma foreign_keys").fetchone()[0], 1),
            "synchronous": (conn.execute("pragma synchronous").fetchone()[0], 1),
            "busy_timeout": (conn.execute("pragma busy_timeout").fetchone()[0], BUSY_TIMEOUT_MS),
        }
        for name, (got, want) in checks.items():
            if got != want:
                raise Unavailable("db.pragma", pragma=name, got=got)
    except drv.OperationalError as exc:
        conn.close()
        if "readonly" in str(exc).lower() or "read-only" in str(exc).lower():
            raise Unavailable("db.readonly", path=str(path)) from exc
        raise Unavailable("db.open", path=str(path), detail=str(exc)) from exc
    except Unavailable:
        conn.close()
        raise
    return conn


def _writable(path: Path) -> bool:
    """True when this process may write the database file (or create it). Works for root on a read-only mount."""
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


def _open_error(path: Path, exc: Exception, readonly: bool) -> MemlaneError:
    if not readonly and not _writable(path):
        return Unavailable("db.readonly", path=str(path))
    return Unavailable("db.open", path=str(path), detail=str(exc))


def sql_error(exc: Exception) -> MemlaneError:
    """Translate a SQLite error into memlane's typed errors, by its error code where available."""
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorname", "") or ""
    if code == "SQLITE_FULL" or "full" in text:
        return Unavailable("db.full")
    if code.startswith("SQLITE_READONLY") or "readonly" in text:
        return Unavailable("db.readonly", path="")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return Unavailable("db.busy", seconds=BUSY_TIMEOUT_MS // 1000)
    return Unavailable("db.open", path="", detail=str(exc))


# ---------------------------------------------------------------- migrations


def _baseline(conn: Any, dim: int) -> None:
    conn.executescript(SCHEMA_FILE.read_text(encoding="utf-8").replace("{dim}", str(int(dim))))


def _threads_and_context(conn: Any, dim: int) -> None:
    """Version 2 (issue 17): threads of memories said together, their context vectors, grounded dates."""
    conn.executescript(f"""
        alter table chunks add column thread text;
        alter table chunks add column thread_pos integer;
        alter table chunks add column thread_by text;
        create index chunks_thread on chunks(namespace, thread, thread_pos) where thread is not null;
        create virtual table chunk_ctx_vec using vec0(
            namespace text partition key,
            live integer,
            lang text,
            embedding float[{int(dim)}] distance_metric=cosine
        );
        create virtual table chunks_when using fts5(dates, tokenize='porter unicode61 remove_diacritics 2');
    """)


def _context_queue(conn: Any, dim: int) -> None:
    """Version 3: context vectors embed the text of a memory's thread window, deferred to their own
    durable queue (`gen` counts refreshes, so a window re-queued while it was embedded is done again).
    The version-2 rows (sums of stored vectors) are cleared and every asserted thread member queued."""
    conn.executescript("""
        create table ctx_queue (
            chunk_seq integer primary key references chunks(seq),
            gen integer not null default 0,
            enqueued_at text not null,
            attempts integer not null default 0,
            last_error text
        );
        delete from chunk_ctx_vec;
        insert into ctx_queue(chunk_seq, enqueued_at)
            select seq, created_at from chunks
            where kind = 'memory' and valid_until is null and thread_by in ('client', 'session');
    """)


def _normal_keys(conn: Any, dim: int) -> None:
    """Version 4 (issue 14): content hashes ignore case and trailing punctuation; predicates have one spelling."""

    normalise_keys(conn)


def _no_sign_bits(conn: Any, dim: int) -> None:
    """Version 5 (issue 15): the sign-bit coarse index and its centre are gone (the approximate index,
    store/sqlite/ann.py, replaced them); a database made before schema.sql dropped the table still has both."""
    conn.executescript("""
        drop table if exists chunk_vec_bit;
        delete from meta where key in ('vec_center', 'vec_center_model');
    """)


def _last_memory_index(conn: Any, dim: int) -> None:
    """Version 6 (issue 30): an index for a namespace's latest memory (Store.last_memory, read by every
    remember). Without it SQLite read all of the namespace's rows and sorted them: 6.5 ms of a 9.4 ms
    acknowledgement at 10k chunks, growing with the store. The index's last column is the rowid (seq)."""
    conn.execute("create index if not exists chunks_ns_kind on chunks(namespace, kind)")


# Append-only. Each entry runs once, in its own BEGIN IMMEDIATE transaction with its version bump.
MIGRATIONS: list[Callable[[Any, int], None]] = [_baseline, _threads_and_context, _context_queue, _normal_keys,
                                                _no_sign_bits, _last_memory_index]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Any, dim: int) -> list[int]:
    """Bring the schema to SCHEMA_VERSION; returns the versions applied."""
    applied = []
    (current,) = conn.execute("pragma user_version").fetchone()
    if current > SCHEMA_VERSION:
        raise Unavailable("db.newer_schema", found=current, supported=SCHEMA_VERSION)
    for version in range(current + 1, SCHEMA_VERSION + 1):
        conn.execute("begin immediate")
        try:
            # executescript would commit; run the statements one by one inside our transaction.
            _run_in_txn(conn, MIGRATIONS[version - 1], dim)
            conn.execute(f"pragma user_version = {version}")
            conn.execute(
                "insert into meta(key, value) values ('schema_version', ?) "
                "on conflict(key) do update set value = excluded.value",
                (str(version),),
            )
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        applied.append(version)
    return applied


def _run_in_txn(conn: Any, step: Callable[[Any, int], None], dim: int) -> None:
    class _NoCommit:
        """Runs a migration's script statement by statement so it stays inside our transaction."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def executescript(self, script: str) -> None:
            for stmt in _split_sql(script):
                self.inner.execute(stmt)

        def execute(self, *args: Any) -> Any:
            return self.inner.execute(*args)

    step(_NoCommit(conn), dim)


def _split_sql(script: str) -> list[str]:
    """Split a script of plain DDL statements on the semicolons that end them."""
    drv = _driver()
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buf += line
        if drv.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
