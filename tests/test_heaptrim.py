"""heaptrim.HeapTrimmer: the daemon trims the heap once per burst of calls, only when idle."""

from __future__ import annotations

import sys
import time

import pytest

import heaptrim


def test_trims_once_per_burst_and_only_when_idle() -> None:
    calls: list[int] = []
    h = heaptrim.HeapTrimmer(idle_s=0.05, trim_fn=lambda pad: calls.append(pad) or 1)
    assert not h.due(busy=False)  # nothing ran yet: nothing to give back
    h.touch()
    assert not h.due(busy=False)  # the burst may go on
    time.sleep(0.06)
    assert not h.due(busy=True)  # a call is running
    assert h.due(busy=False)
    assert h.trim() and calls == [0]
    assert not h.due(busy=False) and not h.trim()  # once per burst
    h.touch()
    time.sleep(0.06)
    assert h.due(busy=False) and h.trim() and calls == [0, 0] and h.trims == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_glibc_malloc_trim_is_found_and_runs() -> None:
    h = heaptrim.HeapTrimmer(idle_s=0)
    assert h.available
    h.touch()
    assert h.due(busy=False) and h.trim() and h.trims == 1
