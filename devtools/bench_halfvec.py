"""`memlane bench halfvec`: an A/B kept so the figure in docs/BENCHMARKS.md can be re-run (faster at 100k
here; the store's query over a halfvec index was slower at 1M, so it is not shipped). pgvector's HNSW
over full vectors against an HNSW over the same vectors cast to halfvec (half the bytes a vector), one
throwaway PostgreSQL, one table, both indexes, queried in turn at each ef_search.

    ./memlane bench halfvec --chunks 100000 --ef-search 100 200 400

The halfvec query re-ranks its 10 by the full vectors' distance, as a shipped one would. Recall is
ann-benchmarks' distance recall against an exact numpy scan (devtools/bench_engines.py, EPS).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from commands import pg_local
from commands._common import argument_parser
from devtools import bench_engines as be
from i18n_messages import t

FULL = "select seq from v order by embedding <=> %s limit 10"
HALF = ("select seq from (select seq, embedding <=> %s as d from v order by embedding::halfvec(384) <=> %s::halfvec(384) "
        "limit 10) s order by d")


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench halfvec", t("cli.help.bench_halfvec"))
    ap.add_argument("--chunks", type=int, default=100_000, help=t("cli.help.bench_chunks"))
    ap.add_argument("--queries", type=int, default=200, help=t("cli.help.bench_queries"))
    ap.add_argument("--ef-search", type=int, nargs="+", default=[100, 200, 400], help=t("cli.help.bench_ef_search"))
    ap.add_argument("--pg-shared-buffers", default="1GB", help=t("cli.help.bench_pg_shared_buffers"))
    args = ap.parse_args(argv)
    if not 1_000 <= args.chunks <= 5_000_000 or not 1 <= args.queries <= 10_000 \
            or any(not 1 <= ef <= 1000 for ef in args.ef_search):
        print(t("bench.bad_halfvec_args"), file=sys.stderr)
        return 2
    # Deferred: optional engine, psycopg is loaded only when PostgreSQL is used.
    import psycopg
    from pgvector.psycopg import register_vector

    vecs, qs = be.composed(args.chunks, args.queries, 7)
    with tempfile.TemporaryDirectory(prefix="memlane-halfvec-") as tmp:
        server = pg_local.start(Path(tmp) / "pg", durable=True, shared_buffers=args.pg_shared_buffers)
        try:
            with psycopg.connect(server.url(), autocommit=True) as conn:
                conn.execute("create extension if not exists vector")
                register_vector(conn)
                conn.execute(f"create table v (seq bigint primary key, embedding vector({be.DIM}))")
                with conn.cursor() as cur, cur.copy("copy v (seq, embedding) from stdin with (format binary)") as cp:
                    cp.set_types(["int8", "vector"])
                    for i, x in enumerate(vecs):
                        cp.write_row((i + 1, x))
                conn.execute(f"set maintenance_work_mem = '{max(1024, args.chunks * 4 * 1024 // 1_000_000)}MB'")
                built = {}
                for name, expr, ops in (("v_full", "embedding", "vector_cosine_ops"),
                                        ("v_half", f"(embedding::halfvec({be.DIM}))", "halfvec_cosine_ops")):
                    t0 = time.perf_counter()
                    conn.execute(f"create index {name} on v using hnsw ({expr} {ops}) with (m = 32, ef_construction = 128)")
                    built[name] = round(time.perf_counter() - t0, 1)
                sizes = dict(conn.execute("select relname, pg_relation_size(oid) / 1048576 from pg_class "
                                          "where relname in ('v_full', 'v_half')").fetchall())
                print(f"build s {built}, size MB {sizes}", flush=True)
                _, kths = be._exact(vecs, qs)  # before any timed query (bench_engines._measure says why)
                for ef in args.ef_search:
                    row = {"ef_search": ef}
                    for kind, sql in (("full", FULL), ("halfvec", HALF)):
                        lat, close = [], 0
                        for q, kth in zip(qs, kths.tolist(), strict=True):
                            with conn.transaction():
                                conn.execute("select set_config('hnsw.ef_search', %s, true)", (str(ef),))
                                t0 = time.perf_counter()
                                got = conn.execute(sql, (q,) if kind == "full" else (q, q)).fetchall()
                                lat.append((time.perf_counter() - t0) * 1000)
                            close += sum(1 - float(vecs[s - 1] @ q) <= kth + be.EPS for (s,) in got)
                        row[kind] = {"p50_ms": round(statistics.median(lat), 2),
                                     "recall_at_10_eps": round(close / (be.K * len(qs)), 4)}
                    print(row, flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
