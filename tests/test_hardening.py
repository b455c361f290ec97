"""Issue 16: what a hostile review of the running daemon found, each attack replayed against a real daemon
on loopback (real SQLite file under tmp_path, real model). See docs/RELIABILITY.md, "Hostile review"."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_util import Daemon, running_daemon
from dashboard_util import login_url
from reliability_util import SyncSession

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "harden-token-7c1e"
EXTREME_TIMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]
DEEP = '{"a": ' * 3000 + "1" + "}" * 3000  # metadata as a JSON string nested 3,000 deep


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("harden"), token=TOKEN) as d:
        yield d
    assert d.returncode == 0, d.output()


@pytest.fixture(scope="module")
def session(daemon: Daemon) -> Iterator[SyncSession]:
    s = SyncSession(daemon, "http")
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def api(daemon: Daemon) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=60) as c:
        yield c


# ---------------------------------------------------------------- 7: extreme times, deep metadata


@pytest.mark.parametrize("when", EXTREME_TIMES)
def test_extreme_iso_times_are_invalid_arguments(session: SyncSession, api: httpx.Client, when: str) -> None:
    calls = [("memory_remember", {"content": "Extreme times must not crash the daemon.", "valid_from": when}),
             ("memory_recall", {"query": "extreme", "as_of": when}),
             ("memory_recall", {"query": "extreme", "since": when}),
             ("memory_recall", {"query": "extreme", "until": when}),
             ("memory_relate", {"subject": "Ann", "predicate": "knows", "object": "Bo", "valid_from": when}),
             ("memory_graph_query", {"entity": "Ann", "as_of": when})]
    for tool, args in calls:
        out = session.call(tool, args)
        assert out.code == "invalid_argument", (tool, out.text)
        assert "UTC" in out.text and "0001-01-02" in out.text, out.text
    for name in ("as_of", "since", "until"):
        r = api.get("/ui/api/recall", params={"q": "extreme", name: when}, headers={"x-memlane-lang": "zh"})
        assert r.status_code == 400, (name, r.status_code, r.text)
        assert r.json()["error"]["code"] == "invalid_argument" and "UTC" in r.json()["error"]["message"]


def test_deeply_nested_metadata_is_an_invalid_argument(session: SyncSession, api: httpx.Client) -> None:
    out = session.call("memory_remember", {"content": "Deep metadata must be refused.", "metadata": DEEP})
    assert out.code == "invalid_argument" and "32" in out.text, out.text
    nested: dict[str, object] = {"v": 1}
    for _ in range(40):  # an object (not a string) nested past the limit, within the SDK's own JSON limits
        nested = {"a": nested}
    out = session.call("memory_remember", {"content": "Deep metadata must be refused.", "metadata": nested})
    assert out.code == "invalid_argument", out.text
    ok = session.call("memory_remember", {"content": "Shallow metadata is fine.", "metadata": {"a": {"b": [1]}}})
    assert ok.ok, ok.text
    cid = ok.data["chunk_id"]
    r = api.post(f"/ui/api/memory/{cid}/update", json={"content": "Still shallow.", "metadata": DEEP})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_argument", r.text
    r = api.post(f"/ui/api/memory/{cid}/update", content=("[" * 3000 + "]" * 3000).encode(),
                 headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_argument", r.text


# ---------------------------------------------------------------- 8: whole-string argument patterns


@pytest.mark.parametrize("namespace", ["default\n", "user:alice\n", "a" * 64 + "\n"])
def test_a_trailing_newline_never_makes_a_new_namespace(session: SyncSession, namespace: str) -> None:
    out = session.call("memory_remember", {"content": "Newline namespaces are refused.", "namespace": namespace})
    assert out.code == "invalid_argument" and "namespace" in out.text, out.text
    out = session.call("memory_recall", {"query": "newline", "namespace": namespace})
    assert out.code == "invalid_argument", out.text


def test_an_id_with_a_trailing_newline_is_not_an_id(session: SyncSession) -> None:
    ok = session.call("memory_remember", {"content": "The id check matches the whole string."})
    assert ok.ok
    out = session.call("memory_history", {"id": ok.data["chunk_id"] + "\n"})
    assert out.code == "invalid_argument", out.text


# ---------------------------------------------------------------- 12: a stray MEMLANE_* variable


def test_an_unknown_env_variable_warns_and_the_daemon_starts(tmp_path: Path) -> None:
    with running_daemon(tmp_path, env={"MEMLANE_PORTT": "1"}) as d:
        assert httpx.get(d.url + "/health", timeout=10).status_code == 200
        assert any("MEMLANE_PORTT" in line and "Did you mean MEMLANE_PORT?" in line for line in d.lines), d.output()
    with running_daemon(tmp_path, env={"MEMLANE_PORTT": "1"}, lang="zh") as d:
        assert any("MEMLANE_PORTT" in line and "忽略环境变量" in line for line in d.lines), d.output()


def test_an_unknown_env_variable_does_not_stop_the_health_check(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(tmp_path), MEMLANE_LANG="en", MEMLANE_PORTT="1", MEMLANE_PORT=str(_free_port()))
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "health_check.py")], env=env, cwd=str(ROOT),
                         capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert "Did you mean MEMLANE_PORT?" in out.stderr, out.stderr + out.stdout
    assert "daemon down" in out.stdout, out.stdout  # it ran its checks (nothing listens on that port)
