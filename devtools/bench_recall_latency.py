"""Recall latency at scale, for comparing two checkouts of memlane on the same database.

Build once (real model; slow), then measure recall p50/p95 with any checkout's code on a copy:

    memlane bench recall-latency build /tmp/lat.db --n 10000
    memlane bench recall-latency measure /tmp/lat.db --code-root /work/main
    memlane bench recall-latency measure /tmp/lat.db --code-root .

A conversation-shaped store (`build --session 20`: source "bench" and metadata.session, so every
session is a thread with context vectors and its turns carry dates), measured paired: each query is
timed with the shipped defaults and with the named techniques off, alternately, in one process:

    memlane bench recall-latency build /tmp/conv.db --n 10000 --session 20
    memlane bench recall-latency measure /tmp/conv.db --against context_vectors,time_grounding

The memories are synthetic English and Chinese sentences from fixed word lists (seeded, so every run
builds the same text). `measure` copies the database first, so runs never see each other's writes.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from commands._common import argument_parser
from devtools.evalkit import TECHNIQUES, parse_list
from i18n_messages import t

NAMES = "Alice Bob Priya Daniel Mia Henrik Tom Alicia Wang Lin Sofia Omar Chen Lucas Ana Ivan Yuki Sara Leo Nina".split()
PLACES = "Berlin Lisbon Tokyo Chengdu Paris Madrid Oslo Austin Seoul Porto Vienna Boston Dublin Prague Zurich".split()
ORGS = "Stripe SAP Plaid Shopify Linear Ledgerly Tidepool Nordvik Buildkite Fargate Postgres MySQL Redis SQS".split()
VERBS = ["moved to", "works at", "visited", "decided on", "fixed a bug in", "bought shares of", "met someone from",
         "wrote about", "reviewed", "deployed to", "cancelled the trip to", "is learning about"]
ZH_NAMES = "王蕾 王磊 林晓 张伟 李娜 刘洋 陈静 杨帆 赵敏 黄磊".split()
ZH_PLACES = "北京 上海 成都 柏林 东京 里斯本 杭州 深圳 广州 西安".split()
ZH_VERBS = ["搬到了", "在", "去了", "决定用", "修复了", "买入了", "卖出了", "参观了", "部署到", "讨论了"]
ZH_TAILS = ["的项目", "的公司", "工作", "开会", "的方案", "的仓位", "的问题", "旅行", "的数据库", "的服务器"]
QUERIES = ["Where does Alice live now?", "Who works at Stripe?", "what did Bob buy", "Postgres decision",
           "Why did Priya move to Lisbon?", "How many shares of SAP?", "王蕾现在在哪里工作？", "成都的项目怎么样了",
           "谁搬到了柏林？", "sh600089 建仓价", "Which bug did Tom fix in Ledgerly and where was it deployed?",
           "Daniel visited Tokyo", "林晓决定用什么数据库？", "Redis or SQS for the queue?", "deploy to Fargate",
           "Mia is learning about dinosaurs", "What did Henrik review?", "上海的服务器", "Alicia met someone from Plaid",
           "cancelled trip"]


def sentences(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if rng.random() < 0.3:
            out.append(f"{rng.choice(ZH_NAMES)}{rng.choice(ZH_VERBS)}{rng.choice(ZH_PLACES)}{rng.choice(ZH_TAILS)}，"
                       f"大约 {rng.randint(2, 900)} 个，编号 {i}。")
        else:
            out.append(f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(PLACES + ORGS)} in "
                       f"{rng.randint(2015, 2026)}; note {i} mentions {rng.choice(ORGS)} and {rng.randint(1, 999)} items.")
    return out


def _load(code_root: Path):  # type: ignore[no-untyped-def]
    # The one sys.path edit in commands/, on purpose: it loads another checkout's memory.py to time it.
    sys.path.insert(0, str(code_root.resolve()))
    for mod in ("memory", "config", "embedder", "entity_resolve", "validate", "errors", "i18n_messages"):
        sys.modules.pop(mod, None)
    return importlib.import_module("memory"), importlib.import_module("config")


def build(db: Path, n: int, code_root: Path, session: int = 0) -> None:
    """Write n memories; with `session`, as conversation turns in sessions of that many (one thread each)."""
    memory, config = _load(code_root)

    with tempfile.TemporaryDirectory() as home:
        cfg = config.load_config({"HOME": home})
        with memory.Memory(db, config=cfg) as mem:
            for i, text in enumerate(tqdm(sentences(n), desc="remember", unit="mem", file=sys.stderr)):
                if session:
                    mem.remember(text, namespace="bench", source="bench", metadata={"session": i // session})
                else:
                    mem.remember(text, namespace="bench")
            t0 = time.perf_counter()
            mem.flush(timeout=None)
            pending = getattr(mem, "pending_context", lambda: 0)  # older checkouts: no context windows
            while pending() > 0:
                time.sleep(0.5)
            print(f"embedded {n} memories (and their context windows) in {time.perf_counter() - t0:.0f} s")


def _summary(lat: list[float]) -> str:
    lat = sorted(lat)
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    return f"recalls={len(lat)} p50={statistics.median(lat):.1f} ms p95={p95:.1f} ms"


def measure(db: Path, code_root: Path, rounds: int, against: list[str] | None = None) -> None:
    """p50/p95 of recall on a copy of db; with `against`, each query is also timed with those
    techniques off, right after, in the same process (a paired run: the same load for both)."""
    memory, config = _load(code_root)
    with tempfile.TemporaryDirectory() as home:
        copy = Path(home) / "copy.db"
        shutil.copyfile(db, copy)
        cfg = config.load_config({"HOME": home})
        with memory.Memory(copy, config=cfg) as mem:
            variants: list[tuple[Any, list[float]]] = [(None, [])]
            if against:
                variants.append((dataclasses.replace(mem.config, **{name: False for name in against}), []))
            for q in QUERIES:  # warm: model, jieba, lexicon, query-vector cache
                mem.recall(q, namespace="bench")
            ann_index = getattr(mem.store, "ann", None)
            if ann_index is not None:  # the copy has no index files: time the steady state, not their build
                ann_index.wait()
            shipped = mem.config
            for r in range(rounds):
                for q in QUERIES:
                    # Alternate which variant goes first, so neither always meets a warm cache.
                    for cfg_v, lat in variants if r % 2 == 0 else variants[::-1]:
                        mem.config = cfg_v or shipped
                        t0 = time.perf_counter()
                        mem.recall(q, namespace="bench")
                        lat.append((time.perf_counter() - t0) * 1000)
            mem.config = shipped
    print(f"code={code_root.resolve()} {_summary(variants[0][1])}")
    if against:
        base, other = statistics.median(variants[0][1]), statistics.median(variants[1][1])
        print(f"without {','.join(against)}: {_summary(variants[1][1])}; p50 ratio {base / other:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench recall-latency", t("cli.help.bench_recall_latency"))
    ap.add_argument("action", choices=("build", "measure"), help=t("cli.help.lat_action"))
    ap.add_argument("db", type=Path, help=t("cli.help.lat_db"))
    ap.add_argument("--n", type=int, default=10000, help=t("cli.help.lat_n"))
    ap.add_argument("--rounds", type=int, default=5, help=t("cli.help.lat_rounds"))
    ap.add_argument("--session", type=int, default=0, help=t("cli.help.lat_session"))
    ap.add_argument("--against", default="", help=t("cli.help.lat_against"))
    ap.add_argument("--code-root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help=t("cli.help.lat_code_root"))
    args = ap.parse_args(argv)
    if args.action == "build":
        build(args.db, args.n, args.code_root, args.session)
    else:
        against = parse_list(args.against, TECHNIQUES, "--against")
        measure(args.db, args.code_root, args.rounds, against)
    return 0
