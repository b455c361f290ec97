"""scripts/health_check.py: colours, exit codes and language, against a real daemon and real databases."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from daemon_util import Daemon, mcp_session, running_daemon, start_daemon

from commands import health_check as hc
from config import load_config
from memory import Memory, connect

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "health_check.py"  # the path the service files run (an alias of memlane health)
TOKEN = "health-token"
ORPHAN_ROWID = 987_654_321


# Words that only the chosen language's text contains, for the lines every run prints.
WORDS = {
    "en": {"alive": "daemon alive", "down": "daemon down", "orphan": "orphan vectors", "counts": "live",
           "quick": "PRAGMA quick_check: ok"},
    "zh": {"alive": "守护进程在", "down": "守护进程未运行", "orphan": "孤立向量", "counts": "条有效",
           "quick": "PRAGMA quick_check：正常"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_check(home: Path, lang: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_") and k not in ("LANG", "LC_ALL")}
    full.update(HOME=str(home), MEMLANE_LANG=lang, PYTHONIOENCODING="utf-8", **(env or {}))
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=str(ROOT), env=full, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


def marked(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line[:1] in ("🟢", "🟡", "🔴")]


def populate(d: Daemon) -> None:
    """A few memories, an entity graph and some recalls, then wait until every vector is written."""
    import asyncio

    async def go() -> None:
        async with mcp_session(d, "sse") as s:
            for text in ("Alice moved to Berlin.", "爱丽丝在柏林的 SAP 工作。", "sh600089 build at 18.96"):
                r = await s.call_tool("memory_remember", {"content": text})
                assert not r.is_error, r
            r = await s.call_tool("memory_relate", {"subject": "Alice", "predicate": "works_at", "object": "SAP",
                                                    "subject_kind": "person", "object_kind": "org"})
            assert not r.is_error, r
            for q in ("where does Alice live", "600089 建仓"):
                r = await s.call_tool("memory_recall", {"query": q})
                assert not r.is_error, r

    asyncio.run(go())
    deadline = time.monotonic() + 120
    while httpx.get(d.url + "/health", timeout=10).json()["pending_embeddings"]:
        assert time.monotonic() < deadline, "embeddings did not drain"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("health"), token=TOKEN) as d:
        populate(d)
        yield d


# ------------------------------------------------------------------ against a real daemon


@pytest.mark.e2e
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_healthy_daemon_is_all_green(daemon: Daemon, lang: str, tmp_path: Path) -> None:
    out = run_check(tmp_path, lang, "--url", daemon.url, "--db", str(daemon.db_path))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = marked(out.stdout)
    assert 8 <= len(lines) <= 14, out.stdout
    assert all(line.startswith("🟢") for line in lines), out.stdout
    assert WORDS[lang]["alive"] in out.stdout and "0.1.0" in out.stdout
    assert WORDS[lang]["quick"] in out.stdout and WORDS[lang]["counts"] in out.stdout
    other = "zh" if lang == "en" else "en"
    assert WORDS[other]["alive"] not in out.stdout, "mixed languages"


@pytest.mark.e2e
def test_daemon_and_database_are_found_like_the_daemon_does(daemon: Daemon, tmp_path: Path) -> None:
    # No --url and no --db: MEMLANE_PORT finds the daemon and the daemon reports its database.
    out = run_check(tmp_path, "en", env={"MEMLANE_PORT": str(daemon.port)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert str(daemon.db_path) in out.stdout
    # config.toml works the same way.
    (tmp_path / ".memlane").mkdir()
    (tmp_path / ".memlane" / "config.toml").write_text(f'port = {daemon.port}\ndb_path = "{daemon.db_path}"\n')
    out = run_check(tmp_path, "en")
    assert out.returncode == 0 and daemon.url in out.stdout, out.stdout + out.stderr


@pytest.mark.e2e
def test_json_output(daemon: Daemon, tmp_path: Path) -> None:
    out = run_check(tmp_path, "zh", "--json", "--url", daemon.url, "--db", str(daemon.db_path))
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "green" and data["exit_code"] == 0 and data["lang"] == "zh"
    names = [c["name"] for c in data["checks"]]
    assert names == ["daemon", "database", "counts", "pending", "vectors", "quick_check", "recalls", "entity_kinds"]
    assert all(c["level"] == "green" for c in data["checks"])
    facts = data["facts"]
    assert facts["daemon"]["alive"] is True and facts["daemon"]["version"]
    db = facts["db"]
    assert db["live_chunks"] >= 3 and db["vectors"] == db["chunks"] and db["orphan_vectors"] == 0
    assert db["entities"] >= 3 and db["relations"] == 1 and db["quick_check"] == ["ok"]
    assert db["recall_24h"]["calls"] == 2 and db["recall_24h"]["p50_ms"] is not None
    assert {k["kind"] for k in db["entity_kinds"]} >= {"person", "org"}


@pytest.mark.e2e
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planted_orphan_vector_is_red(daemon: Daemon, lang: str, tmp_path: Path) -> None:
    conn = connect(daemon.db_path)
    try:
        vec = np.zeros(384, dtype=np.float32)
        vec[0] = 1.0
        conn.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (?, 'default', 1, 'en', ?)",
                     (ORPHAN_ROWID, vec.tobytes()))
        out = run_check(tmp_path, lang, "--url", daemon.url, "--db", str(daemon.db_path))
        data = json.loads(run_check(tmp_path, lang, "--json", "--url", daemon.url,
                                    "--db", str(daemon.db_path)).stdout)
    finally:
        conn.execute("delete from chunk_vec where rowid = ?", (ORPHAN_ROWID,))
        conn.close()
    assert out.returncode == 2, out.stdout
    lines = marked(out.stdout)
    orphan = [line for line in lines if WORDS[lang]["orphan"] in line]
    assert len(orphan) == 1 and orphan[0].startswith("🔴 1 "), out.stdout
    assert lines[0].startswith("🟢") and WORDS[lang]["alive"] in lines[0]  # the daemon itself is fine
    assert lines[-1].startswith("🔴")
    assert data["facts"]["db"]["orphan_vectors"] == 1 and data["status"] == "red"


@pytest.mark.e2e
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wrong_url_means_daemon_down(daemon: Daemon, lang: str, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    out = run_check(tmp_path, lang, "--url", url, "--db", str(daemon.db_path))
    assert out.returncode == 2
    assert marked(out.stdout)[0].startswith("🔴") and WORDS[lang]["down"] in out.stdout and url in out.stdout


@pytest.mark.e2e
def test_stopped_daemon_reads_the_database_read_only(tmp_path: Path) -> None:
    d = start_daemon(tmp_path / "d", token=TOKEN)
    try:
        populate(d)
        url = d.url
    finally:
        assert d.stop() == 0
    before = hashlib.sha256(d.db_path.read_bytes()).hexdigest()
    for lang in ("en", "zh"):
        out = run_check(tmp_path, lang, "--url", url, "--db", str(d.db_path))
        assert out.returncode == 2, out.stdout + out.stderr
        lines = marked(out.stdout)
        assert lines[0].startswith("🔴") and WORDS[lang]["down"] in lines[0]
        # Everything else still comes from the file, and is healthy.
        assert all(line.startswith("🟢") for line in lines[1:-1]), out.stdout
        assert WORDS[lang]["counts"] in out.stdout and WORDS[lang]["quick"] in out.stdout
        assert lines[-1].startswith("🔴")
    # MEMLANE_DB_PATH finds the database as the daemon would, with no --db.
    out = run_check(tmp_path, "en", "--url", url, env={"MEMLANE_DB_PATH": str(d.db_path)})
    assert out.returncode == 2 and str(d.db_path) in out.stdout and WORDS["en"]["quick"] in out.stdout
    assert hashlib.sha256(d.db_path.read_bytes()).hexdigest() == before, "the health check wrote to the database"


# ------------------------------------------------------------------ database states, no daemon


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def levels(cfg: Any, db_path: Path, lang: str = "en") -> dict[str, str]:
    facts = hc.gather(cfg, closed_url(), str(db_path), 2.0, datetime.now(timezone.utc))
    return {c.name: c.level for c in hc.assess(facts, lang)}


def test_stuck_embeddings_and_missing_vectors_are_yellow(tmp_path: Path, e5: Any) -> None:
    cfg = load_config({"HOME": str(tmp_path)})
    db = tmp_path / "memory.db"
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        old = m.remember("queued long ago and never embedded")
        m.remember("queued just now")
        two_hours_ago = hc.iso(datetime.now(timezone.utc) - timedelta(hours=2))
        with m.store.atomic() as w:
            w.execute("update chunks set created_at = ? where id = ?", (two_hours_ago, old["chunk_id"]))
            w.execute("update embed_queue set enqueued_at = ? where chunk_seq = (select seq from chunks where id = ?)",
                      (two_hours_ago, old["chunk_id"]))
    got = levels(cfg, db)
    assert got["pending"] == "yellow" and got["vectors"] == "yellow" and got["daemon"] == "red"
    assert got["quick_check"] == "green" and got["counts"] == "green"
    facts = hc.gather(cfg, closed_url(), str(db), 2.0, datetime.now(timezone.utc))
    assert facts["db"]["missing_vectors"] == 1 and facts["db"]["pending_embeddings"] == 2
    lines = [c.line("zh") for c in hc.assess(facts, "zh")]
    assert any(line.startswith("🟡") and "小时" in line for line in lines), lines


def test_one_dominant_entity_kind_is_yellow(tmp_path: Path, e5: Any) -> None:
    cfg = load_config({"HOME": str(tmp_path)})
    db = tmp_path / "memory.db"
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        for i in range(24):
            m.relate(f"Thing {i}", "relates_to", f"Other {i}")
        m.relate("Dana", "knows", "Eve", subject_kind="person", object_kind="person")
    facts = hc.gather(cfg, closed_url(), str(db), 2.0, datetime.now(timezone.utc))
    kinds = [c for c in hc.assess(facts, "en") if c.name == "entity_kinds"]
    assert kinds[0].level == "yellow" and kinds[0].params["kind"] == "concept" and kinds[0].params["share"] == 96


def test_backup_age(tmp_path: Path, e5: Any) -> None:
    db = tmp_path / "memory.db"
    backups = tmp_path / "backups"
    backups.mkdir()
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_BACKUP_DIR": str(backups)})
    Memory(db, config=cfg, embedder=e5, start_worker=False).close()
    assert levels(cfg, db)["backup"] == "yellow"  # configured, but none there yet
    old = backups / "memory-old.db"
    old.write_bytes(b"x")
    three_days = time.time() - 3 * 86400
    os.utime(old, (three_days, three_days))
    facts = hc.gather(cfg, closed_url(), str(db), 2.0, datetime.now(timezone.utc))
    check = [c for c in hc.assess(facts, "zh") if c.name == "backup"][0]
    assert check.level == "yellow" and "3 天" in check.line("zh")
    (backups / "memory-new.db").write_bytes(b"y")
    assert levels(cfg, db)["backup"] == "green"
    # Without backup_dir there is no backup line at all.
    assert "backup" not in levels(load_config({"HOME": str(tmp_path)}), db)


def test_missing_database_is_red(tmp_path: Path) -> None:
    for lang, word in (("en", "no database"), ("zh", "没有数据库")):
        out = run_check(tmp_path, lang, "--url", closed_url(), "--db", str(tmp_path / "nope.db"))
        assert out.returncode == 2 and word in out.stdout, out.stdout + out.stderr


def test_damaged_database_is_red(tmp_path: Path, e5: Any) -> None:
    cfg = load_config({"HOME": str(tmp_path)})
    db = tmp_path / "memory.db"
    with Memory(db, config=cfg, embedder=e5, start_worker=False) as m:
        for i in range(200):
            m.remember(f"filler memory number {i} " + "padding " * 40)
    raw = bytearray(db.read_bytes())
    page = 4096
    for offset in range(3 * page, min(len(raw), 12 * page), page):
        raw[offset + 8:offset + 64] = b"\xff" * 56  # clobber b-tree page headers
    db.write_bytes(bytes(raw))
    out = run_check(tmp_path, "en", "--json", "--url", closed_url(), "--db", str(db))
    assert out.returncode == 2
    data = json.loads(out.stdout)
    bad = {c["name"] for c in data["checks"] if c["level"] == "red"} - {"daemon"}
    assert bad & {"database", "quick_check", "vectors"}, data["checks"]


def test_bad_configuration_is_red_and_explained(tmp_path: Path) -> None:
    out = run_check(tmp_path, "zh", env={"MEMLANE_PORT": "not-a-port"})
    assert out.returncode == 2
    assert out.stdout.startswith("🔴") and "无法读取 memlane 配置" in out.stdout and "port" in out.stdout and "not-a-port" in out.stdout


def test_durations_and_sizes() -> None:
    assert hc.human_age(3 * 86400 + 5 * 3600 + 7, "en") == "3 d 5 h"
    assert hc.human_age(3 * 86400 + 5 * 3600 + 7, "zh") == "3 天 5 小时"
    assert hc.human_age(65, "en") == "1 min 5 s"
    assert hc.human_age(0, "zh") == "0 秒"
    assert hc.human_bytes(1536) == "1.5 KB" and hc.human_bytes(10) == "10 B"
    assert hc.worst(["green", "red", "yellow"]) == "red" and hc.worst([]) == "green"


# ------------------------------------------------------------------ scheduling templates

SERVICE_DIR = ROOT / "scripts" / "service"


def render(template: Path, values: dict[str, str], xml: bool = False) -> str:
    """What scripts/install.sh does: fill in the @KEY@ values (XML-escaped for a plist)."""
    from xml.sax.saxutils import escape

    text = template.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@{key}@", escape(value) if xml else value)
    assert "@" not in "".join(line for line in text.splitlines() if not line.lstrip().startswith(("#", "<!--")))
    return text


def template_values(tmp_path: Path, port: int) -> dict[str, str]:
    live = tmp_path / "live"
    (live / "logs").mkdir(parents=True, exist_ok=True)
    return {"ROOT": str(ROOT), "PYTHON": sys.executable, "LIVE_ROOT": str(live), "HOST": "127.0.0.1",
            "PORT": str(port)}


def test_systemd_templates_pass_systemd_analyze(tmp_path: Path) -> None:
    import shutil

    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here")
    values = template_values(tmp_path, 8086)
    paths = []
    for name in ("memlane-health.service", "memlane-health.timer"):
        path = tmp_path / name
        path.write_text(render(SERVICE_DIR / name, values), encoding="utf-8")
        paths.append(str(path))
    out = subprocess.run(["systemd-analyze", "verify", *paths], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and not (out.stdout + out.stderr).strip(), out.stdout + out.stderr
    timer = (tmp_path / "memlane-health.timer").read_text()
    assert "OnCalendar=" in timer and "Persistent=true" in timer


@pytest.mark.e2e
def test_systemd_service_as_rendered_runs_the_check(daemon: Daemon, tmp_path: Path) -> None:
    import shlex

    values = template_values(tmp_path, daemon.port)
    unit = render(SERVICE_DIR / "memlane-health.service", values)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(tmp_path), MEMLANE_LANG="zh")
    command: list[str] = []
    for line in unit.splitlines():
        if line.startswith("Environment="):
            key, _, value = shlex.split(line[len("Environment="):])[0].partition("=")
            env[key] = value
        elif line.startswith("ExecStart="):
            command = shlex.split(line[len("ExecStart="):])
    # The unit names the live database; point that at the test daemon's by a symlink.
    (Path(values["LIVE_ROOT"]) / "memory.db").symlink_to(daemon.db_path)
    log = Path(values["LIVE_ROOT"]) / "logs" / "health.log"
    for _ in range(2):  # append, as StandardOutput=append: does
        with log.open("a", encoding="utf-8") as fh:
            rc = subprocess.run(command, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=120).returncode
        assert rc == 0
    text = log.read_text(encoding="utf-8")
    assert text.count("memlane 健康检查") == 2 and "🔴" not in text and daemon.url in text


@pytest.mark.e2e
def test_launchd_plist_as_rendered_runs_the_check(daemon: Daemon, tmp_path: Path) -> None:
    import plistlib

    values = template_values(tmp_path, daemon.port)
    plist = plistlib.loads(render(SERVICE_DIR / "memlane-health.plist", values, xml=True).encode("utf-8"))
    assert plist["Label"] == "ai.memlane.health"
    assert plist["StartCalendarInterval"] == {"Hour": 9, "Minute": 0}
    assert plist["StandardOutPath"].endswith("/logs/health.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    env.update(HOME=str(tmp_path), MEMLANE_LANG="en", **plist["EnvironmentVariables"])
    env["MEMLANE_DB_PATH"] = str(daemon.db_path)
    out = subprocess.run(plist["ProgramArguments"], cwd=plist["WorkingDirectory"], env=env, capture_output=True,
                         text=True, encoding="utf-8", timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "daemon alive" in out.stdout


def test_degraded_daemon_is_yellow(tmp_path: Path, e5: Any) -> None:
    # A 503 from /health cannot be provoked from outside a healthy daemon; judge the answer's shape.
    cfg = load_config({"HOME": str(tmp_path)})
    db = tmp_path / "memory.db"
    Memory(db, config=cfg, embedder=e5, start_worker=False).close()
    facts = hc.gather(cfg, closed_url(), str(db), 2.0, datetime.now(timezone.utc))
    facts["daemon"] = {"url": "http://127.0.0.1:8086", "alive": True, "http_status": 503, "status": "degraded",
                       "reason": "database locked"}
    checks = hc.assess(facts, "zh")
    assert checks[0].level == "yellow" and "database locked" in checks[0].line("zh") and "降级" in checks[0].line("zh")
    assert hc.worst([c.level for c in checks]) == "yellow"


def test_help_is_in_the_chosen_language(tmp_path: Path) -> None:
    assert "每日健康摘要" in run_check(tmp_path, "zh", "--help").stdout
    assert "daily health summary" in run_check(tmp_path, "en", "--help").stdout
