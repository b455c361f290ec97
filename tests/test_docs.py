"""The docs keep up with the code: every table and column in docs/SCHEMA.md, README.md and README.zh.md
with the same structure, every config key in config.toml.example and the README, and every message id the
runbook cites present in i18n_messages.py."""

from __future__ import annotations

import re
import string
import sys
from pathlib import Path

import pytest

import i18n_messages
from config import _CHOICES, Config, load_config
from memory import connect, migrate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_SQL = ROOT / "schema.sql"
SCHEMA_DOC = ROOT / "docs" / "SCHEMA.md"

_CONSTRAINTS = {"primary", "unique", "foreign", "check", "constraint"}
_CREATE = re.compile(
    r"create\s+(virtual\s+)?table\s+(?:if\s+not\s+exists\s+)?[\"`]?(\w+)[\"`]?\s*"
    r"(?:using\s+(\w+)\s*)?\((.*?)\)\s*(?:without\s+rowid\s*)?;",
    re.I | re.S,
)


def _split_top_level(body: str) -> list[str]:
    """Split a column list on the commas that are not inside parentheses, brackets or quotes."""
    items, depth, quote, buf = [], 0, "", ""
    for ch in body:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(buf.strip())
            buf = ""
            continue
        buf += ch
    if buf.strip():
        items.append(buf.strip())
    return items


def parse_schema(sql: str) -> dict[str, list[str]]:
    """{table: [columns]} from schema.sql, virtual tables included (fts5 options and vec0 options skipped)."""
    sql = re.sub(r"--[^\n]*", "", sql)
    tables: dict[str, list[str]] = {}
    for match in _CREATE.finditer(sql):
        _virtual, name, module, body = match.groups()
        columns = []
        for item in _split_top_level(body):
            first = item.split()[0].strip("\"`").lstrip("+")  # vec0 auxiliary columns start with +
            if module and module.lower() == "fts5" and "=" in item:
                continue  # content=, content_rowid=, tokenize=, prefix=
            if "=" in first or first.lower() in _CONSTRAINTS:
                continue  # a vec0 table option, or a table constraint
            columns.append(first)
        tables[name] = columns
    return tables


def doc_sections(text: str) -> dict[str, str]:
    """SCHEMA.md split into `## `name`` sections: {table name: section text}."""
    sections: dict[str, str] = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, rest = part.partition("\n")
        match = re.match(r"`(\w+)`", heading.strip())
        if match:
            sections[match.group(1)] = rest
    return sections


def undocumented(tables: dict[str, list[str]], doc: str) -> list[str]:
    sections = doc_sections(doc)
    missing = []
    for table, columns in tables.items():
        if table not in sections:
            missing.append(table)
            continue
        missing += [f"{table}.{col}" for col in columns if f"`{col}`" not in sections[table]]
    return missing


def test_parser_reads_every_kind_of_table() -> None:
    tables = parse_schema(SCHEMA_SQL.read_text(encoding="utf-8"))
    assert tables["chunks_fts"] == ["content", "tags", "source", "metadata"]
    assert tables["chunks_tri"] == ["content"]
    assert tables["chunk_vec"] == ["namespace", "live", "lang", "embedding"]
    assert tables["entity_aliases"] == ["namespace", "norm", "alias", "entity_id"]  # primary key (...) skipped
    assert "seq" in tables["chunks"] and "forgotten_reason" in tables["chunks"]
    # The check has teeth: a column or a table missing from the doc is reported.
    doc = SCHEMA_DOC.read_text(encoding="utf-8")
    assert undocumented({"chunks": ["no_such_column"], "no_such_table": ["x"]}, doc) == [
        "chunks.no_such_column", "no_such_table"]


def test_schema_doc_mentions_every_table_and_column_of_schema_sql() -> None:
    tables = parse_schema(SCHEMA_SQL.read_text(encoding="utf-8"))
    assert len(tables) >= 10
    assert undocumented(tables, SCHEMA_DOC.read_text(encoding="utf-8")) == []


def test_schema_doc_mentions_every_table_and_column_after_migrations(tmp_path: Path) -> None:
    """Built the way the daemon builds it, so a migration's new table or column is caught too."""
    conn = connect(tmp_path / "m.db")
    try:
        migrate(conn, 384)
        listed = conn.execute("pragma table_list").fetchall()
        virtual = [r[1] for r in listed if r[2] == "virtual"]
        tables: dict[str, list[str]] = {}
        for _schema, name, kind, *_ in listed:
            if _schema != "main" or name.startswith("sqlite_") or kind not in ("table", "virtual"):
                continue
            if any(name.startswith(v + "_") for v in virtual):
                continue  # an FTS5 or vec0 shadow table, owned by its virtual table
            cols = conn.execute(f'pragma table_xinfo("{name}")').fetchall()
            tables[name] = [c[1] for c in cols if c[6] == 0]  # hidden columns (rank, distance, k) aside
    finally:
        conn.close()
    assert {"chunks", "chunk_vec", "chunks_fts", "recall_log"} <= set(tables)
    assert undocumented(tables, SCHEMA_DOC.read_text(encoding="utf-8")) == []


