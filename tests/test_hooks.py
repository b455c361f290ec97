"""The git hooks in .githooks/, run by real git in a temporary repository with a temporary LIVE_ROOT."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import sync_live  # noqa: E402

HOOK_FILES = (
    ".githooks/lib.sh",
    ".githooks/pre-commit",
    ".githooks/post-commit",
    ".githooks/post-merge",
    "scripts/sync_live.py",
    "scripts/lint_staged.py",
    "scripts/_alias.py",
    "i18n_messages.py",
    "pyproject.toml",
)


class Repo:
    """A throwaway repository wired to this checkout's hooks, and a LIVE_ROOT beside it."""

    def __init__(self, base: Path, lang: str = "en") -> None:
        self.path = base / "repo"
        self.live = base / "live"
        home = base / "home"
        home.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LIVE_ROOT": str(self.live),
            "HOOK_PYTHON": sys.executable,
            "MEMLANE_LANG": lang,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
        }
        self.path.mkdir()
        for rel in HOOK_FILES:
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, target)
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.hooksPath", ".githooks")
        self.git("add", "-A")
        # The live installation does not exist yet, so this first commit syncs nothing.
        self.commit("tooling")

    def git(self, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=self.path, env=env or self.env, text=True,
                              capture_output=True, check=check, timeout=300)

    def write(self, rel: str, text: str, executable: bool = False) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if executable:
            target.chmod(0o755)

    def commit(self, message: str, *paths: str, check: bool = True,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        self.git("add", *(paths or ("-A",)))
        return self.git("commit", "-q", "-m", message, check=check, env=env)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").stdout.strip()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root (backups aside) with its bytes and mtime, to prove what did not change."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and sync_live.BACKUP_DIR not in p.parts}


def out(proc: subprocess.CompletedProcess[str]) -> str:
    """What the hooks printed (git hands a hook's stdout to stderr)."""
    return proc.stdout + proc.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


def make_live(repo: Repo) -> None:
    """A live installation as install.sh leaves it: code, a database, a config, a token, docs."""
    live = repo.live
    (live / "scripts").mkdir(parents=True)
    (live / "tests").mkdir()
    (live / "memory.py").write_text("# live memory v0\n")
    (live / "embedder.py").write_text("# live embedder, not in any commit\n")
    (live / "memory.db").write_bytes(b"SQLite format 3\x00 pretend")
    (live / "config.toml").write_text('port = 9999\n')
    (live / "auth_token").write_text("secret\n")
    (live / "README.md").write_text("# live readme\n")
    (live / "tests" / "test_x.py").write_text("# live test\n")
    (live / "scripts" / "old.py").write_text("# removed later\n")


# ---------------------------------------------------------------- post-commit


def test_post_commit_copies_code_and_leaves_everything_else(repo: Repo) -> None:
    make_live(repo)
    before = snapshot(repo.live)
    repo.write("memory.py", "# memory v1\n")
    repo.write("schema.sql", "create table t (a);\n")
    repo.write("scripts/tool.py", "print('tool')\n")
    repo.write("scripts/service/run.sh", "#!/bin/sh\necho hi\n", executable=True)
    repo.write("api/memlane_client.py", "# client\n")
    repo.write("api/tests/test_client.py", "# client test\n")
    repo.write("README.md", "# repo readme\n")
    repo.write("config.toml", "port = 1\n")
    repo.write("tests/test_x.py", "# repo test\n")
    repo.write("docs/gen.py", "# docs helper\n")
    repo.write("conftest.py", "# fixtures\n")
    proc = repo.commit("code and docs")

    live = repo.live
    assert (live / "memory.py").read_text() == "# memory v1\n"
    assert (live / "schema.sql").read_text() == "create table t (a);\n"
    assert (live / "scripts/tool.py").read_text() == "print('tool')\n"
    assert (live / "api/memlane_client.py").read_text() == "# client\n"
    run_sh = live / "scripts/service/run.sh"
    assert run_sh.read_text().startswith("#!/bin/sh") and run_sh.stat().st_mode & stat.S_IXUSR
    for never in ("api/tests/test_client.py", "docs/gen.py", "conftest.py"):
        assert not (live / never).exists(), never
    # The database, config, token, Markdown, tests and files the commit did not touch: byte- and mtime-identical.
    after = snapshot(live)
    for rel in ("memory.db", "config.toml", "auth_token", "README.md", "tests/test_x.py", "embedder.py",
                "scripts/old.py"):
        assert after[rel] == before[rel], rel
    assert "memlane sync: 5 file(s) updated" in out(proc)
    # memory.py and schema.sql are core modules: the daemon must restart to load them.
    assert "restart the daemon" in out(proc) and "memory.py, schema.sql" in out(proc)
    # No temp files left behind by the atomic renames.
    assert not [p for p in live.rglob("*.tmp")]


