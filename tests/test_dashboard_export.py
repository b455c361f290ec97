"""The dashboard's export is the portable JSONL format: downloaded over HTTP from a real daemon, imported
into a fresh database in another folder, it exports again to the same records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_util import running_daemon

from config import load_config
from memory import Memory
from store import portable

pytestmark = pytest.mark.e2e
TOKEN = "dash-export-token"
NS = "proj"
# The header and end records carry no timestamp or other per-run value today; pinning their keys makes a
# new volatile field fail here by name instead of being compared by accident.
HEADER_KEYS = {"type", "format", "version", "schema_version", "embedder", "vectors"}
END_KEYS = {"type", "counts"}


def _write_world(db: Path, home: Path, embedder: Any) -> dict[str, str]:
    """Versions (an update), a forgotten memory, entities with aliases and relations, plus another namespace."""
    ids: dict[str, str] = {}
    with Memory(db, config=load_config({"HOME": str(home)}), embedder=embedder) as m:
        first = m.remember("Dana Reyes leads the Atlas migration at Northwind.", namespace=NS, source="chat",
                           tags=["work"], importance=0.8, metadata={"ticket": "ATL-7"},
                           entities=[{"name": "Dana Reyes", "kind": "person", "aliases": ["Dana", "D. Reyes"]},
                                     {"name": "Northwind", "kind": "org", "aliases": ["NW"]}])
        ids["first"] = first["chunk_id"]
        ids["second"] = m.update(ids["first"], "Dana Reyes leads the Atlas migration at Contoso now.",
                                 namespace=NS, tags=["work", "moved"])["chunk_id"]
        ids["wrong"] = m.remember("Atlas ships on the 3rd of May.", namespace=NS, entities=["Atlas"])["chunk_id"]
        m.forget(ids["wrong"], namespace=NS, reason="date was wrong")
        ids["relation"] = m.relate("Dana Reyes", "works_at", "Contoso", namespace=NS, object_kind="org",
                                   chunk_id=ids["second"])["relation_id"]
        old = m.relate("D. Reyes", "works_at", "NW", namespace=NS)["relation_id"]
        m.forget(old, namespace=NS, reason="changed jobs")
        m.remember("Unrelated note in another namespace.", namespace="other", entities=["Zed"])
        assert m.flush(120)
    return ids


def test_dashboard_export_imports_into_a_fresh_database_unchanged(tmp_path: Path, e5: object) -> None:
    src = tmp_path / "src"
    ids = _write_world(src / "memory.db", src / "home", e5)
    with running_daemon(src, token=TOKEN) as d:
        r = httpx.get(f"{d.url}/ui/api/namespaces/{NS}/export", headers=d.headers(), timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-disposition"] == f'attachment; filename="memlane-{NS}.jsonl"'
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = r.text.splitlines()
    downloaded = [json.loads(x) for x in lines]

    # The download is the portable format, and holds what was written (so the round trip below is not vacuous).
    assert [x["type"] for x in (downloaded[0], downloaded[-1])] == ["header", "end"]
    assert downloaded[0]["format"] == portable.FORMAT and downloaded[0]["version"] == portable.VERSION
    assert lines == [portable.dumps(x) for x in downloaded]  # each line as portable.dumps writes it
    by_type: dict[str, list[dict[str, Any]]] = {}
    for x in downloaded:
        by_type.setdefault(x["type"], []).append(x)
    assert by_type["namespace"] == [{"type": "namespace", "name": NS}]
    chunks = {c["id"]: c for c in by_type["chunk"]}
    assert {ids["first"], ids["second"], ids["wrong"]} <= set(chunks)
    assert all(c["namespace"] == NS for c in chunks.values())
    assert chunks[ids["second"]]["previous_id"] == ids["first"]
    assert chunks[ids["first"]]["valid_until"] and chunks[ids["second"]]["valid_until"] is None
    assert chunks[ids["wrong"]]["forgotten_reason"] == "date was wrong" and chunks[ids["wrong"]]["valid_until"]
    assert json.loads(chunks[ids["first"]]["metadata"]) == {"ticket": "ATL-7"}
    assert {a["alias"] for a in by_type["alias"]} >= {"Dana", "D. Reyes", "NW"}
    names = {e["id"]: e["name"] for e in by_type["entity"]}
    assert "Zed" not in names.values()  # one namespace only
    rels = {x["id"]: x for x in by_type["relation"]}
    assert (names[rels[ids["relation"]]["subject_id"]], names[rels[ids["relation"]]["object_id"]]) == \
        ("Dana Reyes", "Contoso")
    assert rels[ids["relation"]]["chunk_id"] == ids["second"]
    assert any(x["forgotten_reason"] == "changed jobs" for x in rels.values())
    assert downloaded[-1]["counts"] == {k: len(by_type.get(k, [])) for k in
                                        ("namespace", "entity", "alias", "chunk", "relation")}

    dst = tmp_path / "dst"
    with Memory(dst / "memory.db", config=load_config({"HOME": str(dst / "home")}), embedder=e5) as fresh:
        report = fresh.import_records(r.content.splitlines(keepends=True))
        assert report.errors == []
        assert report.inserted == {k: len(by_type[k]) for k in ("entity", "alias", "chunk", "relation")}
        again = list(fresh.export_records(namespace=NS))

    header, *body, end = downloaded
    header2, *body2, end2 = again
    assert set(header) == set(header2) == HEADER_KEYS and set(end) == set(end2) == END_KEYS
    assert header2 == header and end2 == end
    assert body2 == body
