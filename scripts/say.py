"""Print one message from i18n_messages.py, for shell scripts: say.py MSG_ID [name=value ...].

Standard library only, so install.sh can use it before any environment exists. The language comes
from MEMLANE_LANG, then LC_ALL, then LANG.
"""

from __future__ import annotations

import sys

import _alias  # noqa: F401 - puts the checkout's root on sys.path

from i18n_messages import t


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: say.py MSG_ID [name=value ...]", file=sys.stderr)
        return 2
    params = dict(arg.split("=", 1) for arg in argv[1:] if "=" in arg)
    print(t(argv[0], **params))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
