"""Load: 8 concurrent MCP clients × 500 mixed operations against a real daemon on loopback.

Shows: 0 errors, 0 "database is locked", every acknowledged write visible afterwards (through the
daemon and in the file), and prints recall p95 idle vs under load. RELIABILITY_LONG=1 runs 8 × 2,000.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
import sqlean
from daemon_util import Daemon, mcp_session, running_daemon
from reliability_util import LONG, Outcome, p95, wait_drained

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

CLIENTS = 8
OPS = 2000 if LONG else 500
NS = "load"
WORDS = ("berlin munich tea coffee project deadline invoice budget alpha beta gamma delta river mountain "
         "garden piano violin kernel compiler database router sensor battery harbor market ledger").split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


async def client(d: Daemon, c: int, transport: str, acks: dict[str, Any], lat: list[float],
                 errors: list[str]) -> None:
    rng = random.Random(1000 + c)
    live: list[str] = []
    async with mcp_session(d, transport) as s:
        async def call(tool: str, args: dict[str, Any]) -> Outcome | None:
            try:
                out = Outcome(await s.call_tool(tool, args))
            except Exception as exc:  # noqa: BLE001 - every failure is counted
                errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                return None
            if not out.ok:
                errors.append(f"{tool}: {out.text[:300]}")
                return None
            return out

        for i in range(OPS):
            roll = rng.random()
            if roll < 0.35 or not live:
                token = f"tok{c}x{i}"
                content = f"client {c} note {token}: {words(rng, 8)}"
                out = await call("memory_remember", {"content": content, "namespace": NS,
                                                     "tags": [f"c{c}"], "importance": rng.random()})
                if out:
                    acks["remember"][out.data["chunk_id"]] = content
                    live.append(out.data["chunk_id"])
            elif roll < 0.65:
                t0 = time.perf_counter()
                out = await call("memory_recall", {"query": f"{words(rng, 3)} {c} {i}", "namespace": NS,
                                                   "top_k": 10})
                if out:
                    lat.append((time.perf_counter() - t0) * 1000)
            elif roll < 0.75:
                old = live.pop(rng.randrange(len(live)))
                token = f"tok{c}u{i}"
                content = f"client {c} update {token}: {words(rng, 8)}"
                out = await call("memory_update", {"id": old, "content": content, "namespace": NS})
                if out:
                    acks["update"][out.data["chunk_id"]] = (old, content)
                    live.append(out.data["chunk_id"])
                else:
                    live.append(old)
            elif roll < 0.85:
                old = live.pop(rng.randrange(len(live)))
                out = await call("memory_forget", {"id": old, "namespace": NS, "reason": f"load {c} {i}"})
                if out:
                    acks["forget"][old] = out.data["valid_until"]
            else:
                a, b = rng.randrange(40), rng.randrange(40)
                out = await call("memory_relate", {"subject": f"person{a}", "predicate": rng.choice(
                    ["knows", "works_with", "manages"]), "object": f"person{b}", "namespace": NS,
                    "confidence": round(rng.random(), 3)})
                if out:
                    acks["relate"][out.data["relation_id"]] = True
        acks["live"].extend(live)


async def idle_recalls(d: Daemon, n: int) -> list[float]:
    rng = random.Random(7)
    out = []
    async with mcp_session(d, "sse") as s:
        for i in range(n):
            t0 = time.perf_counter()
            res = await s.call_tool("memory_recall", {"query": f"{words(rng, 3)} idle {i}", "namespace": NS})
            assert not res.is_error, res.content[0].text
            out.append((time.perf_counter() - t0) * 1000)
    return out


async def seed(d: Daemon, n: int) -> None:
    rng = random.Random(3)
    async with mcp_session(d, "http") as s:
        for i in range(n):
            res = await s.call_tool("memory_remember", {"content": f"seed {i}: {words(rng, 10)}", "namespace": NS})
            assert not res.is_error, res.content[0].text


def test_eight_clients_mixed_load(tmp_path: Path) -> None:
    acks: dict[str, Any] = {"remember": {}, "update": {}, "forget": {}, "relate": {}, "live": []}
    lat: list[float] = []
    errors: list[str] = []
    with running_daemon(tmp_path) as d:
        asyncio.run(seed(d, 200))
        assert wait_drained(d) == 0
        idle = asyncio.run(idle_recalls(d, 60))

        async def all_clients() -> None:
            await asyncio.gather(*(client(d, c, ("sse", "http")[c % 2], acks, lat, errors)
                                   for c in range(CLIENTS)))

        t0 = time.monotonic()
        asyncio.run(all_clients())
        took = time.monotonic() - t0
        assert errors == [], errors[:10]

        # Visible through the daemon: every live acknowledged memory, by its unique token (meta lane).
        async def visible() -> list[str]:
            missing = []
            async with mcp_session(d, "sse") as s:
                for cid in acks["live"]:
                    content = acks["remember"].get(cid) or acks["update"][cid][1]
                    token = content.split(":")[0].split()[-1]
                    res = Outcome(await s.call_tool("memory_recall", {"query": token, "namespace": NS,
                                                                      "lanes": ["meta"], "top_k": 5}))
                    assert res.ok, res.text
                    if cid not in [h["chunk_id"] for h in res.data["hits"]]:
                        missing.append(cid)
            return missing

        assert asyncio.run(visible()) == []
        assert wait_drained(d) == 0
    assert d.returncode == 0, d.output()
    out = d.output().lower()
    assert "database is locked" not in out and "traceback" not in out

    # And in the file, after a clean stop: every acknowledged write with its final state.
    db = sqlean.connect(d.db_path)
    rows = {r[0]: r[1:] for r in db.execute("select id, content, valid_until, previous_id from chunks")}
    for cid, content in acks["remember"].items():
        assert cid in rows and rows[cid][0] == content
    for cid, (old, content) in acks["update"].items():
        assert rows[cid][0] == content and rows[cid][2] == old and rows[old][1] is not None
    for cid in acks["forget"]:
        assert rows[cid][1] is not None
    for cid in acks["live"]:
        assert rows[cid][1] is None
    rel = {r[0] for r in db.execute("select id from relations")}
    assert set(acks["relate"]) <= rel
    # Nothing was deleted: every version ever acknowledged is still a row.
    assert len(rows) == 200 + len(acks["remember"]) + len(acks["update"])
    assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    db.close()

    idle_p95, load_p95 = p95(idle), p95(lat)
    ops = CLIENTS * OPS
    print(f"\nLOAD clients={CLIENTS} ops={ops} took_s={took:.1f} ops_per_s={ops / took:.1f} errors={len(errors)} "
          f"recalls={len(lat)} idle_p95_ms={idle_p95:.1f} load_p95_ms={load_p95:.1f} "
          f"ratio={load_p95 / idle_p95:.2f} remembers={len(acks['remember'])} updates={len(acks['update'])} "
          f"forgets={len(acks['forget'])} relations={len(acks['relate'])}")
    # Timings on a shared 2-core machine are noise, so the 5x bound is asserted only when asked.
    if os.environ.get("RELIABILITY_ASSERT_LATENCY") == "1":
        assert load_p95 <= 5 * idle_p95
