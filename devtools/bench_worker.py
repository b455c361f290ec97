"""Embedding-worker throughput: how fast memories get their own vector, and then their context windows.

    memlane bench worker --n 300                                # this checkout, shipped defaults
    memlane bench worker --n 300 --disable context_vectors      # no context work at all
    memlane bench worker --n 300 --code-root /tmp/conv-prev     # another checkout (e.g. the previous commit)

Writes N synthetic conversation turns (bench recall-latency's seeded sentences) in sessions of
--session turns (source "bench", metadata.session, so every session is a thread with context
vectors), with the worker running. Reports the worker's own-vector rate (first remember to an empty
embedding queue), the time until the context-window queue is empty too, and the raw embedder's rate
on the same texts in the same process, whose ratio says more than the rate on a shared machine. Run
two variants at the same time to compare them under the same load.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from commands._common import argument_parser
from devtools.bench_recall_latency import _load, sentences
from i18n_messages import t
from store import bench_support

TIMEOUT_S = 3600


def _wait(pending, deadline: float) -> float:  # type: ignore[no-untyped-def]
    """perf_counter() once pending() is 0, polled every 10 ms."""
    while pending() > 0:
        if time.monotonic() > deadline:
            raise SystemExit(t("quality.eval_no_drain", seconds=TIMEOUT_S))
        time.sleep(0.01)
    return time.perf_counter()


def run(n: int, session: int, code_root: Path, disable: list[str]) -> str:
    memory, config = _load(code_root)
    texts = sentences(n, seed=11)
    with tempfile.TemporaryDirectory(prefix="memlane-bench-worker-") as home:
        cfg = config.load_config({"HOME": home}, overrides={name: False for name in disable})
        with memory.Memory(Path(home) / "w.db", config=cfg) as mem:
            mem.embedder.embed_passages(texts[:8])  # warm the model
            t0 = time.perf_counter()
            mem.embedder.embed_passages(texts)
            raw = n / (time.perf_counter() - t0)
            pending_ctx = getattr(mem, "pending_context", lambda: 0)  # older checkouts: no deferred queue
            deadline = time.monotonic() + TIMEOUT_S
            t0 = time.perf_counter()
            for i, text in enumerate(texts):
                mem.remember(text, namespace="bench", source="bench", metadata={"session": i // session})
            own = _wait(mem.pending_embeddings, deadline) - t0
            both = _wait(pending_ctx, deadline) - t0
            ctx = bench_support.context_vector_count(mem.store)
    return (f"code={code_root.resolve()} disabled={','.join(disable) or '-'} n={n}: raw embedder {raw:.1f}/s; "
            f"own vectors {n / own:.1f}/s ({own:.1f} s, ratio to raw {n / own / raw:.2f}); "
            f"own + context windows {both:.1f} s ({ctx} context vectors)")


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench worker", t("cli.help.bench_worker"))
    ap.add_argument("--n", type=int, default=300, help=t("cli.help.worker_n"))
    ap.add_argument("--session", type=int, default=20, help=t("cli.help.worker_session"))
    ap.add_argument("--disable", default="", help=t("cli.help.eval_disable", techniques="context_vectors, ..."))
    ap.add_argument("--code-root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help=t("cli.help.lat_code_root"))
    args = ap.parse_args(argv)
    disable = [x.strip() for x in args.disable.split(",") if x.strip()]
    print(run(args.n, args.session, args.code_root, disable))
    return 0
