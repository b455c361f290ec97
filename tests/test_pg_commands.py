"""The command line and the engine switch on PostgreSQL: the URL selects the engine, the password never
shows, file backups refuse in both languages naming pg_dump, and export reads one snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from config import load_config
from contract.errors import ConfigError
from memory import Memory
from store.util import redact_text, redact_url

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, home: Path, lang: str = "en", **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
    full.update(HOME=str(home), MEMLANE_LANG=lang, **env)
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], cwd=str(ROOT), env=full,
                          capture_output=True, text=True, timeout=300)


def test_redact_url_hides_the_password_and_keeps_libpq_parameters() -> None:
    url = "postgresql://me:s%40cret@db.example:5432/mem?sslmode=require&password=other"
    shown = redact_url(url)
    assert shown == "postgresql://me:***@db.example:5432/mem?sslmode=require&password=***"
    assert "s%40cret" not in redact_text(f"failed for {url} with s@cret", url)
    assert "s@cret" not in redact_text("FATAL: s@cret", url)


def test_the_url_selects_the_engine(tmp_path: Path) -> None:
    url = "postgresql://u:pw@127.0.0.1:5/db"
    assert load_config({"HOME": str(tmp_path), "MEMLANE_DB_URL": url}).engine == "postgres"
    via_db = load_config({"HOME": str(tmp_path)}, overrides={"db_path": url})
    assert via_db.db_url == url and via_db.engine == "postgres" and "pw" not in via_db.db_label()
    # A file on the command line wins over a URL in the environment; without either, SQLite as before.
    assert load_config({"HOME": str(tmp_path), "MEMLANE_DB_URL": url},
                       overrides={"db_path": str(tmp_path / "x.db")}).engine == "sqlite"
    assert load_config({"HOME": str(tmp_path)}).engine == "sqlite"
    with pytest.raises(ConfigError) as ei:
        load_config({"HOME": str(tmp_path), "MEMLANE_DB_URL": "mysql://x"})
    assert "postgresql://" in ei.value.message("en") and "postgresql://" in ei.value.message("zh")


def test_a_wrong_password_is_a_typed_error_without_the_password(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    parts = urlsplit(pg_url)
    bad = pg_url.replace(f":{parts.password}@", ":not-the-password@")
    from contract.errors import Unavailable

    with pytest.raises(Unavailable) as ei:
        Memory(bad, config=cfg, embedder=e5)
    text = ei.value.render("en") + ei.value.render("zh")
    assert "not-the-password" not in text and ":***@" in text


def test_the_search_beam_comes_from_config(tmp_path: Path, pg_url: str, e5) -> None:
    import store.postgres.engine as sp

    with Memory(pg_url, config=load_config({"HOME": str(tmp_path)}), embedder=e5) as m:
        assert m.store.ef_search == sp.EF_SEARCH_MIN
    with Memory(pg_url, config=load_config({"HOME": str(tmp_path), "MEMLANE_PG_EF_SEARCH": "550"}), embedder=e5) as m:
        assert m.store.ef_search == 550


def test_stats_and_path_never_show_the_password(pg_url: str, cfg, e5) -> None:
    with Memory(pg_url, config=cfg, embedder=e5) as m:
        m.remember("a memory on PostgreSQL")
        pw = urlsplit(pg_url).password
        assert pw and pw not in json.dumps(m.stats()) and pw not in str(m.path)


@pytest.mark.parametrize("lang, word", [("en", "pg_dump"), ("zh", "pg_dump")])
def test_file_backup_and_restore_refuse_on_postgres(tmp_path: Path, pg_url: str, lang: str, word: str) -> None:
    pw = urlsplit(pg_url).password
    for cmd in (["backup"], ["restore", str(tmp_path / "x.db")]):
        res = run_cli(*cmd, "--db", pg_url, home=tmp_path, lang=lang)
        assert res.returncode == 1, res.stdout + res.stderr
        assert word in res.stderr and pw not in res.stderr + res.stdout
        assert ("PostgreSQL" in res.stderr) and (("备份" in res.stderr) == (lang == "zh"))


def test_export_on_postgres_matches_the_api_export(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    with Memory(pg_url, config=cfg, embedder=e5) as m:
        m.remember("Alice moved to Berlin", entities=["Alice"])
        m.flush(60)
        want = [json.loads(json.dumps(r)) for r in m.export_records(vectors=True)]
    out = tmp_path / "out.jsonl"
    res = run_cli("export", "--db", pg_url, "--out", str(out), "--vectors", "--quiet", home=tmp_path,
                  MEMLANE_DB_URL=pg_url)
    assert res.returncode == 0, res.stderr
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == want


# ---------------------------------------------------------------- init, health, repair, reembed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_init_creates_then_reports_current_on_postgres(tmp_path: Path, pg_url: str, lang: str) -> None:
    pw = urlsplit(pg_url).password
    first = run_cli("init", "--db", pg_url, home=tmp_path, lang=lang)
    assert first.returncode == 0, first.stderr
    again = run_cli("init", "--db", pg_url, home=tmp_path, lang=lang)
    assert again.returncode == 0, again.stderr
    from store.postgres.db import SCHEMA_VERSION

    word_new, word_same = ("created", "nothing to do") if lang == "en" else ("已创建", "无需操作")
    assert word_new in first.stdout and f"{SCHEMA_VERSION}" in first.stdout and ":***@" in first.stdout
    assert word_same in again.stdout and word_new not in again.stdout
    assert pw not in first.stdout + first.stderr + again.stdout + again.stderr


def test_health_reads_postgres_without_the_password(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    with Memory(pg_url, config=cfg, embedder=e5) as m:
        m.remember("Alice moved to Berlin", entities=["Alice"])
        m.remember("爱丽丝喜欢柏林的冬天")
        assert m.flush(60)
        m.recall("Where does Alice live?")
    res = run_cli("health", "--db", pg_url, "--json", "--url", "http://127.0.0.1:9/", "--timeout", "0.5",
                  home=tmp_path)
    out = json.loads(res.stdout)
    checks = {c["name"]: c for c in out["checks"]}
    assert checks["daemon"]["level"] == "red"  # nothing listens on port 9: exit code 2
    assert res.returncode == 2
    assert checks["database"]["level"] == "green" and "PostgreSQL" in checks["database"]["message"]
    assert checks["quick_check"]["level"] == "green" and checks["vectors"]["level"] == "green"
    db = out["facts"]["db"]
    assert (db["chunks"], db["live_chunks"], db["vectors"], db["pending_embeddings"]) == (2, 2, 2, 0)
    assert db["recall_24h"]["calls"] == 1 and db["engine"] == "postgres"
    assert urlsplit(pg_url).password not in res.stdout + res.stderr
    zh = run_cli("health", "--db", pg_url, "--url", "http://127.0.0.1:9/", "--timeout", "0.5", "--lang", "zh",
                 home=tmp_path)
    assert "数据库" in zh.stdout and "索引均有效" in zh.stdout


def test_health_on_an_empty_postgres_database_says_missing(tmp_path: Path, pg_url: str) -> None:
    res = run_cli("health", "--db", pg_url, "--json", "--url", "http://127.0.0.1:9/", "--timeout", "0.5",
                  home=tmp_path)
    checks = {c["name"]: c for c in json.loads(res.stdout)["checks"]}
    assert checks["database"]["level"] == "red" and checks["database"]["id"] == "health.db_missing"


def test_repair_finds_and_fixes_vector_drift_on_postgres(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    import psycopg

    with Memory(pg_url, config=cfg, embedder=e5) as m:
        ids = [m.remember(t)["chunk_id"] for t in ("Alice moved to Berlin", "Bob likes tea", "Carol runs")]
        assert m.flush(60)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        seqs = [conn.execute("select seq from chunks where id = %s", (i,)).fetchone()[0] for i in ids]
        conn.execute("delete from chunk_vec where seq = %s", (seqs[0],))  # a live memory lost its vector
        conn.execute("update chunk_vec set live = false where seq = %s", (seqs[1],))  # a wrong live flag
    dry = run_cli("repair", "--db", pg_url, "--json", home=tmp_path)
    assert dry.returncode == 0, dry.stderr
    rep = json.loads(dry.stdout)["report"]
    assert (rep["missing_live"], rep["wrong_live"], rep["problems"], rep["table_dim"]) == (1, 1, 2, 384)
    fixed = run_cli("repair", "--db", pg_url, "--json", "--apply", "--embed", home=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["applied"] == {"requeued": 1, "removed": 0, "relived": 1, "table_rebuilt": 0,
                                                   "ctx_requeued": 0, "ctx_removed": 0}
    after = json.loads(run_cli("repair", "--db", pg_url, "--json", home=tmp_path).stdout)["report"]
    assert after["problems"] == 0 and after["vectors"] == 3 and after["queued"] == 0


def test_a_new_dimension_recreates_the_postgres_vector_column_and_index(pg_url: str, cfg, e5) -> None:
    from contract.validate import now_iso
    from store.postgres import derived as pg_derived

    with Memory(pg_url, config=cfg, embedder=e5, start_worker=False) as m:
        m.remember("Alice moved to Berlin")
        assert m.embed_pending() == 1
        with m.store.atomic() as tx:
            assert pg_derived.table_dim(tx) == 384
            assert pg_derived.reset_vectors(tx, 8, now_iso()) == 1
            assert pg_derived.table_dim(tx) == 8
            assert tx.execute("select count(*) from chunk_vec").fetchone()[0] == 0
            (idx,) = tx.execute("select indexdef from pg_indexes where indexname = 'chunk_vec_hnsw'").fetchone()
            assert "hnsw" in idx and "m='32'" in idx.replace(" ", "")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reembed_refuses_while_a_daemon_is_connected_to_postgres(tmp_path: Path, pg_url: str, cfg, e5,
                                                                 lang: str) -> None:
    with Memory(pg_url, config=cfg, embedder=e5) as m:  # a daemon's pool, as far as PostgreSQL can tell
        m.remember("Alice moved to Berlin")
        res = run_cli("reembed", "--db", pg_url, "--force", home=tmp_path, lang=lang)
    assert res.returncode == 1
    assert ("stop every daemon" in res.stderr) if lang == "en" else ("停止该数据库上的所有守护进程" in res.stderr)
    assert urlsplit(pg_url).password not in res.stderr + res.stdout


def test_reembed_on_postgres_embeds_every_version_again(tmp_path: Path, pg_url: str, cfg, e5) -> None:
    import psycopg

    with Memory(pg_url, config=cfg, embedder=e5) as m:
        a = m.remember("The quarterly report is due on Friday.")["chunk_id"]
        m.update(a, "The quarterly report is due on Monday.")
        m.remember("爱丽丝去年搬到了柏林")
        assert m.flush(60)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        before = conn.execute("select max(written_by) from chunk_vec").fetchone()
        conn.execute("update chunk_vec set written_by = 'old'")
    res = run_cli("reembed", "--db", pg_url, "--force", home=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "3" in res.stdout and "done: 3 memories embedded" in res.stdout and before is not None
    with psycopg.connect(pg_url, autocommit=True) as conn:
        n, old = conn.execute("select count(*), count(*) filter (where written_by = 'old') from chunk_vec").fetchone()
        queued = conn.execute("select count(*) from embed_queue").fetchone()[0]
    assert (n, old, queued) == (3, 0, 0)
