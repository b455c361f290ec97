"""`memlane bench ab`: one config switch on and off, question by question, in one process.

    ./memlane bench ab --from-db DB --switch asked_beside [--queries 100] [--passes 3] [--namespace bench]

Copies DB to a temp folder and opens it with the query cache off, warms up on other questions, then asks
each of the benchmark's new questions with the switch on and with it off, one right after the other, the
order alternating from pass to pass. On a shared machine whose load moves by the minute this compares like
with like: both readings of a question see the same load. Prints p50, p95 and mean for each side, the
median of the per-question ratio (on ÷ off), and how many recalls returned different hits or relevance (a
switch that is meant to change speed only must have none).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path
from typing import Any

from commands._common import argument_parser
from config import Config
from devtools.bench_profile import copied_memory
from devtools.corpus import NS, WARMUP, distinct_queries
from i18n_messages import t


def switches() -> list[str]:
    """The Config booleans a run can compare."""
    return sorted(f.name for f in dataclasses.fields(Config) if f.type in (bool, "bool"))


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
            "mean_ms": round(statistics.mean(ordered), 2), "count": len(ordered)}


def compare(mem: Any, switch: str, questions: list[str], passes: int, namespace: str) -> dict[str, Any]:
    """Each question asked with `switch` on and off, back to back, for `passes` passes (the first side
    alternating); the readings of each side, the per-question ratios and the recalls whose hits differ."""
    base = mem.config
    sides = {True: dataclasses.replace(base, **{switch: True}), False: dataclasses.replace(base, **{switch: False})}
    times: dict[bool, list[float]] = {True: [], False: []}
    ratios, differ = [], 0
    try:
        for n in range(passes):
            for q in questions:
                got: dict[bool, Any] = {}
                took: dict[bool, float] = {}
                for side in ((True, False) if n % 2 == 0 else (False, True)):
                    mem.config = sides[side]
                    t0 = time.perf_counter()
                    hits = mem.recall(q, namespace=namespace)["hits"]
                    took[side] = (time.perf_counter() - t0) * 1000
                    got[side] = [(h["chunk_id"], h["relevance"]) for h in hits]
                    times[side].append(took[side])
                ratios.append(took[True] / took[False])
                differ += got[True] != got[False]
    finally:
        mem.config = base
    return {"switch": switch, "on": summary(times[True]), "off": summary(times[False]),
            "ratio_median": round(statistics.median(ratios), 3), "recalls_differ": differ,
            "questions": len(questions), "passes": passes}


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench ab", t("cli.help.bench_ab"))
    ap.add_argument("--from-db", type=Path, required=True, help=t("cli.help.bench_from_db"))
    ap.add_argument("--switch", required=True, choices=switches(), help=t("cli.help.bench_ab_switch"))
    ap.add_argument("--queries", type=int, default=100, help=t("cli.help.bench_queries"))
    ap.add_argument("--passes", type=int, default=3, help=t("cli.help.bench_ab_passes"))
    ap.add_argument("--namespace", default=NS, help=t("cli.help.bench_namespace"))
    args = ap.parse_args(argv)
    if not 1 <= args.queries <= 10_000 or not 1 <= args.passes <= 100:
        ap.error(t("cli.bench_ab_bounds"))
    with copied_memory(args.from_db, "memlane-ab-", {"MEMLANE_QUERY_CACHE_SIZE": "0"}) as mem:
        warm, questions = distinct_queries(args.queries, 2, max(mem.store.count_memories(args.namespace), 1), 42)
        for q in warm[: 2 * WARMUP]:  # the model, the relevance cohort, the segmenter, the lexicon
            mem.recall(q, namespace=args.namespace)
        result = compare(mem, args.switch, questions, args.passes, args.namespace)
    for side in ("on", "off"):
        print(t("bench.ab_side", switch=args.switch, side=side, **result[side]))
    print(t("bench.ab_ratio", ratio=result["ratio_median"], differ=result["recalls_differ"],
            total=result["questions"] * result["passes"]))
    return 0
