"""A small, fixed world for the dashboard's end-to-end tests, written with the real Memory before the daemon starts."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from config import load_config
from memory import Memory
from tests.daemon_util import Daemon, running_daemon  # also imported by devtools/bench_dashboard.py

LOGIN_RE = re.compile(r"(http://\S+/ui/login\?token=\S+)")


def seed(db_path: Path, home: Path, embedder: Any) -> dict[str, str]:
    """Memories, entities and relations about Alice, plus a few logged recalls (one with no hits)."""
    ids: dict[str, str] = {}
    with Memory(db_path, config=load_config({"HOME": str(home)}), embedder=embedder) as m:
        ids["work"] = m.remember("Alice works at SAP in Walldorf as a data engineer.", source="chat", tags=["work"],
                                 entities=["Alice", {"name": "SAP", "kind": "org"}])["chunk_id"]
        ids["home"] = m.remember("Alice lives in Berlin with her cat Mochi.", source="chat", tags=["home"],
                                 entities=["Alice", {"name": "Berlin", "kind": "place"}])["chunk_id"]
        ids["bob"] = m.remember("Bob is Alice's manager at SAP.", source="chat", entities=["Bob", "Alice", "SAP"])["chunk_id"]
        ids["zh"] = m.remember("爱丽丝喜欢在周末去柏林的湖边跑步。", source="chat", tags=["爱好"])["chunk_id"]
        ids["other"] = m.remember("The side project ships in March.", namespace="side", tags=["plan"])["chunk_id"]
        m.relate("Alice", "works_at", "SAP", subject_kind="person", object_kind="org", chunk_id=ids["work"])
        m.relate("SAP", "located_in", "Walldorf", object_kind="place")
        m.relate("Alice", "lives_in", "Berlin", object_kind="place", chunk_id=ids["home"])
        m.relate("Bob", "manages", "Alice", subject_kind="person")
        assert m.flush(120)
        m.recall("where does Alice work?")
        m.recall("who manages Alice")
        m.recall("zzqx", lanes=["meta"])  # a recall with no hits, for the health view
    return ids


def login_url(lines: list[str], timeout: float = 10.0) -> str:
    """The login link the daemon prints on the line after its ready line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(lines):
            m = LOGIN_RE.search(line)
            if m:
                return m.group(1)
        time.sleep(0.05)
    raise AssertionError("the daemon printed no login URL:\n" + "\n".join(lines))


@contextlib.contextmanager
def seeded_daemon(tmp: Path, embedder: Any, token: str) -> Iterator[tuple[Daemon, dict[str, str]]]:
    """A daemon on the seeded world in `tmp` (its HOME in tmp/home), and the ids `seed` returns."""
    (tmp / "home").mkdir()
    ids = seed(tmp / "memory.db", tmp / "home", embedder)
    with running_daemon(tmp, token=token) as d:
        yield d, ids
