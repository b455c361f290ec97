"""The layout issue 28 settled, held: only the design card's modules at the root, no import cycles, SQL only
inside store/, no function over 80 lines, and every import inside a function says why it is deferred."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The design card's seven, the command line and its launcher (`memlane`, no .py).
ROOT_MODULES = {"memory.py", "mcp_server.py", "config.py", "embedder.py", "entity_resolve.py", "i18n_messages.py",
                "cli.py"}
SKIP = {".git", ".venv", "venv", "build", "dist", "node_modules", "__pycache__", "tests"}
MAX_FUNCTION_LINES = 80


def product_files() -> list[Path]:
    """The repository's own Python files outside tests (and outside any environment or build folder)."""
    return sorted(p for p in ROOT.rglob("*.py") if not SKIP & set(p.relative_to(ROOT).parts))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_only_the_design_cards_modules_sit_at_the_root() -> None:
    assert {p.name for p in ROOT.glob("*.py")} == ROOT_MODULES


def test_no_import_cycles_between_modules() -> None:
    files = {module_name(p): p for p in product_files() if "api" not in p.relative_to(ROOT).parts}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        # Every import, inside functions too: a deferred import still ties the two modules together.
        for imp in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(imp, ast.Import):
                graph[mod].update(a.name for a in imp.names if a.name in files)
            elif isinstance(imp, ast.ImportFrom) and imp.level == 0 and imp.module:
                subs = {f"{imp.module}.{a.name}" for a in imp.names} & files.keys()
                graph[mod].update(subs)
                if len(subs) < len(imp.names) and imp.module in files:
                    graph[mod].add(imp.module)
    cycles = _strongly_connected(graph)
    assert cycles == [], f"import cycles: {cycles}"


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_sql_runs_only_inside_store() -> None:
    call = re.compile(r"\.execute(many|script)?\(")
    outside = [f"{p.relative_to(ROOT)}:{n}" for p in product_files() if p.relative_to(ROOT).parts[0] != "store"
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if call.search(line)]
    assert outside == []


# The stdlib sqlite3 is a second SQLite library beside sqlean, and POSIX locks belong to the process: a
# stdlib connection to a database sqlean has open takes itself for the only one. At open it truncates the
# live -shm file that sqlean's connections have mapped (SIGBUS in the embed worker: stop 40's CI and ci29,
# test_schema_version), and at close it deletes the -wal and -shm. Only these open files memlane never
# shares: the lexicon's own file, and db.py's fallback when sqlean is missing.
STDLIB_SQLITE_ALLOWED = {"store/lexicon_file.py", "store/sqlite/db.py"}


def test_no_memlane_database_is_opened_with_a_second_sqlite_library() -> None:
    stdlib = re.compile(r"^\s*import sqlite3\b|^\s*from sqlite3 import", re.M)
    files = [*product_files(), *sorted((ROOT / "tests").rglob("*.py"))]
    found = [str(p.relative_to(ROOT)) for p in files if stdlib.search(p.read_text(encoding="utf-8"))]
    assert sorted(set(found) - STDLIB_SQLITE_ALLOWED) == []


def test_no_function_is_over_80_lines() -> None:
    long = []
    for path in product_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({size} lines)")
    assert long == []


def test_every_import_inside_a_function_says_why() -> None:
    """A comment on the import's line or within the three lines above it (one comment may cover a block)."""
    silent = []
    for path in product_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            imports = [n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))]
            for imp in imports:
                first = min(i.lineno for i in imports if abs(i.lineno - imp.lineno) <= len(imports))
                context = lines[max(0, first - 4):imp.lineno]
                if not any("#" in line for line in context):
                    silent.append(f"{path.relative_to(ROOT)}:{imp.lineno} {lines[imp.lineno - 1].strip()}")
    assert silent == []
