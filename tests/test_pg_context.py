"""Context vectors and grounded dates on PostgreSQL: several daemons share `ctx_queue` (each window is
embedded by one of them, once), and migration 4 brings an existing database's windows and dates."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

from ingest import threads as th
from memory import Memory

TURNS = 10  # turns per conversation
THREADS = 3


class _Slow:
    """The real model, recording every text it embeds, a little slower so two daemons share the work."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model, self.dim, self.texts = inner, inner.model, inner.dim, []
        self.lock = threading.Lock()

    def clip(self, text: str, max_tokens: int = 512) -> str:
        return self.inner.clip(text, max_tokens=max_tokens)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.3)
        with self.lock:
            self.texts.extend(texts)
        return self.inner.embed_passages(texts)


def _turn(t: int, i: int) -> str:
    return f"{'Ann' if i % 2 else 'Bo'}: turn {i} of conversation {t} about the {['lake', 'kiln', 'bus'][t]}."


def test_two_daemons_embed_each_context_window_exactly_once(pg_url: str, cfg: Any, e5: Any) -> None:
    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as writer:
        for t in range(THREADS):
            for i in range(TURNS):
                writer.remember(_turn(t, i), thread=f"conv-{t}")
        assert writer.pending_context() == THREADS * TURNS
    clip = lambda text, n: e5.clip(text, max_tokens=n)  # noqa: E731
    want = sorted(th.window_text([_turn(t, j) for j in range(max(0, i - 1), min(TURNS, i + 2))], clip)
                  for t in range(THREADS) for i in range(TURNS))
    a, b = _Slow(e5), _Slow(e5)
    daemons = [Memory(pg_url, config=cfg, embedder=e, start_worker=False) for e in (a, b)]
    try:
        for d in daemons:
            d.start_worker()
        assert all(d.flush(timeout=300) for d in daemons)
        windows = sorted(x for x in a.texts + b.texts if "\n" in x)
        own = [x for x in a.texts + b.texts if "\n" not in x]
        assert windows == want  # every window once, by one daemon or the other
        assert sorted(own) == sorted(_turn(t, i) for t in range(THREADS) for i in range(TURNS))
        assert a.texts and b.texts  # both daemons took a share
        db = daemons[0].store.reader()
        assert db.execute("select count(*) from chunk_ctx_vec where live").fetchone()[0] == THREADS * TURNS
        assert db.execute("select count(*) from ctx_queue").fetchone()[0] == 0
        (vec,) = db.execute("select v.embedding from chunk_ctx_vec v join chunks c on c.seq = v.seq "
                            "where c.content = ?", (_turn(1, 4),)).fetchone()
        expect = e5.embed_passages([th.window_text([_turn(1, 3), _turn(1, 4), _turn(1, 5)], clip)])[0]
        assert np.allclose(np.asarray(vec.to_numpy()), expect, atol=1e-5)
    finally:
        for d in daemons:
            d.close()


def test_a_window_claimed_by_one_daemon_is_not_handed_to_another(pg_url: str, cfg: Any, e5: Any) -> None:
    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as a, \
            Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as b:
        for i in range(3):
            a.remember(_turn(0, i), thread="c")
        a.embed_pending(max_batches=1)  # own vectors only
        mine = a.store.context_queued(2)
        assert len(mine) == 2
        theirs = b.store.context_queued(8)
        assert {s for s, _, _ in theirs}.isdisjoint({s for s, _, _ in mine}) and len(theirs) == 1
        with b.store.atomic() as tx:  # b may not write a window that a holds
            assert b.store.write_contexts(tx, [(s, g, e5.embed_query("x")) for s, g, _ in mine]) == 0
        a.store.context_failed([mine[0][0]], "model gone")  # a gives one back, counted
        again = b.store.context_queued(8)
        assert [s for s, _, _ in again] == [mine[0][0]]
        (attempts, err, by) = a.store.reader().execute("select attempts, last_error, claimed_by from ctx_queue "
                                                       "where chunk_seq = ?", (mine[0][0],)).fetchone()
        assert (attempts, err, by) == (1, "model gone", b.store.instance)
        with a.store.atomic() as tx:
            assert a.store.write_contexts(tx, [(s, g, e5.embed_query("x")) for s, g, _ in mine[1:]]) == 1
    # b closed: its claim went back (a clean stop need not wait for the lease)
    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as c:
        rows = c.store.reader().execute("select claimed_by from ctx_queue").fetchall()
        assert len(rows) == 2 and all(r[0] is None for r in rows)


