"""Word classes from the dictionaries already shipped, for telling names from the words around them.

English verbs from CC-CEDICT tell a sentence-initial verb ("Ask Priya", "Met Sam Altman") from the first
word of a name ("Lake Geneva", "Apple Music"): CC-CEDICT glosses a verb as "to X"; those X are the verbs.
Chinese function characters from jieba's dictionary tell a verb glued to a name (谢婷用 Vim: 谢婷 uses
Vim) from the last character of a three-character name (张国立). CC-CEDICT's ordinary words and surnames
tell a word jieba tags as a person from a name (清仓, 喝咖啡: issue 27). Each file is read once, lazily (0.1-0.3 s
each, by one regex over its text), through lang/cedict.py, so no second copy of a dictionary is shipped.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from lang.cedict import cedict_path, jieba_dict_path

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
_hashed: dict[str, HashedWords] = {}  # the large ones, kept as hashes (HashedWords)


class HashedWords:
    """A large word class for membership tests only, kept as the sorted 64-bit hashes of its words: 8 bytes
    a word instead of about 140 as a frozenset of str (CC-CEDICT's 85k ordinary words: under 1 MB, not 12 MB
    of the daemon's RSS, issue 30). A false "in" needs a collision of Python's 64-bit string hash."""

    __slots__ = ("_keys",)

    def __init__(self, words: Iterable[str]) -> None:
        self._keys = np.unique(np.fromiter((hash(w) for w in words), dtype=np.int64))

    def __contains__(self, word: object) -> bool:
        h = hash(word)
        i = int(np.searchsorted(self._keys, h))
        return i < len(self._keys) and int(self._keys[i]) == h

    def __len__(self) -> int:
        return len(self._keys)
# A character this frequent in jieba's dictionary, tagged verb, preposition, conjunction, adverb or particle
# (是 797k, 用 77k, 住 30k), is a word of its own after a name far more often than a name's last character
# (立 8k in 张国立, 华 4k in 刘德华).
ZH_FUNCTION_CHAR_MIN_FREQ = 25000
# One character, its frequency, and a tag of verb, preposition, conjunction, adverb or particle (not vn).
_ZH_FUNCTION_CHAR = re.compile(r"^(\S) (\d+) (?:v|p|c|d|u[lzjvdg]?)$", re.M)


def _read_once(name: str, path: Path | None, pick: Callable[[str], Iterable[str]]) -> frozenset[str]:
    """The words `pick` finds in the text of `path`, read on the first call only; empty without the file.
    One regex over the whole text is several times faster than a loop over its lines (0.3 s, not 1 s, for
    jieba's 349k lines on a busy machine); the text is freed on return."""
    with _lock:
        if name not in _read:
            _read[name] = frozenset(pick(path.read_text(encoding="utf-8"))) if path is not None else frozenset()
    return _read[name]


def english_verbs() -> frozenset[str]:
    """Base forms of the verbs CC-CEDICT glosses ("to ask" → ask); empty without the dictionary."""
    return _read_once("verbs", cedict_path(), _VERB_GLOSS.findall)


def _function_chars_in(text: str) -> Iterable[str]:
    return (c for c, freq in _ZH_FUNCTION_CHAR.findall(text) if int(freq) >= ZH_FUNCTION_CHAR_MIN_FREQ)


def zh_function_chars() -> frozenset[str]:
    """Single Chinese characters that are frequent function words or verbs (是, 在, 用, 住); empty
    without jieba's dictionary."""
    return _read_once("zh_function_chars", jieba_dict_path(), _function_chars_in)


# A CC-CEDICT entry of two or more characters with an all-lowercase reading: an ordinary word (清仓, 咖啡),
# not a name (names are read with capitals: 王磊 [Wang2 Lei3]).
_ZH_ORDINARY = re.compile(r"^\S+ (\S{2,}) \[[^\]A-Z]+\]", re.M)
# A single character CC-CEDICT reads with a capital and glosses as a surname in one of its senses (林, 清).
_ZH_SURNAME = re.compile(r"^\S+ (\S) \[[A-Z][^\]]*\] /(?:[^/\n]*/)*?surname ", re.M)


# A CC-CEDICT entry read as a Chinese person's name: surname and given name each capitalised (李娜
# [Li3 Na4], 周杰伦 [Zhou1 Jie2 lun2]); a brand or thing capitalises its first syllable only (安卓 [An1 zhuo2]).
_ZH_PERSON_READING = re.compile(r"^\S+ (\S{2,3}) \[[A-Z][a-z:]*[1-5] [A-Z][a-z:]*[1-5](?: [a-z:]+[1-5])?\]", re.M)


def _zh_person_classes() -> None:
    """Read CC-CEDICT once for the three classes the person-tag guard asks for together (entity_resolve:
    ordinary words, surnames, names read as a person's): one read of the 9 MB file, not three, and the first
    Chinese name after a start (the warm-up's) pays it for all of them."""
    with _lock:
        if "zh_ordinary_words" in _hashed:
            return
        path = cedict_path()
        text = path.read_text(encoding="utf-8") if path is not None else ""
        _read["zh_surnames"] = frozenset(_ZH_SURNAME.findall(text))
        _read["zh_person_readings"] = frozenset(_ZH_PERSON_READING.findall(text))
        # One match at a time: a list of 85k words would leave its small blocks behind in the heap.
        _hashed["zh_ordinary_words"] = HashedWords(m.group(1) for m in _ZH_ORDINARY.finditer(text))


def zh_person_readings() -> frozenset[str]:
    """Chinese words of two or three characters that CC-CEDICT reads as a person's name (李娜, 周杰伦);
    empty without the dictionary."""
    _zh_person_classes()
    return _read["zh_person_readings"]


def zh_ordinary_words() -> HashedWords:
    """Chinese words of two or more characters that CC-CEDICT lists as ordinary words (lowercase pinyin);
    empty without the dictionary. Kept as hashes (85k words)."""
    _zh_person_classes()
    return _hashed["zh_ordinary_words"]


def zh_surnames() -> frozenset[str]:
    """Single characters that CC-CEDICT glosses as a surname (王, 林, 清); empty without the dictionary."""
    _zh_person_classes()
    return _read["zh_surnames"]


def is_verb(word: str, verbs: frozenset[str] | set[str]) -> bool:
    """A verb in any of its forms: Ask, Uses, Prefers, Deploys, Moved, Met, Flew."""
    w = word.casefold()
    forms = [w, IRREGULAR_PAST.get(w, "")]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"),
                     ("d", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 2:
            forms.append(w[: -len(suf)] + rep)
    return any(f in verbs for f in forms if f)