def headings(path: Path) -> list[int]:
    """The level of every Markdown heading, in order, ignoring fenced code blocks."""
    levels, fence = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            if not fence:
                fence = marker
            elif marker == fence:
                fence = ""
            continue
        if not fence and (m := re.match(r"^(#{1,6})\s+\S", line)):
            levels.append(len(m.group(1)))
    return levels


def test_readmes_have_the_same_section_structure() -> None:
    en, zh = headings(ROOT / "README.md"), headings(ROOT / "README.zh.md")
    assert len(en) >= 10, "README.md has too few sections"
    for level in sorted(set(en) | set(zh)):
        assert en.count(level) == zh.count(level), f"different number of level-{level} headings"
    assert en == zh, "README.md and README.zh.md order their sections differently"


def test_heading_parser_ignores_code_fences(tmp_path: Path) -> None:
    sample = tmp_path / "x.md"
    sample.write_text("# A\n```bash\n# not a heading\n```\n## B\n~~~\n### no\n~~~\n### C\n", encoding="utf-8")
    assert headings(sample) == [1, 2, 3]


def config_keys() -> list[str]:
    return [f for f in Config.__dataclass_fields__ if f not in ("source_file", "unknown_env")]


def test_config_example_documents_every_key_and_loads(tmp_path: Path) -> None:
    text = (ROOT / "config.toml.example").read_text(encoding="utf-8")
    missing = [k for k in config_keys() if not re.search(rf"^#?\s*{k}\s*=", text, flags=re.M)]
    assert missing == []
    # Uncommenting every line must give a file that load_config accepts as it stands.
    uncommented = "\n".join(re.sub(r"^#\s?(?=\w+\s*=)", "", line) for line in text.splitlines())
    parsed = tomllib.loads(uncommented)
    assert set(parsed) == set(config_keys())
    path = tmp_path / "config.toml"
    path.write_text(uncommented, encoding="utf-8")
    cfg = load_config({"HOME": str(tmp_path), "MEMLANE_CONFIG": str(path)})
    assert cfg.port == parsed["port"] and cfg.source_file == path
    # As shipped (everything commented out) it changes nothing.
    path.write_text(text, encoding="utf-8")
    assert load_config({"HOME": str(tmp_path), "MEMLANE_CONFIG": str(path)}).port == Config().port


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_readme_configuration_lists_every_key(readme: str) -> None:
    text = (ROOT / readme).read_text(encoding="utf-8")
    assert [k for k in config_keys() if f"`{k}`" not in text] == []


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_readme_names_every_choice_and_the_default_of_a_config_key(readme: str) -> None:
    """A choice the validation table (config._CHOICES) accepts is named where the key is documented."""
    text = (ROOT / readme).read_text(encoding="utf-8")
    example = (ROOT / "config.toml.example").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", text, flags=re.M)}
    for key, choices in _CHOICES.items():
        default = getattr(Config(), key)
        assert [c for c in choices if c and f"`{c}`" not in rows[key]] == [], key
        assert not default or f"`{default}`" in rows[key] or f'`"{default}"`' in rows[key], key
        assert f'# {key} = "{default}"' in example, key


def test_runbook_cites_only_real_message_ids() -> None:
    text = (ROOT / "docs" / "RUNBOOK.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"\(`((?:db|embed|config|arg|nf|conflict|internal|install|server|health|client)\.\w+)`",
                           text))
    assert len(cited) >= 8
    # The client's messages (client.*) live in api/memlane_client.py, which installs without the daemon.
    sys.path.insert(0, str(ROOT / "api"))
    import memlane_client

    messages = {**i18n_messages.MESSAGES, **memlane_client.MESSAGES}
    assert sorted(cited - set(messages)) == []
    # "Exact error text": every literal piece of each cited English message appears as written.
    for msg_id in sorted(cited):
        template = messages[msg_id]["en"]
        pieces = [lit for lit, *_ in string.Formatter().parse(template) if len(lit.strip()) >= 8]
        assert pieces, msg_id
        missing = [lit for lit in pieces if lit not in text]
        assert missing == [], f"{msg_id}: the runbook's text differs from its message table"


def test_one_version_string_everywhere() -> None:
    import memory

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+[^\]]*)\]", changelog, flags=re.M)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert released and released[0] == memory.__version__ == pyproject["project"]["version"]