def _schema(url: str) -> tuple[list[Any], list[Any]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cols = conn.execute("select table_name, column_name, data_type, is_nullable, column_default "
                            "from information_schema.columns where table_schema = 'public' order by 1, 2").fetchall()
        idx = conn.execute("select indexname, indexdef from pg_indexes where schemaname = 'public' "
                           "order by 1").fetchall()
    return cols, idx


def test_migration_4_queues_the_windows_and_grounds_the_dates_of_an_existing_database(
        pg_url: str, pg_server: Any, cfg: Any, e5: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg
    from conftest import new_database

    from store.postgres import db as postgres_db

    with monkeypatch.context() as mp:  # a database as version 3 left it
        mp.setattr(postgres_db, "MIGRATIONS", postgres_db.MIGRATIONS[:3])
        mp.setattr(postgres_db, "SCHEMA_VERSION", 3)
        assert postgres_db.migrate(pg_url, 384) == [1, 2, 3]
    rows = [("m1", "Ann: I went to the pottery class yesterday.", "session", None),
            ("m2", "Bo: how was it?", "session", None),
            ("m3", "Ann: closed turn from last week.", "session", "2023-05-09T00:00:00+00:00"),
            ("m4", "A note written close to the others.", "time", None)]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for n, (cid, text, by, until) in enumerate(rows):
            conn.execute("insert into chunks(id, namespace, content, content_hash, created_at, valid_from, "
                         "valid_until, thread, thread_pos, thread_by) values (%s, 'default', %s, %s, %s, %s, %s, "
                         "%s, %s, %s)", (cid, text, cid, "2023-05-08T13:56:00+00:00", "2023-05-08T13:56:00+00:00",
                                         until, "auto:t" if by != "time" else "auto:u", n, by))
    assert postgres_db.migrate(pg_url, 384) == [4, 5, 6]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        queued = [r[0] for r in conn.execute("select c.id from ctx_queue q join chunks c on c.seq = q.chunk_seq "
                                             "order by 1")]
        dates = dict(conn.execute("select c.id, w.dates from chunks_when w join chunks c on c.seq = w.seq"))
    assert queued == ["m1", "m2"]  # live members of an asserted thread only
    assert dates["m1"].startswith("7 May 2023") and dates["m3"].startswith("week of 1 May 2023")
    assert set(dates) == {"m1", "m3"}
    fresh = new_database(pg_server)
    postgres_db.migrate(fresh, 384)
    assert _schema(pg_url) == _schema(fresh), "upgrading from version 3 differs from a fresh database"


def test_a_new_dimension_recreates_the_context_vector_column_and_index(pg_url: str, cfg: Any, e5: Any) -> None:
    from contract.validate import now_iso
    from store.postgres import derived as pg_derived

    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as m:
        for i in range(2):
            m.remember(_turn(2, i), thread="c")
        m.embed_pending()
        assert m.pending_context() == 0
        with m.store.atomic() as tx:
            assert pg_derived.table_dim(tx, "chunk_ctx_vec") == 384
            pg_derived.reset_vectors(tx, 8, now_iso())
            assert pg_derived.table_dim(tx, "chunk_ctx_vec") == 8
            assert tx.execute("select count(*) from chunk_ctx_vec").fetchone()[0] == 0
            assert tx.execute("select count(*) from ctx_queue").fetchone()[0] == 2
            (idx,) = tx.execute("select indexdef from pg_indexes where indexname = 'chunk_ctx_vec_hnsw'").fetchone()
            assert "hnsw" in idx and "vector_cosine_ops" in idx


def test_a_vector_written_while_a_forget_commits_is_not_live(pg_url: str, cfg: Any, e5: Any) -> None:
    """The embedding worker writes a chunk's vector while a forget of that chunk is not yet committed:
    the write waits for the forget and stores the vector not live. (Before, it read the chunk as live,
    waited on the row only at its insert, and left a live vector: recall returned the forgotten memory;
    seen once in CI on PostgreSQL.)"""
    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as mem:
        cid = mem.remember("Dana drinks green tea every morning.")["chunk_id"]
        [item] = mem.store.queued(8)
        vec = e5.embed_passages([item.content])[0]
        written: list[list[int]] = []

        def write() -> None:
            with mem.store.atomic() as tx:
                written.append(mem.store.write_vectors(tx, [(item, vec)]))

        worker = threading.Thread(target=write)
        with mem.store.atomic():
            mem.forget(cid, reason="test")  # joins this transaction: closed, not yet committed
            worker.start()
            worker.join(1.5)
        worker.join(30)
        assert written == [[item.seq]]
        with mem.store.atomic() as tx:
            live = tx.execute("select live from chunk_vec where seq = ?", (item.seq,)).fetchone()
        assert live == (False,)
        assert cid not in [h["chunk_id"] for h in mem.recall("green tea", lanes=["vector"])["hits"]]


def test_a_provisional_context_vector_written_while_a_forget_commits_is_not_written(
        pg_url: str, cfg: Any, e5: Any) -> None:
    """context_mode "staged": the mean pass writes a window's provisional vector (keeping it queued) while a
    forget of its memory is not yet committed: the write waits for the forget and leaves no vector."""
    import dataclasses

    from ingest import embed_work

    staged = dataclasses.replace(cfg, context_mode="staged")
    with Memory(pg_url, config=staged, embedder=e5, start_worker=False) as mem:
        cids = [mem.remember(_turn(0, i), thread="c")["chunk_id"] for i in range(2)]
        mem.embed_pending(max_batches=1)  # own vectors only
        rows = mem.store.context_queued_vectors(8, unmade=True)
        first = mem.store.chunk_row(None, cids[0], "default")["seq"]
        [(seq, gen, members)] = [r for r in rows if r[0] == first]
        written: list[int] = []

        def write() -> None:
            with mem.store.atomic() as tx:
                written.append(mem.store.write_contexts(tx, [(seq, gen, embed_work.window_mean(members))], keep=True))

        worker = threading.Thread(target=write)
        with mem.store.atomic():
            mem.forget(cids[0], reason="test")  # joins this transaction: closed, not yet committed
            worker.start()
            worker.join(1.5)
            assert worker.is_alive()  # waiting for the forget
        worker.join(30)
        assert written == [0]
        db = mem.store.reader()
        assert db.execute("select count(*) from chunk_ctx_vec where seq = ?", (seq,)).fetchone()[0] == 0
        (by,) = db.execute("select claimed_by from ctx_queue where chunk_seq = ?", (seq,)).fetchone()
        assert by is None  # handed back: the text pass (of any daemon) closes it
        mem.store.release_claims()
        assert mem.flush(timeout=60)
        assert db.execute("select count(*) from chunk_ctx_vec where seq = ? and live", (seq,)).fetchone()[0] == 0
        assert cids[0] not in [h["chunk_id"] for h in mem.recall("turn 0 lake", lanes=["vector"])["hits"]]
