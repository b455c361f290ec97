"""scripts/install.sh as a new user meets it: the client snippets it prints are the READMEs', its last
line says whether memlane runs, and a daemon already up gets a clear word, not an init_db.py error.

install.sh runs for real in a temp HOME with a bounded environment: no inherited variables but PATH,
no service manager (SERVICE_MANAGER=none), no venv or pip (--python), so no network."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_util import running_daemon

from commands.clients import DEFAULT_TOKEN_FILE, DEFAULT_URL, SNIPPETS, render
from i18n_messages import t

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "scripts" / "install.sh"
READMES = ["README.md", "README.zh.md"]


def code_blocks(readme: str) -> list[list[str]]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    return [b.splitlines() for b in re.findall(r"^```\w*\n(.*?)^```", text, flags=re.S | re.M)]


def holds(block: list[str], lines: list[str]) -> bool:
    """Is `lines` a contiguous run of `block`'s lines?"""
    return any(block[i:i + len(lines)] == lines for i in range(len(block) - len(lines) + 1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def install(home: Path, *, port: int, live: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "MEMLANE_LANG": "en",
           "LIVE_ROOT": str(live or home / ".memlane"), "SERVICE_MANAGER": "none", "MEMLANE_PORT": str(port)}
    return subprocess.run(["bash", str(INSTALL), "--python", sys.executable], env=env, cwd=str(home),
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("readme", READMES)
def test_every_snippet_is_in_the_readme_as_written(readme: str) -> None:
    blocks = code_blocks(readme)
    for title, text in SNIPPETS:
        assert any(holds(b, text.splitlines()) for b in blocks), f"{readme} lacks the {title} snippet:\n{text}"


@pytest.mark.parametrize("readme", READMES)
def test_every_client_config_in_the_readme_is_a_snippet(readme: str) -> None:
    """The other way round: the README shows no client config that install.sh does not print."""
    snippet_lines = [text.splitlines() for _, text in SNIPPETS]
    configs = [b for b in code_blocks(readme) if any('"mcpServers"' in x or x.startswith("claude mcp add") for x in b)]
    assert len(configs) == 3, configs  # Claude Desktop, Claude Code (two transports), Cursor
    for block in configs:
        rest = [x for x in block if not x.startswith("#")]  # a comment between two commands
        for lines in snippet_lines:
            if holds(rest, lines):
                i = next(i for i in range(len(rest)) if rest[i:i + len(lines)] == lines)
                rest = rest[:i] + rest[i + len(lines):]
        assert rest == [], f"{readme}: client config lines that are no snippet: {rest}"


def printed_snippets(out: str) -> dict[str, str]:
    """The snippets install.sh printed, by title id: the lines after each title up to a blank line."""
    lines = out.splitlines()
    found = {}
    for title, _ in SNIPPETS:
        i = lines.index(t(title, "en"))
        j = lines.index("", i)
        found[title] = "\n".join(lines[i + 1:j])
    return found


def test_without_a_service_manager_it_prints_the_readme_snippets_and_says_nothing_runs(tmp_path: Path) -> None:
    port = free_port()
    live = tmp_path / "my data"  # a space: the token file is quoted in the shell snippets
    res = install(tmp_path, port=port, live=live)
    assert res.returncode == 0, res.stdout + res.stderr
    url, token_file = f"http://127.0.0.1:{port}", live / "auth_token"
    got = printed_snippets(res.stdout)
    assert got == dict(render(url, str(token_file)))
    readme = [b for r in READMES for b in code_blocks(r)]
    for title, text in got.items():
        assert f"'{token_file}'" in text or "<token>" in text, text
        as_readme = text.replace(url, DEFAULT_URL).replace(f"'{token_file}'", DEFAULT_TOKEN_FILE)
        assert as_readme == dict(SNIPPETS)[title]
        assert any(holds(b, as_readme.splitlines()) for b in readme)
    # The honest end: nothing runs, and the last lines say how to start it.
    assert "✅" not in res.stdout
    tail = res.stdout.rstrip().splitlines()[-2:]
    assert tail[0].startswith("memlane is installed but not running"), tail
    assert "mcp_server.py" in tail[1] and f"--port {port}" in tail[1] and str(live / "memory.db") in tail[1]


def test_with_a_daemon_already_up_it_says_so_and_what_to_do(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    with running_daemon(tmp_path, db_path=live / "memory.db") as d:
        # The daemon holds LIVE_ROOT's database (make run on ~/.memlane, then install.sh).
        res = install(tmp_path, port=free_port(), live=live)
        assert res.returncode == 1, res.stdout + res.stderr
        out = res.stdout + res.stderr
        assert "init_db" not in out and "[unavailable]" not in out
        assert f"a memlane daemon that this installer did not start is already running on {live / 'memory.db'}" in res.stderr
        assert "Stop it (Ctrl-C in its terminal" in res.stderr and "run scripts/install.sh again" in res.stderr
        assert not (live / "auth_token").exists()  # it stopped before changing anything
        # Another database, but the daemon answers on the port the service would take.
        other = install(tmp_path, port=d.port, live=tmp_path / "other")
        assert other.returncode == 1, other.stdout + other.stderr
        assert f"already running on http://127.0.0.1:{d.port}" in other.stderr
    # Once it is stopped, the same install goes through.
    again = install(tmp_path, port=free_port(), live=live)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already running" not in again.stdout + again.stderr
