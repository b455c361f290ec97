"""/health and memory_stats report the schema version of the engine in use, read from that engine's own
record: SQLite's `pragma user_version`, PostgreSQL's memlane_schema table (issue 28)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import psycopg
import pytest
import sqlean

import mcp_server
from config import Config
from memory import Memory


def recorded_version(target: str | Path) -> int:
    """The version as the engine itself records it, read beside the store, not through it."""
    if isinstance(target, str) and target.startswith("postgres"):
        with psycopg.connect(target) as conn:
            row = conn.execute("select max(version) from memlane_schema").fetchone()
        return int(row[0]) if row else 0
    # sqlean, the store's own SQLite: a second SQLite library in the process does not see its locks, so its
    # connection takes itself for the only one and truncates the live -shm file (SIGBUS: test_layout).
    conn = sqlean.connect(target)
    try:
        return int(conn.execute("pragma user_version").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.engine_neutral
def test_health_and_stats_report_the_engines_own_schema_version(mem: Memory, cfg: Config,
                                                                 db_target: str | Path) -> None:
    app, _ = mcp_server.create_app(mem, cfg, lang="en", transports=("sse",))

    async def get() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            return await c.get("/health")

    want = recorded_version(db_target)
    assert want >= 1
    assert asyncio.run(get()).json()["schema_version"] == want
    assert mem.stats()["schema_version"] == want
    assert mem.schema_version == want
