"""Races inside one process, made deterministic: a forget that lands while its chunk is being embedded."""

from __future__ import annotations

from pathlib import Path

from config import load_config
from memory import Memory
from store import maintenance


class ForgetsMidEmbedding:
    """The real model; the first batch also forgets a chunk while the model runs (as a client would)."""

    def __init__(self, inner, on_embed) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.on_embed = inner, on_embed
        self.model, self.dim = inner.model, inner.dim

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        return self.inner.embed_query(text)

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        if self.on_embed:
            fn, self.on_embed = self.on_embed, None
            fn()
        return self.inner.embed_passages(texts)


def test_a_chunk_closed_during_its_embedding_gets_a_closed_vector(tmp_path: Path, e5) -> None:
    box: dict[str, str] = {}
    emb = ForgetsMidEmbedding(e5, lambda: (mem.forget(box["gone"], reason="retracted"),
                                           mem.update(box["old"], "The meeting moved to Friday at noon")))
    mem = Memory(tmp_path / "race.db", config=load_config({"HOME": str(tmp_path)}), embedder=emb, start_worker=False)
    try:
        box["gone"] = mem.remember("The vault code is kept in the blue folder")["chunk_id"]
        box["old"] = mem.remember("The meeting is on Thursday at noon")["chunk_id"]
        mem.embed_pending()
        rep = maintenance.check_vectors(mem.store.reader())
        assert rep.wrong_live == [] and rep.problems == 0, rep.as_dict()
        hits = [h["chunk_id"] for h in mem.recall("where is the vault code kept?", lanes=["vector"])["hits"]]
        assert box["gone"] not in hits and box["old"] not in hits
    finally:
        mem.close()
