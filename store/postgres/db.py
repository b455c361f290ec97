"""PostgreSQL connections and schema: one connection pool (psycopg-pool) whose connections have
pgvector's types registered, the append-only migrations keyed by the `memlane_schema` table, and the
translation of driver errors into memlane's typed errors (the URL's password never in them).

memlane's SQL is written in one placeholder style for both engines (`?`, sqlite3's qmark); `Handle`
turns it into psycopg's `%s` once per distinct statement, so tools, the dashboard listings, the
portable format and tests run the same plain SQL on either engine.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from contract.errors import MemlaneError, Unavailable
from store.postgres import derived as pg_derived
from store.postgres.derived import TS_CONFIG, hnsw_index_sql
from store.shared import normalise_keys
from store.util import redact_text, redact_url

MIN_PGVECTOR = (0, 8, 0)  # iterative index scans (hnsw.iterative_scan) keep filtered recall
APP_NAME = "memlane"  # application_name of every connection (pg_stat_activity)
LOCK_TIMEOUT_S = 10  # the SQLite busy timeout's equivalent: a write waits this long for a row lock

# ---------------------------------------------------------------- one placeholder style

_QUOTED = re.compile(r"('(?:[^']|'')*')")


@functools.lru_cache(maxsize=2048)
def qmark(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (outside string literals); a literal `%` doubled."""
    parts = _QUOTED.split(sql)
    for i in range(0, len(parts), 2):  # even parts are outside quotes
        parts[i] = parts[i].replace("%", "%%").replace("?", "%s")
    for i in range(1, len(parts), 2):
        parts[i] = parts[i].replace("%", "%%")
    return "".join(parts)


class Handle:
    """A psycopg connection that takes memlane's `?` SQL: what `atomic()` yields on PostgreSQL."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        cur = self.conn.cursor()
        cur.execute(qmark(sql), tuple(args))
        return cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        cur = self.conn.cursor()
        rows = [tuple(r) for r in rows]
        if rows:
            cur.executemany(qmark(sql), rows)
        return cur

    def cursor(self) -> Handle:
        return self

    def columns(self, table: str) -> list[str]:
        """A table's columns in definition order (store/portable.py exports by name; SQLite's pragma table_info)."""
        return [r[0] for r in self.execute(
            "select column_name from information_schema.columns where table_schema = current_schema() "
            "and table_name = ? order by ordinal_position", (table,))]

    def vector_bytes(self, seq: int) -> bytes | None:
        """A chunk's vector as float32 bytes (the portable format's), or None."""
        row = self.execute("select embedding from chunk_vec where seq = ?", (seq,)).fetchone()
        if row is None:
            return None
        vec = row[0].to_numpy() if hasattr(row[0], "to_numpy") else row[0]
        return np.asarray(vec, dtype=np.float32).tobytes()


class Rows:
    """A finished statement's rows, read in full before its pooled connection went back."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


class Reader:
    """What `store.reader()` returns on PostgreSQL: each statement borrows a pooled connection
    (autocommit) and returns its rows (tools and tests; the store's own reads borrow directly)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        with self._store.connection() as db:
            cur = db.execute(sql, args)
            rows = cur.fetchall() if cur.description else []
            return Rows(rows, cur.rowcount)

    def cursor(self) -> Reader:
        return self

    def columns(self, table: str) -> list[str]:
        with self._store.connection() as db:
            return db.columns(table)

    def vector_bytes(self, seq: int) -> bytes | None:
        with self._store.connection() as db:
            return db.vector_bytes(seq)


# ---------------------------------------------------------------- errors


def db_error(exc: Exception, url: str) -> MemlaneError:
    """A psycopg error as memlane's typed error, by SQLSTATE; the URL is shown redacted."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg.errors as pe

    detail = redact_text(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url)
    if isinstance(exc, (pe.DiskFull, pe.OutOfMemory)):
        return Unavailable("db.full")
    if isinstance(exc, (pe.LockNotAvailable, pe.DeadlockDetected, pe.SerializationFailure, pe.QueryCanceled)):
        return Unavailable("db.busy", seconds=LOCK_TIMEOUT_S)
    if isinstance(exc, pe.ReadOnlySqlTransaction):
        return Unavailable("db.readonly", path=redact_url(url))
    return Unavailable("db.open", path=redact_url(url), detail=detail)


# ---------------------------------------------------------------- pool


