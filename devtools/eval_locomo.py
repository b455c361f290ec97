"""Turn-level recall on LoCoMo conversations: any@k, frac@k, all@k (k = 1, 5, 10) and MRR.

Turns are stored exactly as a black-box evaluation calls the daemon: each conversation in its own
namespace, every turn in order as one memory "Speaker: text" with source "locomo", metadata
{dia_id, session, session_date, speaker}, valid_from the session's time, and no `thread` argument
(memlane must infer the conversation's threads itself). Each question of the chosen
categories (1-4 by default; 5 is adversarial) is recalled, and a hit is an evidence turn in the top k.
Session-level recall@10 (an evidence turn's session among the sessions of the top-10 turns) is shown
beside the turn-level figures, never instead of them.

    memlane eval locomo ../shared/eval/locomo-dev.json
    memlane eval locomo PATH --lanes meta            # BM25 alone
    memlane eval locomo PATH --disable rerank,facts  # ablation
    memlane eval locomo PATH --url http://127.0.0.1:8086/mcp --json out.json
    memlane eval locomo PATH --json new.json --baseline old.json  # run, then the ship verdict
    memlane eval locomo --compare new.json --baseline old.json    # two saved runs, no recall

Every run reports each conversation and the pool of all of them. The ship rule (issue 27): a change
ships only if the pool gains on the ship metric and no conversation loses more than 0.02 on any of
any@1/5/10, frac@10 and MRR.

The data is CC BY-NC: it is read from PATH and never copied anywhere.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from commands._common import argument_parser
from devtools.evalkit import (
    LANE_NAMES,
    TECHNIQUES,
    add_run_arguments,
    fmt,
    make_backend,
    parse_list,
    parse_settings,
    percentile,
    recall_args,
    table,
    write_json,
)
from i18n_messages import t

KS = (1, 5, 10)
SOURCE = "locomo"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def parse_session_date(raw: str | None) -> str | None:
    """LoCoMo dates look like '1:56 pm on 8 May, 2023'."""
    if not raw:
        return None
    for fmt_ in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(raw.strip(), fmt_).replace(tzinfo=timezone.utc).isoformat()
        except ValueError:
            continue
    return None


def turns_of(sample: dict[str, Any]) -> list[dict[str, Any]]:
    conv = sample["conversation"]
    out = []
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := re.fullmatch(r"session_(\d+)", key)))
    for num, key in sessions:
        raw_date = conv.get(f"{key}_date_time") or ""
        when = parse_session_date(raw_date)
        for turn in conv[key] or []:
            text = (turn.get("text") or "").strip()
            if not text:
                continue
            out.append({"dia_id": turn["dia_id"], "session": num, "speaker": turn.get("speaker", ""),
                        "session_date": raw_date, "content": f"{turn.get('speaker', '')}: {text}",
                        "valid_from": when})
    return out


def session_of(dia_id: str) -> int | None:
    m = re.match(r"D(\d+):", dia_id)
    return int(m.group(1)) if m else None

CONV_COLS = ("any@1", "any@5", "any@10", "frac@10", "mrr")
SHIP_LOSS = 0.02  # the most a single conversation may lose on any CONV_COLS metric


def score(qs: list[dict[str, Any]]) -> dict[str, float]:
    """any/frac/all@1/5/10, MRR and session@10 of answered questions ({evidence, got} each)."""
    out: dict[str, float] = {"n": float(len(qs))}
    if not qs:
        return out
    for k in KS:
        top = [set(q["got"][:k]) for q in qs]
        out[f"any@{k}"] = sum(bool(t & set(q["evidence"])) for t, q in zip(top, qs, strict=True)) / len(qs)
        out[f"frac@{k}"] = sum(len(t & set(q["evidence"])) / len(q["evidence"]) for t, q in zip(top, qs, strict=True)) / len(qs)
        out[f"all@{k}"] = sum(set(q["evidence"]) <= t for t, q in zip(top, qs, strict=True)) / len(qs)
    rr = []
    for q in qs:
        ranks = [i for i, d in enumerate(q["got"], 1) if d in q["evidence"]]
        rr.append(1.0 / ranks[0] if ranks else 0.0)
    out["mrr"] = sum(rr) / len(qs)
    sess_hit = 0
    for q in qs:
        want = {session_of(e) for e in q["evidence"]}
        have = {session_of(d) for d in q["got"][:10]}
        sess_hit += bool(want & have)
    out["session@10"] = sess_hit / len(qs)
    return out



def by_conversation(per_q: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Scores per namespace (one conversation each), in first-seen order."""
    names = list(dict.fromkeys(q["namespace"] for q in per_q))
    return {ns: score([q for q in per_q if q["namespace"] == ns]) for ns in names}


