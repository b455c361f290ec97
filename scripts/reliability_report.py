"""Run the reliability suite and print the figures docs/RELIABILITY.md quotes.

    python scripts/reliability_report.py            # the CI sizes
    RELIABILITY_LONG=1 python scripts/reliability_report.py   # the long runs

Each reliability test prints one line of figures (LOAD, CRASH, HOSTILE, CYCLES, DISKFULL, EMBED_FAIL);
this collects them with the pass/fail counts, the wall time, and the machine it ran on.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["tests/test_pii.py", "tests/test_data_tools.py", "tests/test_reliability_races.py",
         "tests/test_reliability_faults.py", "tests/test_reliability_network.py",
         "tests/test_reliability_hostile.py", "tests/test_reliability_crash.py", "tests/test_reliability_load.py"]
FIGURES = re.compile(r"^(LOAD|CRASH|HOSTILE|CYCLES|DISKFULL|EMBED_FAIL) .*$", re.M)
SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed).*) in ([\d.]+)s", re.M)


def main() -> int:
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:logging", "-p", "no:cacheprovider", *FILES]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, encoding="utf-8", errors="replace")
    took = time.monotonic() - started
    out = proc.stdout
    load = os.getloadavg()
    print(f"command: {' '.join(['python', *cmd[1:]])}")
    print(f"machine: {platform.platform()}, {os.cpu_count()} cpus, load average {load[0]:.1f} at the end")
    print(f"long runs: {os.environ.get('RELIABILITY_LONG') == '1'}")
    for m in FIGURES.finditer(out):
        print(m.group(0))
    summary = SUMMARY.search(out)
    print(f"result: {summary.group(1) if summary else 'see pytest output'}; wall {took:.0f} s")
    if proc.returncode != 0:
        print(out[-4000:], file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
