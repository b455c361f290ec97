"""Moving between engines: export from SQLite, import into PostgreSQL, export again, and back into a new
SQLite file gives identical records (versions, forgotten rows, relations, entities, aliases, vectors)."""

from __future__ import annotations

from pathlib import Path

from memory import Memory
from store import portable


def seed(mem: Memory) -> None:
    a = mem.remember("Alice moved to Berlin last year", entities=[{"name": "Alice", "kind": "person",
                                                                  "aliases": ["Ali"]}], tags=["move", "city"],
                     metadata={"k": "v"}, source="chat", importance=0.7)
    mem.update(a["chunk_id"], "Alice moved to Paris this spring")
    b = mem.remember("Bob prefers green tea in the morning", entities=["Bob"])
    mem.forget(b["chunk_id"], reason="wrong")
    mem.remember("贵州茅台（600519）今天上涨了百分之三", namespace="zh.notes")
    mem.remember("爱丽丝去年搬到了柏林", namespace="zh.notes")
    mem.relate("Alice", "knows", "Bob", confidence=0.8)
    r = mem.relate("Alice", "lives_in", "Paris")
    mem.forget(r["relation_id"])
    mem.flush(60)


def records(mem: Memory) -> list[str]:
    """The export's lines, the header without its schema_version: each engine counts its own migrations
    (SQLite 4, PostgreSQL 3), and the records must be identical whatever the engine."""
    out = []
    for r in mem.export_records(vectors=True):
        if r["type"] == "header":
            assert r.pop("schema_version") >= 1
        out.append(portable.dumps(r))
    return out


def test_sqlite_to_postgres_and_back_gives_identical_records(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    with Memory(tmp_path / "a.db", config=cfg, embedder=e5) as src:
        seed(src)
        original = records(src)
    assert sum('"type":"chunk"' in line for line in original) == 5
    assert any('"forgotten_reason":"wrong"' in line for line in original)
    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as pg:
        rep = pg.import_records(original)
        assert rep.errors == [] and rep.inserted["chunk"] == 5 and rep.queued == 0
        on_pg = records(pg)
        assert on_pg == original
        # The imported data serves recall on PostgreSQL, vectors and lexical lanes alike.
        hits = pg.recall("Where did Alice move?", top_k=3)["hits"]
        assert hits[0]["content"] == "Alice moved to Paris this spring"
        assert pg.recall("柏林", namespace="zh.notes")["hits"][0]["content"] == "爱丽丝去年搬到了柏林"
        again = pg.import_records(original)  # idempotent on PostgreSQL too
        assert sum(again.inserted.values()) == 0 and again.changes == 0
    with Memory(tmp_path / "b.db", config=cfg, embedder=e5, start_worker=False) as back:
        rep = back.import_records(on_pg)
        assert rep.errors == []
        assert records(back) == original
