"""Keep a live installation (LIVE_ROOT, default ~/.memlane) in step with the repository.

Called by .githooks/post-commit (and post-merge). It copies the code files a commit changed (.py, .sql,
.sh at the top level, under scripts/ and under api/) to the same places under LIVE_ROOT, after
backing up each live file it replaces in LIVE_ROOT/.sync-backups/<time>-<sha>/ (the last 5 are kept).
Each file is replaced by an atomic rename. It never writes the database, config.toml, Markdown or
tests, and when LIVE_ROOT does not exist it does nothing and prints nothing.

    python scripts/sync_live.py                  # the commit at HEAD
    python scripts/sync_live.py --rev abc123     # one commit again
    python scripts/sync_live.py --since ORIG_HEAD  # everything a merge or pull brought in
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import _alias  # noqa: F401 - puts the checkout's root on sys.path

from i18n_messages import t

SYNC_SUFFIXES = (".py", ".sql", ".sh")
# Besides the top level; mapped to the same relative place.
SYNC_DIRS = ("scripts", "api", "commands", "store", "recall", "lang", "contract", "ingest", "server", "devtools")
# What the daemon never imports: changing these needs no restart.
NOT_DAEMON = ("scripts", "api", "commands", "devtools")
SYNC_NAMES = ("memlane",)  # top-level files without a suffix: the command-line launcher
BACKUP_DIR = ".sync-backups"
KEEP_BACKUPS = 5
SKIP_MARK = "[skip-sync]"
HEALTH_CHECK = "scripts/health_check.py"
HEALTH_TIMEOUT_S = 120
# Backup folder names: <UTC time to the microsecond>-<short sha>[-n]; only folders named so are ever rotated away.
_BACKUP_NAME = re.compile(r"^\d{8}T\d{6}(\.\d{6})?Z-[0-9a-f]{7,40}(-\d+)?$")
# Restart commands per platform (the service names install.sh registers).
RESTART_COMMANDS = {
    "linux": "systemctl --user restart memlane.service",
    "darwin": "launchctl kickstart -k gui/$(id -u)/ai.memlane.mcp",
}
RESTART_FALLBACK = "stop the daemon (Ctrl-C) and start it again: python mcp_server.py"


@dataclass
class SyncResult:
    """What one sync did; `main` turns it into messages."""

    copied: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    backup: Path | None = None
    skipped: bool = False

    @property
    def restart_needed(self) -> list[str]:
        """Modules the daemon imports at start: changing one needs a restart."""
        return [p for p in self.copied if p.endswith((".py", ".sql")) and p.split("/", 1)[0] not in NOT_DAEMON]


def is_syncable(path: str) -> bool:
    """True for code the live installation runs: .py/.sql/.sh at the top level or in one of SYNC_DIRS,
    and the ./memlane launcher."""
    p = PurePosixPath(path)
    if path in SYNC_NAMES:
        return True
    if p.suffix not in SYNC_SUFFIXES:
        return False
    parts = p.parts
    if len(parts) > 1 and parts[0] not in SYNC_DIRS:
        return False
    if any(part in ("tests", "test") or part.startswith(".") for part in parts[:-1]):
        return False
    name = p.name
    return not (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True).stdout


def commit_message(repo: Path, rev: str) -> str:
    return git(repo, "log", "-1", "--format=%B", rev).decode("utf-8", "replace")


def changed_paths(repo: Path, rev: str, since: str | None = None) -> tuple[list[str], list[str]]:
    """(added or modified paths, deleted paths) of `rev` against its first parent, or against `since`."""
    if since:
        out = git(repo, "diff", "--name-status", "--no-renames", "-z", since, rev)
    elif len(git(repo, "rev-list", "--parents", "-n", "1", rev).split()) > 1:
        out = git(repo, "diff", "--name-status", "--no-renames", "-z", f"{rev}^1", rev)
    else:  # the root commit
        out = git(repo, "diff-tree", "--root", "-r", "--no-commit-id", "--name-status", "--no-renames", "-z", rev)
    tokens = [tok.decode("utf-8", "surrogateescape") for tok in out.split(b"\0") if tok]
    changed: list[str] = []
    deleted: list[str] = []
    for status, path in zip(tokens[0::2], tokens[1::2], strict=True):
        (deleted if status.startswith("D") else changed).append(path)
    return changed, deleted


def tree_entries(repo: Path, rev: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob sha) in `rev`, for regular files only."""
    if not paths:
        return {}
    out = git(repo, "ls-tree", "-r", "-z", rev, "--", *paths)
    entries = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, name = rec.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob" and mode in ("100644", "100755"):
            entries[name.decode("utf-8", "surrogateescape")] = (mode, sha)
    return entries


