"""memory_purge (issue 29): a memory, every version of it and everything derived from it, gone for good.

The engine-neutral tests run on PostgreSQL too (`pytest --engine postgres -m engine_neutral`). "Nothing
left" is checked by recall with include_history, by history, and by a raw scan of every table (every
column as text, and on SQLite every blob, FTS5 and vec0 shadow tables included) through the engine's own
connection; the end-to-end test adds the dashboard's history search and the reproduction of the issue.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from daemon_util import Daemon, mcp_session, running_daemon

import cli
from config import load_config
from contract.errors import InvalidArgument, NotFound
from memory import Memory

neutral = pytest.mark.engine_neutral
NS = "purge-ns"
GHP = "ghp_" + "Kd8Lq2Zr5Wx" * 3 + "Tn4"  # the GitHub token shape of the issue (ghp_ + 36)
GHP2 = "ghp_" + "Vb3Nm6Hj9Pq" * 3 + "Ye7"
SECRET = f"Project Quillfeather deploy token is {GHP}, kept by Oswin Thackeray"
NEEDLES = (GHP, GHP2, "Quillfeather", "Thackeray")  # nothing else in these tests says them
# The same as the full-text indexes keep them: split at `_`, lower case, porter stems.
TOKENS = (GHP[4:], GHP2[4:], "quillfeath", "thackerai")


@pytest.fixture
def warn_mem(db_target: str | Path, tmp_path: Path, e5: Any) -> Iterator[Memory]:
    """A Memory under pii = warn: the token is stored verbatim, as in the issue."""
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PII": "warn"})
    m = Memory(db_target, config=cfg, embedder=e5)
    try:
        yield m
    finally:
        m.close()


def _tables(db: Any) -> list[str]:
    """Every table that stores rows: on SQLite the shadow tables of FTS5 and vec0 (which hold what their virtual
    tables show), on PostgreSQL the base tables."""
    try:
        return [r[0] for r in db.execute("select name from sqlite_master where type = 'table' "
                                         "and sql not like 'create virtual table%'").fetchall()]
    except Exception:  # PostgreSQL (Handle/Reader): no sqlite_master
        return [r[0] for r in db.execute("select table_name from information_schema.tables where table_schema = "
                                         "current_schema() and table_type = 'BASE TABLE'").fetchall()]


def raw_scan(db: Any, needles: list[str], blobs: list[bytes] = ()) -> list[str]:  # type: ignore[assignment]
    """Where any of `needles` (case-insensitive) or `blobs` (raw bytes) occurs in any row of any table."""
    found = []
    lowered = [n.lower() for n in needles]
    for table in _tables(db):
        sqlite = not hasattr(db, "columns")
        rows = db.execute(f'select * from "{table}"' if sqlite else f'select t::text from "{table}" t').fetchall()
        for row in rows:
            for cell in row:
                text = (cell.decode("latin-1") if isinstance(cell, (bytes, bytearray, memoryview)) and sqlite
                        else str(cell)).lower() if cell is not None else ""
                raw = bytes(cell) if isinstance(cell, (bytes, bytearray, memoryview)) else b""
                found += [f"{table}: {n}" for n in lowered if n in text]
                found += [f"{table}: vector bytes" for b in blobs if raw and b in raw]
    return sorted(set(found))


def _vector_bytes(m: Memory, seqs: list[int]) -> list[bytes]:
    """The stored float32 vectors of these chunks (SQLite; PostgreSQL's are compared as text by the scan)."""
    if m.engine == "postgres":
        return []
    db = m.store.reader()
    return [bytes(r[0]) for s in seqs for r in db.execute("select embedding from chunk_vec_f32 where seq = ?", (s,))]


def _seed(m: Memory) -> dict[str, Any]:
    """A thread of three memories whose middle one holds the token, updated once, with an entity of its
    own, a relation it is evidence for, and a recall that logged it."""
    t = "conv-29"
    before = m.remember("The team meets every Monday at nine in room 4.", namespace=NS, thread=t)
    v1 = m.remember(SECRET, namespace=NS, thread=t, entities=[{"name": "Oswin Thackeray", "kind": "person"}],
                    metadata={"note": "Quillfeather"})
    after = m.remember("Lunch is served at noon in the cafeteria.", namespace=NS, thread=t)
    v2 = m.update(v1["chunk_id"], f"Project Quillfeather deploy token is {GHP2}, kept by Oswin Thackeray",
                  namespace=NS)
    m.relate("Oswin Thackeray", "maintains", "Quillfeather pipeline", namespace=NS, chunk_id=v2["chunk_id"])
    assert m.flush(120)
    hits = m.recall("Quillfeather deploy token", namespace=NS, include_history=True)["hits"]
    assert {h["chunk_id"] for h in hits} >= {v1["chunk_id"], v2["chunk_id"]}
    seqs = [m.store.chunk_row(None, c, NS)["seq"] for c in (v1["chunk_id"], v2["chunk_id"])]
    return {"ids": [v1["chunk_id"], v2["chunk_id"]], "seqs": seqs, "neighbours": [before["chunk_id"], after["chunk_id"]]}


@neutral
def test_purge_leaves_nothing_of_the_memory(warn_mem: Memory) -> None:
    m = warn_mem
    seeded = _seed(m)
    ids = seeded["ids"]
    vectors = _vector_bytes(m, seeded["seqs"])
    before = raw_scan(m.store.reader(), [*NEEDLES, *TOKENS, *ids], vectors)
    if m.engine == "sqlite":  # the scan sees the FTS5 segments and the vec0 chunks
        assert {"chunks_fts_data: quillfeath", "chunk_vec_vector_chunks00: vector bytes"} <= set(before), before
    got = m.purge(ids[0], namespace=NS, confirm=True)  # the first version: its successor goes too
    assert set(got["purged"]) == set(ids)
    assert got["relations"] >= 1 and got["entities"] >= 1 and got["recall_log"] >= 1
    m.store.drain_log(wait=True)
    left = raw_scan(m.store.reader(), [*NEEDLES, *TOKENS, *ids], vectors)  # before any new query is logged
    assert left == [], left
    if m.engine == "sqlite":  # FTS5 was told exactly what it had indexed: its indexes still agree with chunks
        with m.store.atomic() as db:
            for table in ("chunks_fts", "chunks_tri", "chunks_bi", "chunks_when"):
                db.execute(f"insert into {table}({table}, rank) values ('integrity-check', 1)")
    for query in ("Quillfeather deploy token", GHP, "who keeps the deploy token?", "Oswin Thackeray"):
        hits = m.recall(query, namespace=NS, include_history=True)["hits"]
        assert not {h["chunk_id"] for h in hits} & set(ids), query
        assert all(n.lower() not in json.dumps(hits).lower() for n in NEEDLES)
    for cid in ids:
        with pytest.raises(NotFound):
            m.history(cid, namespace=NS)
    # The neighbours stay, and their context windows are made again without the purged text.
    assert m.flush(120)
    assert m.pending_context() == 0
    for cid in seeded["neighbours"]:
        assert m.history(cid, namespace=NS)["versions"][0]["chunk_id"] == cid
    hits = m.recall("when is lunch served?", namespace=NS)["hits"]
    assert hits and hits[0]["chunk_id"] == seeded["neighbours"][1]


@neutral
def test_purge_refuses_without_confirm_and_names_an_unknown_id(warn_mem: Memory) -> None:
    m = warn_mem
    r = m.remember(SECRET, namespace=NS)
    for confirm in (None, False, "true", 1):
        with pytest.raises(InvalidArgument) as exc:
            m.purge(r["chunk_id"], namespace=NS, confirm=confirm)
        assert "confirm" in exc.value.render("en") and "confirm" in exc.value.render("zh")
    assert m.history(r["chunk_id"], namespace=NS)["versions"]  # nothing happened
    with pytest.raises(NotFound) as exc:
        m.purge(r["chunk_id"], namespace="other-ns", confirm=True)  # namespaces never see each other
    assert exc.value.code == "not_found"
    assert "nothing was purged" in exc.value.render("en") and "未删除任何内容" in exc.value.render("zh")
    m.purge(r["chunk_id"], namespace=NS, confirm=True)
    with pytest.raises(NotFound):
        m.purge(r["chunk_id"], namespace=NS, confirm=True)  # a second purge: already gone


def test_purge_rebuilds_the_approximate_index_without_it(tmp_path: Path, e5: Any, ann_index: Any) -> None:
    import numpy as np

    from store.sqlite import ann

    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PII": "warn"})
    with Memory(tmp_path / "ann.db", config=cfg, embedder=e5) as m:
        seeded = _seed(m)
        ann_index(m, NS)
        m.store.ann.save()  # the base file holds the vectors
        keys_file = m.store.ann._stem(NS).with_suffix(ann.KEYS_SUFFIX)
        assert seeded["seqs"][1] in set(np.load(keys_file).tolist())  # the live version (closed ones are left out)
        m.purge(seeded["ids"][1], namespace=NS, confirm=True)  # the last version: its predecessor goes too
        m.store.ann.wait(60)
        assert not set(seeded["seqs"]) & set(np.load(keys_file).tolist())
        found = m.store.ann.search(NS, m.query_vector(SECRET), 10)
        assert found is not None and not {s for s, _ in found} & set(seeded["seqs"])


def test_cli_purge_needs_yes_then_removes_every_version(tmp_path: Path, e5: Any, capsys: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "cli.db"
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_PII": "warn"})
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        first = m.remember(SECRET, namespace=NS)["chunk_id"]
        second = m.update(first, f"Quillfeather token is {GHP2}", namespace=NS)["chunk_id"]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEMLANE_LANG", "en")
    assert cli.main(["purge", second, "--namespace", NS, "--db", str(db)]) == 1
    assert "--yes" in capsys.readouterr().err
    assert cli.main(["purge", "m_0000000000000000", "--namespace", NS, "--db", str(db), "--yes"]) == 1
    assert "[not_found]" in capsys.readouterr().err
    assert cli.main(["purge", second, "--namespace", NS, "--db", str(db), "--yes"]) == 0
    out = capsys.readouterr().out
    assert first in out and second in out
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        assert raw_scan(m.store.reader(), [*NEEDLES, first, second]) == []


# ---------------------------------------------------------------- the issue, end to end (MCP and dashboard)

TOKEN = "purge-e2e-token"


async def _call(s: Any, tool: str, args: dict[str, Any]) -> Any:
    r = await s.call_tool(tool, args)
    text = r.content[0].text if r.content else ""
    return (json.loads(text) if not r.is_error else None), text


@neutral
@pytest.mark.e2e
def test_the_issue_through_mcp_and_the_dashboard(tmp_path: Path, engine_env: Any) -> None:
    env = {**engine_env(), "MEMLANE_PII": "warn"}
    with running_daemon(tmp_path, token=TOKEN, env=env) as d:
        asyncio.run(_mcp_reproduction(d))


async def _mcp_reproduction(d: Daemon) -> None:
    async with mcp_session(d, "http") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        purge = tools["memory_purge"]
        assert purge.annotations.destructive_hint is True and "confirm" in purge.input_schema["required"]
        put, _ = await _call(s, "memory_remember", {"content": SECRET, "namespace": NS})
        assert any(w.startswith("[pii:api_key]") for w in put["warnings"])  # warn: verbatim, with a warning
        other, _ = await _call(s, "memory_remember", {"content": "Dana prefers green tea in the afternoon.",
                                                      "namespace": NS})
        cid = put["chunk_id"]
        await _call(s, "memory_forget", {"id": cid, "namespace": NS, "reason": "leaked token"})
        # The issue: a forgotten token still comes back with include_history and in the dashboard's history.
        hist, _ = await _call(s, "memory_recall", {"query": "Quillfeather deploy token", "namespace": NS,
                                                   "include_history": True})
        assert cid in {h["chunk_id"] for h in hist["hits"]}
        with httpx.Client(base_url=d.url, headers=d.headers(), timeout=60) as ui:
            assert _dashboard_finds(ui, cid)
            refused, text = await _call(s, "memory_purge", {"id": cid, "namespace": NS, "confirm": False})
            assert refused is None and text.startswith("[invalid_argument]")
            done, _ = await _call(s, "memory_purge", {"id": cid, "namespace": NS, "confirm": True})
            assert done["purged"] == [cid]
            _assert_gone(d, [*NEEDLES, cid])  # before any new query is logged
            assert not _dashboard_finds(ui, cid)
            _, text = await _call(s, "memory_purge", {"id": cid, "namespace": NS, "confirm": True})
            assert text.startswith("[not_found]")
            # The dashboard's own action, on another memory.
            r = ui.post(f"/ui/api/memory/{other['chunk_id']}/purge", json={"namespace": NS})
            assert r.status_code == 400 and "confirm" in r.text
            r = ui.post(f"/ui/api/memory/{other['chunk_id']}/purge", json={"namespace": NS, "confirm": True})
            assert r.status_code == 200 and r.json()["purged"] == [other["chunk_id"]]
            _assert_gone(d, [other["chunk_id"], "Dana prefers"])
            assert ui.post(f"/ui/api/memory/{other['chunk_id']}/purge",
                           json={"namespace": NS, "confirm": True}).status_code == 404
        for query in ("Quillfeather deploy token", "what does Dana drink?", "unrelated question about lunch"):
            hits, _ = await _call(s, "memory_recall", {"query": query, "namespace": NS, "include_history": True})
            assert not {h["chunk_id"] for h in hits["hits"]} & {cid, other["chunk_id"]}
        _, text = await _call(s, "memory_history", {"id": cid, "namespace": NS})
        assert text.startswith("[not_found]")
    _assert_gone(d, [other["chunk_id"], "Dana prefers"])


def _assert_gone(d: Daemon, needles: list[str]) -> None:
    """A raw scan of the daemon's database (its own engine) finds none of `needles`."""
    db = d.open_db()
    try:
        left = raw_scan(db, needles)
    finally:
        db.close()
    assert left == [], left


def _dashboard_finds(ui: httpx.Client, cid: str) -> bool:
    """Whether the dashboard's history search (recall with history, the list with closed memories) shows `cid`."""
    r = ui.get("/ui/api/recall", params={"q": "Quillfeather deploy token", "namespace": NS, "include_history": "1"})
    assert r.status_code == 200, r.text
    listed = ui.get("/ui/api/memories", params={"namespace": NS, "all": "1"})
    assert listed.status_code == 200, listed.text
    return cid in {h["chunk_id"] for h in r.json()["hits"]} | {x["chunk_id"] for x in listed.json()["items"]}