def test_post_commit_backs_up_what_it_replaces(repo: Repo) -> None:
    make_live(repo)
    repo.write("memory.py", "# memory v1\n")
    repo.write("scripts/new.py", "# new\n")
    repo.commit("v1")
    backups = sorted((repo.live / sync_live.BACKUP_DIR).iterdir())
    assert len(backups) == 1
    folder = backups[0]
    assert folder.name.endswith("-" + repo.head()[:12])
    assert (folder / "memory.py").read_text() == "# live memory v0\n"
    assert not (folder / "scripts/new.py").exists()  # nothing was replaced there, so nothing to back up
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["commit"] == repo.head() and manifest["replaced"] == ["memory.py"]


def test_backups_rotate_keeping_the_last_five(repo: Repo) -> None:
    make_live(repo)
    foreign = repo.live / sync_live.BACKUP_DIR / "my-own-notes"
    foreign.mkdir(parents=True)
    shas = []
    for i in range(1, 8):
        repo.write("memory.py", f"# memory v{i}\n")
        repo.commit(f"v{i}")
        shas.append(repo.head())
    folders = sorted(p for p in (repo.live / sync_live.BACKUP_DIR).iterdir() if p != foreign)
    assert [f.name.rsplit("-", 1)[1] for f in folders] == [s[:12] for s in shas[-5:]]
    # Each backup holds the version the commit replaced: commit v7 replaced v6.
    assert (folders[-1] / "memory.py").read_text() == "# memory v6\n"
    assert (folders[0] / "memory.py").read_text() == "# memory v2\n"
    assert foreign.is_dir()  # folders the hook did not create are never rotated away
    assert (repo.live / "memory.py").read_text() == "# memory v7\n"


def test_skip_sync_leaves_live_alone(repo: Repo) -> None:
    make_live(repo)
    before = snapshot(repo.live)
    repo.write("memory.py", "# memory v1\n")
    proc = repo.commit("wip [skip-sync]")
    assert snapshot(repo.live) == before
    assert not (repo.live / sync_live.BACKUP_DIR).exists()
    assert "[skip-sync]" in out(proc)


def test_skip_sync_message_in_chinese(tmp_path: Path) -> None:
    repo = Repo(tmp_path, lang="zh")
    make_live(repo)
    repo.write("memory.py", "# memory v1\n")
    proc = repo.commit("实验 [skip-sync]")
    assert "保持不变" in out(proc)
    assert (repo.live / "memory.py").read_text() == "# live memory v0\n"


def test_no_live_root_means_silence(repo: Repo) -> None:
    assert not repo.live.exists()
    repo.write("memory.py", "# memory v1\n")
    proc = repo.commit("v1")
    assert proc.stdout == "" and proc.stderr == ""
    assert not repo.live.exists()


def test_unchanged_content_is_not_rewritten(repo: Repo) -> None:
    make_live(repo)
    repo.write("memory.py", "# live memory v0\n")  # the same bytes as the live copy
    repo.write("notes.md", "x\n")
    before = snapshot(repo.live)
    proc = repo.commit("same bytes")
    assert snapshot(repo.live) == before
    assert "nothing copied" in out(proc)


def test_deleted_files_stay_in_live_and_are_named(repo: Repo) -> None:
    make_live(repo)
    repo.write("scripts/old.py", "# removed later\n")
    repo.commit("add old [skip-sync]")
    repo.git("rm", "-q", "scripts/old.py")
    proc = repo.commit("drop old")
    assert (repo.live / "scripts/old.py").exists()
    assert "scripts/old.py" in out(proc)


def test_health_check_runs_from_live_after_sync(repo: Repo) -> None:
    make_live(repo)
    marker = repo.live / "health-ran"
    repo.write("scripts/health_check.py",
               "import pathlib\nimport sys\n\npathlib.Path(__file__).resolve().parent.parent.joinpath('health-ran')"
               ".write_text(' '.join(sys.argv))\nprint('HEALTH LINE')\nsys.exit(2)\n")
    proc = repo.commit("health")
    assert marker.exists()
    assert "HEALTH LINE" in out(proc)
    assert "health check exited with 2" in out(proc)


