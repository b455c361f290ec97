"""The reads and bulk loads of the benchmarks and evaluations in devtools/: not the daemon's.

A benchmark measures the store from outside, and sometimes builds a synthetic database faster than
`Memory.remember` could (a million vectors). The SQL that needs lives here, with the rest of memlane's
SQL, so that devtools/ holds none. Nothing here is part of the store protocol: these are probes of one
engine's tables (SQLite's vec0 and its float32 copy, PostgreSQL's pgvector), named for what they read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sqlean

from store.sqlite import derived

ID_BATCH = 500  # ids bound in one `in (...)` list


# ---------------------------------------------------------------- SQLite probes


def explain_plan(db: Any, sql: str) -> list[str]:
    """SQLite's query plan of one statement the store ran, one line a step."""
    return [str(r[-1]) for r in db.execute("explain query plan " + sql).fetchall()]


def live_f32_vectors(db: Any, namespace: str) -> tuple[list[int], list[bytes]]:
    """(seqs, float32 blobs) of a namespace's live chunks, in seq order, from chunk_vec_f32."""
    seqs, blobs = [], []
    for seq, blob in db.execute(
            "select f.seq, f.embedding from chunk_vec_f32 f join chunks c on c.seq = f.seq "
            "where c.namespace = ? and c.valid_until is null order by f.seq", (namespace,)):
        seqs.append(seq)
        blobs.append(blob)
    return seqs, blobs


def vec0_knn(db: Any, qv: np.ndarray, k: int, namespace: str) -> list[tuple[int, float]]:
    """sqlite-vec's exact KNN alone over a namespace's live vectors: (rowid, distance)."""
    return db.execute("select rowid, distance from chunk_vec where embedding match ? and k = ? and namespace = ? "
                      "and live = 1", (qv.tobytes(), k, namespace)).fetchall()


def seqs_of(db: Any, chunk_ids: Sequence[str]) -> dict[str, int]:
    """chunk id → seq, for any namespace, in batches of ID_BATCH bound ids."""
    out: dict[str, int] = {}
    ids = list(chunk_ids)
    for i in range(0, len(ids), ID_BATCH):
        part = ids[i : i + ID_BATCH]
        out.update(db.execute(f"select id, seq from chunks where id in ({','.join('?' * len(part))})", part))
    return out


def file_live_matrix(path: Path, namespace: str) -> np.ndarray:
    """A namespace's live float32 vectors of a SQLite memlane file (opened read-only), one row each."""
    db = sqlean.connect(f"file:{path}?mode=ro", uri=True)  # the store's own SQLite (test_layout)
    try:
        seqs, blobs = live_f32_vectors(db, namespace)
    finally:
        db.close()
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(seqs), -1)


def file_f32_vectors(path: Path, n: int) -> list[bytes]:
    """The first `n` float32 vectors of a SQLite memlane file, opened read-only."""
    db = sqlean.connect(f"file:{path}?mode=ro", uri=True)  # the store's own SQLite (test_layout)
    try:
        return [r[0] for r in db.execute("select embedding from chunk_vec_f32 order by seq limit ?", (n,))]
    finally:
        db.close()


# ---------------------------------------------------------------- either engine, through a store


def context_vector_count(store: Any) -> int:
    """Context vectors written (chunk_ctx_vec), read through the store's reader."""
    return int(store.reader().execute("select count(*) from chunk_ctx_vec").fetchone()[0])


def supersession_links(db: Any, namespace: str) -> list[tuple[str, str]]:
    """(old id, new id) of every memory of a namespace that another superseded."""
    return [(r[0], r[1]) for r in db.execute(
        "select id, superseded_by from chunks where namespace = ? and superseded_by is not null "
        "and kind = 'memory'", (namespace,))]


def busiest_subject(store: Any, namespace: str) -> str:
    """The name of the entity that is the subject of the most relations in a namespace."""
    return str(store.reader().execute(
        "select e.name from relations r join entities e on e.id = r.subject_id where r.namespace = ? "
        "group by e.id order by count(*) desc limit 1", (namespace,)).fetchone()[0])


# ---------------------------------------------------------------- synthetic bulk loads


def add_recall_log(store: Any, namespace: str, rows: Sequence[tuple[str, str, float, int]]) -> None:
    """Synthetic recall_log rows (query, created_at, took_ms, hit_count), in one transaction, so the
    dashboard's latency plot and 24 h tables have data."""
    with store.atomic() as w:
        w.executemany(
            "insert into recall_log(namespace, query, created_at, took_ms, lanes_json, lane_wall_ms, hit_count, "
            "skipped, recall_details_json) values (?, ?, ?, ?, '{}', null, ?, null, '[]')",
            [(namespace, *r) for r in rows])


def load_synthetic_sqlite(store: Any, vecs: np.ndarray, namespace_of: Callable[[int], str], now: str,
                          batch: int = 5000) -> None:
    """One chunk ('synthetic i') and its vector per row of `vecs`, `batch` rows a transaction, with the
    derived rows written by their owner (store/sqlite/derived.py)."""
    for i in range(0, len(vecs), batch):
        with store.atomic() as db:
            for j in range(i, min(i + batch, len(vecs))):
                db.execute("insert into chunks(seq, id, namespace, content, content_hash, created_at, valid_from) "
                           "values (?,?,?,?,?,?,?)", (j + 1, f"m_{j:08x}", namespace_of(j), f"synthetic {j}",
                                                       f"{j:064x}", now, now))
                derived.write_vector(db, j + 1, namespace_of(j), True, "en", vecs[j].tobytes())


