"""Crash: kill -9 the daemon at random moments during a burst of writes and embeddings, 10 rounds.

After each restart: every acknowledged write is present with its acknowledged state, integrity_check
is ok, the embedding queue drains to zero, and vectors match chunks. The vector invariant is exact:
closed versions keep their vectors (for as_of recall), so once the queue is empty every chunk version
has exactly one vector, `live` = 1 exactly for open chunks, and no vector lacks a chunk
(maintenance.check_vectors reports 0 problems). RELIABILITY_LONG=1 runs 50 rounds.
"""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path
from typing import Any

import pytest
import sqlean
from daemon_util import Daemon, mcp_session, start_daemon
from reliability_util import LONG, Outcome, wait_drained

from memory import connect
from store import maintenance

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

ROUNDS = 50 if LONG else 10
WRITERS = 2


async def writer(d: Daemon, w: int, rnd: int, acks: dict[str, Any], stop: asyncio.Event) -> None:
    rng = random.Random(rnd * 100 + w)
    live: list[str] = []
    try:
        async with mcp_session(d, ("sse", "http")[w % 2]) as s:
            i = 0
            while not stop.is_set() and i < 5000:
                i += 1
                roll = rng.random()
                if roll < 0.7 or not live:
                    content = f"round {rnd} writer {w} item {i}: the {rng.choice(['red', 'blue', 'green'])} " \
                              f"{rng.choice(['fox', 'owl', 'eel'])} crossed {rng.randrange(10**6)} rivers"
                    out = Outcome(await s.call_tool("memory_remember", {"content": content}))
                    assert out.ok, out.text
                    acks["remember"][out.data["chunk_id"]] = content
                    live.append(out.data["chunk_id"])
                elif roll < 0.85:
                    old = live.pop(rng.randrange(len(live)))
                    content = f"round {rnd} writer {w} item {i} (corrected): {rng.randrange(10**6)} owls"
                    out = Outcome(await s.call_tool("memory_update", {"id": old, "content": content}))
                    assert out.ok, out.text
                    acks["update"][out.data["chunk_id"]] = (old, content)
                    live.append(out.data["chunk_id"])
                else:
                    old = live.pop(rng.randrange(len(live)))
                    out = Outcome(await s.call_tool("memory_forget", {"id": old, "reason": f"round {rnd}"}))
                    assert out.ok, out.text
                    acks["forget"].add(old)
    except AssertionError:
        raise
    except BaseException:  # the kill cuts the connection mid-call: that call was never acknowledged
        pass


async def burst(d: Daemon, rnd: int, delay: float, acks: dict[str, Any]) -> float:
    """Writers hammer the daemon; after `delay` seconds it is killed with SIGKILL mid-flight."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(writer(d, w, rnd, acks, stop)) for w in range(WRITERS)]
    await asyncio.sleep(delay)
    d.proc.send_signal(signal.SIGKILL)  # no shutdown, no checkpoint, no flush
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 60)
    return delay


def check_state(db_path: Path, acks: dict[str, Any]) -> dict[str, int]:
    db = sqlean.connect(db_path)
    try:
        rows = {r[0]: (r[1], r[2], r[3]) for r in db.execute("select id, content, valid_until, previous_id from chunks")}
        lost = [cid for cid, content in acks["remember"].items() if rows.get(cid, (None,))[0] != content]
        lost += [cid for cid, (old, content) in acks["update"].items()
                 if rows.get(cid, (None, None, None))[0] != content or rows[cid][2] != old or rows[old][1] is None]
        lost += [cid for cid in acks["forget"] if rows.get(cid, (None, None))[1] is None]
        assert lost == [], f"acknowledged writes missing or wrong: {lost[:5]}"
        return {"chunks": len(rows)}
    finally:
        db.close()


def test_kill9_during_writes_and_embeddings(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    acks: dict[str, Any] = {"remember": {}, "update": {}, "forget": set()}
    kills = []
    for rnd in range(ROUNDS + 1):
        d = start_daemon(tmp_path)
        try:
            # Everything acknowledged before every earlier kill is here, and the file is sound.
            check_state(d.db_path, acks)
            conn = connect(d.db_path)
            assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
            conn.close()
            assert wait_drained(d) == 0, "the embedding queue did not drain"
            conn = connect(d.db_path)
            conn.execute("begin")
            rep = maintenance.check_vectors(conn)
            conn.execute("commit")
            conn.close()
            assert rep.problems == 0 and rep.queued == 0 and rep.vectors == rep.chunks, rep.as_dict()
            if rnd == ROUNDS:
                break

            kills.append(asyncio.run(burst(d, rnd, rng.uniform(0.5, 4.0), acks)))
            d.proc.wait(30)
            assert d.proc.returncode == -signal.SIGKILL
        finally:
            if d.proc.poll() is None:
                d.stop()
    counts = check_state(d.db_path, acks)
    acked = len(acks["remember"]) + len(acks["update"]) + len(acks["forget"])
    print(f"\nCRASH rounds={len(kills)} kill_at_s={[round(k, 2) for k in kills]} acked_writes={acked} "
          f"chunks={counts['chunks']} lost=0 vectors={rep.vectors} integrity=ok")
    assert len(kills) == ROUNDS and acked > ROUNDS
