"""No write waits on another write's text analysis (issue 16, point 2), and analysis is bounded (issue 15).

Entity extraction on a long Chinese text took seconds with jieba's part-of-speech pass; 0.1.0 ran it
inside the write transaction, so every other client's remember queued behind it. Now it runs before
the transaction, on rjieba, and each CJK run is segmented in its first MAX_SEGMENT_CHARS characters.
"""

from __future__ import annotations

import random
import threading

import entity_resolve as er
from memory import Memory


def _random_cjk(n: int, seed: int = 7) -> str:
    # Random common characters: no dictionary words, the segmenter's worst case (jieba's HMM: ~14 ms a char).
    rng = random.Random(seed)
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(n))


def test_a_small_remember_beside_the_longest_chinese_memory(mem: Memory) -> None:
    long_text = _random_cjk(mem.config.max_content_chars)
    mem.remember("warm-up: 预热一下分词器。")  # the segmenter and the lexicon load once
    done: dict[str, dict] = {}
    th = threading.Thread(target=lambda: done.update(big=mem.remember(long_text, namespace="big")))
    th.start()
    small = mem.remember("Bob drinks green tea.", namespace="small")
    th.join(300)
    assert small["created"] and done["big"]["created"]
    assert len(done["big"]["entities"]) <= mem.config.max_entities


def test_segmentation_reads_a_bounded_prefix_of_each_run() -> None:
    run = _random_cjk(er.MAX_SEGMENT_CHARS * 3)
    words = er.cjk_words(run)
    assert "".join(words) == run[: er.MAX_SEGMENT_CHARS]
    # Two runs (split by punctuation) are each segmented whole.
    assert "".join(er.cjk_words("我明天要去上海出差，周五回来。")) == "我明天要去上海出差周五回来"


def test_the_segmenter_makes_jiebas_cuts_and_finds_names() -> None:
    assert er.cjk_words("我明天要去上海出差") == ["我", "明天", "要", "去", "上海", "出差"]
    kinds = {m.name: m.kind for m in er.chinese_mentions("他在北京大学工作，住在上海。")}
    assert kinds.get("上海") == "place" and kinds.get("北京大学") == "org"