def open_pool(url: str, *, max_size: int = 8) -> Any:
    """A psycopg-pool ConnectionPool (autocommit connections, pgvector types registered, lock and
    statement timeouts set). The schema must exist first: register_vector looks the type up."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool

    def configure(conn: Any) -> None:
        register_vector(conn)
        conn.execute("select set_config('lock_timeout', %s, false)", (f"{LOCK_TIMEOUT_S}s",))

    pool = ConnectionPool(url, min_size=1, max_size=max_size, kwargs={"autocommit": True, **_app_name(url)},
                          configure=configure,
                          check=ConnectionPool.check_connection, open=False, name="memlane")
    try:
        pool.open(wait=True, timeout=30)
    except Exception as exc:
        pool.close()
        raise db_error(exc, url) from exc
    return pool


def _app_name(url: str) -> dict[str, str]:
    """application_name = memlane, unless the URL sets its own: other_sessions() counts these."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(url).get("application_name")
    except Exception:  # a malformed URL fails in connect, with the typed error
        given = None
    return {} if given else {"application_name": APP_NAME}


def connect_once(url: str, timeout: float = 30) -> Any:
    """One autocommit connection (for migrations, before the pool exists, and for the tools)."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg

    try:
        # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
        from psycopg.conninfo import make_conninfo

        return psycopg.connect(make_conninfo(url, **_app_name(url)), autocommit=True,
                               connect_timeout=max(1, int(timeout)))
    except psycopg.Error as exc:
        raise db_error(exc, url) from None  # `from None`: the driver's own text may carry the URL


def other_sessions(url: str) -> int:
    """How many other memlane sessions (daemons, library users) are connected to this database now."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg

    conn = connect_once(url)
    try:
        (app,) = conn.execute("select current_setting('application_name')").fetchone()
        return int(conn.execute("select count(*) from pg_stat_activity where datname = current_database() "
                                "and application_name = %s and pid <> pg_backend_pid()", (app,)).fetchone()[0])
    except psycopg.Error as exc:
        raise db_error(exc, url) from None
    finally:
        conn.close()


# ---------------------------------------------------------------- migrations

_T = 'text collate "C"'  # byte order, as SQLite's BINARY: keyset pages and exports sort the same on both


def _baseline(dim: int) -> list[str]:
    """Version 1: the tables of schema.sql, with PostgreSQL's own derived rows (store/postgres/derived.py)."""
    return _baseline_chunks() + _baseline_graph() + _baseline_vectors_and_log(int(dim))


def _baseline_chunks() -> list[str]:
    """Version 1, part 1: extensions, the text search configuration, meta, chunks and their full text."""
    return [
        "create extension if not exists vector",
        "create extension if not exists pg_trgm",
        f"create text search dictionary {TS_CONFIG}_stem (template = snowball, language = english)",
        f"create text search configuration {TS_CONFIG} (copy = simple)",
        f"alter text search configuration {TS_CONFIG} alter mapping for asciiword, word, numword, asciihword, hword, "
        f"numhword, hword_asciipart, hword_part, hword_numpart with {TS_CONFIG}_stem",
        f"create table meta (key {_T} primary key, value text not null)",
        f"""create table chunks (
            seq bigint generated by default as identity primary key,
            id {_T} not null unique,
            namespace {_T} not null,
            content text not null,
            content_hash {_T} not null,
            source {_T},
            importance double precision not null default 0.5,
            tags text not null default '[]',
            metadata text not null default '{{}}',
            lang {_T} not null default 'en',
            kind {_T} not null default 'memory',
            parent_id {_T} references chunks(id),
            created_at {_T} not null,
            valid_from {_T} not null,
            valid_until {_T},
            previous_id {_T} references chunks(id),
            superseded_by {_T} references chunks(id),
            forgotten_reason text)""",
        "create index chunks_ns_live on chunks(namespace, valid_until)",
        "create index chunks_hash on chunks(namespace, content_hash) where valid_until is null",
        "create index chunks_previous on chunks(previous_id)",
        "create index chunks_parent on chunks(parent_id)",
        "create index chunks_ns_created on chunks(namespace, created_at)",
        # Substrings of 3+ characters (Chinese words inside unsegmented text), as SQLite's trigram FTS.
        "create index chunks_content_trgm on chunks using gin (content gin_trgm_ops)",
        # Full text: stemmed words; jieba's words of the CJK runs; every adjacent CJK pair (2-character words).
        """create table chunk_text (
            seq bigint primary key references chunks(seq),
            latin tsvector not null,
            cjk tsvector not null,
            bigrams tsvector not null)""",
        "create index chunk_text_latin on chunk_text using gin (latin)",
        "create index chunk_text_cjk on chunk_text using gin (cjk)",
        "create index chunk_text_bigrams on chunk_text using gin (bigrams)",
    ]


