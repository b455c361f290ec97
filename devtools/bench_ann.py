"""`memlane bench ann`: exact vec0 KNN against the approximate index, by namespace size (the crossover).

    ./memlane bench ann [--from-db DB] [--sizes 1000 5000 20000 …] [--queries 50] [--k 200]

For each size N, a fresh store under a temp folder gets the first N vectors (from `--from-db`'s
chunk_vec_f32, else clustered random ones), through the real write path of vectors
(store.write_vectors). It then times store.nearest with the exact scan and with the approximate index
(store/sqlite/ann.py) on the same query vectors, reports the index build time and file size, and the
recall@10 of the index against the exact scan. Timings depend on the machine's load: compare the two
columns of one run.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from commands._common import argument_parser
from i18n_messages import t
from store import bench_support
from store import search_index as si
from store.protocol import Filter, NewChunk, QueuedChunk
from store.sqlite.engine import SqliteStore

NS = "bench"


def load_vectors(path: Path | None, n: int, dim: int, seed: int) -> np.ndarray:
    if path is None:
        rng = np.random.default_rng(seed)
        centres = rng.normal(size=(max(8, n // 200), dim)).astype(np.float32)
        vecs = centres[rng.integers(0, len(centres), n)] + rng.normal(size=(n, dim)).astype(np.float32) * 0.7
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    blobs = bench_support.file_f32_vectors(path, n)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def fill(store: SqliteStore, vecs: np.ndarray) -> None:
    now = "2024-01-01T00:00:00.000000Z"
    for start in range(0, len(vecs), 5000):
        with store.atomic() as tx:
            items = []
            for i in range(start, min(len(vecs), start + 5000)):
                _, seq = store.insert_chunk(tx, NewChunk(NS, f"chunk {i}", f"h{i}", None, 0.5, [], {}, "en", now, now))
                items.append((QueuedChunk(seq, NS, "", "en"), vecs[i]))
            store.write_vectors(tx, items)


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def measure(vecs: np.ndarray, queries: np.ndarray, k: int, workdir: Path) -> dict[str, Any]:
    store = SqliteStore(workdir / f"n{len(vecs)}.db", vecs.shape[1])
    try:
        fill(store, vecs)
        saved, si.ANN_MIN_CHUNKS = si.ANN_MIN_CHUNKS, len(vecs) + 1
        try:
            exact_ms, exact = [], []
            for q in queries:
                t0 = time.perf_counter()
                exact.append(store.nearest(Filter(NS), q, k))
                exact_ms.append((time.perf_counter() - t0) * 1000)
            si.ANN_MIN_CHUNKS = 1
            t0 = time.perf_counter()
            store.ann.get(NS)
            store.ann.wait()
            build_s = time.perf_counter() - t0
            ann_ms, approx = [], []
            for q in queries:
                t0 = time.perf_counter()
                approx.append(store.nearest(Filter(NS), q, k))
                ann_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            si.ANN_MIN_CHUNKS = saved
        recall = statistics.fmean(len({r[0] for r in e.rows[:10]} & {r[0] for r in a.rows[:10]}) / 10
                                  for e, a in zip(exact, approx, strict=True))
        files = list(store.ann.dir.glob("*.usearch"))
        return {"n": len(vecs), "k": k, "exact_p50_ms": _p50(exact_ms), "ann_p50_ms": _p50(ann_ms),
                "recall_at_10": round(recall, 4), "build_s": round(build_s, 2),
                "file_mib": round(sum(p.stat().st_size for p in files) / 2**20, 2)}
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench ann", t("cli.help.bench_ann"))
    ap.add_argument("--from-db", type=Path, help=t("cli.help.bench_from_db"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000, 50000],
                    help=t("cli.help.bench_sizes"))
    ap.add_argument("--queries", type=int, default=50, help=t("cli.help.bench_queries"))
    ap.add_argument("--k", type=int, default=200, help=t("cli.help.bench_k"))
    ap.add_argument("--seed", type=int, default=42, help=t("cli.help.bench_seed"))
    ap.add_argument("--json", type=Path, help=t("cli.help.bench_json"))
    args = ap.parse_args(argv)
    vecs = load_vectors(args.from_db, max(args.sizes) + args.queries, 384, args.seed)
    rng = np.random.default_rng(args.seed)
    # Queries: held-out vectors nudged a little, so none is its own nearest neighbour.
    queries = vecs[-args.queries:] + rng.normal(size=(args.queries, vecs.shape[1])).astype(np.float32) * 0.02
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    vecs = vecs[: -args.queries]
    rows = []
    print(f"load average at start: {os.getloadavg()}")
    print("| live chunks | exact vec0 p50 ms | approximate index p50 ms | recall@10 | build s | file MiB |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="memlane-bench-ann-") as tmp:
        for n in sorted(args.sizes):
            if n > len(vecs):
                break
            r = measure(vecs[:n], queries, args.k, Path(tmp))
            rows.append(r)
            print(f"| {n:,} | {r['exact_p50_ms']} | {r['ann_p50_ms']} | {r['recall_at_10']} | {r['build_s']} | "
                  f"{r['file_mib']} |", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "load": os.getloadavg(), "k": args.k,
                                         "vectors": str(args.from_db or "clustered random")}, indent=1))
    return 0
