"""The message table: both languages everywhere, the same placeholders, every id used, the locale rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import i18n_messages
from i18n_messages import DEFAULT_LANG, LOCALES, MESSAGES, detect_lang, placeholders, t

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "api"))
import memlane_client  # noqa: E402

# The daemon's table and the client's own (client.*, kept in api/ so the client installs alone): one set of rules.
ALL = {**MESSAGES, **memlane_client.MESSAGES}
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", "tests"}


def code_files() -> list[Path]:
    """The repo's own .py and .sh files, tests excluded (a test using an id is not a use)."""
    out = []
    for path in ROOT.rglob("*"):
        if path.suffix in (".py", ".sh") and path.is_file() and not SKIP_DIRS & set(path.relative_to(ROOT).parts):
            out.append(path)
    return out


def test_there_are_enough_messages() -> None:
    assert len(MESSAGES) >= 30
    assert len(memlane_client.MESSAGES) >= 5


@pytest.mark.parametrize("msg_id", sorted(ALL))
def test_every_id_has_every_language(msg_id: str) -> None:
    entry = ALL[msg_id]
    assert set(entry) == set(LOCALES), f"{msg_id} has {sorted(entry)}, expected {LOCALES}"
    for lang in LOCALES:
        assert entry[lang].strip(), f"{msg_id} is empty in {lang}"


@pytest.mark.parametrize("msg_id", sorted(ALL))
def test_placeholders_are_identical(msg_id: str) -> None:
    entry = ALL[msg_id]
    assert placeholders(entry["zh"]) == placeholders(entry["en"]), msg_id


def test_chinese_texts_are_chinese() -> None:
    # A copied English text in the zh column is a missing translation in disguise.
    han = re.compile(r"[\u4e00-\u9fff]")
    untranslated = [k for k, v in ALL.items() if not han.search(v["zh"]) and v["zh"] != v["en"]]
    same = [k for k, v in ALL.items() if v["zh"] == v["en"] and han.search(v["en"]) is None
            and re.search(r"[A-Za-z]{3,}", v["en"].replace("{", " ").replace("}", " "))]
    assert not untranslated and not same, (untranslated, same)


def test_every_id_is_used_in_the_code() -> None:
    files = code_files()
    py = [p.read_text(encoding="utf-8", errors="replace") for p in files if p.suffix == ".py"]
    sh = [p.read_text(encoding="utf-8", errors="replace") for p in files if p.suffix == ".sh"]
    unused = []
    for msg_id in ALL:
        # In Python a use is the quoted id not followed by ':', so the tables' own keys do not count. Shell scripts pass the bare id (say MSG_ID k=v).
        quoted = re.compile(r"""["']""" + re.escape(msg_id) + r"""["'](?!\s*:)""")
        bare = re.compile(r"(?<![\w.-])" + re.escape(msg_id) + r"(?![\w-])")
        if not any(quoted.search(text) for text in py) and not any(bare.search(text) for text in sh):
            unused.append(msg_id)
    assert not unused, f"message ids defined but used nowhere in the code: {unused}"


def test_the_client_owns_the_client_section_alone() -> None:
    assert all(k.startswith("client.") for k in memlane_client.MESSAGES)
    assert not [k for k in MESSAGES if k.startswith("client.")], "client.* messages belong in api/memlane_client.py"
    assert memlane_client.LOCALES == LOCALES


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "C"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "zh"),
        ({"MEMLANE_LANG": "en", "LC_ALL": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"MEMLANE_LANG": "zh", "LC_ALL": "en_US.UTF-8"}, "zh"),
        ({"MEMLANE_LANG": "de", "LANG": "zh_CN.UTF-8"}, "zh"),
        ({"MEMLANE_LANG": "zh-Hans"}, "zh"),
    ],
)
def test_locale_rule(env: dict[str, str], expected: str) -> None:
    assert detect_lang(env) == expected
    assert memlane_client.detect_lang(env) == expected, "the client must choose the locale the same way"


def test_missing_translation_falls_back_to_english_then_to_the_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MESSAGES, "test.only_en", {"en": "only {x} in English"})
    assert t("test.only_en", "zh", x=1) == "only 1 in English"
    assert t("test.only_en", "en", x=1) == "only 1 in English"
    monkeypatch.setitem(MESSAGES, "test.no_en", {"zh": "只有中文"})
    assert t("test.no_en", "en") == "test.no_en"
    assert t("test.never_defined", "zh") == "test.never_defined"
    # A broken placeholder shows the raw template instead of raising or vanishing.
    assert "only {x} in English" in t("test.only_en", "en")


def test_rendering_in_both_languages() -> None:
    assert t("health.vectors_ok", "en") == "vectors and chunks agree"
    assert t("health.vectors_ok", "zh") == "向量与记忆块一致"
    assert t("health.vectors_ok", "zh_CN.UTF-8") == "向量与记忆块一致"
    assert t("health.vectors_ok", "fr") == t("health.vectors_ok", DEFAULT_LANG)


def test_process_locale_follows_set_lang() -> None:
    try:
        i18n_messages.set_lang("zh")
        assert t("health.vectors_ok") == MESSAGES["health.vectors_ok"]["zh"]
        i18n_messages.set_lang("en")
        assert t("health.vectors_ok") == MESSAGES["health.vectors_ok"]["en"]
    finally:
        i18n_messages.set_lang(None)
