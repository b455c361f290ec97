"""Make sure the daemon's token file exists: `memlane token [--token-file PATH]`.

`make run` and scripts/install.sh call it before the daemon starts, so every `$(cat ~/.memlane/auth_token)`
in the READMEs works from the first start. An existing file is kept (its mode set to 0600); a missing or
empty one gets a new random token, written with mode 0600 in a 0700 folder. It prints how to read the token.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from commands._common import argument_parser, say
from config import load_config
from i18n_messages import t
from server import private


def ensure_token_file(path: Path) -> bool:
    """Create `path` with a new token unless it already holds one; True when it was created."""
    if path.exists() and path.stat().st_size > 0:
        path.chmod(0o600)
        return False
    private.make_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    path.chmod(0o600)  # O_CREAT's mode does not apply to a file that was already there (empty)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argument_parser("memlane token", t("cli.help.token"))
    p.add_argument("--token-file", help=t("clients.help_token_file"))
    args = p.parse_args(argv)
    cfg = load_config()
    path = Path(os.path.expanduser(str(args.token_file or cfg.token_file)))
    say("install.token_created" if ensure_token_file(path) else "install.token_kept", path=str(path))
    if cfg.auth_token:
        say("token.env_wins")
    say("token.read", path=str(path))
    return 0
