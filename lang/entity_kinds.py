"""English verbs from CC-CEDICT, for telling a sentence-initial verb ("Ask Priya", "Met Sam Altman")
from the first word of a name ("Lake Geneva", "Apple Music").

CC-CEDICT glosses a verb as "to X"; those X are the verbs. The file is read once, lazily (about 0.1 s),
through lang/cedict.py, so no second copy of the dictionary is shipped.
"""

from __future__ import annotations

import re
import threading

from lang.cedict import cedict_path

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
_verbs: frozenset[str] | None = None


def english_verbs() -> frozenset[str]:
    """Base forms of the verbs CC-CEDICT glosses ("to ask" → ask); empty without the dictionary."""
    global _verbs
    with _lock:
        if _verbs is None:
            path = cedict_path()
            found: set[str] = set()
            if path is not None:
                with path.open(encoding="utf-8") as fh:
                    for line in fh:
                        found.update(_VERB_GLOSS.findall(line))
            _verbs = frozenset(found)
    return _verbs


def is_verb(word: str, verbs: frozenset[str] | set[str]) -> bool:
    """A verb in any of its forms: Ask, Uses, Prefers, Deploys, Moved, Met, Flew."""
    w = word.casefold()
    forms = [w, IRREGULAR_PAST.get(w, "")]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"),
                     ("d", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 2:
            forms.append(w[: -len(suf)] + rep)
    return any(f in verbs for f in forms if f)
