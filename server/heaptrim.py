"""Give the heap that a burst of calls freed back to the operating system, once the daemon is idle.

CPython frees most of a recall's objects into glibc's malloc arenas, which keep the pages; a daemon
that answered a few recalls on several threads holds that memory for good (about 17 MB in one process
after 50 recalls at 10k chunks, more with one arena per call thread). glibc's `malloc_trim(0)` returns
the free pages at the top and in the middle of every arena. It runs here at most once per burst, after
IDLE_S without a call, off the event loop. Where the C library has no `malloc_trim` (macOS, musl) this
does nothing.

The same idle moment also hands back file pages that a read-only mapping gathered (`release_file_pages`):
the embedding model's token table is read a row at a time, and the kernel's fault-around maps 16 pages
beside every row it faults in, so 100 recalls left 40-50 MB of the model mapped (counted in RSS) for a
few kilobytes of rows used. MADV_DONTNEED on a read-only file mapping drops only the process's page
table entries: the page cache keeps the pages, and a later read faults its row back in.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence

IDLE_S = 1.0  # seconds without a call before the heap is trimmed
MADV_DONTNEED = 4  # Linux's value (asm-generic/mman-common.h)
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
# The daemon's malloc arenas: glibc makes up to 8 per core, one per thread that finds the others busy. An index
# built in the daemon (its rows read, then usearch's threads) leaves arenas fragmented, and threads that later
# allocate there keep their pages. Two arenas for the whole daemon measured 192-200 MB instead of 250-252 MB
# after 400 writes and 300 recalls on a 10k store whose index the daemon built (docs/BENCHMARKS.md, issue 30).
DAEMON_ARENAS = 2
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
# Blocks this large or larger are mmapped, so freeing one returns its pages at once. glibc starts at this value
# but raises it to the size of any mmapped block freed (up to 32 MB): after the embedding model's first batch
# (the relevance cohort at start) its activation buffers come from the arenas and stay there once freed. Fixed
# here, the daemon measured 185.5-185.6 MB instead of 205.7-208.6 MB after start and 300 recalls on a 10k
# store (docs/BENCHMARKS.md, issue 30).
DAEMON_MMAP_THRESHOLD = 128 * 1024


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn  # type: ignore[no-any-return]


def _mallopt(param: int, value: int, variable: str, environ: Mapping[str, str] | None) -> bool:
    """glibc's mallopt(param, value), unless the environment sets `variable` (glibc has read it, and it wins).
    False where the C library has no mallopt."""
    if variable in (os.environ if environ is None else environ):
        return False
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(fn(param, value))


def cap_arenas(n: int = DAEMON_ARENAS, environ: Mapping[str, str] | None = None) -> bool:
    """At most `n` malloc arenas from now on (glibc's mallopt M_ARENA_MAX), unless MALLOC_ARENA_MAX is set, which
    glibc has already read. Call before the threads start. False where the C library has no mallopt."""
    return _mallopt(M_ARENA_MAX, n, "MALLOC_ARENA_MAX", environ)


def fix_mmap_threshold(size: int = DAEMON_MMAP_THRESHOLD, environ: Mapping[str, str] | None = None) -> bool:
    """Blocks of `size` bytes or more are mmapped from now on, and the threshold no longer rises when one is freed
    (glibc's mallopt M_MMAP_THRESHOLD), unless MALLOC_MMAP_THRESHOLD_ is set. False where there is no mallopt."""
    return _mallopt(M_MMAP_THRESHOLD, size, "MALLOC_MMAP_THRESHOLD_", environ)


def malloc_trim() -> bool:
    """Trim malloc's arenas now (glibc); False where the C library has none."""
    fn = _malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True


def _madvise() -> Callable[[int, int, int], int] | None:
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
    return fn  # type: ignore[no-any-return]


def release_file_pages(path: str, spans: Sequence[tuple[int, int]], maps: str = "/proc/self/maps") -> int:
    """Drop this process's mapped pages of the byte ranges `spans` of file `path` wherever it is mapped
    read-only (MADV_DONTNEED; the page cache keeps them). Returns the bytes of address range advised;
    0 where there is no /proc (macOS) or no madvise."""
    madvise = _madvise()
    if madvise is None or not spans:
        return 0
    try:
        with open(maps, encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
    except OSError:
        return 0
    page = mmap.PAGESIZE
    done = 0
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or parts[5].rstrip("\n") != path or "w" in parts[1]:
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        offset = int(parts[2], 16)  # the file offset the mapping starts at
        for start, end in spans:
            # Whole pages inside both the span and the mapping: a page shared with hot data stays.
            a = max(lo, lo + start - offset)
            b = min(hi, lo + end - offset)
            a, b = -(-a // page) * page, b // page * page
            if b > a and madvise(a, b - a, MADV_DONTNEED) == 0:
                done += b - a
    return done


class HeapTrimmer:
    """`touch()` after every call; `due()` says when a trim should run; `trim()` runs it, then each of
    `also` (such as the embedder's release_pages)."""

    def __init__(self, idle_s: float = IDLE_S, trim_fn: Callable[[int], int] | None = None,
                 also: Sequence[Callable[[], object]] = ()) -> None:
        self.idle_s = idle_s
        self._trim = trim_fn if trim_fn is not None else _malloc_trim()
        self._also = list(also)
        self._lock = threading.Lock()
        self._dirty = False
        self._last = 0.0
        self.trims = 0

    @property
    def available(self) -> bool:
        return self._trim is not None

    def touch(self) -> None:
        with self._lock:
            self._dirty, self._last = True, time.monotonic()

    def due(self, busy: bool) -> bool:
        """A call ended at least idle_s ago, none has run since the last trim, and none runs now."""
        with self._lock:
            return self._trim is not None and self._dirty and not busy and time.monotonic() - self._last >= self.idle_s

    def trim(self) -> bool:
        with self._lock:
            if self._trim is None or not self._dirty:
                return False
            self._dirty = False
        self._trim(0)
        for fn in self._also:
            fn()
        self.trims += 1
        return True
