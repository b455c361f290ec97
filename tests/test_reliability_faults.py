"""Resource faults: a full disk, a read-only database file, an embedder that raises.

The disk fills through SQLite's own limit (`pragma max_page_count`), in process and in a real daemon
(tests/fault_daemon.py sets the pragma on the daemon's connections). The read-only file is made
read-only for real: as root the daemon runs without CAP_DAC_OVERRIDE (setpriv), so the permission
bits bind it like any user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import daemon_util
import pytest
from daemon_util import running_daemon
from reliability_util import FAULT_DAEMON, SyncSession, health, wait_drained

import i18n_messages
from config import load_config
from contract.errors import Unavailable
from memory import Memory, connect
from store import maintenance

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


def counts(db) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    return tuple(db.execute(sql).fetchone()[0] for sql in (
        "select count(*) from chunks", "select count(*) from chunks_fts_docsize",
        "select count(*) from chunks_tri_docsize", "select count(*) from embed_queue",
        "select count(*) from chunk_entities", "select count(*) from entities"))


def test_disk_full_in_process_is_unavailable_atomic_and_recoverable(tmp_path: Path, e5) -> None:
    mem = Memory(tmp_path / "full.db", config=load_config({"HOME": str(tmp_path)}), embedder=e5, start_worker=False)
    try:
        first = mem.remember("Alice moved to Berlin last year.")["chunk_id"]
        (pages,) = mem.store.writer.execute("pragma page_count").fetchone()
        mem.store.writer.execute(f"pragma max_page_count = {pages + 12}")
        stored, err = [], None
        for i in range(200):
            before = counts(mem.store.writer)
            try:
                stored.append(mem.remember(f"note {i} about Person{i} in Town{i}: " + f"filler{i} " * 150)["chunk_id"])
            except Unavailable as exc:
                err = exc
                break
        assert err is not None and err.msg_id == "db.full", "the limit was never reached"
        assert err.render("en") == "[unavailable] " + i18n_messages.t("db.full", "en")
        assert err.render("zh").startswith("[unavailable] 磁盘或数据库已满")
        assert counts(mem.store.writer) == before  # the failed remember left nothing behind
        assert mem.recall("where does Alice live?")["hits"][0]["chunk_id"] == first  # reads still work
        mem.store.writer.execute("pragma max_page_count = 1073741823")  # space returns
        again = mem.remember("Bob moved to Munich this spring.")["chunk_id"]
        mem.embed_pending()
        assert mem.store.writer.execute("pragma integrity_check").fetchone()[0] == "ok"
        rep = maintenance.check_vectors(mem.store.writer)
        assert rep.problems == 0 and rep.chunks == len(stored) + 2
        assert mem.recall("Bob Munich")["hits"][0]["chunk_id"] == again
    finally:
        mem.close()


def test_disk_full_in_the_daemon_then_recovery(tmp_path: Path, e5, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "memory.db"
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as mem:
        mem.remember("The harbour opens at six in the morning.")
        assert mem.flush(60)
    monkeypatch.setattr(daemon_util, "SERVER", FAULT_DAEMON)
    acked: dict[str, str] = {}
    t0 = time.monotonic()
    with running_daemon(tmp_path, env={"RELIABILITY_EXTRA_PAGES": "12"}) as d:
        s = SyncSession(d)
        try:
            err = None
            for i in range(300):
                content = (f"filling note {i}: " + f"word{i} " * 150).strip()
                out = s.call("memory_remember", {"content": content})
                if not out.ok:
                    err = out
                    break
                acked[out.data["chunk_id"]] = content
            assert err is not None and err.code == "unavailable", err
            assert err.text == "[unavailable] " + i18n_messages.t("db.full", "en")
            rec = s.call("memory_recall", {"query": "when does the harbour open?"})
            assert rec.ok and rec.data["hits"]  # reading goes on while the disk is full
            assert health(d)["_status"] in (200, 503)
        finally:
            s.close()
    monkeypatch.setattr(daemon_util, "SERVER", daemon_util.ROOT / "mcp_server.py")
    with running_daemon(tmp_path) as d:  # space is back
        s = SyncSession(d)
        try:
            out = s.call("memory_remember", {"content": "After the disk was freed, writing works again."})
            assert out.ok, out.text
            for cid, content in acked.items():
                hist = s.call("memory_history", {"id": cid})
                assert hist.ok and hist.data["versions"][-1]["content"] == content
            assert wait_drained(d) == 0
        finally:
            s.close()
        conn = connect(db)
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        conn.execute("begin")
        rep = maintenance.check_vectors(conn)
        conn.execute("commit")
        conn.close()
        assert rep.problems == 0, rep.as_dict()
    print(f"\nDISKFULL acked_before_full={len(acked)} refused_with=unavailable recovered=ok integrity=ok "
          f"took_s={time.monotonic() - t0:.1f}")


def test_read_only_database_is_refused_clearly_at_start(tmp_path: Path, e5) -> None:
    db = tmp_path / "ro.db"
    with Memory(db, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as mem:
        mem.remember("Stored before the file became read-only.")
    os.chmod(db, 0o444)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: permission bits would not bind the daemon")
        caps = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([*prefix, sys.executable, str(daemon_util.SERVER), "--port", "0", "--db", str(db)],
                          env=daemon_util.daemon_env(home), capture_output=True, text=True, timeout=180)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "[unavailable] " + i18n_messages.t("db.readonly", "en", path=str(db)) in out, out
    assert "Traceback" not in out


class FailingEmbedder:
    """The real model behind a fault: the first `fails` passage batches raise."""

    def __init__(self, inner, fails: int) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.fails = inner, fails
        self.model, self.dim = inner.model, inner.dim
        self.calls = 0

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        return self.inner.embed_query(text)

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.fails > 0:
            self.fails -= 1
            raise RuntimeError("model crashed")
        return self.inner.embed_passages(texts)


def test_an_embedder_that_raises_is_retried_and_lexical_lanes_find_the_chunk(tmp_path: Path, e5) -> None:
    emb = FailingEmbedder(e5, fails=2)
    with Memory(tmp_path / "emb.db", config=load_config({"HOME": str(tmp_path)}), embedder=emb) as mem:
        cid = mem.remember("Zanzibar ferry tickets are in the kitchen drawer",
                           entities=[{"name": "Zanzibar", "kind": "place"}])["chunk_id"]
        for lane in ("meta", "entity"):
            hits = mem.recall("Zanzibar ferry tickets", lanes=[lane])["hits"]
            assert hits and hits[0]["chunk_id"] == cid, lane
        assert mem.flush(60), "the queue did not drain after the embedder recovered"
        row = mem.store.writer.execute("select count(*) from chunk_vec").fetchone()
        assert row[0] == 1 and emb.calls >= 3
        assert mem.recall("where are the boat tickets?", lanes=["vector"])["hits"][0]["chunk_id"] == cid


def test_an_embedder_that_raises_in_the_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon_util, "SERVER", FAULT_DAEMON)
    with running_daemon(tmp_path, env={"RELIABILITY_EMBED_FAILS": "3"}) as d:
        s = SyncSession(d)
        try:
            out = s.call("memory_remember", {"content": "The spare key for the Lisbon flat is under the mat"})
            assert out.ok and out.data["embedding"] == "queued"
            hits = s.call("memory_recall", {"query": "Lisbon flat spare key", "lanes": ["meta"]}).data["hits"]
            assert hits and hits[0]["chunk_id"] == out.data["chunk_id"]
            t0 = time.monotonic()
            assert wait_drained(d, 120) == 0
            print(f"\nEMBED_FAIL injected=3 drained_after_s={time.monotonic() - t0:.1f}")
            vec = s.call("memory_recall", {"query": "where is the key to the flat in Portugal?", "lanes": ["vector"]})
            assert vec.data["hits"][0]["chunk_id"] == out.data["chunk_id"]
        finally:
            s.close()
    assert "injected embedder failure" in d.output() or "embedding failed" in d.output()


def test_backup_while_the_daemon_writes_and_restore_refused_until_it_stops(tmp_path: Path) -> None:
    scripts = daemon_util.ROOT / "scripts"

    def run(name: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = daemon_util.daemon_env(tmp_path / "home")
        return subprocess.run([sys.executable, str(scripts / name), *args], env=env, capture_output=True,
                              text=True, timeout=180)

    with running_daemon(tmp_path) as d:
        s = SyncSession(d)
        try:
            first = s.call("memory_remember", {"content": "Backed up while the daemon was running"})
            assert first.ok
            res = run("backup.py", "--db", str(d.db_path), "--dest", str(tmp_path / "bk"))
            assert res.returncode == 0 and "quick_check ok" in res.stdout, res.stderr
            later = s.call("memory_remember", {"content": "Written after the backup was taken"})
            assert later.ok
            backup = next((tmp_path / "bk").glob("memory-*.db"))
            res = run("restore.py", str(backup), "--db", str(d.db_path))
            assert res.returncode == 1
            assert res.stderr.startswith("[unavailable] the daemon is running"), res.stderr
            assert s.call("memory_history", {"id": later.data["chunk_id"]}).ok  # nothing was touched
        finally:
            s.close()
    res = run("restore.py", str(backup), "--db", str(d.db_path))
    assert res.returncode == 0, res.stderr
    with running_daemon(tmp_path) as d2:
        s = SyncSession(d2)
        try:
            assert s.call("memory_history", {"id": first.data["chunk_id"]}).ok
            assert s.call("memory_history", {"id": later.data["chunk_id"]}).code == "not_found"
        finally:
            s.close()
