"""The old script paths, kept because service files, docs and people call them.

Importing this module puts the checkout's root on sys.path (the one place a script does so);
`run(*words)` runs `memlane <words> <this script's arguments>` with the same exit codes.
Standard library only, so install.sh can run scripts/say.py before any environment exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def run(*words: str) -> int:
    # Deferred: a script's --help and its sys.path set-up above come before the daemon's modules load.
    import cli

    return cli.main([*words, *sys.argv[1:]])
