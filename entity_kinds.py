"""Word classes from the dictionaries already shipped, for telling names from the words around them.

English verbs from CC-CEDICT tell a sentence-initial verb ("Ask Priya", "Met Sam Altman") from the first
word of a name ("Lake Geneva", "Apple Music"): CC-CEDICT glosses a verb as "to X"; those X are the verbs.
Chinese function characters from jieba's dictionary tell a verb glued to a name (谢婷用 Vim: 谢婷 uses
Vim) from the last character of a three-character name (张国立). Each file is read once, lazily (about
0.1 s each), through crosslingual, so no second copy of a dictionary is shipped.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import crosslingual as xl

_VERB_GLOSS = re.compile(r"/to ([a-z]+)(?=[/ ;,(])")
# Irregular past forms of common verbs: an agent's note often starts with one ("Met Sam at...").
IRREGULAR_PAST = {
    "met": "meet", "flew": "fly", "went": "go", "took": "take", "got": "get", "made": "make", "saw": "see",
    "told": "tell", "said": "say", "left": "leave", "came": "come", "gave": "give", "found": "find",
    "kept": "keep", "bought": "buy", "brought": "bring", "sent": "send", "spent": "spend", "built": "build",
    "wrote": "write", "ran": "run", "began": "begin", "chose": "choose", "drove": "drive", "ate": "eat",
    "felt": "feel", "heard": "hear", "held": "hold", "lost": "lose", "paid": "pay", "sold": "sell",
    "thought": "think", "won": "win", "caught": "catch", "taught": "teach", "broke": "break",
    "forgot": "forget", "knew": "know", "spoke": "speak", "stole": "steal", "woke": "wake", "moved": "move",
}

_lock = threading.Lock()
_read: dict[str, frozenset[str]] = {}  # word classes read so far, by name: each file is read once
# A character this frequent in jieba's dictionary, tagged verb, preposition, conjunction, adverb or particle
# (是 797k, 用 77k, 住 30k), is a word of its own after a name far more often than a name's last character
# (立 8k in 张国立, 华 4k in 刘德华).
ZH_FUNCTION_CHAR_MIN_FREQ = 25000
_ZH_FUNCTION_TAGS = ("v", "p", "c", "d", "u", "ul", "uj", "uz", "uv", "ud", "ug")


def _read_once(name: str, path: Path | None, pick: Callable[[str], Iterable[str]]) -> frozenset[str]:
    """The words `pick` finds in the lines of `path`, read on the first call only; empty without the file."""
    with _lock:
        if name not in _read:
            found: set[str] = set()
            if path is not None:
                with path.open(encoding="utf-8") as fh:
                    for line in fh:
                        found.update(pick(line))
            _read[name] = frozenset(found)
    return _read[name]


def english_verbs() -> frozenset[str]:
    """Base forms of the verbs CC-CEDICT glosses ("to ask" → ask); empty without the dictionary."""
    return _read_once("verbs", xl.cedict_path(), _VERB_GLOSS.findall)


def _function_char(line: str) -> tuple[str, ...]:
    parts = line.split()
    if len(parts) == 3 and len(parts[0]) == 1 and parts[2] in _ZH_FUNCTION_TAGS \
            and int(parts[1]) >= ZH_FUNCTION_CHAR_MIN_FREQ:
        return (parts[0],)
    return ()


def zh_function_chars() -> frozenset[str]:
    """Single Chinese characters that are frequent function words or verbs (是, 在, 用, 住); empty
    without jieba's dictionary."""
    return _read_once("zh_function_chars", xl.jieba_dict_path(), _function_char)


def is_verb(word: str, verbs: frozenset[str] | set[str]) -> bool:
    """A verb in any of its forms: Ask, Uses, Prefers, Deploys, Moved, Met, Flew."""
    w = word.casefold()
    forms = [w, IRREGULAR_PAST.get(w, "")]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"),
                     ("d", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 2:
            forms.append(w[: -len(suf)] + rep)
    return any(f in verbs for f in forms if f)
