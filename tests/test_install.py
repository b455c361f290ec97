"""scripts/init_db.py, scripts/install.sh and the service templates, run for real under tmp_path."""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from daemon_util import READY_RE, running_daemon

from memory import __version__

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "scripts" / "install.sh"
INIT_DB = ROOT / "scripts" / "init_db.py"


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update({"HOME": str(home), "MEMLANE_LANG": "en", **extra})
    return env


def run(cmd: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=str(ROOT))


def test_init_db_creates_then_does_nothing(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    db = tmp_path / "data" / "memory.db"
    first = run([sys.executable, str(INIT_DB), "--db", str(db)], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"created {db}: schema version ")
    assert db.exists()
    again = run([sys.executable, str(INIT_DB), "--db", str(db), "--lang", "zh"], env)
    assert again.returncode == 0, again.stderr
    assert "无需操作" in again.stdout


def test_init_db_refuses_while_the_daemon_holds_the_database(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        res = run([sys.executable, str(INIT_DB), "--db", str(d.db_path)], clean_env(tmp_path))
        assert res.returncode == 1
        assert res.stderr.startswith("[unavailable] the daemon is running on")


def test_install_is_rerunnable_and_uninstall_keeps_the_data(tmp_path: Path) -> None:
    live = tmp_path / "live"
    # Forced to "none" so that a developer's real systemd or launchd is never touched by the tests.
    env = clean_env(tmp_path, LIVE_ROOT=str(live), SERVICE_MANAGER="none", MEMLANE_PORT="0")
    first = run(["bash", str(INSTALL), "--python", sys.executable], env)
    assert first.returncode == 0, first.stdout + first.stderr
    token_file = live / "auth_token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert len(token) >= 32
    assert (live / "memory.db").exists()
    out = first.stdout
    assert "created the token file" in out and "no service manager is running here" in out
    assert "claude mcp add --transport sse --scope user" in out and "Authorization: Bearer" in out
    assert token not in out  # the token is never printed

    second = run(["bash", str(INSTALL), "--python", sys.executable], env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert token_file.read_text().strip() == token
    assert "kept the existing token file" in second.stdout and "nothing to do" in second.stdout

    gone = run(["bash", str(INSTALL), "--uninstall"], env)
    assert gone.returncode == 0 and "untouched" in gone.stdout
    assert (live / "memory.db").exists() and token_file.exists()

    # The foreground command it printed starts the daemon, with the token required.
    line = next(x.strip() for x in first.stdout.splitlines() if "mcp_server.py" in x and "--db" in x)
    assert "--port 0" in line
    proc = subprocess.Popen(["bash", "-c", line], env=clean_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        deadline = time.monotonic() + 180
        assert proc.stdout is not None
        for out_line in proc.stdout:
            m = READY_RE.search(out_line)
            if m:
                url = m.group(1)
                break
            assert time.monotonic() < deadline
        assert url, "no ready line"
        assert httpx.get(url + "/health", timeout=10).status_code == 200
        assert httpx.get(url + "/sse", timeout=10).status_code == 401
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        assert httpx.post(url + "/mcp", headers=headers, json=init, timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_systemd_unit_restarts_on_failure_and_logs_to_a_file(tmp_path: Path) -> None:
    env = clean_env(tmp_path, LIVE_ROOT="/srv/mem lane", MEMLANE_PORT="9999")
    res = run(["bash", str(INSTALL), "--python", sys.executable, "--print-service", "systemd"], env)
    assert res.returncode == 0, res.stderr
    unit = res.stdout
    assert "@" not in re.sub(r"[\w.-]+@[\w.-]+", "", unit.split("[Service]")[1])  # every placeholder filled
    exec_start = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    args = shlex.split(exec_start[len("ExecStart="):])
    assert args[0] == sys.executable and args[1] == str(ROOT / "mcp_server.py")
    assert args[2:] == ["--host", "127.0.0.1", "--port", "9999", "--db", "/srv/mem lane/memory.db"]
    assert "Restart=on-failure" in unit
    assert "StandardOutput=append:/srv/mem lane/logs/memlane.log" in unit
    assert "WantedBy=default.target" in unit


def test_launchd_plist_is_valid_and_restarts_on_failure(tmp_path: Path) -> None:
    env = clean_env(tmp_path, LIVE_ROOT="/Users/a&b/.memlane")
    res = run(["bash", str(INSTALL), "--python", sys.executable, "--print-service", "launchd"], env)
    assert res.returncode == 0, res.stderr
    plist = plistlib.loads(res.stdout.encode())
    assert plist["Label"] == "ai.memlane.mcp"
    assert plist["ProgramArguments"][:2] == [sys.executable, str(ROOT / "mcp_server.py")]
    assert plist["ProgramArguments"][-1] == "/Users/a&b/.memlane/memory.db"
    assert plist["KeepAlive"] == {"SuccessfulExit": False} and plist["RunAtLoad"] is True
    assert plist["StandardErrorPath"] == "/Users/a&b/.memlane/logs/memlane.log"
    assert plist["EnvironmentVariables"]["MEMLANE_TOKEN_FILE"] == "/Users/a&b/.memlane/auth_token"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_install_usage_is_translated(tmp_path: Path, lang: str) -> None:
    res = run(["bash", str(INSTALL), "--help"], clean_env(tmp_path, MEMLANE_LANG=lang))
    assert res.returncode == 0
    assert ("usage:" in res.stdout) if lang == "en" else ("用法" in res.stdout)


def test_a_fresh_home_reaches_the_ready_line_with_no_config(tmp_path: Path) -> None:
    """`python mcp_server.py` with an empty HOME: no config file, no data directory, no flags but the port."""
    env = clean_env(tmp_path, MEMLANE_PORT="0")
    proc = subprocess.Popen([sys.executable, str(ROOT / "mcp_server.py")], env=env, cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = READY_RE.search(line)
        assert m, line
        assert f"db={tmp_path / '.memlane' / 'memory.db'}" in line
        assert httpx.get(m.group(1) + "/health", timeout=10).json()["status"] == "ok"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    assert not (tmp_path / ".memlane" / "config.toml").exists()


def test_version_flag(tmp_path: Path) -> None:
    res = run([sys.executable, str(ROOT / "mcp_server.py"), "--version"], clean_env(tmp_path))
    assert res.returncode == 0 and res.stdout.strip() == f"memlane {__version__}"


def test_systemd_install_enables_the_daemon_and_the_daily_health_timer(tmp_path: Path) -> None:
    # No systemd --user runs in CI, so a recording stand-in for systemctl shows what install.sh asks of it;
    # the files it writes are real and are checked as such.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "systemctl.log"
    stub = bin_dir / "systemctl"
    stub.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(calls))}\nexit 0\n')
    stub.chmod(0o755)
    live, xdg = tmp_path / "live", tmp_path / "xdg"
    env = clean_env(tmp_path, LIVE_ROOT=str(live), SERVICE_MANAGER="systemd", MEMLANE_PORT="0",
                    XDG_CONFIG_HOME=str(xdg), PATH=f"{bin_dir}:{os.environ['PATH']}")
    res = run(["bash", str(INSTALL), "--python", sys.executable], env)
    assert res.returncode == 0, res.stdout + res.stderr
    units = xdg / "systemd" / "user"
    for name in ("memlane.service", "memlane-health.service", "memlane-health.timer"):
        text = (units / name).read_text()
        assert not re.search(r"@[A-Z_]+@", text), f"{name} has unfilled placeholders"
    assert str(ROOT / "scripts" / "health_check.py") in (units / "memlane-health.service").read_text()
    assert str(live / "logs" / "health.log") in (units / "memlane-health.service").read_text()
    log = calls.read_text()
    assert "--user enable --now memlane-health.timer" in log and "--user enable memlane.service" in log
    assert "daily health check scheduled" in res.stdout

    gone = run(["bash", str(INSTALL), "--uninstall"], env)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not any(units.iterdir())
    assert "--user disable --now memlane.service memlane-health.timer" in calls.read_text()
    assert (live / "memory.db").exists()
