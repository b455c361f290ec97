"""The evaluation's daemon backend (devtools/evalkit.Remote) waits for the whole index before it asks:
own vectors and the context windows of threaded memories (issue 27: `pending_context`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemon_util import running_daemon

from devtools.evalkit import Remote

pytestmark = pytest.mark.e2e

TURNS = 120  # enough that the context windows are still queued when the own vectors are done


def test_flush_waits_for_the_context_windows_too(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        remote = Remote(d.url + "/mcp", token=d.token)
        try:
            for i in range(TURNS):
                who = "Ann" if i % 2 else "Bo"
                remote.remember(content=f"{who}: turn {i} about the lake house and the boat.", namespace="ev",
                                thread="conv-1")
            remote.flush()
            stats = remote._run(remote._call("memory_stats", {"namespace": "ev"}))
        finally:
            remote.close()
    assert stats["live_chunks"] == TURNS
    assert not stats.get("pending_embeddings") and not stats.get("pending_context"), stats
