"""What to paste into an MCP client to reach memlane: `memlane clients [--url URL] [--token-file PATH]`.

The one source of the client snippets: scripts/install.sh prints them through this command, and the
READMEs show them with the defaults below, word for word (tests/test_install_snippets.py holds them equal).
"""

from __future__ import annotations

import os
import shlex

from commands._common import argument_parser, say
from commands.health_check import daemon_url
from config import Config, load_config
from i18n_messages import t

DEFAULT_URL = "http://127.0.0.1:8086"
DEFAULT_TOKEN_FILE = "~/.memlane/auth_token"

# (title id, snippet), written with DEFAULT_URL and DEFAULT_TOKEN_FILE; render() puts the real ones in.
SNIPPETS: tuple[tuple[str, str], ...] = (
    ("clients.desktop", """\
{
  "mcpServers": {
    "memlane": {
      "command": "npx",
      "args": ["-y", "mcp-remote", "http://127.0.0.1:8086/mcp", "--allow-http",
               "--header", "Authorization:${MEMLANE_AUTH_HEADER}"],
      "env": { "MEMLANE_AUTH_HEADER": "Bearer <token>" }
    }
  }
}"""),
    ("clients.code", """\
claude mcp add --transport sse --scope user \\
  --header "Authorization: Bearer $(cat ~/.memlane/auth_token)" \\
  memlane http://127.0.0.1:8086/sse"""),
    ("clients.code_http", """\
claude mcp add --transport http --scope user \\
  --header "Authorization: Bearer $(cat ~/.memlane/auth_token)" \\
  memlane http://127.0.0.1:8086/mcp"""),
    ("clients.cursor", """\
{
  "mcpServers": {
    "memlane": {
      "url": "http://127.0.0.1:8086/mcp",
      "headers": { "Authorization": "Bearer <token>" }
    }
  }
}"""),
)


def render(url: str = DEFAULT_URL, token_file: str = DEFAULT_TOKEN_FILE) -> list[tuple[str, str]]:
    """The snippets for a daemon at `url` whose token is in `token_file`: (title id, text) pairs."""
    # `~/` stays outside the quotes, where the shell still expands it.
    home, rest = ("~/", token_file[2:]) if token_file.startswith("~/") else ("", token_file)
    path = token_file if token_file == DEFAULT_TOKEN_FILE else home + shlex.quote(rest)
    return [(title, text.replace(DEFAULT_URL, url.rstrip("/")).replace(DEFAULT_TOKEN_FILE, path))
            for title, text in SNIPPETS]


def configured(cfg: Config) -> tuple[str, str]:
    """The daemon's URL and token file as the configuration says (MEMLANE_PORT, MEMLANE_TOKEN_FILE, config.toml);
    the token file is written as `~/...` when it is under HOME, as the READMEs show it."""
    token_file = str(cfg.token_file)
    home = os.path.expanduser("~")
    if token_file.startswith(home + os.sep):
        token_file = "~" + token_file[len(home):]
    return daemon_url(cfg), token_file


def main(argv: list[str] | None = None) -> int:
    p = argument_parser("memlane clients", t("cli.help.clients"))
    p.add_argument("--url", help=t("clients.help_url"))
    p.add_argument("--token-file", help=t("clients.help_token_file"))
    args = p.parse_args(argv)
    url, token_file = configured(load_config())
    url, token_file = args.url or url, args.token_file or token_file
    say("install.client_config", token_file=token_file)
    for title, text in render(url, token_file):
        print()
        say(title)
        print(text)
    return 0