def test_post_merge_syncs_what_a_merge_brings(repo: Repo) -> None:
    make_live(repo)
    repo.git("checkout", "-q", "-b", "feature")
    quiet = {**repo.env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": "/dev/null"}
    repo.write("validate.py", "# validate v1\n")
    repo.commit("feature work", env=quiet)  # hooks off: the live copy must only change at the merge
    repo.write("api/memlane_client.py", "# client v1\n")
    repo.commit("more feature work", env=quiet)
    repo.git("checkout", "-q", "main")
    assert not (repo.live / "validate.py").exists()
    proc = repo.git("merge", "-q", "--ff-only", "feature")
    assert (repo.live / "validate.py").read_text() == "# validate v1\n"
    assert (repo.live / "api/memlane_client.py").read_text() == "# client v1\n"
    assert "2 file(s) updated" in out(proc)


# ---------------------------------------------------------------- pre-commit


def test_pre_commit_blocks_a_lint_error(repo: Repo) -> None:
    head = repo.head()
    repo.write("scripts/bad.py", "import os\n")  # F401: imported but unused
    proc = repo.commit("bad", check=False)
    assert proc.returncode != 0
    assert "F401" in out(proc)
    assert "ruff found problems" in out(proc) and "ruff check --fix scripts/bad.py" in out(proc)
    assert repo.head() == head
    repo.write("scripts/bad.py", "import os\n\nprint(os.sep)\n")
    assert repo.commit("fixed", check=False).returncode == 0


def test_pre_commit_judges_the_staged_version(repo: Repo) -> None:
    repo.write("tool.py", "import sys\n")
    repo.git("add", "tool.py")
    repo.write("tool.py", "import sys\n\nprint(sys.argv)\n")  # fixed in the worktree, not staged
    proc = repo.git("commit", "-q", "-m", "staged is bad", check=False)
    assert proc.returncode != 0 and "F401" in out(proc)


def test_pre_commit_runs_mypy_on_core_modules(repo: Repo) -> None:
    repo.write("contract/errors.py", 'count: int = "three"\n')
    proc = repo.commit("type error", check=False)
    assert proc.returncode != 0
    assert "mypy found problems" in out(proc) and "ruff check --fix" not in out(proc)
    assert "contract/errors.py" in out(proc)


def test_pre_commit_without_linters_says_so_and_lets_the_commit_through(repo: Repo, tmp_path: Path) -> None:
    path = "/usr/bin:/bin"
    if shutil.which("ruff", path=path) or shutil.which("mypy", path=path):
        pytest.skip("ruff or mypy is installed system-wide")
    wrapper = tmp_path / "python-without-site"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    wrapper.chmod(0o755)
    env = {**repo.env, "HOOK_PYTHON": str(wrapper), "PATH": path}
    repo.write("config.py", "import os\n")  # a lint error no tool is there to see
    proc = repo.commit("no tools", check=False, env=env)
    assert proc.returncode == 0
    assert "ruff is not installed" in out(proc) and "mypy is not installed" in out(proc)


# ---------------------------------------------------------------- pure logic


@pytest.mark.parametrize(("path", "expected"), [
    ("memory.py", True), ("schema.sql", True), ("scripts/x.py", True), ("scripts/service/install.sh", True),
    ("api/memlane_client.py", True), ("README.md", False), ("config.toml", False), ("memory.db", False),
    ("tests/test_x.py", False), ("api/tests/test_c.py", False), ("scripts/test_x.py", False),
    ("conftest.py", False), ("docs/x.py", False), (".githooks/x.sh", False), ("dashboard/app.py", False),
    ("cli.py", True), ("commands/backup.py", True), ("commands/tests/test_x.py", False), ("memlane", True),
    ("scripts/memlane", False), ("Makefile", False), ("store/sqlite/engine.py", True), ("recall/lanes.py", True),
    ("lang/crosslingual.py", True), ("contract/errors.py", True), ("ingest/threads.py", True),
    ("server/dashboard.py", True), ("devtools/benchmark.py", True),
])
def test_is_syncable(path: str, expected: bool) -> None:
    assert sync_live.is_syncable(path) is expected


def test_pre_commit_type_checks_the_same_modules_as_make_lint() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    import lint_staged

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = next(ln for ln in makefile.splitlines() if "-m mypy" in ln)
    assert set(line.split("-m mypy", 1)[1].split()) == set(lint_staged.CORE_MODULES)
