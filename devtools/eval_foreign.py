"""Foreign questions: each dev set's questions asked in a namespace that holds the other set's memories.

None of those questions is about anything stored there, so the right answer is no hit at all. The share
of questions that get `hits: []` at the default min_relevance is how well relevance says "nothing":

    python scripts/eval_foreign.py ../shared/eval/bilingual-dev.json ../shared/eval/locomo-dev.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from commands._common import argument_parser
from devtools.eval_locomo import turns_of
from devtools.evalkit import make_backend, write_json
from i18n_messages import t

BASE_TIME = "2025-01-01T00:00:00Z"


def _locomo(path: str) -> tuple[list[dict[str, Any]], list[str]]:
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = [samples] if isinstance(samples, dict) else samples
    mems = [{"content": turn["content"], "valid_from": turn["valid_from"] or BASE_TIME}
            for s in samples for turn in turns_of(s)]
    questions = [str(qa["question"]) for s in samples for qa in s["qa"]
                 if qa.get("category") in (1, 2, 3, 4) and qa.get("evidence")]
    return mems, questions


def _bilingual(path: str) -> tuple[list[dict[str, Any]], list[str]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    mems = [{"content": m["content"], "valid_from": m.get("valid_from") or BASE_TIME} for m in data["memories"]]
    return mems, [q["query"] for q in data["queries"]]


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane eval foreign", t("cli.help.eval_foreign"))
    ap.add_argument("bilingual", help=t("cli.help.bilingual_path"))
    ap.add_argument("locomo", help=t("cli.help.locomo_path"))
    ap.add_argument("--min-relevance", type=float, default=None, help=t("cli.help.eval_min_relevance"))
    ap.add_argument("--json", default="", help=t("cli.help.eval_json"))
    args = ap.parse_args(argv)
    sets = {"bilingual": _bilingual(args.bilingual), "locomo": _locomo(args.locomo)}
    backend = make_backend(None, None, [], None)
    results: dict[str, dict[str, Any]] = {}
    try:
        for name, (mems, _) in sets.items():
            for m in mems:
                backend.remember(content=m["content"], namespace="foreign-" + name, valid_from=m["valid_from"])
        backend.flush()
        for asked, home in (("locomo", "bilingual"), ("bilingual", "locomo")):
            empty = 0
            questions = sets[asked][1]
            for q in questions:
                kw: dict[str, Any] = {"query": q, "namespace": "foreign-" + home, "top_k": 10}
                if args.min_relevance is not None:
                    kw["min_relevance"] = args.min_relevance
                empty += not backend.recall(**kw)["hits"]
            results[f"{asked} questions in {home} memories"] = {"n": len(questions), "no_hit": empty,
                                                                "share": round(empty / len(questions), 3)}
    finally:
        backend.close()
    total = sum(r["n"] for r in results.values())
    none = sum(r["no_hit"] for r in results.values())
    for name, r in results.items():
        print(f"{name:40s} {r['no_hit']:4d}/{r['n']:<4d} no hit  {r['share']:.3f}")
    print(f"{'overall':40s} {none:4d}/{total:<4d} no hit  {none / total:.3f}")
    if args.json:
        write_json(args.json, {"results": results, "overall": round(none / total, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
