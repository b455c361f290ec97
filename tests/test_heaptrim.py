"""heaptrim.HeapTrimmer: the daemon trims the heap once per burst of calls, only when idle."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server import heaptrim

ROOT = Path(__file__).resolve().parent.parent


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


def _mapped_kib(path: str) -> int:
    """Rss of this process's mappings of `path` (smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                inside = len(head) > 5 and head[5] == path
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps")
def test_released_file_pages_leave_the_mapping_and_read_back_the_same(tmp_path) -> None:
    import mmap
    import os

    path = tmp_path / "table.bin"
    data = os.urandom(4 << 20)
    path.write_bytes(data)
    with open(path, "rb") as fh:
        m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        assert m[:] == data  # every page mapped
        real = os.path.realpath(path)
        full = _mapped_kib(real)
        assert full >= 4000
        # The middle 2 MB, with ragged ends: only whole pages inside the span go.
        done = heaptrim.release_file_pages(real, [(1_000_001, 3_000_001)])
        assert done == (3_000_001 // mmap.PAGESIZE - -(-1_000_001 // mmap.PAGESIZE)) * mmap.PAGESIZE
        assert _mapped_kib(real) <= full - done // 1024
        assert m[:] == data  # faulted back in from the page cache, unchanged
        assert heaptrim.release_file_pages(str(tmp_path / "not-mapped.bin"), [(0, 4096)]) == 0
    finally:
        m.close()


def test_trim_runs_what_it_is_also_given() -> None:
    also: list[str] = []
    h = heaptrim.HeapTrimmer(idle_s=0, trim_fn=lambda pad: 1, also=[lambda: also.append("released")])
    h.touch()
    assert h.trim() and also == ["released"]
    assert not h.trim() and also == ["released"]  # once per burst, like the trim itself


_ARENAS = """
import ctypes, sys, threading
from server import heaptrim
print(heaptrim.cap_arenas(1) if sys.argv[1] == "cap" else None)
hold = []
def work():
    hold.append([bytes(1000 + i) for i in range(300)])
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL("libc.so.6").malloc_stats()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and malloc_stats")
def test_cap_arenas_keeps_new_threads_on_the_arenas_there_are() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}

    def arenas(mode: str) -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", _ARENAS, mode], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=True)
        return done.stdout.strip(), sum(line.startswith("Arena ") for line in done.stderr.splitlines())

    assert arenas("free")[1] > 1  # glibc's default: a new thread gets an arena of its own
    assert arenas("cap") == ("True", 1)
    assert not heaptrim.cap_arenas(1, environ={"MALLOC_ARENA_MAX": "4"})  # the variable, read by glibc, wins


_THRESHOLD = """
import ctypes, sys
from server import heaptrim
print(heaptrim.fix_mmap_threshold() if sys.argv[1] == "fix" else None)
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def rss_kib():
    return next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmRSS:"))
libc.free(libc.malloc(8 << 20))  # one large block freed, as the model's first batch frees its buffers
big, small = [], []
for _ in range(20):  # then buffers of 2 MiB, each with a smaller block after it that stays
    p = libc.malloc(2 << 20)
    ctypes.memset(p, 1, 2 << 20)
    big.append(p)
    small.append(libc.malloc(96 << 10))  # below the threshold, and too large for the free lists so far
before = rss_kib()
for p in big:
    libc.free(p)
print(before - rss_kib())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_fixed_mmap_threshold_gives_freed_buffers_back() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}

    def freed_kib(mode: str) -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", _THRESHOLD, mode], cwd=ROOT, env=env, capture_output=True,
                              text=True, check=True)
        flag, freed = done.stdout.split()
        return flag, int(freed)

    # glibc's default: after the 8 MiB block, 2 MiB blocks come from the heap, and 40 MiB of holes stay resident.
    assert freed_kib("default")[1] < 4096
    flag, freed = freed_kib("fix")
    assert flag == "True" and freed >= 36 * 1024  # each buffer was mmapped, and its pages went back when freed
    assert not heaptrim.fix_mmap_threshold(environ={"MALLOC_MMAP_THRESHOLD_": "65536"})  # the variable wins
