"""One daemon per SQLite file (store.daemon_lock): a second daemon on the same file refuses to start with a typed
error, and the first keeps serving; on PostgreSQL the lock is not taken at all."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from daemon_util import running_daemon, spawn_daemon

from config import load_config
from store import daemon_lock, maintenance

pytestmark = pytest.mark.e2e


def test_a_second_daemon_on_the_same_file_refuses_and_the_first_keeps_serving(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with running_daemon(tmp_path / "a", db_path=db) as first:
        second = spawn_daemon(tmp_path / "b", db_path=db, lang="zh")
        assert second.proc.wait(timeout=120) != 0
        out = second.output()
        assert "[unavailable]" in out and str(maintenance.lock_path(db)) in out, out
        assert httpx.get(first.url + "/health", timeout=30).json()["status"] == "ok"
    assert first.returncode == 0, first.output()


def test_the_lock_is_sqlite_only(tmp_path: Path) -> None:
    sqlite_cfg = load_config({"HOME": str(tmp_path), "MEMLANE_DB_PATH": str(tmp_path / "m.db")})
    with daemon_lock(sqlite_cfg):
        assert maintenance.lock_path(tmp_path / "m.db").exists()
    pg_cfg = load_config({"HOME": str(tmp_path), "MEMLANE_DB_PATH": str(tmp_path / "p.db"),
                          "MEMLANE_DB_URL": "postgresql://memlane@127.0.0.1:1/none"})
    with daemon_lock(pg_cfg):
        assert not maintenance.lock_path(tmp_path / "p.db").exists()
