"""No write waits on another write's text analysis (issue 16, point 2).

Entity extraction (jieba's part-of-speech pass) on a long Chinese text takes seconds; 0.1.0 ran it
inside the write transaction, so every other client's remember queued behind it.
"""

from __future__ import annotations

import random
import threading
import time

from memory import Memory


def test_a_small_remember_is_not_held_behind_a_long_analysis(mem: Memory) -> None:
    rng = random.Random(7)
    # Random common characters: no dictionary words, so jieba's HMM pass does the most work (~2 ms a char).
    long_text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(3000))
    t0 = time.perf_counter()
    mem.remember("warm-up: 预热一下分词器。")  # jieba and the lexicon load once, outside the measurement
    done: dict[str, float] = {}

    def big() -> None:
        mem.remember(long_text, namespace="big")
        done["big"] = time.perf_counter()

    th = threading.Thread(target=big)
    th.start()
    time.sleep(1.0)  # the big remember is past its secret scan and inside the entity extractor now
    assert th.is_alive(), "the long analysis finished too fast to test anything; make the text longer"
    small = mem.remember("Bob drinks green tea.", namespace="small")
    done["small"] = time.perf_counter()
    th.join(300)
    assert small["created"] and "big" in done
    # Order, not a timing threshold: the small write was acknowledged while the long one was still analysing.
    assert done["small"] < done["big"], (done["small"] - t0, done["big"] - t0)
