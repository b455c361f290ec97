"""The command line: ./memlane and python cli.py, run for real against SQLite files under tmp_path,
and the old script paths, which must stay aliases of the same commands."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import cli

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "memlane"

# Each old path a user, a service file, a doc or a test calls, and the command it is now.
ALIASES = {
    "backup.py": "backup", "restore.py": "restore", "export_jsonl.py": "export", "import_jsonl.py": "import",
    "import_mcp_memory.py": "import-mcp-memory", "import_holdings.py": "import-holdings",
    "import_identity_facts.py": "import-identity-facts", "init_db.py": "init", "repair_vectors.py": "repair",
    "reembed.py": "reembed", "health_check.py": "health", "benchmark.py": "bench",
    "bench_dashboard.py": "bench dashboard", "bench_recall_latency.py": "bench recall-latency",
    "bench_ann.py": "bench ann", "bench_profile.py": "bench profile", "bench_worker.py": "bench worker",
    "eval_locomo.py": "eval locomo", "eval_bilingual.py": "eval bilingual", "eval_foreign.py": "eval foreign",
    "eval_entities.py": "eval entities",
}


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_") and k not in ("LANG", "LC_ALL")}
    env.update(HOME=str(home), PYTHONIOENCODING="utf-8", MEMLANE_LANG="en")
    env.update(extra)
    return env


def memlane(*args: str, home: Path, via: str = "launcher", **env: str) -> subprocess.CompletedProcess[str]:
    """Run one command the way a user does: ./memlane, python cli.py, or an old scripts/ path."""
    if via == "launcher":
        cmd = [str(LAUNCHER), *args]
    elif via == "cli.py":
        cmd = [sys.executable, str(ROOT / "cli.py"), *args]
    else:
        cmd = [sys.executable, str(ROOT / "scripts" / via), *args]
    return subprocess.run(cmd, env=env_for(home, **env), capture_output=True, text=True, encoding="utf-8",
                          timeout=300, cwd=str(home))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- help and errors


@pytest.mark.parametrize(("env", "words"), [
    ({"MEMLANE_LANG": "en"}, ("usage:", "commands", "show this help and exit", "old script paths")),
    ({"MEMLANE_LANG": "zh"}, ("用法：", "命令", "显示本帮助并退出", "旧的脚本路径")),
    ({"MEMLANE_LANG": "", "LANG": "zh_CN.UTF-8"}, ("用法：", "命令", "旧的脚本路径")),
])
def test_help_lists_every_command_in_the_readers_language(tmp_path: Path, env: dict[str, str],
                                                          words: tuple[str, ...]) -> None:
    for via in ("launcher", "cli.py"):
        proc = memlane("--help", home=tmp_path, via=via, **env)
        assert proc.returncode == 0, proc.stderr
        for word in words:
            assert word in proc.stdout, (via, word)
        listed = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("    ")}
        assert {w.split(" ")[0] for w in cli.COMMANDS} <= listed
        assert "bench dashboard" in proc.stdout and "eval bilingual" in proc.stdout


def test_every_command_has_help_in_both_languages(tmp_path: Path) -> None:
    for words in cli.COMMANDS:
        for lang, usage in (("en", "usage: "), ("zh", "用法：")):
            proc = memlane(*words.split(" "), "--help", home=tmp_path, via="cli.py", MEMLANE_LANG=lang)
            assert proc.returncode == 0, (words, proc.stderr)
            if words != "serve":  # mcp_server.py keeps its own parser
                assert proc.stdout.startswith(f"{usage}memlane {words} "), (words, lang, proc.stdout[:80])


def test_command_descriptions_are_translated(tmp_path: Path) -> None:
    en = memlane("reembed", "--help", home=tmp_path, MEMLANE_LANG="en").stdout
    zh = memlane("reembed", "--help", home=tmp_path, MEMLANE_LANG="zh").stdout
    assert "another embedding model" in en and "re-embed even if the model is unchanged" in en
    assert "向量模型" in zh and "即使模型未变也重新生成向量" in zh


@pytest.mark.parametrize(("lang", "text"), [("en", "unknown command frobnicate"), ("zh", "未知命令 frobnicate")])
def test_an_unknown_command_exits_2_and_names_the_commands(tmp_path: Path, lang: str, text: str) -> None:
    proc = memlane("frobnicate", "--db", "x.db", home=tmp_path, MEMLANE_LANG=lang)
    assert proc.returncode == 2
    assert text in proc.stderr and "backup" in proc.stderr and "eval" in proc.stderr
    assert proc.stdout == "" and not (tmp_path / "x.db").exists()


def test_a_group_needs_its_subcommand(tmp_path: Path) -> None:
    proc = memlane("eval", home=tmp_path)
    assert proc.returncode == 2 and "eval needs one of: locomo, bilingual" in proc.stderr
    proc = memlane("eval", "--help", home=tmp_path)
    assert proc.returncode == 0 and "eval locomo" in proc.stdout


def test_no_command_prints_the_help_and_exits_2(tmp_path: Path) -> None:
    proc = memlane(home=tmp_path)
    assert proc.returncode == 2 and "memlane" in proc.stderr and "backup" in proc.stderr


def test_a_bad_option_exits_2_from_the_commands_own_parser(tmp_path: Path) -> None:
    proc = memlane("backup", "--no-such-option", home=tmp_path)
    assert proc.returncode == 2 and "memlane backup" in proc.stderr and "--no-such-option" in proc.stderr


def test_serve_runs_the_daemons_own_entry_point(tmp_path: Path) -> None:
    import memory

    proc = memlane("serve", "--version", home=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"memlane {memory.__version__}"


def test_the_launcher_works_through_a_symlink(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "memlane").symlink_to(LAUNCHER)
    proc = subprocess.run([str(bin_dir / "memlane"), "--help"], env=env_for(tmp_path), capture_output=True,
                          text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 0 and "import-identity-facts" in proc.stdout


# ---------------------------------------------------------------- the data commands on a real file


def test_init_import_export_backup_restore_repair_health(tmp_path: Path) -> None:
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    first = memlane("init", "--db", str(db), home=tmp_path)
    assert first.returncode == 0 and first.stdout.startswith(f"created {db}"), first.stderr
    again = memlane("init", "--db", str(db), home=tmp_path, via="cli.py")
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.stderr

    facts = tmp_path / "facts.txt"
    facts.write_text("name: Alice Example\n# a comment\n生日：1990-05-01\n", encoding="utf-8")
    imported = memlane("import-identity-facts", str(facts), "--db", str(db), home=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith("2 stored, 0 already present"), imported.stdout

    out = tmp_path / "a.jsonl"
    exported = memlane("export", "--db", str(db), "--out", str(out), "--quiet", home=tmp_path)
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    chunks = sorted(r["content"] for r in records if r["type"] == "chunk")
    assert chunks == ["name: Alice Example", "生日：1990-05-01"]

    loaded = memlane("import", str(out), "--db", str(copy), "--quiet", home=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    twice = memlane("import", str(out), "--db", str(copy), "--quiet", home=tmp_path, via="cli.py")
    assert twice.returncode == 0, twice.stderr
    out2 = tmp_path / "b.jsonl"
    assert memlane("export", "--db", str(copy), "--out", str(out2), "--quiet", home=tmp_path).returncode == 0
    assert sorted(json.loads(x)["content"] for x in out2.read_text(encoding="utf-8").splitlines()
                  if json.loads(x)["type"] == "chunk") == chunks  # the second import added nothing

    backup = memlane("backup", "--db", str(db), "--dest", str(tmp_path / "bk"), home=tmp_path)
    assert backup.returncode == 0 and "quick_check ok" in backup.stdout, backup.stderr
    taken = next((tmp_path / "bk").glob("*.db"))
    restored = memlane("restore", str(taken), "--db", str(copy), home=tmp_path)
    assert restored.returncode == 0, restored.stderr
    exported = memlane("export", "--db", str(copy), "--out", "-", "--quiet", home=tmp_path)
    assert sorted(json.loads(x)["content"] for x in exported.stdout.splitlines()
                  if json.loads(x)["type"] == "chunk") == chunks

    repair = memlane("repair", "--db", str(db), "--json", home=tmp_path)
    assert repair.returncode == 0, repair.stderr
    assert json.loads(repair.stdout)["applied"] is None

    before = digest(db)
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there: the daemon is down
    health = memlane("health", "--db", str(db), "--url", url, "--json", "--timeout", "1", home=tmp_path)
    assert health.returncode == 2, health.stderr  # red: no daemon
    report = json.loads(health.stdout)
    assert report["facts"]["daemon"]["alive"] is False
    assert report["facts"]["db"]["chunks"] == 2
    assert digest(db) == before  # read-only: the check wrote nothing


def test_a_missing_database_is_one_line_and_exit_1(tmp_path: Path) -> None:
    for via in ("launcher", "export_jsonl.py"):
        proc = memlane("export", "--db", str(tmp_path / "none.db"), home=tmp_path) if via == "launcher" else \
            memlane("--db", str(tmp_path / "none.db"), home=tmp_path, via=via)
        assert proc.returncode == 1, (via, proc.stderr)
        assert proc.stderr.startswith("[unavailable]") and len(proc.stderr.strip().splitlines()) == 1
        assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- the old paths


@pytest.mark.parametrize("script", sorted(ALIASES))
def test_every_old_script_path_is_an_alias(tmp_path: Path, script: str) -> None:
    path = ROOT / "scripts" / script
    code = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert len(code) <= 6 and "import _alias" in code, code  # thin: the command lives in commands/
    old = memlane("--help", home=tmp_path, via=script)
    assert old.returncode == 0, old.stderr
    new = memlane(*ALIASES[script].split(" "), "--help", home=tmp_path)
    assert old.stdout == new.stdout and old.stdout.startswith(f"usage: memlane {ALIASES[script]} ")


def test_the_alias_table_covers_every_command_but_the_new_ones() -> None:
    # serve is mcp_server.py itself; clients, dashboard-link, token, bench halfvec, bench ab and purge are new,
    # with no old script path
    assert set(cli.COMMANDS) - set(ALIASES.values()) == {"serve", "clients", "dashboard-link", "token", "bench halfvec",
                                                         "bench ab", "purge"}


def test_no_script_or_command_edits_sys_path_but_the_shim() -> None:
    offenders = []
    for path in [*(ROOT / "scripts").glob("*.py"), *(ROOT / "commands").glob("*.py"), ROOT / "cli.py"]:
        text = path.read_text(encoding="utf-8")
        if "sys.path.insert" in text and path.name not in ("_alias.py", "bench_recall_latency.py"):
            offenders.append(path.name)
    assert offenders == []