def atomic_write(dest: Path, data: bytes, mode: int) -> None:
    """Write beside the target, fsync, then rename over it: readers see the old or the new file, never half."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.sync-{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()


def rotate_backups(backup_root: Path, keep: int = KEEP_BACKUPS) -> list[Path]:
    """Remove all but the newest `keep` backup folders; returns those removed."""
    if not backup_root.is_dir():
        return []
    folders = sorted(p for p in backup_root.iterdir() if p.is_dir() and _BACKUP_NAME.match(p.name))
    doomed = folders[: max(0, len(folders) - keep)]
    for folder in doomed:
        shutil.rmtree(folder)
    return doomed


def _new_backup_dir(backup_root: Path, sha: str, now: float) -> Path:
    # Microseconds keep the names in commit order when several syncs happen within one second.
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now * 1e6) % 1_000_000:06d}Z"
    base = f"{stamp}-{sha[:12]}"
    candidate, n = backup_root / base, 1
    while candidate.exists():
        n += 1
        candidate = backup_root / f"{base}-{n}"
    return candidate


def sync(repo: Path, live_root: Path, rev: str = "HEAD", since: str | None = None,
         keep: int = KEEP_BACKUPS, now: float | None = None) -> SyncResult:
    """Copy the syncable files changed by `rev` (or since `since`) into `live_root`, with backups."""
    result = SyncResult()
    if SKIP_MARK in commit_message(repo, rev):
        result.skipped = True
        return result
    sha = git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()
    changed, deleted = changed_paths(repo, rev, since)
    result.deleted = [p for p in deleted if is_syncable(p)]
    wanted = [p for p in changed if is_syncable(p)]
    entries = tree_entries(repo, sha, wanted)
    live = live_root.resolve()
    backup_root = live / BACKUP_DIR
    backup_dir: Path | None = None
    for path in wanted:
        if path not in entries:
            continue  # a symlink or submodule: not ours to copy
        mode, blob = entries[path]
        dest = live / path
        try:
            if not dest.parent.resolve().is_relative_to(live) or dest.parent.resolve().is_relative_to(backup_root):
                raise OSError("the target is outside LIVE_ROOT")
            data = git(repo, "cat-file", "blob", blob)
            if dest.is_file() and dest.read_bytes() == data:
                result.unchanged.append(path)
                continue
            if dest.exists() and not dest.is_file():
                raise OSError("the target exists and is not a file")
            if dest.is_file():
                if backup_dir is None:
                    backup_dir = _new_backup_dir(backup_root, sha, time.time() if now is None else now)
                saved = backup_dir / path
                saved.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(dest, saved)
                file_mode = dest.stat().st_mode & 0o777
            else:
                file_mode = 0o644
            if mode == "100755":
                file_mode |= 0o755
            atomic_write(dest, data, file_mode)
            result.copied.append(path)
        except (OSError, subprocess.CalledProcessError) as exc:
            result.failed.append((path, str(exc)[:200]))
    if backup_dir is not None:
        backup_dir.mkdir(parents=True, exist_ok=True)
        manifest = {"commit": sha, "since": since, "replaced": [p for p in result.copied if (backup_dir / p).exists()]}
        (backup_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        result.backup = backup_dir
        rotate_backups(backup_root, keep)
    return result


def restart_command() -> str:
    return RESTART_COMMANDS.get(sys.platform, RESTART_FALLBACK)


def run_health_check(live_root: Path) -> int | None:
    """Run the live copy of the health check, if there is one; returns its exit code (None: not run)."""
    script = live_root / HEALTH_CHECK
    if not script.is_file():
        return None
    venv_py = live_root / ".venv" / "bin" / "python"
    python = str(venv_py) if venv_py.exists() else sys.executable
    env = dict(os.environ)
    if "MEMLANE_CONFIG" not in env and (live_root / "config.toml").is_file():
        env["MEMLANE_CONFIG"] = str(live_root / "config.toml")
    elif "MEMLANE_DB_PATH" not in env and (live_root / "memory.db").is_file():
        env["MEMLANE_DB_PATH"] = str(live_root / "memory.db")
    try:
        return subprocess.run([python, str(script)], cwd=live_root, env=env, timeout=HEALTH_TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        return 124


def default_live_root(environ: Mapping[str, str]) -> Path:
    raw = environ.get("LIVE_ROOT") or os.path.join(environ.get("HOME") or str(Path.home()), ".memlane")
    return Path(os.path.expanduser(raw))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the commit to sync (default HEAD)")
    parser.add_argument("--since", help="sync every change from this commit to --rev (post-merge uses ORIG_HEAD)")
    parser.add_argument("--live-root", type=Path, help="the live installation (default $LIVE_ROOT or ~/.memlane)")
    parser.add_argument("--keep", type=int, default=KEEP_BACKUPS, help="backup folders to keep (default 5)")
    parser.add_argument("--no-health", action="store_true", help="do not run the health check afterwards")
    args = parser.parse_args(argv)

    live_root = args.live_root or default_live_root(os.environ)
    if not live_root.is_dir():
        return 0  # no live installation: nothing to do, nothing to say
    try:
        repo = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True,
                                   text=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return 0  # not inside a repository: the hook has nothing to compare
    if repo.resolve() == live_root.resolve():
        print(t("install.sync_same_dir", live_root=str(live_root)))
        return 0

    result = sync(repo, live_root, args.rev, args.since, max(1, args.keep))
    if result.skipped:
        print(t("install.sync_skipped", live_root=str(live_root)))
        return 0
    for path, detail in result.failed:
        print(t("install.sync_failed", path=path, detail=detail, rev=args.rev), file=sys.stderr)
    if result.deleted:
        print(t("install.sync_deleted", live_root=str(live_root), files=", ".join(result.deleted)))
    if not result.copied:
        if not result.failed:
            print(t("install.sync_nothing", live_root=str(live_root)))
        return 1 if result.failed else 0
    backup = str(result.backup.relative_to(live_root.resolve())) if result.backup else "-"
    print(t("install.sync_done", count=len(result.copied), live_root=str(live_root), backup=backup))
    if not args.no_health:
        code = run_health_check(live_root)
        if code not in (None, 0):
            print(t("install.sync_health_failed", code=code))
    if result.restart_needed:
        print(t("install.sync_restart", files=", ".join(result.restart_needed), command=restart_command()))
    return 1 if result.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
