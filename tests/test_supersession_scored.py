"""The scored supersession rule (config `supersession_scoring`, issue 27): the best of the closest older
memories by the idf-weighted share of it that the newer one restates, in English and Chinese. Pure logic
over the real CC-CEDICT lexicon and jieba; one test through a real Memory on SQLite with the real model."""

from __future__ import annotations

import pytest
from test_quality_memory import mem_with  # noqa: F401,F811 - the fixture: a Memory on SQLite per config

from lang import supersession as sup


def test_the_best_candidate_wins_not_the_first() -> None:
    new = "Zhao Lei raised the threshold he approves personally to 8,000 yuan."
    olds = [("hw", "Zhao Lei personally approves every hardware purchase order."),
            ("budget", "赵磊批准了 Quillmark 明年 42 万元的研发预算。"),
            ("limit", "Zhao Lei's expense approval threshold is 5,000 yuan.")]
    assert sup.best_superseded(new, olds) == "limit"


def test_chinese_change_words_and_a_restated_price() -> None:
    new = "从十二月起 Quillmark 的 Pro 套餐涨到每月 35 欧元。"
    old = "Quillmark 的 Pro 套餐每月 29 欧元。"
    assert not sup.supersedes(new, old)  # the first rule: no change word it knows, no predicate class
    assert sup.signals_change_scored(new)
    assert sup.best_superseded(new, [("n", "Quillmark 一共有 312 个付费客户。"), ("p", old)]) == "p"


def test_the_overlap_crosses_languages() -> None:
    assert sup.best_superseded("Maya 换了手机号，现在是 +351 936 807 215。",
                               [("b", "Maya's birthday is on 12 May."),
                                ("p", "Maya's phone number is +351 912 334 100.")]) == "p"
    assert sup.best_superseded("Lin Wei moved to Hangzhou, a ten-minute walk from the office.",
                               [("b", "Lin Wei 的生日是三月。"),
                                ("a", "Lin Wei 住在苏州，每天坐火车去杭州的办公室上班。")]) == "a"


def test_the_subject_is_read_anywhere_in_the_text() -> None:
    new = "Mori 医生退休了，我现在看的牙医是 Dr. Anan Chaiyasit。"
    assert sup.subject_of(new) == "mori" and sup.subject(new) == "self"
    assert sup.best_superseded(new, [("t", "我的英语老师是 Hannah。"), ("d", "我的牙医是 Mori 医生。")]) == "d"


def test_another_person_is_never_superseded() -> None:
    assert sup.best_superseded("Maya changed her number; it's now +351 936 807 215.",
                               [("l", "Leonie's phone number is +43 664 218 5590.")]) is None


def test_a_chat_turn_neither_replaces_nor_is_replaced() -> None:
    # A turn records what was said at a time; on LoCoMo every link between turns was small talk or another event.
    old, new = "Nate: I won my first video game tournament last week!", "Nate: I just won another tournament now!"
    assert sup.best_superseded(new, [("t", old)]) is None
    assert sup.best_superseded("Caroline: I moved to Lisbon last month.",
                               [("c", "Caroline: I live in Berlin near the park.")]) is None
    assert sup.best_superseded("Caroline moved to Lisbon last month.",
                               [("t", "Caroline: I live in Berlin near the park.")]) is None
    assert sup.best_superseded("Caroline moved to Lisbon last month.",
                               [("p", "Caroline lives in Berlin near the park.")]) == "p"


def test_a_question_states_nothing_to_replace() -> None:
    new = "Dana moved to Oranienstraße 45 last month."
    olds = [("q", "Do you know where Dana lives?"), ("a", "Dana lives at Kastanienallee 12.")]
    assert sup.states_no_fact(olds[0][1]) and sup.states_no_fact("你知道 Dana 住在哪里？")
    assert not sup.states_no_fact("Dana lives at Kastanienallee 12. Do you know it?")
    assert sup.best_superseded(new, olds) == "a"  # the question restates more of its short self, and lost


def test_no_change_no_link_and_a_detail_does_not_hide_a_fuller_memory() -> None:
    assert sup.best_superseded("Quillmark's payments go through Stripe.",
                               [("a", "Quillmark's payments go through Adyen.")]) is None
    assert sup.best_superseded("sh600089 涨上来了，止损从 17.5 上移到 18.2。",
                               [("b", "sh600089 特变电工 建仓 18.96，先买 2000 股，止损放 17.5。")]) is None


def test_a_question_about_now_prefers_the_latest_similar_candidate() -> None:
    cands = [(1, "The team standup is at 9:30.", "2025-02-20T00:00:00Z"),
             (2, "We moved the team standup to 10:00.", "2025-09-15T00:00:00Z"),
             (3, "The Lisbon offsite runs in March.", "2025-10-01T00:00:00Z"),
             (4, "Maya's phone number is +351 912 334 100.", "2025-01-01T00:00:00Z"),
             (5, "Leonie's phone number is +43 664 218 5590.", "2025-06-01T00:00:00Z")]
    assert sup.newer_versions(cands) == {1: 2}


STORY = [("Quillmark's invoices are rendered to PDF with WeasyPrint.", "2025-01-02T00:00:00Z"),
         ("Quillmark 的主域名是 quillmark.io。", "2025-01-03T00:00:00Z"),
         ("Tomás approved the Stripe integration for Quillmark.", "2025-01-04T00:00:00Z"),
         ("Quillmark's payments go through Adyen.", "2025-01-15T00:00:00Z")]
CHANGE = ("Quillmark switched its payments from Adyen to Stripe.", "2025-10-20T00:00:00Z")


@pytest.mark.parametrize("scored", [False, True])
def test_memory_links_the_change_only_with_the_scored_rule(mem_with, scored: bool) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    m = mem_with(supersession_scoring=scored)
    ids = [m.remember(text, valid_from=at)["chunk_id"] for text, at in STORY]
    m.flush()
    new = m.remember(CHANGE[0], valid_from=CHANGE[1])["chunk_id"]
    m.flush()
    links = dict(m.store.reader().execute("select id, superseded_by from chunks where superseded_by is not null"))
    # The first rule misses it (the old memory has no predicate class); the scored one links it, and only it.
    assert links == ({ids[3]: new} if scored else {})
    if scored:
        hits = [h["chunk_id"] for h in m.recall("Which payment processor does Quillmark use now?", top_k=5,
                                                min_relevance=0)["hits"]]
        assert hits.index(new) < hits.index(ids[3])


@pytest.mark.parametrize("speaker", ["", "Tomás: "])
def test_memory_links_plain_memories_but_not_chat_turns(mem_with, speaker: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    m = mem_with(supersession_scoring=True)
    ids = [m.remember(speaker + text, valid_from=at)["chunk_id"] for text, at in STORY]
    m.flush()
    new = m.remember(speaker + CHANGE[0], valid_from=CHANGE[1])["chunk_id"]
    m.flush()
    links = dict(m.store.reader().execute("select id, superseded_by from chunks where superseded_by is not null"))
    assert links == ({} if speaker else {ids[3]: new})