def conversation_table(convs: dict[str, dict[str, float]], pool: dict[str, float]) -> str:
    rows = [[name, int(m.get("n", 0))] + [m.get(c, float("nan")) for c in CONV_COLS]
            for name, m in [*convs.items(), ("pool", pool)]]
    return table(["conversation", "n", *CONV_COLS], rows)


def ship_verdict(new: dict[str, Any], old: dict[str, Any], metric: str = "any@10",
                 max_loss: float = SHIP_LOSS) -> tuple[bool, list[str]]:
    """The ship rule over two --json runs: the pool gains on `metric`, no conversation loses > max_loss.

    Returns (ships, reasons); a conversation present in only one run is a reason not to ship, since
    the two runs did not ask the same questions.
    """
    reasons = []
    gain = new["overall"][metric] - old["overall"][metric]
    if not gain > 0:
        reasons.append(f"pool {metric} {old['overall'][metric]:.3f} -> {new['overall'][metric]:.3f} ({gain:+.3f}): no gain")
    a, b = new.get("by_conversation", {}), old.get("by_conversation", {})
    for ns in sorted(set(a) ^ set(b)):
        reasons.append(f"{ns}: in only one of the two runs")
    for ns in [n for n in b if n in a]:
        for c in CONV_COLS:
            loss = b[ns][c] - a[ns][c]
            if loss > max_loss + 1e-12:
                reasons.append(f"{ns} {c} {b[ns][c]:.3f} -> {a[ns][c]:.3f} ({-loss:+.3f}): loses more than {max_loss}")
    return not reasons, reasons


def delta_table(new: dict[str, Any], old: dict[str, Any]) -> str:
    """New minus old on CONV_COLS, per conversation present in both and for the pool."""
    a, b = new.get("by_conversation", {}), old.get("by_conversation", {})
    pairs = [(ns, a[ns], b[ns]) for ns in b if ns in a] + [("pool", new["overall"], old["overall"])]
    rows = [[ns] + [f"{x[c] - y[c]:+.3f}" for c in CONV_COLS] for ns, x, y in pairs]
    return table(["delta (new - old)", *CONV_COLS], rows)


def print_verdict(new: dict[str, Any], old: dict[str, Any], metric: str) -> bool:
    print("\n" + delta_table(new, old))
    ships, reasons = ship_verdict(new, old, metric)
    print(f"\nship rule (pool {metric} gains, no conversation loses > {SHIP_LOSS}): "
          + ("SHIPS" if ships else "DOES NOT SHIP"))
    for r in reasons:
        print("  - " + r)
    return ships


def _parse(argv: list[str] | None) -> Any:
    ap = argument_parser("memlane eval locomo", t("cli.help.eval_locomo"))
    ap.add_argument("path", nargs="?", default="", help=t("cli.help.locomo_path"))
    ap.add_argument("--categories", default="1,2,3,4", help=t("cli.help.locomo_categories"))
    add_run_arguments(ap)
    ap.add_argument("--limit", type=int, default=0, help=t("cli.help.locomo_limit"))
    ap.add_argument("--misses", action="store_true", help=t("cli.help.locomo_misses"))
    ap.add_argument("--baseline", default="", help=t("cli.help.locomo_baseline"))
    ap.add_argument("--compare", default="", help=t("cli.help.locomo_compare"))
    ap.add_argument("--ship-metric", default="any@10", choices=CONV_COLS, help=t("cli.help.locomo_ship_metric"))
    ap.add_argument("--reuse-db", action="store_true", help=t("cli.help.locomo_reuse_db"))
    args = ap.parse_args(argv)
    if bool(args.compare) == bool(args.path) or (args.compare and not args.baseline):
        ap.error(t("cli.help.locomo_path_or_compare"))
    if args.reuse_db and (not args.db or args.url):
        ap.error(t("quality.eval_reuse_needs_db"))
    return args


