"""What to paste into an MCP client to reach memlane: `memlane clients [--url URL] [--token-file PATH]`.

The one source of the client snippets: scripts/install.sh prints them through this command, and the
READMEs show them with the defaults below, word for word (tests/test_install_snippets.py holds them equal).
"""

from __future__ import annotations

import shlex

from commands._common import argument_parser, say
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
    path = token_file if token_file == DEFAULT_TOKEN_FILE else shlex.quote(token_file)
    return [(title, text.replace(DEFAULT_URL, url.rstrip("/")).replace(DEFAULT_TOKEN_FILE, path))
            for title, text in SNIPPETS]


def main(argv: list[str] | None = None) -> int:
    p = argument_parser("memlane clients", t("cli.help.clients"))
    p.add_argument("--url", default=DEFAULT_URL, help=t("clients.help_url"))
    p.add_argument("--token-file", default=DEFAULT_TOKEN_FILE, help=t("clients.help_token_file"))
    args = p.parse_args(argv)
    say("install.client_config", token_file=args.token_file)
    for title, text in render(args.url, args.token_file):
        print()
        say(title)
        print(text)
    return 0
