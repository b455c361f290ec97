"""What `memlane health` reads from the database, on one read-only connection per engine.

The SQL of the health summary lives here, beside the other store modules, so that commands/health_check.py
only judges the facts: SQLite's file, WAL and quick_check; PostgreSQL's server, pgvector, version table
and index validity; the counts both answer with the same SQL.
"""

from __future__ import annotations

import struct
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from contract.validate import to_iso
from server import private
from store.sqlite.db import connect

NO_VECTOR_GRACE = timedelta(hours=1)  # the contract allows embedding to lag, not for this long
MAX_LATENCIES = 100_000
QUICK_CHECK_ROWS = 5

def percentile(sorted_values: list[float], q: float) -> float | None:
    """Nearest-rank percentile, the same rule as memory.stats()."""
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return float(sorted_values[index])


def iso(dt: datetime) -> str:
    return to_iso(dt)  # the stored times' own fixed-width format, so they compare as text


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------- facts


def wal_facts(db_path: Path) -> dict[str, Any]:
    """WAL size, and from the -shm index the frames in the WAL and how many a checkpoint already copied.

    SQLite does not record when the last checkpoint ran; the frames not yet backfilled are what a
    checkpoint still has to do. The -shm header is in native byte order (see SQLite's wal.c).
    """
    wal = Path(str(db_path) + "-wal")
    shm = Path(str(db_path) + "-shm")
    facts: dict[str, Any] = {"wal_bytes": wal.stat().st_size if wal.exists() else 0,
                             "wal_frames": None, "wal_backfilled": None}
    try:
        with shm.open("rb") as fh:
            head = fh.read(136)
        if len(head) >= 100:
            (mx_frame,) = struct.unpack_from("=I", head, 16)
            (n_backfill,) = struct.unpack_from("=I", head, 96)
            if facts["wal_bytes"] and n_backfill <= mx_frame:
                facts["wal_frames"], facts["wal_backfilled"] = mx_frame, n_backfill
    except OSError:
        pass
    return facts


def db_facts(db_path: Path, now: datetime) -> dict[str, Any]:
    """Everything the checks need from the database, read on one read-only connection."""
    facts: dict[str, Any] = {"path": str(db_path), "file_bytes": db_path.stat().st_size}
    facts.update(wal_facts(db_path))
    facts["shared_files"] = [{"path": str(p), "mode": oct(mode)} for p in private.database_files(db_path, data_only=True)
                             if (mode := private.readable_by_others(p)) is not None]
    conn = connect(db_path, readonly=True)
    try:
        q = conn.execute
        # The database's own size, pages still in the WAL included (what memory_stats calls db_bytes).
        facts["bytes"] = q("pragma page_count").fetchone()[0] * q("pragma page_size").fetchone()[0]
        facts.update(_shared_facts(q, now, "rowid"))
        facts["orphan_vectors"] = q(
            "select count(*) from chunk_vec v where not exists (select 1 from chunks c where c.seq = v.rowid)"
        ).fetchone()[0]
        rows = [r[0] for r in q(f"pragma quick_check({QUICK_CHECK_ROWS})")]
        facts["quick_check"] = rows
    finally:
        conn.close()
    return facts


def pg_facts(url: str, label: str, now: datetime, timeout: float) -> dict[str, Any]:
    """The same facts from PostgreSQL, on one read-only connection (no migration, no pool)."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres.db import SCHEMA_VERSION, VERSION_TABLE, Handle, check_pgvector, connect_once, db_error

    facts: dict[str, Any] = {"path": label, "engine": "postgres", "shared_files": [], "wal_bytes": 0,
                             "wal_frames": None, "wal_backfilled": None}
    conn = connect_once(url, timeout)
    try:
        with conn.transaction():
            conn.execute("set transaction read only")
            q = Handle(conn).execute
            if q(f"select to_regclass('{VERSION_TABLE}')").fetchone()[0] is None:
                return {"path": label, "missing": True, "error": "not initialised"}
            facts["server"] = q("select current_setting('server_version')").fetchone()[0]
            facts["pgvector"] = check_pgvector(conn, url)
            facts["schema"] = q(f"select coalesce(max(version), 0) from {VERSION_TABLE}").fetchone()[0]
            facts["schema_expected"] = SCHEMA_VERSION
            facts["bytes"] = q("select pg_database_size(current_database())").fetchone()[0]
            facts["file_bytes"] = facts["bytes"]
            facts.update(_shared_facts(q, now, "seq"))
            facts["orphan_vectors"] = 0  # chunk_vec.seq references chunks(seq)
            # What PRAGMA quick_check is on a file: here, that no index of memlane's tables is invalid
            # (an interrupted CREATE INDEX CONCURRENTLY, or a failed REINDEX, leaves one so).
            bad = [r[0] for r in q("select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid "
                                   "join pg_namespace n on n.oid = c.relnamespace where not i.indisvalid "
                                   "and n.nspname = current_schema() order by 1 limit ?", (QUICK_CHECK_ROWS,))]
            facts["quick_check"] = ["ok"] if not bad else [f"invalid index {b}" for b in bad]
    except psycopg.Error as exc:
        raise db_error(exc, url) from None
    finally:
        conn.close()
    return facts


def _shared_facts(q: Any, now: datetime, vec_key: str) -> dict[str, Any]:
    """The counts both engines answer with the same SQL; `vec_key` is chunk_vec's chunk column."""
    facts: dict[str, Any] = {}
    facts["chunks"], facts["live_chunks"] = q(
        "select count(*), count(*) filter (where valid_until is null) from chunks").fetchone()
    facts["entities"] = q("select count(*) from entities").fetchone()[0]
    facts["relations"] = q("select count(*) from relations where valid_until is null").fetchone()[0]
    facts["vectors"] = q("select count(*) from chunk_vec").fetchone()[0]
    pending, oldest = q("select count(*), min(enqueued_at) from embed_queue").fetchone()
    oldest_dt = parse_time(oldest)
    facts["pending_embeddings"] = pending
    facts["pending_oldest_s"] = (now - oldest_dt).total_seconds() if oldest_dt else None
    cutoff = iso(now - NO_VECTOR_GRACE)
    facts["missing_vectors"] = q(
        f"select count(*) from chunks c where c.valid_until is null and c.created_at < ? "
        f"and not exists (select 1 from chunk_vec v where v.{vec_key} = c.seq)", (cutoff,)).fetchone()[0]
    since = iso(now - timedelta(hours=24))
    calls, empty = q("select count(*), count(*) filter (where hit_count = 0) from recall_log "
                     "where created_at >= ?", (since,)).fetchone()
    lat = [r[0] for r in q("select took_ms from recall_log where created_at >= ? and skipped is null "
                           "order by took_ms limit ?", (since, MAX_LATENCIES))]
    facts["recall_24h"] = {"calls": calls, "empty": empty, "p50_ms": percentile(lat, 0.5),
                           "p95_ms": percentile(lat, 0.95)}
    facts["entity_kinds"] = [{"kind": k, "count": n} for k, n in q(
        "select kind, count(*) from entities group by kind order by 2 desc, 1 limit 5")]
    return facts
