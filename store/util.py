"""Small helpers every engine shares: opaque ids, content hashes, LIKE and FTS quoting."""

from __future__ import annotations

import hashlib
import secrets
import time
import unicodedata


def new_id(prefix: str) -> str:
    """Opaque, time-ordered ids: m_ for memories, r_ for relations, e_ for entities."""
    return f"{prefix}_{time.time_ns():x}{secrets.token_hex(4)}"


def content_hash(content: str) -> str:
    squashed = " ".join(unicodedata.normalize("NFC", content).split())
    return hashlib.sha256(squashed.encode("utf-8")).hexdigest()


def escape_like(text: str) -> str:
    """A LIKE pattern's literal text: `%`, `_` and the escape character itself escaped (escape '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def fts_quote(term: str) -> str:
    """One FTS5 string token: user text can never become FTS syntax."""
    return '"' + term.replace('"', '""') + '"'
