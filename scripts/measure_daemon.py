"""Measure the daemon: time from process start to the ready line, and resident memory when idle.

    python scripts/measure_daemon.py [--runs 3] [--idle 5] [--restart]

Each run starts `python mcp_server.py --port 0` on a fresh empty database in a temporary HOME, reads
its output until the ready line, waits `--idle` seconds, reads VmRSS from /proc (Linux) or `ps`, and
stops it with SIGTERM. With --restart every run uses one HOME and database, so runs after the first are
restarts (what start-up caches, such as the relevance cohort, is read back). Numbers depend on the machine and its load; quote them with this command.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _alias  # noqa: F401 - puts the checkout's root on sys.path

from i18n_messages import t

ROOT = Path(__file__).resolve().parent.parent
READY = re.compile(r"🟢 .*http://\S+:\d+")


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def one_run(idle: float, home: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=home, PYTHONUNBUFFERED="1")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcp_server.py"), "--port", "0"], env=env,
                            cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if READY.search(line):
                break
        else:
            raise RuntimeError(f"exit code {proc.wait()}")
        ready = time.monotonic() - started
        time.sleep(idle)
        return ready, rss_kib(proc.pid) / 1024
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3, choices=range(1, 21), metavar="1..20")
    p.add_argument("--idle", type=float, default=5.0)
    p.add_argument("--restart", action="store_true", help="one HOME for every run: runs after the first are restarts")
    args = p.parse_args(argv)
    times, rss = [], []
    with tempfile.TemporaryDirectory() as shared:
        for run in range(1, args.runs + 1):
            try:
                if args.restart:
                    seconds, mib = one_run(args.idle, shared)
                else:
                    with tempfile.TemporaryDirectory() as home:
                        seconds, mib = one_run(args.idle, home)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                print(t("server.measure_failed", detail=str(exc)), file=sys.stderr)
                return 1
            times.append(seconds)
            rss.append(mib)
            print(t("server.measure_run", run=run, seconds=seconds, rss_mib=mib))
    print(t("server.measure_summary", median=statistics.median(times), low=min(times), high=max(times),
            runs=args.runs, rss_mib=statistics.median(rss), idle=args.idle))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
