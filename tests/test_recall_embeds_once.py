"""One recall embeds its query once, whatever the query cache holds (issue 15: nothing on the hot path
twice). With the cache off, the vector lane and relevance each embedded it before. A query about someone
most candidates mention is also embedded once without the name, for relevance (issue 27)."""

from __future__ import annotations

from pathlib import Path

from config import load_config
from memory import Memory


def test_a_recall_embeds_its_query_once_with_the_cache_off(tmp_path: Path, e5: object) -> None:
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_QUERY_CACHE_SIZE": "0"})
    with Memory(tmp_path / "m.db", config=cfg, embedder=e5) as m:  # type: ignore[arg-type]
        m.remember("Alice moved to Berlin last spring.")
        m.remember("爱丽丝喜欢柏林的冬天。")
        assert m.flush(60)
        m.recall("warm up")  # the relevance cohort is embedded once per embedder, on first use
        calls: list[str] = []
        real = m.embedder.embed_query

        def counting(text: str) -> object:
            calls.append(text)
            return real(text)

        m.embedder.embed_query = counting  # type: ignore[method-assign]
        try:
            hits = m.recall("Where does Alice live?")["hits"]
        finally:
            m.embedder.embed_query = real  # type: ignore[method-assign]
    assert hits and "Berlin" in hits[0]["content"]
    assert calls == ["Where does Alice live?", "Where does live?"]  # both memories name Alice (爱丽丝)
