"""Small helpers every engine shares: opaque ids, content hashes, LIKE and FTS quoting."""

from __future__ import annotations

import hashlib
import secrets
import time
import unicodedata


def new_id(prefix: str) -> str:
    """Opaque, time-ordered ids: m_ for memories, r_ for relations, e_ for entities."""
    return f"{prefix}_{time.time_ns():x}{secrets.token_hex(4)}"


# Punctuation that may end a memory without changing what it says ("… at 1650." is "… at 1650").
_TRAILING = ".,;:!?。，；：！？、…"


def content_hash(content: str) -> str:
    """The duplicate key of a memory: the same text up to whitespace, case and trailing punctuation."""
    squashed = " ".join(unicodedata.normalize("NFKC", content).casefold().split()).rstrip(_TRAILING + " ")
    return hashlib.sha256(squashed.encode("utf-8")).hexdigest()


def predicate_key(predicate: str) -> str:
    """One spelling per predicate: "works at", "works_at", "Works-At" → "works_at" (中文 kept as written)."""
    text = unicodedata.normalize("NFKC", predicate).casefold().strip()
    return "_".join(text.replace("-", " ").replace("_", " ").split())


def escape_like(text: str) -> str:
    """A LIKE pattern's literal text: `%`, `_` and the escape character itself escaped (escape '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def fts_quote(term: str) -> str:
    """One FTS5 string token: user text can never become FTS syntax."""
    return '"' + term.replace('"', '""') + '"'
