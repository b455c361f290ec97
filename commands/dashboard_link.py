"""Print a fresh one-time link that signs a browser in to the dashboard: `memlane dashboard-link [--url URL]`.

The daemon prints such a link when it starts, but under a service that line is only in the log, and a
link works once. This asks the running daemon for a new one (POST /ui/api/login-link with the bearer
token, found the way the daemon finds it); the previous link stops working.
"""

from __future__ import annotations

import httpx

from commands._common import Unavailable, argument_parser, say
from commands.health_check import daemon_url
from config import load_config
from i18n_messages import t


def main(argv: list[str] | None = None) -> int:
    p = argument_parser("memlane dashboard-link", t("cli.help.dashboard_link"))
    p.add_argument("--url", help=t("ui.link_help_url"))
    args = p.parse_args(argv)
    cfg = load_config()
    url = (args.url or daemon_url(cfg)).rstrip("/")

    from mcp_server import resolve_token  # the daemon's own rule: MEMLANE_AUTH_TOKEN, else the token file

    token = resolve_token(cfg)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        resp = httpx.post(url + "/ui/api/login-link", headers=headers, timeout=10)
    except httpx.HTTPError as exc:
        raise Unavailable("ui.link_no_daemon", url=url, detail=type(exc).__name__) from None
    if resp.status_code == 401:
        raise Unavailable("ui.link_refused", url=url)
    if resp.status_code != 200:
        raise Unavailable("ui.link_no_daemon", url=url, detail=f"HTTP {resp.status_code}")
    path = resp.json()["path"]
    say("ui.login_url" if "token=" in path else "ui.open_url", url=url + path)
    return 0
