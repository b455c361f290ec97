"""logbound.BoundedLog: a flood of log records becomes a bounded log with a summary line."""

from __future__ import annotations

import logging

from server import logbound


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logbound.ClippedFormatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _flood(per_minute: int, n: int) -> tuple[_Keep, logbound.BoundedLog, list[float]]:
    now = [0.0]
    keep = _Keep()
    bounded = logbound.BoundedLog([keep], per_minute, clock=lambda: now[0])
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        import sys

        exc_info = sys.exc_info()
    for i in range(n):
        rec = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource",
                                None, exc_info)
        bounded.handle(rec)
        if i % 3 == 0:
            bounded.handle(logging.LogRecord("memlane.x", logging.WARNING, __file__, 1, "note %d", (i,), None))
    return keep, bounded, now


def test_a_flood_is_bounded_and_summarized() -> None:
    keep, bounded, now = _flood(per_minute=20, n=100_000)
    # 3 of the identical error, then 3 of the note (the same template), whatever the count.
    assert len(keep.lines) == 6
    assert sum(len(line) for line in keep.lines) < 6 * logbound.MAX_RECORD_CHARS
    now[0] = 61.0
    bounded.handle(logging.LogRecord("memlane.x", logging.INFO, __file__, 1, "after the flood", None, None))
    summary = keep.lines[6]
    assert "left out" in summary and "asyncio: socket.accept() out of system resource (OSError)" in summary
    assert f"{(100_000 - 3) + (100_000 // 3 + 1 - 3)} log records" in summary
    assert keep.lines[7].endswith("after the flood")


def test_distinct_records_stop_at_the_per_minute_budget() -> None:
    now = [0.0]
    keep = _Keep()
    bounded = logbound.BoundedLog([keep], 10, clock=lambda: now[0])
    for i in range(500):
        bounded.handle(logging.LogRecord("m", logging.WARNING, __file__, 1, f"distinct {i}", None, None))
    assert len(keep.lines) == 10
    bounded.close()
    assert "490" in keep.lines[-1]


def test_a_huge_record_is_clipped() -> None:
    keep = _Keep()
    logbound.BoundedLog([keep], 10).handle(logging.LogRecord("m", logging.ERROR, __file__, 1, "x" * 100_000, None, None))
    assert len(keep.lines[0]) <= logbound.MAX_RECORD_CHARS and "clipped" in keep.lines[0]


def test_the_summary_fills_in_the_arguments_of_the_record_it_names() -> None:
    # issue 29: the shutdown log printed "tool call refused: [%s] %s" with the values left out.
    now = [0.0]
    keep = _Keep()
    bounded = logbound.BoundedLog([keep], 100, clock=lambda: now[0])
    for _ in range(10):
        bounded.handle(logging.LogRecord("memlane.server", logging.INFO, __file__, 1, "tool call refused: [%s] %s",
                                         ("invalid_argument", "arg.query"), None))
    bounded.close()
    assert "tool call refused: [invalid_argument] arg.query" in keep.lines[-1]
    assert "%s" not in keep.lines[-1]
