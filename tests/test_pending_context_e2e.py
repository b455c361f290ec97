"""/health reports the context windows still to embed (issue 27): non-zero right after an import whose own
vectors are written, 0 once the daemon's worker has drained them. A real daemon on loopback."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from daemon_util import running_daemon

from memory import Memory

TURNS = 240  # 30 context batches: the daemon cannot drain them before its first /health answer


def _import_own_vectors_only(db: Path, cfg: Any, e5: Any) -> int:
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        for i in range(TURNS):
            m.remember(f"Turn {i}: Caroline talked about the pottery class she took in week {i}.", thread="c1")
        while m.pending_embeddings():  # own vectors come first; the windows stay queued
            m.embed_pending(max_batches=1)
        return m.pending_context()


def test_health_counts_context_windows_until_drained(tmp_path: Path, cfg: Any, e5: Any) -> None:
    db = tmp_path / "memory.db"
    assert _import_own_vectors_only(db, cfg, e5) == TURNS
    with running_daemon(tmp_path, db_path=db) as d:
        first = httpx.get(d.url + "/health", timeout=10).json()
        assert first["pending_embeddings"] == 0
        assert first["pending_context"] > 0  # recall is not at full strength yet, and /health says so
        deadline = time.monotonic() + 240
        while httpx.get(d.url + "/health", timeout=10).json()["pending_context"]:
            assert time.monotonic() < deadline, "context windows did not drain"
            time.sleep(0.2)
