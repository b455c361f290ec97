"""Each recall lane on its own: a real SQLite file, the real sqlite-vec and FTS5, fixed 8-dim vectors.

No model: vectors are chosen by hand, so each test knows which memory is nearest.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import entity_resolve as er
from config import Config
from contract import validate as v
from lang import crosslingual as xl
from recall import fusion, lanes, pipeline
from recall.query import Plan, QueryInfo
from store.protocol import Filter, NewChunk, QueuedChunk
from store.sqlite.engine import SqliteStore
from store.util import content_hash

DIM = 8
CFG = Config()


def unit(*xs: float) -> np.ndarray:
    vec = np.zeros(DIM, dtype=np.float32)
    vec[: len(xs)] = xs
    return vec / np.linalg.norm(vec)


@pytest.fixture
def store(tmp_path: Path):
    s = SqliteStore(tmp_path / "lanes.db", DIM, model="fixed")
    try:
        yield s
    finally:
        s.close()


def put(store: SqliteStore, text: str, vec: np.ndarray | None = None, *, ns: str = "n", source: str | None = None,
        entities: tuple[tuple[str, str | None], ...] = (), romanise: bool = False) -> int:
    now = v.now_iso()
    lang = er.detect_lang(text)
    with store.atomic() as tx:
        _, seq = store.insert_chunk(tx, NewChunk(ns, text, content_hash(text), source, 0.5, [], {}, lang, now, now))
        er.link(store, tx, ns, seq, [(n, k, []) for n, k in entities], now, limit=32, cooccurs=False,
                romanise=xl.romanised if romanise else None)
        if vec is not None:
            store.write_vectors(tx, [(QueuedChunk(seq, ns, text, lang), vec)])
    return seq


def plan(query: str, ns: str = "n", **cfg: bool) -> Plan:
    return Plan(Filter(ns), QueryInfo(query), 10, cfg=dataclasses.replace(CFG, **cfg))


# ---------------------------------------------------------------- vector


def test_vector_lane_orders_by_cosine_and_keeps_to_its_namespace(store: SqliteStore) -> None:
    near = put(store, "near", unit(1, 0.1))
    far = put(store, "far", unit(0.2, 1))
    put(store, "other namespace, nearest of all", unit(1), ns="m")
    got = lanes.vector(store, plan("q", crosslingual=False), unit(1)).seqs
    assert got == [near, far]


def test_vector_lane_skips_closed_versions_and_applies_filters(store: SqliteStore) -> None:
    live = put(store, "live", unit(1, 0.3), source="chat")
    closed = put(store, "closed", unit(1))
    other_source = put(store, "mail", unit(1, 0.1), source="mail")
    with store.atomic() as tx:
        store.close_chunk(tx, closed, store.reader().execute("select id from chunks where seq = ?", (closed,))
                          .fetchone()[0], v.now_iso(), "")
    assert lanes.vector(store, plan("q", crosslingual=False), unit(1)).seqs == [other_source, live]
    p = dataclasses.replace(plan("q", crosslingual=False), flt=Filter("n", source="chat"))
    assert lanes.vector(store, p, unit(1)).seqs == [live]


def test_vector_lane_ranks_each_language_on_its_own(store: SqliteStore) -> None:
    # English memories all sit close to the query; the one Chinese memory is further away in raw
    # cosine but stands out among Chinese memories, so interleaving puts it near the top.
    en = [put(store, f"english note {i}", unit(1, 0.3 + 0.01 * i)) for i in range(6)]
    zh_best = put(store, "柏林的天气很冷", unit(1, 1.0))
    zh_rest = [put(store, f"中文笔记{i}", unit(0.2, 1, 0.1 * i)) for i in range(5)]
    plain = lanes.vector(store, plan("where", crosslingual=False), unit(1)).seqs
    mixed = lanes.vector(store, plan("where"), unit(1)).seqs
    assert plain.index(zh_best) == len(en)  # after every English memory by raw distance
    assert mixed.index(zh_best) <= 1 and set(mixed) == set(en) | {zh_best, *zh_rest}


# ---------------------------------------------------------------- meta (lexical)


def test_meta_lane_finds_words_trigrams_and_two_character_chinese(store: SqliteStore) -> None:
    tea = put(store, "Bob drinks green tea every morning.")
    put(store, "The coffee machine on floor two was repaired.")
    berlin = put(store, "爱丽丝去年搬到了柏林。")
    budget = put(store, "下周一要开预算评审会议。")
    assert lanes.meta(store, plan("green tea")).seqs == [tea]
    assert lanes.meta(store, plan("柏林")).seqs == [berlin]  # 2 characters: the bigram index
    assert lanes.meta(store, plan("预算评审")).seqs == [budget]  # 3+ characters: trigrams


def test_meta_lane_precision_drops_hits_that_match_too_little_of_the_query(store: SqliteStore) -> None:
    both = put(store, "The staging server ran out of memory.")
    weak = put(store, "The server room door is locked.")
    for i in range(30):
        put(store, f"The server rack number {i} is fine.")
    precise = lanes.meta(store, plan("staging server memory")).seqs
    loose = lanes.meta(store, plan("staging server memory", lexical_precision=False)).seqs
    assert precise[0] == both and weak not in precise
    assert weak in loose


def test_meta_lane_treats_query_syntax_as_text(store: SqliteStore) -> None:
    odd = put(store, 'He typed "NEAR(a b)" and 100%_done OR * in the box.')
    assert lanes.meta(store, plan('"NEAR(a b)" OR *')).seqs == [odd]
    assert lanes.meta(store, plan("100%_done")).seqs == [odd]


# ---------------------------------------------------------------- entity


def test_entity_lane_matches_aliases_and_weights_by_specificity(store: SqliteStore) -> None:
    with store.atomic() as tx:
        er.resolve(store, tx, "n", "Alice Chen", "person", ["Ali"], v.now_iso())
    a = put(store, "She moved to Berlin.", entities=(("Alice Chen", "person"),))
    put(store, "Unrelated.", entities=(("Bob", "person"),))
    res = lanes.entity(store, plan("what about Ali?"))
    assert res.seqs == [a] and [k for _, k in res.matched_entities] == ["person"]


def test_entity_lane_ignores_an_entity_in_most_memories(store: SqliteStore) -> None:
    for i in range(40):
        put(store, f"note {i}", entities=(("Caroline", "person"),))
    special = put(store, "Caroline adopted a cat.", entities=(("Caroline", "person"), ("Luna", "concept")))
    assert lanes.entity(store, plan("Caroline")).seqs == []  # a chat's speaker says nothing
    assert lanes.entity(store, plan("Caroline and Luna")).seqs == [special]
    assert len(lanes.entity(store, plan("Caroline", lexical_precision=False)).seqs) == 41


def test_entity_lane_matches_a_name_written_in_the_other_script(store: SqliteStore) -> None:
    kyoto = put(store, "我在京都住了三年。", entities=(("京都", "place"),))
    shenzhen = put(store, "We opened the Shenzhen office in May.", entities=(("Shenzhen", "place"),))
    put(store, "Unrelated.", entities=(("Bob", "person"),))
    assert lanes.entity(store, plan("How long did I live in Kyoto?")).seqs == [kyoto]  # CC-CEDICT: Kyoto 京都
    assert lanes.entity(store, plan("深圳办公室什么时候开的？")).seqs == [shenzhen]


def test_a_chinese_name_is_read_in_pinyin_as_english_text_writes_it() -> None:
    assert xl.romanised("林伟") == ("lin wei", "wei lin")
    assert xl.romanised("陈晓雨") == ("chen xiaoyu", "xiaoyu chen")  # a given name of two syllables is one word
    assert xl.romanised("曾明")[:2] == ("zeng ming", "ming zeng")  # 曾 read as the surname, not ceng
    assert xl.romanised("键盘") == () and xl.romanised("林") == ()  # no surname first; too short


def test_entity_lane_matches_a_chinese_name_and_its_pinyin_both_ways(store: SqliteStore) -> None:
    zhao = put(store, "赵磊说明年的差旅预算会压缩百分之二十。", entities=(("赵磊", "person"),), romanise=True)
    lin = put(store, "Lin Wei uses a split keyboard.", entities=(("Lin Wei", "person"),), romanise=True)
    put(store, "Unrelated.", entities=(("Bob", "person"),), romanise=True)
    assert lanes.entity(store, plan("What did Zhao Lei say about the travel budget?")).seqs == [zhao]
    assert lanes.entity(store, plan("Did Lei Zhao approve it?")).seqs == [zhao]  # given name first
    assert lanes.entity(store, plan("林伟用的是哪款键盘？")).seqs == [lin]
    assert lanes.entity(store, plan("Which keyboard does Wei use?")).seqs == []  # one word is no full name


def test_names_read_alike_stay_apart(store: SqliteStore) -> None:
    """林伟, 林薇 (both read lin wei) and Lin Wei are three entities: a reading finds, it never merges."""
    seqs = [put(store, f"{name} joined the team.", entities=((name, "person"),), romanise=True)
            for name in ("林伟", "林薇", "Lin Wei")]
    linked = dict(store.reader().execute("select chunk_seq, entity_id from chunk_entities").fetchall())
    assert len({linked[s] for s in seqs}) == 3
    assert sorted(lanes.entity(store, plan("What did Lin Wei do?")).seqs) == sorted(seqs[::2])  # 林薇 keeps no
    # reading of her own: the first name read lin wei holds that key


# ---------------------------------------------------------------- graph


def test_graph_lane_walks_two_hops_and_finds_evidence(store: SqliteStore) -> None:
    seed = put(store, "Alice works at Acme.", entities=(("Alice", "person"),))
    hop2 = put(store, "Acme is owned by Globex.", entities=(("Globex", "org"),))
    evidence = put(store, "The contract was signed in May.")
    now = v.now_iso()
    with store.atomic() as tx:
        ids = {n: er.resolve(store, tx, "n", n, None, [], now)["id"] for n in ("Alice", "Acme", "Globex")}
        ev_id = tx.execute("select id from chunks where seq = ?", (evidence,)).fetchone()[0]
        store.upsert_relation(tx, "n", ids["Alice"], "works_at", ids["Acme"], 1.0, ev_id, now, now)
        store.upsert_relation(tx, "n", ids["Acme"], "owned_by", ids["Globex"], 0.9, None, now, now)
    p = plan("Alice")
    ent = lanes.entity(store, p)
    got = lanes.graph(store, p, ent, fusion.LaneResult([])).seqs
    assert ent.seqs == [seed]
    assert got[:1] == [evidence] and hop2 in got  # hop 1 evidence first, the hop-2 entity's memory after


def _two_graphs(store: SqliteStore) -> dict[str, int]:
    """Alice -works_at-> Acme (evidence: the contract) and Dana -owns-> Miso (evidence: the vet bill)."""
    out = {"alice": put(store, "Alice works at Acme.", unit(1), entities=(("Alice", "person"),)),
           "dana": put(store, "Dana has a cat.", unit(0, 1), entities=(("Dana", "person"),)),
           "contract": put(store, "The contract was signed in May."),
           "vet": put(store, "The vet bill was paid.")}
    now = v.now_iso()
    with store.atomic() as tx:
        ids = {n: er.resolve(store, tx, "n", n, None, [], now)["id"] for n in ("Alice", "Acme", "Dana", "Miso")}
        ev = dict(tx.execute("select seq, id from chunks").fetchall())
        store.upsert_relation(tx, "n", ids["Alice"], "works_at", ids["Acme"], 1.0, ev[out["contract"]], now, now)
        store.upsert_relation(tx, "n", ids["Dana"], "owns", ids["Miso"], 1.0, ev[out["vet"]], now, now)
    return out


def test_graph_lane_walks_from_the_named_entity_without_the_vector_hits(store: SqliteStore) -> None:
    seqs = _two_graphs(store)
    p = plan("Where does Alice work?")
    ent = lanes.entity(store, p)
    early = lanes.graph(store, p, ent, None)  # before the query is embedded
    assert early is not None and seqs["contract"] in early.seqs
    # The vector hits' entities (Dana) are not walked when the question names one of its own.
    late = lanes.graph(store, p, ent, fusion.LaneResult([seqs["dana"]]))
    assert late is not None and late.seqs == early.seqs and seqs["vet"] not in late.seqs


def test_graph_lane_walks_from_the_vector_hits_when_the_question_names_none(store: SqliteStore) -> None:
    seqs = _two_graphs(store)
    p = plan("what was paid?")
    ent = lanes.entity(store, p)
    assert ent.matched_entities == [] and lanes.graph(store, p, ent, None) is None  # it must wait
    got = lanes.graph(store, p, ent, fusion.LaneResult([seqs["dana"]]))
    assert got is not None and seqs["vet"] in got.seqs and seqs["contract"] not in got.seqs


@pytest.mark.parametrize("query", ["Where does Alice work?", "what was paid?"])
def test_the_graph_lane_is_the_same_with_and_without_the_lane_pool(store: SqliteStore, query: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    seqs = _two_graphs(store)
    p = plan(query)
    with ThreadPoolExecutor(2) as pool:
        par = pipeline.run_lanes(store, p, lambda q: unit(0, 1), pool)[0]
    seq = pipeline.run_lanes(store, p, lambda q: unit(0, 1), None)[0]
    assert par["graph"].seqs == seq["graph"].seqs
    # Named: Alice's evidence; named none: the nearest memory (Dana's) starts the walk.
    assert (seqs["contract"] if "Alice" in query else seqs["vet"]) in par["graph"].seqs


def test_graph_lane_does_not_walk_weak_co_occurrence(store: SqliteStore) -> None:
    put(store, "Dana likes hiking.", entities=(("Dana", "person"),))
    linked = put(store, "Mount Tam trip notes.", entities=(("Mount Tam", "place"),))
    now = v.now_iso()
    with store.atomic() as tx:
        a = er.resolve(store, tx, "n", "Dana", None, [], now)["id"]
        b = er.resolve(store, tx, "n", "Mount Tam", None, [], now)["id"]
        store.bump_cooccur(tx, "n", a, b, now)  # confidence 0.5: below the walk's threshold
    p = plan("Dana")
    assert linked not in lanes.graph(store, p, lanes.entity(store, p), fusion.LaneResult([])).seqs
    with store.atomic() as tx:
        store.bump_cooccur(tx, "n", a, b, now)  # 0.75: two memories named the pair
    assert linked in lanes.graph(store, p, lanes.entity(store, p), fusion.LaneResult([])).seqs


def _embed_after_a_walk(monkeypatch: pytest.MonkeyPatch, qv: np.ndarray) -> tuple[Callable[[str], np.ndarray], Any]:
    """An embed function that returns `qv` only once a graph walk has finished (fails the test if none
    does), and the event it waits on (clear it between runs)."""
    import threading

    walked = threading.Event()
    real = lanes.graph

    def graph(*args: object) -> object:
        got = real(*args)  # type: ignore[arg-type]
        if got is not None:  # a walk, not "wait for the vector hits"
            walked.set()
        return got

    monkeypatch.setattr(lanes, "graph", graph)

    def embed(_: str) -> np.ndarray:
        assert walked.wait(10), "the graph lane waited for the embedding"
        return qv

    return embed, walked


def test_the_graph_walk_from_named_entities_runs_while_the_query_is_embedded(
        store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    seqs = _two_graphs(store)
    embed, _ = _embed_after_a_walk(monkeypatch, unit(0, 1))
    with ThreadPoolExecutor(2) as pool:
        got = pipeline.run_lanes(store, plan("Where does Alice work?"), embed, pool)[0]
    assert seqs["contract"] in got["graph"].seqs


def test_a_question_naming_no_entity_is_walked_from_its_lexical_hits_while_the_query_is_embedded(
        store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    seqs = _two_graphs(store)
    # Nearest to Alice's memory: a walk from the vector hits would reach the contract.
    embed, walked = _embed_after_a_walk(monkeypatch, unit(1))
    p = plan("Who has a cat?")
    assert lanes.entity(store, p).matched_entities == []
    for pool in (ThreadPoolExecutor(2), ThreadPoolExecutor(1)):  # one thread: meta runs before the walk
        with pool:
            walked.clear()
            got = pipeline.run_lanes(store, p, embed, pool)[0]
        assert seqs["dana"] in got["meta"].seqs
        assert seqs["vet"] in got["graph"].seqs and seqs["contract"] not in got["graph"].seqs


def test_lexical_hits_that_lead_nowhere_leave_the_walk_to_the_vector_hits(store: SqliteStore) -> None:
    seqs = _two_graphs(store)
    p = plan("what was paid?")  # the meta lane finds the vet bill, which names no entity
    got = pipeline.run_lanes(store, p, lambda q: unit(0, 1), None)[0]
    assert got["meta"].seqs[:1] == [seqs["vet"]]
    assert seqs["vet"] in got["graph"].seqs  # walked from Dana, the vector hit's entity


def test_a_recall_reads_each_candidates_rows_once(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from recall.reads import Reads

    a = put(store, "Alice works at Acme.", entities=(("Alice", "person"),))
    b = put(store, "Nothing named here.")
    asked: list[list[int]] = []
    real = store.alias_norms
    monkeypatch.setattr(store, "alias_norms", lambda seqs: asked.append(list(seqs)) or real(seqs))
    reads = Reads(store)
    assert reads.alias_norms([a, b]) == {a: real([a])[a]} and reads.alias_norms([b, a]) == reads.alias_norms([a])
    assert asked == [[a, b]]  # the second and third ask nothing of the store
    assert reads.contents([b, a, 10**6]) == store.contents([a, b])  # a missing seq is left out, as the store does
    assert reads.rank_rows([a]) == store.rank_rows([a])


def test_a_when_question_reads_the_grounded_dates_once(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for i, text in enumerate(("Alice moved to Berlin in May 2023.", "Bob moved to Paris.", "Tea on Friday.")):
        put(store, text, unit(1, i))
    asked: list[list[int]] = []
    real = store.dates_of
    monkeypatch.setattr(store, "dates_of", lambda seqs: asked.append(list(seqs)) or real(seqs))
    p = plan("When did Alice move to Berlin?")
    assert p.q.analysis.wants_when and p.cfg.time_grounding
    got = pipeline.recall(store, p, lambda q: unit(1), None)[0]
    assert got and len(asked) == 1  # the reranker's read; hydration's seqs are among them
    asked.clear()
    assert pipeline.recall(store, plan("Where does Alice live?"), lambda q: unit(1), None)[0]
    assert len(asked) == 1  # not a "when" question: hydration's read alone


# ---------------------------------------------------------------- fusion and the whole pipeline


def test_rrf_and_the_stock_boost() -> None:
    res = {"vector": fusion.LaneResult([1, 2]), "entity": fusion.LaneResult([2], matched_entities=[("e", "stock")])}
    got = fusion.fuse_lanes(res, {}, ["sh600519"], lambda seqs, ents: {2})
    k = fusion.RRF_K
    assert got.scores[1] == pytest.approx(1 / (k + 1))
    assert got.scores[2] == pytest.approx(1 / (k + 2) + 1 / (k + 1) + fusion.STOCK_BOOST / math.sqrt(1))
    assert got.ranks[2] == {"vector": 2, "entity": 1}


def test_sequential_and_parallel_lanes_do_the_same_work(store: SqliteStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    for i, text in enumerate(("Bob drinks green tea.", "Alice lives in Berlin.", "Tea tasting on Friday.")):
        put(store, text, unit(1, i), entities=(("Bob", "person"),) if i == 0 else ())
    p = plan("Does Bob drink tea?")
    with ThreadPoolExecutor(2) as pool:
        par = pipeline.recall(store, p, lambda q: unit(1), pool)[0]
    seq = pipeline.recall(store, p, lambda q: unit(1), None)[0]
    assert [h["chunk_id"] for h in par] == [h["chunk_id"] for h in seq] and par


# ---------------------------------------------------------------- lanes that earn their rank (issue 14)


def test_a_graph_or_entity_only_hit_ranks_below_what_vector_and_text_agree_on(store: SqliteStore) -> None:
    from recall import rank

    db = put(store, "Our main database is PostgreSQL 16.")
    pm = put(store, "Bob Müller is the product manager.", entities=(("Bob Müller", "person"),))
    cat = put(store, "Dana's cat is called Miso.", entities=(("Dana", "person"),))
    vec_only = put(store, "We back up every night.")
    # The graph lane put the product manager first, as in the trial; the database memory is found by
    # both the vector and the text lane; the cat only by the entity lane.
    fused = fusion.Fused({pm: 0.05, cat: 0.04, db: 0.03, vec_only: 0.02},
                         {pm: {"graph": 1}, cat: {"entity": 1}, db: {"vector": 2, "meta": 1},
                          vec_only: {"vector": 1}}, {})
    scores = rank.earned(store, plan("Which database do we use now?"), fused, dict(fused.scores))
    order = sorted(scores, key=lambda s: -scores[s])
    assert order[0] == db and order.index(pm) < order.index(cat) and scores[cat] > scores[vec_only]
    # A query that names the entity keeps the entity lane's hit where fusion put it.
    named = rank.earned(store, plan("What does Dana's cat eat in the database?"), fused, dict(fused.scores))
    assert named[cat] == fused.scores[cat] and named[pm] < named[db]
    # Without a hit the two lanes agree on, nothing moves.
    alone = fusion.Fused({pm: 0.05, vec_only: 0.02}, {pm: {"graph": 1}, vec_only: {"vector": 1}}, {})
    assert rank.earned(store, plan("Which database?"), alone, dict(alone.scores)) == alone.scores