def _baseline_graph() -> list[str]:
    """Version 1, part 2: entities, their aliases and chunk links, relations."""
    return [
        f"""create table entities (
            id {_T} primary key,
            namespace {_T} not null,
            name text not null,
            norm {_T} not null,
            kind {_T} not null default 'concept',
            created_at {_T} not null,
            unique (namespace, norm))""",
        f"""create table entity_aliases (
            namespace {_T} not null,
            norm {_T} not null,
            alias text not null,
            entity_id {_T} not null references entities(id),
            primary key (namespace, norm))""",
        "create index entity_aliases_entity on entity_aliases(entity_id)",
        f"""create table chunk_entities (
            chunk_seq bigint not null references chunks(seq),
            entity_id {_T} not null references entities(id),
            primary key (chunk_seq, entity_id))""",
        "create index chunk_entities_entity on chunk_entities(entity_id, chunk_seq)",
        f"""create table relations (
            id {_T} primary key,
            namespace {_T} not null,
            subject_id {_T} not null references entities(id),
            predicate {_T} not null,
            object_id {_T} not null references entities(id),
            confidence double precision not null default 1.0,
            chunk_id {_T} references chunks(id),
            created_at {_T} not null,
            valid_from {_T} not null,
            valid_until {_T},
            forgotten_reason text)""",
        "create index relations_subject on relations(subject_id, valid_until)",
        "create index relations_object on relations(object_id, valid_until)",
        "create index relations_chunk on relations(chunk_id)",
        "create index relations_ns on relations(namespace, valid_until)",
        # One live edge per (subject, predicate, object): two daemons upserting it meet here.
        "create unique index relations_live_edge on relations(namespace, subject_id, predicate, object_id) "
        "where valid_until is null",
    ]


def _vector_table(table: str, d: int, extra_columns: str = "") -> list[str]:
    """A table of one `d`-dimensional vector a chunk version, and its (namespace, live) index."""
    return [
        f"""create table {table} (
            seq bigint primary key references chunks(seq),
            namespace {_T} not null,
            live boolean not null,
            lang {_T} not null,
            embedding vector({d}) not null{extra_columns})""",
        f"create index {table}_ns on {table}(namespace, live)",
    ]


def _baseline_vectors_and_log(d: int) -> list[str]:
    """Version 1, part 3: vectors, the embedding queue and the recall log."""
    return [
        # One vector per chunk version; HNSW (cosine) for large namespaces, exact scans for small ones.
        *_vector_table("chunk_vec", d, ", written_by text"),
        hnsw_index_sql(16, 64),  # version 1 as it shipped; version 3 rebuilds it
        # The queue is shared by every daemon: a claim (claimed_by, claimed_at) is a lease; a daemon that
        # dies leaves its rows to the others once the lease has expired.
        f"""create table embed_queue (
            chunk_seq bigint primary key references chunks(seq),
            enqueued_at {_T} not null,
            attempts integer not null default 0,
            last_error text,
            claimed_by text,
            claimed_at timestamptz)""",
        "create index embed_queue_order on embed_queue(attempts, chunk_seq)",
        f"""create table recall_log (
            id bigint generated by default as identity primary key,
            namespace {_T} not null,
            query text not null,
            created_at {_T} not null,
            took_ms double precision not null,
            lanes_json text not null,
            lane_wall_ms double precision,
            hit_count integer not null,
            skipped text,
            recall_details_json text not null)""",
        "create index recall_log_created on recall_log(created_at)",
    ]


def _threads(dim: int) -> list[str]:
    """Version 2: a memory's thread (issue 17), as SQLite's migration 2 adds it (context vectors and
    grounded dates came in version 3)."""
    return [
        "alter table chunks add column thread text",
        "alter table chunks add column thread_pos bigint",
        "alter table chunks add column thread_by text",
        "create index chunks_thread on chunks(namespace, thread, thread_pos)",
    ]


def _hnsw_32(dim: int) -> list[str]:
    """Version 3: chunk_vec's HNSW index rebuilt with m 32, ef_construction 128 (it was pgvector's
    defaults, 16 and 64). On a large database this takes minutes (about 3 minutes for 100k vectors on
    2 cores), once, while the other daemons wait on the migration lock."""
    return ["drop index if exists chunk_vec_hnsw", hnsw_index_sql(32, 128)]


