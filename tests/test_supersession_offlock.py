"""Supersession's neighbour searches run before the embedding batch's write transaction (issue 30): at 10k
memories they held the single writer for 300-450 ms a batch, and every remember arriving meanwhile waited.
The links must be the same whether the older memory was embedded in an earlier batch or in the same one.
Real SQLite, real sqlite-vec, the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_config
from ingest import embed_work
from memory import Memory

OLD = ("Dana lives at Kastanienallee 12 in Prenzlauer Berg.", "2025-01-02T00:00:00Z")
NEW = ("Dana moved to Oranienstraße 45 in Kreuzberg last month.", "2025-06-01T00:00:00Z")
OTHERS = ("The team standup is at 9:30 every weekday.", "Maya's phone number is +351 912 334 100.",
          "丹的猫叫「馒头」，是一只橘猫。", "The Lisbon offsite runs in March.", "Quillmark's payments go through Adyen.")


@pytest.mark.parametrize("batch", [1, 16])
def test_the_change_is_linked_with_no_vector_search_on_the_writer(tmp_path: Path, e5, batch: int) -> None:  # type: ignore[no-untyped-def]
    cfg = load_config({"HOME": str(tmp_path)}, overrides={"embed_batch": batch})
    with Memory(tmp_path / "m.db", config=cfg, embedder=e5, start_worker=False) as m:
        old = m.remember(OLD[0], valid_from=OLD[1])["chunk_id"]
        for text in OTHERS:
            m.remember(text, valid_from="2025-03-01T00:00:00Z")
        new = m.remember(NEW[0], valid_from=NEW[1])["chunk_id"]
        seen: list[str] = []  # the readers' statements and the writer's, in the order run (one thread here)
        m.store.set_trace(seen.append, writer=True)
        try:
            batches = 0
            while embed_work.own_vectors(m.store, e5, m.config, m._claims) > 0:
                batches += 1
        finally:
            m.store.set_trace(None, writer=True)
        links = dict(m.store.reader().execute("select id, superseded_by from chunks where superseded_by is not null"))
    # batch 1: the older memory's vector came from an earlier batch; batch 16: from the same one, not yet written
    # when the neighbours were read.
    assert batches == (len(OTHERS) + 2 if batch == 1 else 1)
    assert links == {old: new}
    in_tx, knn_in_tx, knn = False, [], []
    for sql in seen:
        low = sql.strip().lower()
        in_tx = True if low.startswith("begin") else False if low in ("commit", "rollback") else in_tx
        if "embedding match" in low:
            (knn_in_tx if in_tx else knn).append(sql)
    assert knn, "the trace saw no neighbour search"
    assert not knn_in_tx, knn_in_tx
