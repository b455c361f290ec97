"""`memlane bench halfvec`: an A/B kept so the figure in docs/BENCHMARKS.md can be re-run (faster at 100k
here; the store's query over a halfvec index was slower at 1M, so it is not shipped). pgvector's HNSW
over full vectors against an HNSW over the same vectors cast to halfvec (half the bytes a vector), one
throwaway PostgreSQL, one table, both indexes, queried in turn at each ef_search.

    ./memlane bench halfvec --chunks 100000 --ef-search 100 200 400

The queries and the table are store/bench_support.py's. Recall is
ann-benchmarks' distance recall against an exact numpy scan (devtools/bench_engines.py, EPS).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from commands import pg_local
from commands._common import argument_parser
from devtools import bench_engines as be
from i18n_messages import t
from store import bench_support


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
    import psycopg  # optional dependency, PostgreSQL only

    vecs, qs = be.composed(args.chunks, args.queries, 7)
    with tempfile.TemporaryDirectory(prefix="memlane-halfvec-") as tmp:
        server = pg_local.start(Path(tmp) / "pg", durable=True, shared_buffers=args.pg_shared_buffers)
        try:
            with psycopg.connect(server.url(), autocommit=True) as conn:
                built, sizes = bench_support.halfvec_build(conn, vecs)
                print(f"build s {built}, size MB {sizes}", flush=True)
                _, kths = be._exact(vecs, qs)  # before any timed query (bench_engines._measure says why)
                for ef in args.ef_search:
                    row = {"ef_search": ef}
                    for kind in ("full", "halfvec"):
                        lat, close = [], 0
                        for q, kth in zip(qs, kths.tolist(), strict=True):
                            ms, got = bench_support.halfvec_query(conn, kind, q, ef)
                            lat.append(ms)
                            close += sum(1 - float(vecs[s - 1] @ q) <= kth + be.EPS for s in got)
                        row[kind] = {"p50_ms": round(statistics.median(lat), 2),
                                     "recall_at_10_eps": round(close / (be.K * len(qs)), 4)}
                    print(row, flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
