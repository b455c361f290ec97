"""`memlane bench profile`: where the time of one recall goes, stage by stage.

    ./memlane bench profile --from-db DB [--queries 50] [--namespace bench] [--cold]

Copies DB to a temp folder, opens it, embeds the benchmark's queries once (so the query vector cache
is warm and the model is out of the picture), recalls each once to warm up, then times each query's
recall with the lanes one after another (one thread, so a stage's time is its own). Each stage is timed
by a wall clock wrapped around its function (cProfile's per-call cost had inflated the stages made of
many small calls two to three times). Prints the mean milliseconds per recall spent inside each stage
(a stage includes what it calls), and the load average.

With --cold the timed questions are others than the warm-up's (their vectors still cached): what a
daemon answering new questions pays, with the per-text caches (predicate classes, term patterns) cold.
With --cpu each stage is timed by the thread's CPU clock instead of the wall clock: all of a recall runs
on one thread here, so this reads the same while other work holds the cores (a build, a test suite),
though it leaves out time spent waiting (for the disk, for the GIL).

Then, on the same copy: how long `remember` of the longest Chinese memory (random common CJK
characters, the segmenter's worst case) takes to be acknowledged, and a recall of the longest query.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from commands._common import argument_parser
from config import load_config
from devtools.corpus import NS, make_queries
from i18n_messages import t
from recall import hydrate, lanes, pipeline, rank

# (label, where, attribute) of each stage, in the order a recall runs them; `where` is a module of
# recall/, "memory" (the Memory) or "store" (its store).
STAGES = (
    ("validation and plan", "memory", "_lanes_arg"),
    ("query vector (cache hit)", "memory", "query_vector"),
    ("vector lane (store.nearest + per-language ranking)", "lanes", "vector"),
    ("  store.nearest", "store", "nearest"),
    ("context lane", "lanes", "context"),
    ("meta lane", "lanes", "meta"),
    ("entity lane", "lanes", "entity"),
    ("graph lane", "lanes", "graph"),
    ("  store.relations_touching", "store", "relations_touching"),
    ("  store.entity_chunk_counts (all callers)", "store", "entity_chunk_counts"),
    ("lexicon bridge", "lanes", "bridge"),
    ("fusion", "pipeline", "fuse"),
    ("rerank", "rank", "rerank"),
    ("thread prior", "rank", "thread_prior"),
    ("relevance", "pipeline", "relevance_of"),
    ("hydration", "hydrate", "hits"),
    ("recall_log row (queue or write)", "memory", "_log_recall"),
    ("whole recall", "memory", "recall"),
)


def _timers(mem: Any, clock: Callable[[], float] = time.perf_counter) -> tuple[dict[str, float], Callable[[], None]]:
    """Wrap every stage's function in a wall clock; returns the seconds per label and an undo."""

    owners = {"lanes": lanes, "pipeline": pipeline, "rank": rank, "hydrate": hydrate, "memory": mem, "store": mem.store}
    spent: dict[str, float] = dict.fromkeys((label for label, _, _ in STAGES), 0.0)
    undo = []
    for label, where, name in STAGES:
        owner, fn = owners[where], getattr(owners[where], name)

        def timed(*a: Any, _fn: Callable[..., Any] = fn, _label: str = label, **k: Any) -> Any:
            t0 = clock()
            try:
                return _fn(*a, **k)
            finally:
                spent[_label] += clock() - t0

        setattr(owner, name, functools.wraps(fn)(timed))
        undo.append((owner, name, fn))

    def restore() -> None:
        for owner, name, fn in reversed(undo):
            if owner is mem or owner is mem.store:
                delattr(owner, name)  # the instance attribute goes; the class's method shows again
            else:
                setattr(owner, name, fn)

    return spent, restore


@contextmanager
def copied_memory(from_db: Path, prefix: str, env: dict[str, str]) -> Iterator[Any]:
    """A Memory (no worker) on a copy of `from_db` in a temp folder that is its HOME, with `env` over the
    defaults; the copy is deleted afterwards (bench profile, bench ab)."""
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        db = Path(tmp) / "copy.db"
        shutil.copyfile(from_db, db)
        with Memory(db, config=load_config({"HOME": tmp, **env}), start_worker=False) as mem:
            yield mem


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench profile", t("cli.help.bench_profile"))
    ap.add_argument("--from-db", type=Path, required=True, help=t("cli.help.bench_from_db"))
    ap.add_argument("--queries", type=int, default=50, help=t("cli.help.bench_queries"))
    ap.add_argument("--namespace", default=NS, help=t("cli.help.bench_namespace"))
    ap.add_argument("--cold", action="store_true", help=t("cli.help.bench_profile_cold"))
    ap.add_argument("--cpu", action="store_true", help=t("cli.help.bench_profile_cpu"))
    args = ap.parse_args(argv)
    with copied_memory(args.from_db, "memlane-profile-", {"MEMLANE_PARALLEL_LANES": "false"}) as mem:
        n = mem.store.count_memories(args.namespace)
        queries = make_queries(args.queries, n, 42)
        warm = make_queries(args.queries, n, 4242) if args.cold else queries
        if args.cold:
            seen = set(warm)
            queries = [q for q in queries if q not in seen]
        mem.store.ann.get(args.namespace)
        mem.store.ann.wait()
        mem.config = dataclasses.replace(mem.config, query_cache_size=4096)
        for q in warm:  # warm: model, segmenter, lexicon, caches
            mem.recall(q, namespace=args.namespace)
        for q in queries:
            mem.query_vector(q)
        spent, restore = _timers(mem, time.thread_time if args.cpu else time.perf_counter)
        try:
            for q in queries:
                mem.recall(q, namespace=args.namespace)
        finally:
            restore()
        long = long_texts(mem, args.namespace)
    print(f"load average: {os.getloadavg()}; {len(queries)} recalls{' of new questions' if args.cold else ''}, "
          f"lanes on one thread, query vectors cached; {'CPU time of the thread' if args.cpu else 'wall time'}")
    print("| stage | ms per recall |")
    print("|---|---|")
    for label, _, _ in STAGES:
        print(f"| {label} | {spent[label] * 1000 / max(1, len(queries)):.2f} |")
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
