"""A failed embedding batch is counted on the queue row by the derived-row owner of each engine
(store/sqlite/derived.py, store/postgres/derived.py: embed_failed), and the row stays queued."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import Config
from memory import Memory
from store import maintenance


class Failing:
    """The real model for queries; passages fail, as a model that went away would."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.model, self.dim = real.model, real.dim  # type: ignore[attr-defined]

    def embed_query(self, text: str) -> object:
        return self.real.embed_query(text)  # type: ignore[attr-defined]

    def embed_passages(self, texts: list[str]) -> object:
        raise RuntimeError("model gone")


@pytest.mark.engine_neutral
def test_a_failed_batch_counts_one_attempt_and_keeps_the_row(db_target: str | Path, cfg: Config, e5: object) -> None:
    with Memory(db_target, config=cfg, embedder=Failing(e5), start_worker=False) as mem:  # type: ignore[arg-type]
        mem.remember("The generator backup runs every Sunday at 03:00.")
        assert mem.embed_pending(max_batches=1) == 0
        db = mem.store.reader()
        assert db.execute("select attempts from embed_queue").fetchall() == [(1,)]
        assert maintenance.last_embed_error(db) == "model gone"
        assert mem.pending_embeddings() == 1