def _context_and_dates(dim: int) -> list[Any]:
    """Version 4: what SQLite's migrations 2 and 3 add beside threads. Context vectors (a memory with its
    thread neighbours) in their own table with an HNSW index, made through `ctx_queue` (`gen` counts
    refreshes; claims as in embed_queue, so each window is embedded by one daemon), and the dates that
    relative times resolve to (`chunks_when`: the text for a full hit, a tsvector for the lexical lane).
    Every asserted thread member is queued, and every chunk's dates are derived (Python: timeground)."""
    d = int(dim)

    def ground_dates(conn: Any) -> None:
        db, last = Handle(conn), 0
        while rows := db.execute("select seq, content, valid_from from chunks where seq > ? order by seq limit 1000",
                                 (last,)).fetchall():
            for seq, content, valid_from in rows:
                pg_derived.add_dates(db, seq, content, valid_from)
            last = rows[-1][0]

    return [
        *_vector_table("chunk_ctx_vec", d),
        hnsw_index_sql(32, 128, table="chunk_ctx_vec"),
        f"""create table ctx_queue (
            chunk_seq bigint primary key references chunks(seq),
            gen integer not null default 0,
            enqueued_at {_T} not null,
            attempts integer not null default 0,
            last_error text,
            claimed_by text,
            claimed_at timestamptz)""",
        "create index ctx_queue_order on ctx_queue(attempts, chunk_seq)",
        """create table chunks_when (
            seq bigint primary key references chunks(seq),
            dates text not null,
            tsv tsvector not null)""",
        "create index chunks_when_tsv on chunks_when using gin (tsv)",
        "insert into ctx_queue(chunk_seq, enqueued_at) select seq, created_at from chunks "
        "where kind = 'memory' and valid_until is null and thread_by in ('client', 'session')",
        ground_dates,
    ]


def _normal_keys(dim: int) -> list[Any]:
    """Version 5 (issue 14), as SQLite's migration 4: content hashes ignore case and trailing punctuation;
    predicates have one spelling. Computed in Python (store/shared.py), inside the migration's transaction."""

    return [lambda conn: normalise_keys(Handle(conn))]


def _last_memory_index(dim: int) -> list[str]:
    """Version 6 (issue 30), as SQLite's migration 6: an index for a namespace's latest memory
    (Store.last_memory, read by every remember), which otherwise reads and sorts the namespace's rows."""
    return ["create index chunks_ns_kind on chunks(namespace, kind, seq)"]


# Append-only. Each entry runs once, in its own transaction with its version bump. An entry returns its
# steps: SQL statements, or a callable given the connection (for derived rows only Python can make).
MIGRATIONS = [_baseline, _threads, _hnsw_32, _context_and_dates, _normal_keys, _last_memory_index]
SCHEMA_VERSION = len(MIGRATIONS)
VERSION_TABLE = "memlane_schema"
MIGRATION_LOCK = 0x6D656D6C616E65  # 'memlane': daemons starting together migrate one at a time


def check_pgvector(conn: Any, url: str) -> str:
    """The installed pgvector version, or a typed error naming what to install."""
    row = conn.execute("select extversion from pg_extension where extname = 'vector'").fetchone()
    if row is None:
        avail = conn.execute("select default_version from pg_available_extensions where name = 'vector'").fetchone()
        if avail is None:
            raise Unavailable("pg.no_vector", url=redact_url(url))
        return str(avail[0])
    return str(row[0])


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def migrate(url: str, dim: int) -> list[int]:
    """Bring the schema to SCHEMA_VERSION; returns the versions applied. Safe with daemons starting together."""
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg

    conn = connect_once(url)
    try:
        version = check_pgvector(conn, url)
        if _version_tuple(version) < MIN_PGVECTOR:
            raise Unavailable("pg.old_vector", version=version, need=".".join(map(str, MIN_PGVECTOR)))
        applied = []
        with conn.transaction():
            conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(f"create table if not exists {VERSION_TABLE} (version integer not null)")
            row = conn.execute(f"select max(version) from {VERSION_TABLE}").fetchone()
        current = int(row[0] or 0)
        if current > SCHEMA_VERSION:
            raise Unavailable("db.newer_schema", found=current, supported=SCHEMA_VERSION)
        for v in range(current + 1, SCHEMA_VERSION + 1):
            with conn.transaction():
                conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                (now,) = conn.execute(f"select coalesce(max(version), 0) from {VERSION_TABLE}").fetchone()
                if now >= v:  # another daemon applied it while we waited
                    continue
                for step in MIGRATIONS[v - 1](dim):
                    if isinstance(step, str):
                        conn.execute(step)
                    else:
                        step(conn)
                conn.execute(f"insert into {VERSION_TABLE}(version) values (%s)", (v,))
                conn.execute("insert into meta(key, value) values ('schema_version', %s) "
                             "on conflict (key) do update set value = excluded.value", (str(v),))
            applied.append(v)
        return applied
    except psycopg.Error as exc:
        raise db_error(exc, url) from None
    finally:
        conn.close()