def load_synthetic_pg(url: str, vecs: np.ndarray, namespace_of: Callable[[int], str], now: str,
                      m: int, ef_construction: int) -> tuple[float, float]:
    """The same rows on PostgreSQL by COPY, the HNSW index dropped for the load and built once after it
    (as a bulk load should). Returns (load seconds, index build seconds)."""
    import psycopg  # optional dependencies, loaded only for the PostgreSQL engine

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from pgvector.psycopg import register_vector

    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres.derived import hnsw_index_sql

    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("drop index chunk_vec_hnsw")
        with conn.cursor() as cur:
            with cur.copy("copy chunks (seq, id, namespace, content, content_hash, created_at, valid_from) "
                          "from stdin") as cp:
                for i in range(len(vecs)):
                    cp.write_row((i + 1, f"m_{i:08x}", namespace_of(i), f"synthetic {i}", f"{i:064x}", now, now))
            with cur.copy("copy chunk_vec (seq, namespace, live, lang, embedding) from stdin with (format binary)") as cp:
                cp.set_types(["int8", "text", "bool", "text", "vector"])
                for i, v in enumerate(vecs):
                    cp.write_row((i + 1, namespace_of(i), True, "en", v))
        conn.execute("select setval(pg_get_serial_sequence('chunks', 'seq'), %s)", (len(vecs),))
        conn.execute("analyze")
        loaded = time.perf_counter()
        # The graph must fit in maintenance_work_mem, or the build slows down many times.
        conn.execute("select set_config('maintenance_work_mem', %s, false)",
                     (f"{max(1024, len(vecs) * 4 * 1024 // 1_000_000)}MB",))
        conn.execute(hnsw_index_sql(m, ef_construction))
    return loaded - t0, time.perf_counter() - loaded


def create_pg_database(url: str, name: str) -> None:
    """CREATE DATABASE on a throwaway server; `name` is the caller's constant (an identifier, not bound)."""
    import psycopg  # optional dependency, loaded only for the PostgreSQL engine

    if not name.isidentifier():
        raise ValueError(f"not a database name: {name!r}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"create database {name}")


# ---------------------------------------------------------------- the halfvec A/B (devtools/bench_halfvec.py)

HALFVEC_QUERIES = {
    "full": "select seq from v order by embedding <=> %s limit 10",
    # The halfvec query re-ranks its 10 by the full vectors' distance, as a shipped one would.
    "halfvec": "select seq from (select seq, embedding <=> %s as d from v order by embedding::halfvec({dim}) "
               "<=> %s::halfvec({dim}) limit 10) s order by d",
}


def halfvec_build(conn: Any, vecs: np.ndarray) -> tuple[dict[str, float], dict[str, int]]:
    """One table `v` of `vecs` on a throwaway server's psycopg connection (autocommit), with an HNSW index
    over the full vectors and one over their halfvec cast. Returns (build seconds, size MB) per index."""
    from pgvector.psycopg import register_vector  # optional dependency, PostgreSQL only

    dim = int(vecs.shape[1])
    conn.execute("create extension if not exists vector")
    register_vector(conn)
    conn.execute(f"create table v (seq bigint primary key, embedding vector({dim}))")
    with conn.cursor() as cur, cur.copy("copy v (seq, embedding) from stdin with (format binary)") as cp:
        cp.set_types(["int8", "vector"])
        for i, x in enumerate(vecs):
            cp.write_row((i + 1, x))
    conn.execute(f"set maintenance_work_mem = '{max(1024, len(vecs) * 4 * 1024 // 1_000_000)}MB'")
    built = {}
    for name, expr, ops in (("v_full", "embedding", "vector_cosine_ops"),
                            ("v_half", f"(embedding::halfvec({dim}))", "halfvec_cosine_ops")):
        t0 = time.perf_counter()
        conn.execute(f"create index {name} on v using hnsw ({expr} {ops}) with (m = 32, ef_construction = 128)")
        built[name] = round(time.perf_counter() - t0, 1)
    sizes = dict(conn.execute("select relname, pg_relation_size(oid) / 1048576 from pg_class "
                              "where relname in ('v_full', 'v_half')").fetchall())
    return built, sizes


def halfvec_query(conn: Any, kind: str, q: np.ndarray, ef: int) -> tuple[float, list[int]]:
    """One query of kind 'full' or 'halfvec' at hnsw.ef_search `ef`: (milliseconds, seqs)."""
    sql = HALFVEC_QUERIES[kind].format(dim=len(q))
    with conn.transaction():
        conn.execute("select set_config('hnsw.ef_search', %s, true)", (str(ef),))
        t0 = time.perf_counter()
        got = conn.execute(sql, (q,) if kind == "full" else (q, q)).fetchall()
        ms = (time.perf_counter() - t0) * 1000
    return ms, [int(r[0]) for r in got]
