"""Memory.rename_namespace: every table moves in one transaction; vectors move by delete + reinsert."""

from __future__ import annotations

import pytest

from contract.errors import Conflict, InvalidArgument, NotFound, Unavailable
from memory import Memory


def _count(mem: Memory, table: str, ns: str) -> int:
    return mem.store.reader().execute(f"select count(*) from {table} where namespace = ?", (ns,)).fetchone()[0]


def test_rename_moves_everything_and_recall_follows(mem: Memory) -> None:
    a = mem.remember("Alice moved to Berlin in 2023.", namespace="work", entities=["Alice", "Berlin"])
    assert mem.flush(60)  # embed before the update closes it (see the report: worker/update race)
    mem.update(a["chunk_id"], "Alice moved to Munich in 2024.", namespace="work")
    mem.remember("爱丽丝在柏林的 SAP 工作。", namespace="work")
    mem.relate("Alice", "lives_in", "Munich", namespace="work")
    mem.remember("unrelated note in another namespace", namespace="other")
    assert mem.flush(60)
    mem.recall("where does Alice live?", namespace="work")
    before = {t: _count(mem, t, "work") for t in ("chunks", "entities", "entity_aliases", "relations",
                                                   "recall_log", "chunk_vec")}
    assert before["chunk_vec"] == before["chunks"] == 3 and before["relations"] == 1
    vec_sql = "select rowid, live, lang, embedding from chunk_vec where namespace = ? order by rowid"
    vec_before = mem.store.reader().execute(vec_sql, ("work",)).fetchall()

    out = mem.rename_namespace("work", "job")

    assert out["moved"]["vectors"] == 3 and out["moved"]["chunks"] == 3
    for table, n in before.items():
        assert _count(mem, table, "work") == 0, table
        assert _count(mem, table, "job") == n, table
    assert _count(mem, "chunks", "other") == 1 and _count(mem, "chunk_vec", "other") == 1
    assert mem.store.reader().execute(vec_sql, ("job",)).fetchall() == vec_before  # same rows, flags and bytes
    # The vector lane (a KNN inside the vec0 partition) finds the moved rows under the new name only.
    hits = mem.recall("Where does Alice live now?", namespace="job", lanes=["vector"])["hits"]
    assert hits and "Munich" in hits[0]["content"]
    assert mem.recall("Where does Alice live now?", namespace="work", lanes=["vector"])["hits"] == []
    # History, graph and updates keep working under the new name.
    assert len(mem.history(hits[0]["chunk_id"], namespace="job")["versions"]) == 2
    assert {n["name"] for n in mem.graph_query("Alice", namespace="job")["nodes"]} >= {"Alice", "Munich"}
    mem.update(hits[0]["chunk_id"], "Alice moved to Hamburg in 2025.", namespace="job")


def test_rename_refuses_merge_same_and_missing(mem: Memory) -> None:
    mem.remember("first namespace fact", namespace="a")
    mem.remember("second namespace fact", namespace="b")
    with pytest.raises(Conflict):
        mem.rename_namespace("a", "b")
    with pytest.raises(InvalidArgument):
        mem.rename_namespace("a", "a")
    with pytest.raises(NotFound):
        mem.rename_namespace("nope", "c")
    with pytest.raises(InvalidArgument):
        mem.rename_namespace("a", "bad name!")
    # A refused rename changed nothing.
    assert _count(mem, "chunks", "a") == 1 and _count(mem, "chunks", "b") == 1


def test_rename_is_one_transaction(mem: Memory) -> None:
    """A failure midway (here: a vector row that cannot be reinserted) leaves every table untouched."""
    mem.remember("a fact that will stay where it is", namespace="keep")
    assert mem.flush(60)
    db = mem.store.writer
    # A trigger that fails on the last step of the rename (recall_log) proves the earlier steps roll back.
    mem.recall("fact", namespace="keep")
    with mem.store.atomic() as w:
        w.execute("create trigger t_fail before update on recall_log begin select raise(abort, 'boom'); end")
    try:
        with pytest.raises(Unavailable):
            mem.rename_namespace("keep", "moved")
    finally:
        with mem.store.atomic() as w:
            w.execute("drop trigger t_fail")
    assert _count(mem, "chunks", "keep") == 1 and _count(mem, "chunk_vec", "keep") == 1
    assert _count(mem, "chunks", "moved") == 0 and _count(mem, "chunk_vec", "moved") == 0
    assert db.execute("select count(*) from chunk_vec").fetchone()[0] == 1
