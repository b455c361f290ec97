"""Lint what is about to be committed: ruff on the staged Python files, mypy on the staged core modules.

Called by .githooks/pre-commit. It checks the staged content (the index), not the working tree, so a
partly staged file is judged by what will be committed. It never imports the project's modules beyond
i18n_messages and never loads a model. A missing tool is reported and skipped, not a failure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import _alias  # noqa: F401 - puts the checkout's root on sys.path

from i18n_messages import t

# The modules `make lint` type-checks; keep the two lists the same.
CORE_MODULES = ("mcp_server.py", "memory.py", "config.py", "embedder.py", "entity_resolve.py", "contract/validate.py",
                "contract/errors.py",
                "i18n_messages.py")
CONFIG_FILES = ("pyproject.toml", "ruff.toml", ".ruff.toml", "mypy.ini", "setup.cfg")
TOOL_TIMEOUT_S = 120


def git(*args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], input=stdin, check=True, capture_output=True).stdout


def staged_python_files() -> list[str]:
    out = git("diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z")
    names = [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]
    return [n for n in names if n.endswith((".py", ".pyi"))]


def export_index(target: Path) -> None:
    """Write the staged version of every Python and lint-config file into `target`."""
    out = git("ls-files", "-z", "--", "*.py", "*.pyi", *CONFIG_FILES)
    if out:
        git("checkout-index", f"--prefix={target}{os.sep}", "-z", "--stdin", stdin=out)


def tool_command(tool: str) -> list[str] | None:
    """`python -m tool` when this Python has it, else the tool on PATH, else None."""
    if importlib.util.find_spec(tool) is not None:
        return [sys.executable, "-m", tool]
    found = shutil.which(tool)
    return [found] if found else None


def run_tool(tool: str, args: list[str], cwd: Path, files: list[str]) -> bool:
    """Run one linter; True when it passed or could not run (then a message says why)."""
    cmd = tool_command(tool)
    if cmd is None:
        print(t("install.lint_missing", tool=tool), file=sys.stderr)
        return True
    try:
        proc = subprocess.run([*cmd, *args, *files], cwd=cwd, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(t("install.lint_timeout", tool=tool, seconds=TOOL_TIMEOUT_S,
                command=" ".join([tool, *args, *files])), file=sys.stderr)
        return True
    if proc.returncode != 0:
        print(t("install.lint_failed", tool=tool, files=", ".join(files)), file=sys.stderr)
        if tool == "ruff":
            print(t("install.lint_ruff_hint", files=" ".join(files)), file=sys.stderr)
        return False
    return True


def main() -> int:
    files = staged_python_files()
    if not files:
        return 0
    repo = Path(git("rev-parse", "--show-toplevel").decode().strip())
    ok = True
    with tempfile.TemporaryDirectory(prefix="memlane-precommit-") as tmp:
        snapshot = Path(tmp)
        export_index(snapshot)
        ok &= run_tool("ruff", ["check", "--quiet", "--no-cache", "--force-exclude", "--output-format", "concise"],
                       snapshot, files)
        core = [f for f in files if f in CORE_MODULES]
        if core:
            # The cache under the repository keeps the stdlib and dependencies warm between commits.
            ok &= run_tool("mypy", ["--cache-dir", str(repo / ".mypy_cache"), "--no-error-summary"], snapshot, core)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
