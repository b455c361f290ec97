"""PostgreSQL's HNSW index is over halfvec (migration 6): the search walks it, re-ranks by the float32
distance and keeps recall; an existing database at version 5 gets the index rebuilt, as a fresh one has it."""

from __future__ import annotations

from typing import Any

import numpy as np

from commands import bench_engines as be
from store import postgres_db
from store.postgres import EXACT_BELOW, PgStore, ann_sql
from store.protocol import Filter


def _plan(url: str, table: str, sql: str, args: tuple[Any, ...]) -> str:
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        with conn.transaction():
            conn.execute("set local enable_seqscan = off")  # small tables: the question is whether a path exists
            return "\n".join(r[0] for r in conn.execute("explain " + postgres_db.qmark(sql), args))


def test_a_large_namespace_is_searched_through_the_halfvec_index_and_reranked(pg_url: str) -> None:
    n = EXACT_BELOW + 500
    vecs, qs = be.composed(n, 30, 11)
    store, _, _ = be._load_pg(pg_url, vecs, 16, 64, 1)  # the shipped (32, 128) is slower to build, not different
    try:
        flt = Filter(be.NS)
        tops, _ = be._exact(vecs, qs)
        hits = 0
        for q, top in zip(qs, tops, strict=True):
            got = store.nearest(flt, q, be.K)
            assert not got.exact and len(got.rows) == be.K
            dists = [d for _, d, _ in got.rows]
            assert dists == sorted(dists)
            # the distance reported is the float32 one, not the halfvec one the index ordered by
            assert np.allclose(dists, [1 - float(vecs[s - 1] @ q) for s, _, _ in got.rows], atol=1e-5)
            hits += len({s - 1 for s, _, _ in got.rows} & set(top.tolist()))
        assert hits / (be.K * len(qs)) >= 0.95
        where, args = store._where(flt)
        for table in ("chunk_vec", "chunk_ctx_vec"):
            plan = _plan(pg_url, table, ann_sql(table, 384, " and v.live", where),
                         (qs[0], flt.namespace, *args, qs[0], 20))
            assert f"Index Scan using {table}_hnsw" in plan, plan
    finally:
        store.close()


def test_migration_6_rebuilds_both_indexes_over_halfvec(pg_url: str, pg_server: Any, monkeypatch: Any) -> None:
    import psycopg
    from conftest import new_database
    from pgvector.psycopg import register_vector

    with monkeypatch.context() as mp:  # a database as version 5 left it, with a vector in each table
        mp.setattr(postgres_db, "MIGRATIONS", postgres_db.MIGRATIONS[:5])
        mp.setattr(postgres_db, "SCHEMA_VERSION", 5)
        assert postgres_db.migrate(pg_url, 384) == [1, 2, 3, 4, 5]
    v = np.zeros(384, dtype=np.float32)
    v[0] = 1
    with psycopg.connect(pg_url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("insert into chunks(id, namespace, content, content_hash, created_at, valid_from) "
                     "values ('m1', 'default', 'x', 'h', %s, %s)", (be.NOW, be.NOW))
        for table in ("chunk_vec", "chunk_ctx_vec"):
            conn.execute(f"insert into {table}(seq, namespace, live, lang, embedding) values (1, 'default', true, 'en', %s)",
                         (v,))
        before = dict(conn.execute("select indexname, indexdef from pg_indexes where indexname like '%_hnsw'"))
    assert all("vector_cosine_ops" in d for d in before.values()) and len(before) == 2
    assert postgres_db.migrate(pg_url, 384) == [6]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        after = dict(conn.execute("select indexname, indexdef from pg_indexes where indexname like '%_hnsw'"))
        (valid,) = conn.execute("select bool_and(indisvalid) from pg_index i join pg_class c on c.oid = i.indexrelid "
                                "where c.relname like '%_hnsw'").fetchone()
    assert set(after) == set(before) and valid
    assert all("halfvec(384)" in d and "halfvec_cosine_ops" in d and "m='32'" in d.replace(" ", "")
               for d in after.values())
    store = PgStore(pg_url, 384)
    try:
        assert store.migrations_applied == []
    finally:
        store.close()
    fresh = new_database(pg_server)
    postgres_db.migrate(fresh, 384)
    with psycopg.connect(fresh, autocommit=True) as conn:
        made = dict(conn.execute("select indexname, indexdef from pg_indexes where indexname like '%_hnsw'"))
    assert made == after, "upgrading from version 5 differs from a fresh database"
