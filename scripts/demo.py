"""A short demo: remember three memories in a temporary database and recall them."""

from __future__ import annotations

import tempfile
from pathlib import Path

import _alias  # noqa: F401 - puts the checkout's root on sys.path

from config import load_config
from i18n_messages import t
from memory import Memory


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config({"HOME": tmp})
        with Memory(Path(tmp) / "demo.db", config=cfg) as mem:
            for text in ("Alice moved to Berlin last year.", "爱丽丝在柏林的 SAP 工作。", "sh600089 build at 18.96"):
                r = mem.remember(text)
                print(t("demo.remembered", chunk_id=r["chunk_id"], content=text))
            mem.flush()
            for q in ("where does Alice live?", "600089.SH 建仓"):
                res = mem.recall(q, top_k=3)
                print(t("demo.recall", query=q, count=len(res["hits"])))
                for i, h in enumerate(res["hits"], 1):
                    print(t("demo.hit", rank=i, score=h["score"], lanes=",".join(h["ranks"]), content=h["content"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
