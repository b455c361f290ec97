"""From a fresh HOME, `make run`'s two steps (`cli.py token`, then `mcp_server.py`) leave a token file that
the READMEs' `$(cat ~/.memlane/auth_token)` snippet reads as written (issue 29), and `./memlane clients`
follows the configured port and token file."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_util import daemon_env, running_daemon

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.e2e


def make_run_recipe() -> list[str]:
    """The commands of the Makefile's `run` target, with $(PY) left out."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    body = re.search(r"^run: .*\n((?:\t.*\n)+)", text, flags=re.M)
    assert body, "no run target"
    return [line.strip().removeprefix("$(PY) ") for line in body.group(1).splitlines()]


def readme_curl(readme: str) -> str:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / readme).read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if b.startswith("curl") and "$(cat ~/.memlane/auth_token)" in b)


def test_make_run_creates_the_token_the_readme_snippet_reads(tmp_path: Path) -> None:
    steps = make_run_recipe()
    assert steps[-1] == "mcp_server.py" and "cli.py token" in steps[:-1], steps
    home = tmp_path / "home"
    home.mkdir()
    env = daemon_env(home)
    out = subprocess.run([sys.executable, "cli.py", "token"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    token_file = home / ".memlane" / "auth_token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    token = token_file.read_text().strip()
    assert len(token) >= 32 and token not in out.stdout
    assert f"cat {token_file}" in out.stdout  # how to read it
    again = subprocess.run([sys.executable, "cli.py", "token"], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=60)
    assert again.returncode == 0 and token_file.read_text().strip() == token  # kept, never replaced

    with running_daemon(tmp_path) as d:  # the daemon as make run starts it: no MEMLANE_AUTH_TOKEN, the file
        assert "token" in d.ready_line
        for readme in ("README.md", "README.zh.md"):
            snippet = readme_curl(readme).replace("http://127.0.0.1:8086", d.url)
            ran = subprocess.run(["bash", "-c", snippet], env={**env, "HOME": str(home)}, capture_output=True,
                                 text=True, timeout=60)
            assert ran.returncode == 0 and '"serverInfo"' in ran.stdout, (ran.stdout, ran.stderr)
        # The snippet does reach the guard: from another HOME (no token file) it is refused.
        wrong = subprocess.run(["bash", "-c", readme_curl("README.md").replace("http://127.0.0.1:8086", d.url)],
                               env={**env, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60)
        assert "bearer token" in wrong.stdout and '"serverInfo"' not in wrong.stdout


def test_clients_follows_the_configured_port_and_token_file(tmp_path: Path) -> None:
    env = daemon_env(tmp_path, env={"MEMLANE_PORT": "8123", "MEMLANE_TOKEN_FILE": str(tmp_path / "tok")})
    out = subprocess.run([sys.executable, "cli.py", "clients"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "http://127.0.0.1:8123/mcp" in out.stdout and "8086" not in out.stdout
    assert "$(cat ~/tok)" in out.stdout
    plain = subprocess.run([sys.executable, "cli.py", "clients"], cwd=ROOT, env=daemon_env(tmp_path),
                           capture_output=True, text=True, timeout=60)
    assert "http://127.0.0.1:8086/sse" in plain.stdout and "$(cat ~/.memlane/auth_token)" in plain.stdout
