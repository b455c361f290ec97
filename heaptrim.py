"""Give the heap that a burst of calls freed back to the operating system, once the daemon is idle.

CPython frees most of a recall's objects into glibc's malloc arenas, which keep the pages; a daemon
that answered a few recalls on several threads holds that memory for good (about 17 MB in one process
after 50 recalls at 10k chunks, more with one arena per call thread). glibc's `malloc_trim(0)` returns
the free pages at the top and in the middle of every arena. It runs here at most once per burst, after
IDLE_S without a call, off the event loop. Where the C library has no `malloc_trim` (macOS, musl) this
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable

IDLE_S = 1.0  # seconds without a call before the heap is trimmed


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn  # type: ignore[no-any-return]


class HeapTrimmer:
    """`touch()` after every call; `due()` says when a trim should run; `trim()` runs it."""

    def __init__(self, idle_s: float = IDLE_S, trim_fn: Callable[[int], int] | None = None) -> None:
        self.idle_s = idle_s
        self._trim = trim_fn if trim_fn is not None else _malloc_trim()
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
        self.trims += 1
        return True
