"""Recall latency at scale, for comparing two checkouts of memlane on the same database.

Build once (real model; slow), then measure recall p50/p95 with any checkout's code on a copy:

    memlane bench recall-latency build /tmp/lat.db --n 10000
    memlane bench recall-latency measure /tmp/lat.db --code-root /work/main
    memlane bench recall-latency measure /tmp/lat.db --code-root .

The memories are synthetic English and Chinese sentences from fixed word lists (seeded, so every run
builds the same text). `measure` copies the database first, so runs never see each other's writes.
"""

from __future__ import annotations

import importlib
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from commands._common import argument_parser
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


def build(db: Path, n: int, code_root: Path) -> None:
    memory, config = _load(code_root)
    from tqdm import tqdm

    with tempfile.TemporaryDirectory() as home:
        cfg = config.load_config({"HOME": home})
        with memory.Memory(db, config=cfg) as mem:
            for text in tqdm(sentences(n), desc="remember", unit="mem", file=sys.stderr):
                mem.remember(text, namespace="bench")
            t0 = time.perf_counter()
            mem.flush(timeout=None)
            print(f"embedded {n} memories in {time.perf_counter() - t0:.0f} s")


def measure(db: Path, code_root: Path, rounds: int) -> None:
    memory, config = _load(code_root)
    with tempfile.TemporaryDirectory() as home:
        copy = Path(home) / "copy.db"
        shutil.copyfile(db, copy)
        cfg = config.load_config({"HOME": home})
        with memory.Memory(copy, config=cfg) as mem:
            for q in QUERIES:  # warm: model, jieba, lexicon, query-vector cache
                mem.recall(q, namespace="bench")
            lat = []
            for _ in range(rounds):
                for q in QUERIES:
                    t0 = time.perf_counter()
                    mem.recall(q, namespace="bench")
                    lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    print(f"code={code_root.resolve()} recalls={len(lat)} p50={statistics.median(lat):.1f} ms p95={p95:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench recall-latency", t("cli.help.bench_recall_latency"))
    ap.add_argument("action", choices=("build", "measure"), help=t("cli.help.lat_action"))
    ap.add_argument("db", type=Path, help=t("cli.help.lat_db"))
    ap.add_argument("--n", type=int, default=10000, help=t("cli.help.lat_n"))
    ap.add_argument("--rounds", type=int, default=5, help=t("cli.help.lat_rounds"))
    ap.add_argument("--code-root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help=t("cli.help.lat_code_root"))
    args = ap.parse_args(argv)
    if args.action == "build":
        build(args.db, args.n, args.code_root)
    else:
        measure(args.db, args.code_root, args.rounds)
    return 0
