"""Recall on a bilingual (English / 中文) set in the format of ../shared/eval/bilingual-dev.json.

Memories are stored in time order (valid_from; those without one first), with their tags and source,
but never with their `supersedes` field: telling the newer version from the older one is memlane's
job. A query is a hit at k when any `expect` id is in the top k. Reported: top-1/3/10 and MRR by kind
and by query language, the rate at which an `avoid` memory (the superseded version, for temporal_now)
outranks the expected one, and, in-process, the supersession links memlane made against the truth.
A query with an empty `expect` (kind `foreign`: about nobody stored) is a hit only when recall
returns no hit at all. Queries marked `"unseen": true` are held out: skipped unless `--unseen`, and
then reported apart from the seen ones (groups prefixed `unseen`).

    memlane eval bilingual ../shared/eval/bilingual-dev.json
    memlane eval bilingual PATH --lanes vector
    memlane eval bilingual PATH --disable crosslingual --json out.json
    memlane eval bilingual tests/data/bilingual-dev2.json --unseen   # end of an issue only
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from commands._common import argument_parser
from devtools import evalkit as ek
from i18n_messages import t
from store import bench_support

BASE_TIME = "2025-01-01T00:00:00+00:00"


def rank_of(got: list[str], ids: list[str]) -> int | None:
    """1-based rank of the first expected id; for a foreign query (no id expected) 1 when nothing came back."""
    if not ids:
        return None if got else 1
    ranks = [i for i, g in enumerate(got, 1) if g in ids]
    return ranks[0] if ranks else None


def score(qs: list[dict[str, Any]]) -> dict[str, float]:
    """top-1/3/10, MRR and (where some query has `avoid`) how often an avoided memory ranks above."""
    out: dict[str, float] = {"n": float(len(qs))}
    if not qs:
        return out
    for k in (1, 3, 10):
        out[f"top{k}"] = sum((rank_of(q["got"], q["expect"]) or 99) <= k for q in qs) / len(qs)
    out["mrr"] = sum(1.0 / r if (r := rank_of(q["got"], q["expect"])) else 0.0 for q in qs) / len(qs)
    with_avoid = [q for q in qs if q.get("avoid")]
    if with_avoid:
        above = 0
        for q in with_avoid:
            e = rank_of(q["got"], q["expect"]) or 999
            a = rank_of(q["got"], q["avoid"]) or 1000
            above += a < e
        out["avoid_above"] = above / len(with_avoid)
    return out


def asked(queries: list[dict[str, Any]], unseen: bool) -> list[dict[str, Any]]:
    """The queries to ask: the seen ones, and the held-out (`"unseen": true`) ones only when asked for."""
    return [q for q in queries if unseen or not q.get("unseen")]


def grouped(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Scores by kind and by language, then overall; unseen queries form their own `unseen ...` groups."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in results:
        part = "unseen " if q.get("unseen") else ""
        groups[part + "kind " + q["kind"]].append(q)
        groups[part + "lang " + q["lang"]].append(q)
        groups["unseen overall" if part else "overall"].append(q)
    names = sorted(g for g in groups if not g.endswith("overall"))
    order = [n for n in names if not n.startswith("unseen")] + ["overall"] + \
        [n for n in names if n.startswith("unseen")] + ["unseen overall"]
    return {name: score(groups[name]) for name in order if name in groups}


def _ask(backend: Any, data: dict[str, Any], args: Any, lanes: list[str] | None) -> tuple[
        list[dict[str, Any]], list[float], list[tuple[str, str]]]:
    """Store the memories in time order, then ask the chosen queries: (answers, latencies, supersession links)."""

    mems = sorted(data["memories"], key=lambda m: m.get("valid_from") or "")
    ns = "bilingual-" + str(data.get("name", "set"))[:40].replace(" ", "_")
    id_of: dict[str, str] = {}
    results: list[dict[str, Any]] = []
    latencies: list[float] = []
    links: list[tuple[str, str]] = []
    try:
        for m in tqdm(mems, desc="ingest", unit="mem", file=sys.stderr):
            r = backend.remember(content=m["content"], namespace=ns, source=m.get("source"),
                                 tags=m.get("tags") or [], valid_from=m.get("valid_from") or BASE_TIME,
                                 metadata={"eval_id": m["id"]})
            id_of[r["chunk_id"]] = m["id"]
        backend.flush()
        db = backend.db()
        if db is not None:
            links = [(id_of.get(old, old), id_of.get(new, new))
                     for old, new in bench_support.supersession_links(db, ns)]
        for q in tqdm(asked(data["queries"], args.unseen), desc="recall", unit="q", file=sys.stderr):
            kw = ek.recall_args(args, q["query"], ns, lanes)
            t0 = time.perf_counter()
            res = backend.recall(**kw)
            latencies.append((time.perf_counter() - t0) * 1000)
            got = [str((h.get("metadata") or {}).get("eval_id", "")) for h in res["hits"]]
            results.append({**q, "got": got})
    finally:
        backend.close()
    return results, latencies, links


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane eval bilingual", t("cli.help.eval_bilingual"))
    ap.add_argument("path", help=t("cli.help.bilingual_path"))
    ek.add_run_arguments(ap)
    ap.add_argument("--misses", action="store_true", help=t("cli.help.bilingual_misses"))
    ap.add_argument("--unseen", action="store_true", help=t("cli.help.bilingual_unseen"))
    args = ap.parse_args(argv)

    lanes = ek.parse_list(args.lanes, ek.LANE_NAMES, "lane") or None
    disable = ek.parse_list(args.disable, ek.TECHNIQUES, "technique")
    enable = ek.parse_list(args.enable, ek.TECHNIQUES, "technique")
    data = json.loads(Path(args.path).read_text(encoding="utf-8"))
    settings = ek.parse_settings(args.set)
    backend = ek.make_backend(args.url or None, args.token or None, disable, args.db or None, enable, settings)
    results, latencies, links = _ask(backend, data, args, lanes)
    held = sum(bool(q.get("unseen")) for q in data["queries"])
    cols = ["n", "top1", "top3", "top10", "mrr", "avoid_above"]
    metrics = grouped(results)
    rows = [[name] + [int(m["n"]) if c == "n" else m.get(c, float("nan")) for c in cols] for name, m in metrics.items()]
    part = "asked" if args.unseen else f"{held} held out"
    print(f"\nbilingual recall: {args.path}  unseen={part}  lanes={','.join(lanes or ek.LANE_NAMES)}  "
          f"disabled={','.join(disable) or '-'}  enabled={','.join(enable) or '-'}  backend={'daemon ' + args.url if args.url else 'in-process'}")
    print(ek.table(["group"] + cols, rows))
    now = metrics.get("kind temporal_now", {})
    print(f"\nsuperseded version above the current one ('now' questions): {now.get('avoid_above', float('nan')):.1%}")
    truth = {(m["supersedes"], m["id"]) for m in data["memories"] if m.get("supersedes")}
    sup: dict[str, Any] = {}
    if args.url:  # the in-process store is already closed here; only a daemon hides the links
        print("supersession links: not visible over --url")
    else:
        tp = len(set(links) & truth)
        fp = sorted(set(links) - truth)
        sup = {"links": len(links), "true": tp, "false": len(fp), "missed": len(truth) - tp, "truth": len(truth)}
        print(f"supersession links made: {len(links)}; true {tp}/{len(truth)}, false positives {len(fp)}"
              + (f" {fp}" if fp else ""))
    p50, p95 = ek.percentile(latencies, 0.5), ek.percentile(latencies, 0.95)
    print(f"recall latency: p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(latencies)} queries")
    if args.misses:
        for q in results:
            r = rank_of(q["got"], q["expect"])
            if r != 1:
                print(f"  {q['id']} [{q['kind']}/{q['lang']}] rank={r} want={q['expect']} avoid={q.get('avoid')} "
                      f"got={q['got'][:5]}  {q['query']}")
    if args.json:
        payload = {"path": args.path, "lanes": lanes or list(ek.LANE_NAMES), "disabled": disable, "enabled": enable,
                   "unseen": bool(args.unseen), "metrics": metrics,
                   "supersession": sup, "latency_ms": {"p50": p50, "p95": p95}}
        ek.write_json(args.json, payload)
    return 0
