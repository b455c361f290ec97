"""A real daemon measured from outside: its recall through MCP (SSE or Streamable HTTP), its RSS and the index
files it maps."""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from devtools.corpus import (
    NS,
    WARMUP,
)
from i18n_messages import t

ROOT = Path(__file__).resolve().parent.parent


def pct(values: list[float]) -> dict[str, Any]:
    """p50/p95/p99/min/max/mean/stdev in ms (nearest-rank percentiles)."""
    if not values:
        return {"count": 0}
    s = sorted(values)

    def q(p: float) -> float:
        return round(s[min(len(s) - 1, max(0, math.ceil(p * len(s)) - 1))], 3)

    return {"count": len(s), "p50_ms": q(0.50), "p95_ms": q(0.95), "p99_ms": q(0.99), "min_ms": round(s[0], 3),
            "max_ms": round(s[-1], 3), "mean_ms": round(statistics.fmean(s), 3),
            "stdev_ms": round(statistics.stdev(s), 3) if len(s) > 1 else 0.0}


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident set size from /proc (Linux); None elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def cpu_s(pid: int | str = "self") -> float | None:
    """User + system CPU seconds a process has used, from /proc (Linux); None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def index_maps_mb(pid: int | str) -> tuple[float, float] | None:
    """(mapped, resident) MB of the approximate index files a process maps (/proc smaps, Linux): the usearch
    files and their sorted keys (store/sqlite/ann.py); None elsewhere. Issue 15 bounds the daemon's RSS by 200 MB
    plus the index's mapped size."""
    mapped = resident = 0
    current = False
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                head = line.split(maxsplit=1)[0]
                if not head.endswith(":"):  # a mapping's first line: address range ... [path]
                    path = line.rstrip()
                    current = ".ann/" in path and path.endswith((".usearch", ".keys"))
                elif current and head == "Size:":
                    mapped += int(line.split()[1])
                elif current and head == "Rss:":
                    resident += int(line.split()[1])
    except OSError:
        return None
    return round(mapped / 1024, 1), round(resident / 1024, 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _mcp_recalls(url: str, transport: str, queries: list[str], lanes: list[str] | None = None,
                       floor: Callable[[str], float] | None = None) -> tuple[list[float], list[float], list[float]]:
    """Round trips of memory_recall (all lanes, or `lanes`) and of an MCP ping, on one session; the first
    WARMUP questions warm the session up and are not timed. With `floor` (the ms this process takes to embed
    a question and rank the store's vectors by it), each question's own floor too, taken right before the
    daemon is asked it: that time plus the ping after it."""

    if transport == "sse":

        ctx = sse_client(url)
    else:

        ctx = streamable_http_client(url)
    times: list[float] = []
    pings: list[float] = []
    floors: list[float] = []
    extra = {"lanes": lanes} if lanes else {}
    async with ctx as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            for q in queries[:WARMUP]:
                await session.call_tool("memory_recall", {"query": q, "namespace": NS, **extra})
            for q in queries[WARMUP:]:
                own = floor(q) if floor else 0.0
                t0 = time.perf_counter()
                res = await session.call_tool("memory_recall", {"query": q, "namespace": NS, **extra})
                times.append((time.perf_counter() - t0) * 1000)
                if res.is_error:
                    raise RuntimeError(f"memory_recall failed over {transport}: {res.content}")
                t0 = time.perf_counter()
                await session.send_ping()  # the protocol's own floor: one round trip, no work
                pings.append((time.perf_counter() - t0) * 1000)
                if floor:
                    floors.append(own + pings[-1])
    return times, pings, floors


async def _remember_each(session: ClientSession, items: list[dict[str, Any]], times: list[float] | None = None) -> None:
    """memory_remember of each item (corpus.make_item), one after the other, as an agent writes; each round
    trip (ms) into `times`."""
    for item in items:
        t0 = time.perf_counter()
        res = await session.call_tool("memory_remember", {"content": item["content"], "namespace": NS,
                                                          "tags": item["tags"], "source": item["source"]})
        if times is not None:
            times.append((time.perf_counter() - t0) * 1000)
        if res.is_error:
            raise RuntimeError(f"memory_remember failed: {res.content}")


async def _mcp_writes(url: str, items: list[dict[str, Any]], pid: int) -> dict[str, Any]:
    """memory_remember of each item, one after the other on one Streamable HTTP session, as an agent
    writes: each call's round trip (ms), the rate, and the CPU each write cost this process and the daemon
    `pid` (its worker's embedding of the writes included), all over the writes alone, not the session's
    set-up. The daemon's worker embeds them meanwhile, as it would."""
    times: list[float] = []
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            started, own0, daemon0 = time.perf_counter(), time.process_time(), cpu_s(pid)
            await _remember_each(session, items, times)
            wall, own1, daemon1 = time.perf_counter() - started, time.process_time(), cpu_s(pid)
    out = {**pct(times), "per_s": round(len(times) / wall, 1),
           "client_cpu_ms": round((own1 - own0) / len(times) * 1000, 2)}
    if daemon0 is not None and daemon1 is not None:
        out["daemon_cpu_ms"] = round((daemon1 - daemon0) / len(times) * 1000, 2)
    return out


DRAIN_TIMEOUT_S = 900  # a backlog the worker has not embedded by then fails the pass
RECALL_GAP_S = 0.25  # the import pass asks a question this often, as bench_worker does in process
IDLE_RECALLS = 30


def _pending(base: str) -> int:
    """Own vectors still to embed, from the daemon's /health; 1 while it has no count yet (its first reading
    can outlast the half second /health waits for it), so that no caller takes that for an empty queue."""
    # Deferred: as in daemon_phase.
    import httpx

    got = httpx.get(base + "/health", timeout=10.0).json().get("pending_embeddings")
    return 1 if got is None else int(got)


def _drained(base: str, since: float) -> float:
    """Seconds from `since` (perf_counter) until /health reports no own vector pending, read every 0.1 s."""
    deadline = time.perf_counter() + DRAIN_TIMEOUT_S
    while _pending(base) > 0:
        if time.perf_counter() > deadline:
            raise RuntimeError(t("quality.eval_no_drain", seconds=DRAIN_TIMEOUT_S))
        time.sleep(0.1)
    return time.perf_counter() - since


def _import_writer(url: str, items: list[dict[str, Any]], ready: Any) -> None:
    """A process of its own that remembers `items` one by one (its client's CPU stays off the recalls' GIL);
    `ready` is set once its session is up, so the busy recalls start with the writes."""

    async def write() -> None:
        async with streamable_http_client(url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                ready.set()
                await _remember_each(session, items)

    asyncio.run(write())


async def _paced_recalls(url: str, questions: list[str], go_on: Callable[[int], bool]) -> list[float]:
    """memory_recall round trips (ms) on one session, a question every RECALL_GAP_S while go_on(i) holds;
    the questions cycle when the pass outlasts them."""
    times: list[float] = []
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            i = 0
            while go_on(i):
                t0 = time.perf_counter()
                res = await session.call_tool("memory_recall", {"query": questions[i % len(questions)], "namespace": NS})
                times.append((time.perf_counter() - t0) * 1000)
                if res.is_error:
                    raise RuntimeError(f"memory_recall failed: {res.content}")
                i += 1
                await asyncio.sleep(RECALL_GAP_S)
    return times


def _write_pass(base: str, writes: list[dict[str, Any]], pid: int) -> dict[str, Any]:
    """_mcp_writes (the CPU per write on each side shows whether the rate is bound by the cores or by
    waiting), then the own vectors' drain with no question arriving, from the first write to an empty queue."""
    started = time.perf_counter()
    out = asyncio.run(_mcp_writes(base + "/mcp", writes, pid))
    drained = _drained(base, started)
    out.update(drained_s=round(drained, 2), own_vectors_per_s=round(len(writes) / drained, 1))
    return out


def _import_pass(base: str, items: list[dict[str, Any]], questions: list[str]) -> dict[str, Any]:
    """Issue 30's "query p50 while a bulk import runs": IDLE_RECALLS paced recalls on the drained daemon,
    then the same pace while another process remembers `items` one by one and the daemon embeds them, until
    its queue is empty. Each pass asks questions of its own."""
    _drained(base, time.perf_counter())
    idle = asyncio.run(_paced_recalls(base + "/mcp", questions[:IDLE_RECALLS], lambda i: i < IDLE_RECALLS))
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Event()
    writer = spawn.Process(target=_import_writer, args=(base + "/mcp", items, ready), daemon=True)
    writer.start()
    try:
        deadline = time.monotonic() + 120
        while not ready.wait(0.2):
            if not writer.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the import writer did not start (exit code {writer.exitcode})")
        t0 = time.perf_counter()
        written: list[float] = []

        def go_on(i: int) -> bool:
            if writer.is_alive():
                return True
            if not written:
                written.append(time.perf_counter() - t0)
            return _pending(base) > 0

        busy = asyncio.run(_paced_recalls(base + "/mcp", questions[IDLE_RECALLS:] or questions, go_on))
        drained = time.perf_counter() - t0
        writer.join(timeout=30)
    finally:
        if writer.is_alive():  # a failed pass leaves no writer behind
            writer.kill()
            writer.join(timeout=10)
    if writer.exitcode != 0:
        raise RuntimeError(f"the import writer failed (exit code {writer.exitcode})")
    out: dict[str, Any] = {"items": len(items), "idle": pct(idle), "busy": pct(busy),
                           "written_per_s": round(len(items) / written[0], 1) if written else None,
                           "drained_s": round(drained, 2)}
    if idle and busy:
        out["busy_over_idle_p50"] = round(out["busy"]["p50_ms"] / out["idle"]["p50_ms"], 3)
    return out


def daemon_phase(db_path: Path, home: Path, queries: dict[str, list[str]],
                 floor: Callable[[str], float] | None = None,
                 writes: list[dict[str, Any]] | None = None,
                 imports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Start the daemon on `db_path`, then recall over SSE, Streamable HTTP, and Streamable HTTP with the
    vector lane alone, each pass with its own questions (`queries`, keyed "sse", "http", "vector"). `floor`:
    see _mcp_recalls; the Streamable HTTP pass reports each question's floor beside its recall. `writes`:
    items (corpus.make_item) remembered through Streamable HTTP one by one after the RSS readings
    (`mcp_writes`: each acknowledgement, the rate, and the CPU per write of this process and of the daemon),
    and the own vectors' drain after them with no question arriving. `imports`: items another process
    remembers while questions (`queries["import"]`) arrive, against the same pace on the idle daemon
    (`mcp_import`, _import_pass)."""
    server = ROOT / "mcp_server.py"
    if not server.exists():
        return {"skipped": t("bench.daemon_missing", path=str(server))}
    # Deferred: only when the LLM extractor is configured.
    import httpx

    port = free_port()
    env = {**os.environ, "HOME": str(home), "MEMLANE_QUERY_CACHE_SIZE": "0", "MEMLANE_PORT": str(port),
           "MEMLANE_HOST": "127.0.0.1", "MEMLANE_DB_PATH": str(db_path)}
    env.pop("MEMLANE_AUTH_TOKEN", None)
    started = time.time()
    proc = subprocess.Popen([sys.executable, str(server), "--db", str(db_path), "--port", str(port)],
                            cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    out: dict[str, Any] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        ready = None
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                if httpx.get(base + "/health", timeout=1.0).status_code == 200:
                    ready = time.time()
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        if ready is None:
            err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")[-1500:] if proc.poll() is not None else ""
            return {"skipped": t("bench.daemon_unready", detail=err or "timeout")}
        out["start_to_ready_s"] = round(ready - started, 3)
        time.sleep(0.5)
        out["rss_idle_mb"] = rss_mb(proc.pid)
        for transport, path, key in (("sse", "/sse", "sse"), ("streamable_http", "/mcp", "http")):
            times, pings, floors = asyncio.run(_mcp_recalls(base + path, key, queries[key],
                                                            floor=floor if key == "http" else None))
            out[transport] = pct(times)
            out[f"{transport}_ping"] = pct(pings)
            if floors:
                out[f"{transport}_question_floor"] = pct(floors)
        times, _, _ = asyncio.run(_mcp_recalls(base + "/mcp", "http", queries["vector"], lanes=["vector"]))
        out["streamable_http_vector_only"] = pct(times)
        out["rss_busy_mb"] = rss_mb(proc.pid)  # right after the last recall
        time.sleep(2.5)  # the daemon trims its heap once idle for a second (server/heaptrim.py)
        out["rss_after_mb"] = rss_mb(proc.pid)
        maps = index_maps_mb(proc.pid)
        if maps is not None and out["rss_after_mb"] is not None:
            out["index_mapped_mb"], out["index_resident_mb"] = maps
            out["rss_after_without_index_mb"] = round(out["rss_after_mb"] - maps[1], 1)
        if writes:
            out["mcp_writes"] = _write_pass(base, writes, proc.pid)
        if imports and queries.get("import"):
            out["mcp_import"] = _import_pass(base, imports, queries["import"])
        return out
    except Exception as exc:  # report what failed instead of hiding it; the rest of the run stands
        while getattr(exc, "exceptions", None):  # anyio wraps the real error in an exception group
            exc = exc.exceptions[0]  # type: ignore[attr-defined]
        out["error"] = t("bench.daemon_failed", detail=f"{type(exc).__name__}: {exc}"[:500])
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
