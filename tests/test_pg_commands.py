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
from errors import ConfigError
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
    from errors import Unavailable

    with pytest.raises(Unavailable) as ei:
        Memory(bad, config=cfg, embedder=e5)
    text = ei.value.render("en") + ei.value.render("zh")
    assert "not-the-password" not in text and ":***@" in text


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
