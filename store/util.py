"""Small helpers every engine shares: opaque ids, content hashes, LIKE and FTS quoting."""

from __future__ import annotations

import hashlib
import secrets
import time
import unicodedata
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit


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


PG_SCHEMES = ("postgresql://", "postgres://")


def is_pg_url(value: object) -> bool:
    """True when `value` is a PostgreSQL connection URL (it selects the PostgreSQL engine)."""
    return isinstance(value, str) and value.strip().lower().startswith(PG_SCHEMES)


def redact_url(url: str) -> str:
    """A connection URL fit for logs, /health, errors and the dashboard: the password shown as `***`.

    Covers the password in the authority (user:pw@host) and a `password=` query parameter; the other
    libpq parameters (sslmode, …) stay visible.
    """

    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        auth, host = netloc.rsplit("@", 1)
        if ":" in auth:
            auth = auth.split(":", 1)[0] + ":***"
        netloc = f"{auth}@{host}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str, url: str) -> str:
    """`text` (a driver's error, say) with the URL's password, wherever it appears, replaced by `***`."""

    parts = urlsplit(url)
    secrets_ = [p for p in (parts.password, unquote(parts.password or "")) if p]
    secrets_ += [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
    for s in sorted(set(secrets_), key=len, reverse=True):
        text = text.replace(s, "***")
    return text
