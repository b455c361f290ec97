"""Pure-logic tests of the recall-quality techniques, English and Chinese, including must-not-fire cases."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

import entity_resolve as er
from lang import crosslingual as xl
from lang import facts
from lang import predicates as rr
from lang import query_plan as qp
from lang import supersession as sup
from recall import fusion

# ---------------------------------------------------------------- query understanding


def test_split_english_compound_on_and() -> None:
    parts = qp.split_query("Who leads the Ledgerly team and which database did we pick?")
    assert parts == ["Who leads the Ledgerly team", "which database did we pick"]


def test_split_on_question_marks_both_languages() -> None:
    assert qp.split_query("我女儿几岁了？这周末带她去哪？") == ["我女儿几岁了", "这周末带她去哪"]
    assert qp.split_query("Where is prod? How long do tokens last?") == ["Where is prod", "How long do tokens last"]


def test_split_chinese_conjunctions() -> None:
    parts = qp.split_query("日志保留多久以及连接池怎么配置")
    assert parts == ["日志保留多久", "连接池怎么配置"]


def test_no_split_inside_a_name() -> None:
    assert qp.split_query("What did Johnson and Johnson report about talc?") == []
    assert qp.split_query("Is Procter and Gamble in my portfolio?") == []


def test_no_split_of_a_plain_noun_pair_or_single_question() -> None:
    assert qp.split_query("salt and pepper") == []
    assert qp.split_query("Where does Alice live?") == []
    assert qp.split_query("爱丽丝住在哪里？") == []


def test_stop_and_question_words_leave_the_lexical_query() -> None:
    latin, cjk = qp.content_terms("What is the current API rate limit per key, and how often do we check it?")
    assert "API" in latin and "rate" in latin and "limit" in latin
    for w in ("What", "the", "current", "how", "often", "do", "we", "it"):
        assert w not in latin
    latin, cjk = qp.content_terms("公共 API 每分钟最多能调几次？现在是多少？")
    assert "API" in latin
    assert not {"现在", "多少", "几"} & set(cjk)


def test_intents() -> None:
    assert qp.analyze("Where does the user live now?").wants_now
    assert qp.analyze("我现在住在哪个城市？").wants_now
    assert not qp.analyze("Where did I live in 2019?").wants_now
    assert qp.analyze("How many shares do I own?").wants_quantity
    assert qp.analyze("特变电工第一笔买了多少股？").wants_quantity
    assert not qp.analyze("Who is Alice?").wants_quantity


def test_idf_weights_favour_rare_terms() -> None:
    rare, common = qp.idf_weights(1000, [2, 900])
    assert rare > 5 * common > 0


# ---------------------------------------------------------------- reranking


def test_predicate_classes_bridge_languages_and_synonyms() -> None:
    assert "residence" in rr.predicate_classes("Alice relocated to Lisbon")
    assert "residence" in rr.predicate_classes("爱丽丝去年搬到了柏林")
    assert "work" in rr.predicate_classes("She is employed at Stripe")
    assert "work" in rr.predicate_classes("他在字节跳动任职")
    assert "decision" in rr.predicate_classes("我们最后决定用 Postgres")
    assert "database" in rr.predicate_classes("we chose Postgres") and "database" in rr.predicate_classes("数据库选型")
    assert "deploy" in rr.predicate_classes("runs on Fargate") and "deploy" in rr.predicate_classes("部署在哪里")
    assert "buy" in rr.predicate_classes("sh600089 建仓 18.96") and "sell" in rr.predicate_classes("减仓 100 股")
    assert not rr.predicate_classes("The weather was lovely.")


def _info(q: str) -> qp.Analysis:
    return qp.analyze(q)


def test_rerank_prefers_shared_predicate_and_numbers() -> None:
    q = "How many shares did I buy?"
    info, cls = _info(q), rr.predicate_classes(q)
    base = 0.03
    with_num = rr.rerank_score(info, cls, rr.Candidate("Bought 300 shares of 0700.HK", "2025-01-01"), base)
    without = rr.rerank_score(info, cls, rr.Candidate("Thinking about the games pipeline", "2025-01-01"), base)
    assert with_num > without


def test_rerank_now_and_superseded() -> None:
    q = "我现在住在哪个城市？"
    info, cls = _info(q), rr.predicate_classes(q)
    old = rr.Candidate("2019 年从成都搬到了柏林", "2019-06-01", superseded=True)
    new = rr.Candidate("These days I'm based in Lisbon", "2025-03-15", newest_in_class=True)
    assert rr.rerank_score(info, cls, new, 0.030) > rr.rerank_score(info, cls, old, 0.031)


def test_newest_in_class_only_among_same_class() -> None:
    cls = rr.predicate_classes("Where do I live now?")
    cands = [(1, "I live in Berlin", "2019-01-01"), (2, "Moved to Lisbon", "2025-01-01"),
             (3, "Bought a new espresso machine", "2026-01-01")]
    assert rr.newest_in_class(cls, cands) == {2}


def test_rerank_is_bounded_and_pure() -> None:
    q = "Where does Alice work now?"
    info, cls = _info(q), rr.predicate_classes(q)
    cand = rr.Candidate("Alice works at Stripe", "2025-01-01", newest_in_class=True)
    a = rr.rerank_score(info, cls, cand, 0.02)
    assert a == rr.rerank_score(info, cls, cand, 0.02)
    assert abs(a - 0.02) < rr.UNIT  # a nudge, never a whole rank-1 lane


def test_missing_required_name_is_penalized() -> None:
    q = "What does Priya do?"
    info, cls = _info(q), rr.predicate_classes(q)
    named = rr.rerank_score(info, cls, rr.Candidate("Priya Nair leads the team", "2025-01-01"), 0.02)
    other = rr.rerank_score(info, cls, rr.Candidate("Tom leads the team", "2025-01-01"), 0.02)
    assert named > other


# ---------------------------------------------------------------- supersession


def test_supersession_fires_on_a_restated_predicate_en_and_zh() -> None:
    assert sup.supersedes("I moved to Lisbon in March and work remotely now.", "I live in Berlin and work for SAP.")
    assert sup.supersedes("发票邮件的任务队列换成 SQS 了，原来的方案作废。", "Plan for invoice emails: push jobs onto Redis Streams.")
    assert sup.supersedes("数据库改用 MySQL 了。", "Ledgerly 我们最后决定用 Postgres 数据库。")


def test_no_supersession_without_a_change_signal() -> None:
    assert not sup.supersedes("I live in Lisbon.", "I live in Berlin.")
    assert not sup.supersedes("我住在里斯本。", "我住在柏林。")


def test_no_false_supersession_for_a_different_person() -> None:
    assert not sup.supersedes("Bob moved to Lisbon.", "Alice lives in Berlin.")
    assert not sup.supersedes("I moved to Lisbon.", "My brother Daniel lives in Berlin.")


def test_no_false_supersession_for_a_partial_update() -> None:
    # The stop moved, but the old memory also holds the entry price and size: it must stay.
    assert not sup.supersedes("sh600089 涨上来了，止损从 17.5 上移到 18.2。", "sh600089 特变电工 建仓 18.96，先买 2000 股，止损放 17.5。")


def test_no_false_supersession_across_stocks_or_topics() -> None:
    assert not sup.supersedes("sh600089 止损上移到 18.2。", "sh600098 止损放 5.5。")
    assert not sup.supersedes("sh600089 止损上移到 18.2。", "Cut my Apple price target to 235.")
    assert not sup.supersedes("Weekly sync moved to Thursdays.", "Favorite place to eat: a Goan restaurant.")


# ---------------------------------------------------------------- facts


def test_sentences_keep_abbreviations_and_decimals() -> None:
    assert facts.sentences("Dr. Sousa moved it to 9.30 am. Then lunch.") == ["Dr. Sousa moved it to 9.30 am.", "Then lunch."]
    assert facts.sentences("爱丽丝搬到了柏林。她在 SAP 工作！真的吗？") == ["爱丽丝搬到了柏林。", "她在 SAP 工作！", "真的吗？"]


def test_facts_carry_pronouns_en_and_zh() -> None:
    got = [f.text for f in facts.extract("Alice joined Stripe in 2021. She's the new tech lead there.")]
    assert got == ["Alice joined Stripe in 2021.", "Alice is the new tech lead there."]
    got = [f.text for f in facts.extract("爱丽丝去年搬到了柏林。她在 SAP 工作。")]
    assert got[1].startswith("爱丽丝在 SAP")


def test_facts_split_clauses_and_label_kinds() -> None:
    got = facts.extract("Alice lives in Berlin and she works at SAP as a tech lead.")
    assert [f.text for f in got] == ["Alice lives in Berlin", "Alice works at SAP as a tech lead."]
    assert "location" in got[0].kinds and "role" in got[1].kinds
    zh = facts.extract("我决定用 Postgres；预算是 500 元。")
    assert "decision" in zh[0].kinds and "quantity" in zh[1].kinds


def test_single_fact_content_gives_no_facts() -> None:
    assert facts.extract("Alice lives in Berlin.") == []
    assert facts.extract("爱丽丝住在柏林。") == []
    assert facts.extract("Thanks! Great.") == []  # pieces too small to be facts


# ---------------------------------------------------------------- entities


def test_acronyms_and_sentence_initial_words() -> None:
    common = frozenset({"never", "policy", "apple"})
    names = [m.name for m in er.extract_mentions("Never deploy on Fridays; SAP and AWS are down.", common)]
    assert "SAP" in names and "AWS" in names and "Never" not in names
    names = [m.name for m in er.extract_mentions("We met Alice. Policy: Apple shares only.", common)]
    assert "Alice" in names and "Policy" not in names
    assert "OK" not in [m.name for m in er.extract_mentions("OK, ship it", common)]


def test_chinese_names_places_orgs() -> None:
    kinds = {m.name: m.kind for m in er.extract_mentions("王蕾现在在北京的字节跳动做数据平台。")}
    assert kinds.get("王蕾") == "person"
    assert kinds.get("北京") == "place"


# ---------------------------------------------------------------- cross-lingual


def test_interleave_calibrates_each_language() -> None:
    # Chinese distances are all lower (same-language bias); the English outlier must still lead.
    zh = [(1, 0.10), (2, 0.105), (3, 0.11), (4, 0.112), (5, 0.115), (6, 0.12)]
    en = [(11, 0.10), (12, 0.19), (13, 0.20), (14, 0.205), (15, 0.21), (16, 0.215)]
    merged = [r[0] for r in xl.interleave([zh, en])]
    assert merged[0] == 11
    assert xl.lang_order("我住在哪里") == ("zh", "en") and xl.lang_order("where") == ("en", "zh")


def test_lexicon_translates_both_ways() -> None:
    assert "database" in xl.to_english(["数据库"])
    assert "deploy" in xl.to_english(["部署"])
    assert "数据库" in xl.to_chinese(["database"])
    assert "女儿" in xl.to_chinese(["daughter"])


# ---------------------------------------------------------------- fusion of parts


def test_fuse_parts_rewards_each_part_best() -> None:
    whole = ({1: 0.03, 2: 0.02, 3: 0.01}, {1: {"vector": 1}, 2: {"vector": 2}, 3: {"vector": 3}}, {})
    part_a = ({3: 0.03, 1: 0.01}, {3: {"meta": 1}, 1: {"meta": 2}}, {3: 99})
    got = fusion.fuse_parts([fusion.Fused(*whole), fusion.Fused(*part_a)])
    assert got.scores[3] > got.scores[2]  # the part's best climbs above the whole question's second
    assert got.ranks[1] == {"vector": 1} and got.matched_fact == {3: 99}


_VOCAB = ["deploy", "deployed", "deployment", "Lisbon", "tea", "会议", "里斯本", "绿茶", "600089", "sh600089",
          "600089.SH", "0700.HK", "hk00700", "$AAPL", "AAPL", "re.set", "a+b", "C++", "naïve", "Straße"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=3), max_size=4),
       st.lists(st.sampled_from([*_VOCAB, " ", ", ", "。", "x"]), max_size=12))
def test_relevance_found_counts_as_its_definition(groups: list[list[str]], words: list[str]) -> None:
    """recall/relevance.found (cached patterns, stock codes read only when a query word is one) counts
    exactly the groups of which some word is in the text, or is a stock code the text mentions."""
    import re

    from recall import relevance

    text = "".join(words)

    def has(w: str) -> bool:
        if er.has_cjk(w):
            return w in text.casefold()
        stem = w.casefold()
        stem = stem[: max(4, len(stem) - 3)] if len(stem) > 4 else stem
        return re.search(r"(?<!\w)" + re.escape(stem), text.casefold()) is not None

    codes = set(er.stock_codes_in(text))
    want = sum(any(has(w) or er.canonical_stock(w) in codes for w in g) for g in groups)
    assert relevance.found(relevance.Terms([tuple(g) for g in groups], []), text) == want


_CLASS_WORDS = sorted({w for en, zh in rr.CLASSES.values() for w in (*en.split("|"), *zh.split("|"))})


@settings(max_examples=400, deadline=None)
@example(["un", "approve", "d"])
@example(["Allergic", "s"])
@example(["看牙", "sign  in"])
@example(["\u212aeep", " ", "de\u017fign", "喜欢like"])
@given(st.lists(st.one_of(st.sampled_from(_CLASS_WORDS), st.sampled_from(["s", "ed", " ", ".", "x", "Un", "的", "了", "'", "-"]),
                          st.text(max_size=4)), max_size=10).map(lambda p: [w.upper() if len(w) % 3 == 0 else w for w in p]))
def test_predicate_classes_match_each_class_pattern(parts: list[str]) -> None:
    """rerank.predicate_classes (English words looked up token by token, no Chinese search without CJK)
    finds exactly the classes whose own patterns match."""
    text = "".join(parts)
    want = {name for name, (en_re, zh_re) in rr._PATTERNS.items() if en_re.search(text) or zh_re.search(text)}
    rr.predicate_classes.cache_clear()
    assert rr.predicate_classes(text) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=60), min_size=1, max_size=40),
       st.floats(-1, 1), st.floats(1e-6, 1), st.booleans())
def test_symmetric_zs_equals_symmetric_z_for_every_memory(rows, mean, std, constant) -> None:
    import numpy as np

    from recall.relevance import symmetric_z, symmetric_zs

    width = len(rows[0])
    rows = [(r * width)[:width] for r in rows]  # one probe, so one width
    if constant:
        rows[0] = [rows[0][0]] + [0.25] * (width - 1)  # a spread of 0 takes the 1e-6 floor
    sims = {i: (np.asarray(r, dtype=np.float32), "zh" if i % 3 else "en") for i, r in enumerate(rows)}
    stats = {"en": (mean, std)}  # "zh" has no stats: those memories get no z, as before
    got = symmetric_zs(sims, stats)
    want = {i: symmetric_z(v, stats[lang]) for i, (v, lang) in sims.items() if lang in stats}
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_relevance_bands_never_rise_down_the_list(values: list[float]) -> None:
    """relevance.banded puts every hit of the upper band first, keeping the rank order inside a band;
    relevance.capped then never rises down the list and lowers a value by at most one band."""
    from recall import relevance

    rel = dict(enumerate(values))
    order = relevance.banded(list(rel), rel)
    upper = [s for s in order if rel[s] >= relevance.BAND]
    assert order == upper + [s for s in order if rel[s] < relevance.BAND]
    assert upper == sorted(upper) and order[len(upper):] == sorted(order[len(upper):])
    shown = relevance.capped(order, rel)
    got = [shown[s] for s in order]
    assert got == sorted(got, reverse=True)
    assert all(rel[s] - relevance.BAND <= shown[s] <= rel[s] for s in order)


def test_quotes_and_names_asked_about() -> None:
    from recall import relevance

    assert relevance.quotes('Which note said "daemon 1 client 2 note 7:"?') == (
        'which note said "daemon 1 client 2 note 7:"?', "daemon 1 client 2 note 7:")
    assert relevance.quotes("Kafka?") == ()  # too short to be a quote
    assert relevance.quoted(("rack 7 moved",), "The RACK 7\n moved today.")
    assert relevance.without_names("What is Dana's blood type?", ["Dana"]) == "What is blood type?"
    assert relevance.without_names("Who is Dana?", ["Dana"]) is None  # nothing asked but who
    terms = relevance.Terms.of(["Jolene", "France"], [], ["Jolene", "France"])
    memories = ["Jolene: we went to Paris!", "Jolene: my snake is fine", "Jolene: hi", "Deborah: France was lovely"]
    assert relevance.common_names(terms, memories) == ["Jolene"]  # France is what is asked


def test_a_name_matches_its_ticker_and_the_places_inside_it() -> None:
    from recall import relevance

    assert relevance.abbreviates("NVDA", "Nvidia") and relevance.abbreviates("TSLA", "tesla")
    assert not relevance.abbreviates("NVDA", "Netflix") and not relevance.abbreviates("GE", "General")
    assert "nvda" in relevance.tickers("Nvidia") and relevance.tickers("特斯拉") == ()

    def found(names: list[str], text: str) -> bool:
        return relevance.names_found(relevance.Terms.of([], [], names), text, set())

    assert found(["Nvidia"], "Price alert on $NVDA at 120.")
    assert found(["特斯拉"], "$TSLA is watch-only.")  # Tesla, from CC-CEDICT
    assert not found(["Amazon"], "Price alert on $NVDA at 120.")
    assert found(["日本"], "下周三飞东京参加 PyCon JP") and found(["Japan"], "下周三飞东京参加 PyCon JP")
    assert not found(["Korea"], "下周三飞东京参加 PyCon JP")
    assert found(["Guangzhou Development"], "sh600098 广州发展 只观察")  # word by word
