"""`memlane bench profile`: where the time of one recall goes, stage by stage.

    ./memlane bench profile --from-db DB [--queries 50] [--namespace bench]

Copies DB to a temp folder, opens it, embeds the benchmark's queries once (so the query vector cache
is warm and the model is out of the picture), then runs each query once under cProfile with the lanes
one after another (one thread, so a stage's time is its own). Prints the mean milliseconds per recall
spent inside each stage (cumulative: a stage includes what it calls), and the load average.
Then, on the same copy: how long `remember` of the longest Chinese memory (random common CJK
characters, the segmenter's worst case) takes to be acknowledged, and a recall of the longest query.
"""

from __future__ import annotations

import cProfile
import dataclasses
import os
import pstats
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from commands._common import argument_parser
from i18n_messages import t

# (label, file suffix, function name) of each stage, in the order a recall runs them.
STAGES = (
    ("validation and plan", "memory.py", "_lanes_arg"),
    ("query vector (cache hit)", "memory.py", "query_vector"),
    ("vector lane (store.nearest + per-language ranking)", "recall/lanes.py", "vector"),
    ("  store.nearest", "store/sqlite.py", "nearest"),
    ("meta lane", "recall/lanes.py", "meta"),
    ("entity lane", "recall/lanes.py", "entity"),
    ("graph lane", "recall/lanes.py", "graph"),
    ("lexicon bridge", "recall/lanes.py", "bridge"),
    ("fusion", "recall/pipeline.py", "fuse"),
    ("rerank", "recall/rank.py", "rerank"),
    ("hydration", "recall/hydrate.py", "hits"),
    ("recall_log row (queue or write)", "memory.py", "_log_recall"),
    ("whole recall", "memory.py", "recall"),
)


def main(argv: list[str] | None = None) -> int:
    from commands.benchmark import NS, make_queries
    from config import load_config
    from memory import Memory

    ap = argument_parser("memlane bench profile", t("cli.help.bench_profile"))
    ap.add_argument("--from-db", type=Path, required=True, help=t("cli.help.bench_from_db"))
    ap.add_argument("--queries", type=int, default=50, help=t("cli.help.bench_queries"))
    ap.add_argument("--namespace", default=NS, help=t("cli.help.bench_namespace"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlane-profile-") as tmp:
        db = Path(tmp) / "p.db"
        shutil.copyfile(args.from_db, db)
        cfg = load_config({"HOME": tmp, "MEMLANE_PARALLEL_LANES": "false"})
        with Memory(db, config=cfg, start_worker=False) as mem:
            queries = make_queries(args.queries, mem.store.count_memories(args.namespace), 42)
            mem.store.ann.get(args.namespace)
            mem.store.ann.wait()
            for q in queries:  # warm: model, segmenter, lexicon, query vectors
                mem.recall(q, namespace=args.namespace)
            mem.config = dataclasses.replace(mem.config, query_cache_size=4096)
            for q in queries:
                mem.query_vector(q)
            prof = cProfile.Profile()
            prof.enable()
            for q in queries:
                mem.recall(q, namespace=args.namespace)
            prof.disable()
            long = long_texts(mem, args.namespace)
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    print(f"load average: {os.getloadavg()}; {len(queries)} recalls, lanes on one thread, query vectors cached")
    print("| stage | ms per recall |")
    print("|---|---|")
    for label, suffix, name in STAGES:
        total = sum(v[3] for (file, _, fn), v in stats.items() if fn == name and file.endswith(suffix))
        print(f"| {label} | {total * 1000 / len(queries):.2f} |")
    print(f"remember of {long['content_chars']:,} random CJK characters acknowledged in {long['remember_ms']} ms; "
          f"recall of a {long['query_chars']:,}-character query (random CJK) in {long['recall_ms']} ms, "
          f"(half CJK, half an English question repeated) in {long['mixed_recall_ms']} ms")
    return 0


def long_texts(mem: Any, namespace: str) -> dict[str, Any]:
    rng = random.Random(7)
    cfg = mem.config

    def cjk(n: int) -> str:
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n))

    content, query = cjk(cfg.max_content_chars), cjk(cfg.max_query_chars)
    mixed = (cjk(cfg.max_query_chars // 2) + " What did Bob say about the project deadline?" * 40)[: cfg.max_query_chars]
    out: dict[str, Any] = {"content_chars": len(content), "query_chars": len(query)}
    for key, fn in (("remember_ms", lambda: mem.remember(content, namespace="long")),
                    ("recall_ms", lambda: mem.recall(query, namespace=namespace)),
                    ("mixed_recall_ms", lambda: mem.recall(mixed, namespace=namespace))):
        t0 = time.perf_counter()
        fn()
        out[key] = round((time.perf_counter() - t0) * 1000, 1)
    return out