def _load_run(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.compare:
        print_verdict(_load_run(args.compare), _load_run(args.baseline), args.ship_metric)
        return 0
    cats = {int(c) for c in args.categories.split(",") if c.strip()}
    lanes = parse_list(args.lanes, LANE_NAMES, "lane") or None
    disable = parse_list(args.disable, TECHNIQUES, "technique")
    enable = parse_list(args.enable, TECHNIQUES, "technique")
    baseline = _load_run(args.baseline) if args.baseline else None  # read first: a typo fails before the run
    samples = json.loads(Path(args.path).read_text(encoding="utf-8"))
    if isinstance(samples, dict):
        samples = [samples]
    if args.limit:
        samples = samples[: args.limit]
    settings = parse_settings(args.set)
    backend = make_backend(args.url or None, args.token or None, disable, args.db or None, enable, settings)
    per_q, latencies, ingest_s = _ask(backend, samples, cats, args, lanes)

    by_cat = {c: score([q for q in per_q if q["category"] == c]) for c in sorted(cats)}
    overall = score(per_q)
    convs = by_conversation(per_q)
    cols = ["n", "any@1", "any@5", "any@10", "frac@5", "frac@10", "all@10", "mrr", "session@10"]
    rows = [[f"{c} {CATEGORY_NAMES.get(c, '')}".strip()] + [int(m["n"]) if k == "n" else m.get(k, float("nan"))
                                                            for k in cols] for c, m in by_cat.items()]
    rows.append(["overall"] + [int(overall["n"]) if k == "n" else overall.get(k, float("nan")) for k in cols])
    print(f"\nLoCoMo turn-level recall: {args.path}  lanes={','.join(lanes or LANE_NAMES)}  "
          f"disabled={','.join(disable) or '-'}  enabled={','.join(enable) or '-'}  "
          f"set={','.join(f'{k}={v}' for k, v in settings.items()) or '-'}  backend={'daemon ' + args.url if args.url else 'in-process'}")
    print(table(["category"] + cols, rows))
    print("\n" + conversation_table(convs, overall))
    print("\nfull table: any/frac/all @1/5/10 overall: "
          + "  ".join(f"{m}@{k}={fmt(overall.get(f'{m}@{k}', float('nan')))}" for m in ("any", "frac", "all") for k in KS))
    p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    print(f"recall latency: p50 {p50:.1f} ms, p95 {p95:.1f} ms over {len(latencies)} queries; "
          f"ingest {ingest_s:.1f} s")
    if args.misses:
        for q in per_q:
            if not set(q["got"][:10]) & set(q["evidence"]):
                print(f"  miss [{q['category']}] {q['question']}  want={q['evidence']} got={q['got'][:5]}")
    payload = {"path": args.path, "lanes": lanes or list(LANE_NAMES), "disabled": disable, "enabled": enable,
               "settings": settings, "backend": args.url or "in-process", "overall": overall,
               "by_conversation": convs, "by_category": {str(c): m for c, m in by_cat.items()},
               "latency_ms": {"p50": p50, "p95": p95}, "ingest_s": ingest_s, "questions": per_q}
    if args.json:
        write_json(args.json, payload)
    if baseline is not None:
        print_verdict(payload, baseline, args.ship_metric)
    return 0


def _ask(backend: Any, samples: list[dict[str, Any]], cats: set[int], args: Any,
         lanes: list[str] | None) -> tuple[list[dict[str, Any]], list[float], float]:
    """Store every conversation in its own namespace, then ask its questions: (answers, latencies, ingest s)."""

    per_q: list[dict[str, Any]] = []
    latencies: list[float] = []
    t_ingest = time.perf_counter()
    try:
        namespaces = []
        total_turns = sum(len(turns_of(s)) for s in samples)
        with tqdm(total=total_turns, desc="ingest", unit="turn", file=sys.stderr) as bar:
            for i, sample in enumerate(samples):
                ns = "locomo-" + re.sub(r"[^A-Za-z0-9_.:-]", "_", str(sample.get("sample_id", i)))[:50]
                namespaces.append(ns)
                held = backend.count(ns) if args.reuse_db else 0
                if held:  # imported by an earlier run on this --db file
                    if held != len(turns_of(sample)):  # an interrupted import, or memories forgotten since
                        tqdm.write(t("quality.eval_reuse_partial", namespace=ns, held=held,
                                     turns=len(turns_of(sample))), file=sys.stderr)
                    bar.update(len(turns_of(sample)))
                    continue
                for turn in turns_of(sample):
                    meta = {"dia_id": turn["dia_id"], "session": turn["session"],
                            "session_date": turn["session_date"], "speaker": turn["speaker"]}
                    kw: dict[str, Any] = {"content": turn["content"], "namespace": ns, "source": SOURCE,
                                          "metadata": meta}
                    if turn["valid_from"]:
                        kw["valid_from"] = turn["valid_from"]
                    backend.remember(**kw)
                    bar.update(1)
        backend.flush()
        ingest_s = time.perf_counter() - t_ingest
        questions = [(ns, qa) for ns, s in zip(namespaces, samples, strict=True) for qa in s["qa"]
                     if qa.get("category") in cats and qa.get("evidence")]
        for ns, qa in tqdm(questions, desc="recall", unit="q", file=sys.stderr):
            evidence = {e.strip() for ev in qa["evidence"] for e in str(ev).split(";") if e.strip()}
            kw = recall_args(args, str(qa["question"]), ns, lanes)
            t0 = time.perf_counter()
            res = backend.recall(**kw)
            latencies.append((time.perf_counter() - t0) * 1000)
            got = [str((h.get("metadata") or {}).get("dia_id", "")) for h in res["hits"]]
            per_q.append({"namespace": ns, "question": qa["question"], "category": qa["category"],
                          "evidence": sorted(evidence), "got": got})
    finally:
        backend.close()
    return per_q, latencies, ingest_s
