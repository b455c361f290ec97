"""store/sqlite/gencache.py: values kept for one data generation, bounded."""

from __future__ import annotations

import pytest

from store.sqlite.gencache import GenerationCache


def test_values_are_computed_once_per_generation_and_again_after_it_moves() -> None:
    cache = GenerationCache(limit=100)
    asked: list[list[str]] = []

    def compute(missing):
        asked.append(list(missing))
        return {k: f"{k}@{len(asked)}" for k in missing}

    assert cache.get_many(1, ["a", "b", "a"], compute) == {"a": "a@1", "b": "b@1"}
    assert cache.get_many(1, ["b", "c"], compute) == {"b": "b@1", "c": "c@2"}
    assert asked == [["a", "b"], ["c"]]  # only what was missing, each once
    assert cache.get_many(2, ["a"], compute) == {"a": "a@3"}  # a new generation reads again
    assert cache.get_many(1, ["a"], compute) == {"a": "a@4"}  # so does going back (another reader's view)


def test_the_cache_is_emptied_past_its_limit() -> None:
    cache = GenerationCache(limit=3)
    calls = []

    def compute(missing):
        calls.extend(missing)
        return {k: k * 2 for k in missing}

    cache.get_many(1, range(5), compute)  # 5 kept: more than the limit
    cache.get_many(1, [0], compute)  # emptied before this read, so 0 is computed again
    assert calls.count(0) == 2 and calls.count(4) == 1


def test_a_compute_that_leaves_a_key_out_is_an_error_not_a_silent_miss() -> None:
    cache = GenerationCache(limit=10)
    with pytest.raises(KeyError):
        cache.get_many(1, ["a", "b"], lambda missing: {"a": 1})
    assert cache.get_many(1, ["a"], lambda missing: {"a": 2}) == {"a": 2}  # nothing half-kept
