"""Precision and recall of the automatic entities on a labelled set of English and Chinese sentences.

Each line of the set (tests/data/entities_labelled.jsonl) is one sentence with the entities a person
would agree with: {"id", "split": "dev"|"heldout", "batch"?, "lang": "en"|"zh", "text", "entities":
[{"name", "kind", "alt_kinds"?}]}. A "batch" names sentences added together (issue 29's "kinds": tools,
acronyms, titles and fragments against people and places); each batch is also scored on its own, by split. The extractor is the one `remember` runs (entity_resolve.extract_mentions with
CC-CEDICT's common words and proper names). Names are compared by their lookup key (entity_resolve.norm,
so sh600519 and 600519.SH are one name); "name+kind" also needs the kind to be the gold one or one of
its `alt_kinds`, for names a person could file either way (GitHub: a product or a company).

    memlane eval entities
    memlane eval entities tests/data/entities_labelled.jsonl --verbose --split dev
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import entity_resolve as er
from commands._common import ROOT, argument_parser
from devtools.evalkit import write_json
from i18n_messages import t
from lang import crosslingual as xl

DEFAULT_SET = ROOT / "tests" / "data" / "entities_labelled.jsonl"
Extractor = Callable[[str], list[er.Mention]]


def load_set(path: str | Path = DEFAULT_SET) -> list[dict[str, Any]]:
    """The labelled sentences of a JSONL file, in file order."""
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def memory_extractor() -> Extractor:
    """The extractor as Memory.remember calls it with the default config (lexical_precision on)."""
    common, lexicon = xl.common_english(), xl.lexicon()
    return lambda text: er.extract_mentions(text, common, lexicon)


def _counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for what in ("names", "kinds"):
        tp = sum(r[what]["tp"] for r in rows)
        pred = sum(r[what]["pred"] for r in rows)
        gold = sum(r[what]["gold"] for r in rows)
        out[what] = {"tp": tp, "pred": pred, "gold": gold,
                     "precision": round(tp / pred, 3) if pred else 1.0,
                     "recall": round(tp / gold, 3) if gold else 1.0}
    return out


def score_sentence(item: dict[str, Any], found: list[er.Mention]) -> dict[str, Any]:
    """What the extractor got right and wrong on one labelled sentence."""
    gold = {er.norm(g["name"]): g for g in item["entities"]}
    pred = {er.norm(m.name): m for m in found}
    hits = gold.keys() & pred.keys()
    kinds_ok = {k for k in hits if pred[k].kind in (gold[k]["kind"], *gold[k].get("alt_kinds", ()))}
    return {
        "id": item["id"], "split": item.get("split", "dev"), "batch": item.get("batch", ""), "lang": item["lang"],
        "text": item["text"],
        "names": {"tp": len(hits), "pred": len(pred), "gold": len(gold)},
        "kinds": {"tp": len(kinds_ok), "pred": len(pred), "gold": len(gold)},
        "spurious": [f"{pred[k].name}:{pred[k].kind}" for k in pred if k not in hits],
        "missed": [f"{gold[k]['name']}:{gold[k]['kind']}" for k in gold if k not in hits],
        "wrong_kind": [f"{pred[k].name}:{pred[k].kind} (gold {gold[k]['kind']})" for k in hits - kinds_ok],
    }


def score(items: list[dict[str, Any]], extract: Extractor | None = None) -> dict[str, Any]:
    """Scores overall, per split, per language, per split and language, per batch and split, and every
    sentence's errors."""
    extract = extract or memory_extractor()
    rows = [score_sentence(item, extract(item["text"])) for item in items]
    groups: dict[str, list[dict[str, Any]]] = {"overall": rows}
    for r in rows:
        keys = [f"split {r['split']}", f"lang {r['lang']}", f"{r['split']} {r['lang']}"]
        if r["batch"]:
            keys += [f"batch {r['batch']}", f"batch {r['batch']} {r['split']}"]
        for key in keys:
            groups.setdefault(key, []).append(r)
    rank = {"overall": 0, "split": 1, "lang": 2, "batch": 4}
    order = sorted(groups, key=lambda g: (rank.get(g.split(" ")[0], 3), g))
    return {"groups": {g: _counts(groups[g]) for g in order}, "sentences": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argument_parser("memlane eval entities", t("cli.help.eval_entities"))
    ap.add_argument("path", nargs="?", default=str(DEFAULT_SET), help=t("cli.help.entities_path"))
    ap.add_argument("--verbose", action="store_true", help=t("cli.help.entities_verbose"))
    ap.add_argument("--split", default="", help=t("cli.help.entities_split"))
    ap.add_argument("--json", default="", help=t("cli.help.eval_json"))
    args = ap.parse_args(argv)
    result = score(load_set(args.path))
    print(f"{'group':22s} {'n':>4s}  {'names P':>7s} {'names R':>7s}  {'+kind P':>7s} {'+kind R':>7s}")
    for name, g in result["groups"].items():
        n, k = g["names"], g["kinds"]
        print(f"{name:22s} {g['n']:4d}  {n['precision']:7.3f} {n['recall']:7.3f}  {k['precision']:7.3f} "
              f"{k['recall']:7.3f}")
    if args.verbose:
        for r in result["sentences"]:
            if (r["spurious"] or r["missed"] or r["wrong_kind"]) and args.split in ("", r["split"]):
                print(f"\n{r['id']} [{r['split']}] {r['text']}")
                for label in ("spurious", "missed", "wrong_kind"):
                    if r[label]:
                        print(f"  {label:10s} {'; '.join(r[label])}")
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
