"""A log that grows by a bounded amount per minute, whatever the load.

Under a descriptor shortage asyncio logged 798,598 identical "Too many open files" tracebacks (354 MB)
in 44 s. `BoundedLog` sits in front of the real handlers: per minute it passes at most `per_minute`
records, at most REPEATS of any one kind (same logger, level, message template and exception type),
each clipped to MAX_RECORD_CHARS; the rest are counted, and one summary line says how many were left
out and which kind was the most frequent. So a minute of log is at most about
(per_minute + 1) × MAX_RECORD_CHARS characters.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

import i18n_messages

WINDOW_S = 60.0
REPEATS = 3  # identical records shown per window; the rest are only counted
MAX_RECORD_CHARS = 4000  # a formatted record (traceback included) is clipped to this


class ClippedFormatter(logging.Formatter):
    """A formatter whose output never exceeds MAX_RECORD_CHARS."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if len(text) <= MAX_RECORD_CHARS:
            return text
        return text[: MAX_RECORD_CHARS - 40] + f"\n… [{len(text) - MAX_RECORD_CHARS + 40} characters clipped]"


def _kind(record: logging.LogRecord) -> tuple[str, int, str, str]:
    exc = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
    return record.name, record.levelno, str(record.msg)[:200], exc


def _message(record: logging.LogRecord) -> str:
    """The record's message with its arguments filled in (the bare template if they do not fit it)."""
    try:
        return record.getMessage()[:200]
    except Exception:  # a record whose arguments do not match its template: logging would only print an error
        return str(record.msg)[:200]


class BoundedLog(logging.Handler):
    """Forward records to `targets`, at most `per_minute` per window and REPEATS of each kind."""

    def __init__(self, targets: Sequence[logging.Handler], per_minute: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.targets = list(targets)
        self.per_minute = per_minute
        self.clock = clock
        self._lock_ = threading.Lock()
        self._start = clock()
        self._passed = 0
        self._seen: Counter[tuple[str, int, str, str]] = Counter()
        self._dropped: Counter[tuple[str, int, str, str]] = Counter()
        # The last left-out record of each kind, formatted: the summary names it with its values filled in.
        self._example: dict[tuple[str, int, str, str], str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        with self._lock_:
            summary = self._roll() if self.clock() - self._start >= WINDOW_S else None
            kind = _kind(record)
            self._seen[kind] += 1
            keep = self._seen[kind] <= REPEATS and self._passed < self.per_minute
            if keep:
                self._passed += 1
            else:
                self._dropped[kind] += 1
                self._example[kind] = _message(record)
        if summary is not None:
            self._forward(summary)
        if keep:
            self._forward(record)

    def _roll(self) -> logging.LogRecord | None:
        """Start a new window; return the summary record of the one that ended, if anything was left out."""
        elapsed = self.clock() - self._start
        dropped, self._dropped = self._dropped, Counter()
        examples, self._example = self._example, {}
        self._start, self._passed, self._seen = self.clock(), 0, Counter()
        if not dropped:
            return None

        kind, top = dropped.most_common(1)[0]
        name, _, _, exc = kind
        what = f"{name}: {examples.get(kind, kind[2])}" + (f" ({exc})" if exc else "")
        text = i18n_messages.t("server.log_suppressed", count=sum(dropped.values()), seconds=round(elapsed),
                               top_count=top, top=what[:300])
        return logging.LogRecord("memlane.log", logging.WARNING, __file__, 0, text, None, None)

    def _forward(self, record: logging.LogRecord) -> None:
        for target in self.targets:
            if record.levelno >= target.level:
                target.handle(record)

    def flush(self) -> None:
        for target in self.targets:
            target.flush()

    def close(self) -> None:
        with self._lock_:
            summary = self._roll()
        if summary is not None:
            self._forward(summary)
        for target in self.targets:
            target.close()
        super().close()
