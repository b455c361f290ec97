"""Argument checks shared by every Memory method: types, sizes, encodings, times.

Each function returns the cleaned value or raises a typed error naming the argument. None of them
touches the database.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from datetime import datetime, timezone
from typing import Any

from contract.errors import InvalidArgument, TooLarge
from entity_resolve import strip_controls

# Used with fullmatch: `$` alone also matches before a final newline, so "default\n" would pass.
NAMESPACE_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
ID_MAX_CHARS = 1000  # ids are opaque, but bounded: an unknown one is echoed in not_found
METADATA_MAX_DEPTH = 32  # nesting of metadata objects and lists; JSON parsers recurse per level

# Text that is a test or a greeting rather than a memory; compared after case folding and with
# punctuation and spaces removed. Content made only of punctuation is a placeholder too.
PLACEHOLDERS = frozenset(
    """test testing tests test123 hello hi hey ping pong foo bar baz foobar asdf qwerty lorem loremipsum
    placeholder todo tbd na null none nil undefined nothing sample example dummy xxx abc 123 1234 ok okay
    测试 测试一下 你好 您好 占位 示例 无 空""".split()
)


def now_iso() -> str:
    return to_iso(datetime.now(timezone.utc))


def to_iso(dt: datetime) -> str:
    """Fixed-width UTC ISO-8601, so that stored times compare correctly as text."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds")


def time_arg(value: Any, name: str) -> str | None:
    """An optional ISO-8601 time; a time without a zone is taken as UTC."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return to_iso(value)
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        raise InvalidArgument("arg.time", name=name, got=_show(value))
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidArgument("arg.time", name=name, got=_show(value)) from None
    try:
        return to_iso(parsed)
    except OverflowError:  # 0001-01-01T00:00+14:00 or 9999-12-31T23:59-14:00 has no UTC time
        raise InvalidArgument("arg.time_range", name=name, got=_show(value)) from None


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def type_name(value: Any) -> str:
    return type(value).__name__


def text_arg(value: Any, name: str, limit: int, *, required: bool = True) -> str | None:
    """A string: valid UTF-8, no NUL, controls and bidi marks stripped, trimmed, within `limit`."""
    if value is None:
        if required:
            raise InvalidArgument("arg.required", name=name)
        return None
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidArgument("arg.encoding", name=name) from None
    if not isinstance(value, str):
        raise InvalidArgument("arg.type", name=name, expected="a string", got=type_name(value))
    if "\x00" in value:
        raise InvalidArgument("arg.nul", name=name)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument("arg.encoding", name=name) from None
    cleaned = strip_controls(unicodedata.normalize("NFC", value)).strip()
    if not cleaned:
        if required:
            raise InvalidArgument("arg.empty", name=name)
        return None
    if len(cleaned) > limit:
        raise TooLarge("arg.too_long", name=name, got=len(cleaned), limit=limit)
    return cleaned


def namespace_arg(value: Any) -> str:
    if value is None:
        return "default"
    if not isinstance(value, str) or not NAMESPACE_RE.fullmatch(value):
        raise InvalidArgument("arg.namespace", got=_show(value))
    return value


def int_arg(value: Any, name: str, low: int, high: int, default: int) -> int:
    if value is None:
        return default
    # bool is an int subclass, and 10.0 is not an integer in the contract's sense.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument("arg.type", name=name, expected="an integer", got=_show(value))
    if not low <= value <= high:
        raise InvalidArgument("arg.range", name=name, low=low, high=high, got=value)
    return value


def number_arg(value: Any, name: str, low: float, high: float, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument("arg.type", name=name, expected="a number", got=_show(value))
    if math.isnan(value) or not low <= value <= high:
        raise InvalidArgument("arg.range", name=name, low=low, high=high, got=value)
    return float(value)


def bool_arg(value: Any, name: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidArgument("arg.type", name=name, expected="true or false", got=_show(value))
    return value


def str_list_arg(value: Any, name: str, max_items: int, max_chars: int) -> list[str]:
    """A list of short strings, deduplicated in order."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidArgument("arg.type", name=name, expected="a list of strings", got=type_name(value))
    if len(value) > max_items:
        raise TooLarge("arg.too_many", name=name, got=len(value), limit=max_items)
    out: dict[str, None] = {}
    for item in value:
        cleaned = text_arg(item, name, max_chars)
        assert cleaned is not None
        out.setdefault(cleaned, None)
    return list(out)


def metadata_arg(value: Any, limit: int) -> dict[str, Any]:
    """A JSON object (or a string holding one) of at most `limit` bytes, with no NUL anywhere."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InvalidArgument("arg.metadata_json", detail=str(exc)[:80]) from None
        except RecursionError:
            raise InvalidArgument("arg.metadata_depth", limit=METADATA_MAX_DEPTH) from None
    if not isinstance(value, dict):
        raise InvalidArgument("arg.metadata_json", detail=f"got {type_name(value)}")
    if json_depth(value, METADATA_MAX_DEPTH) > METADATA_MAX_DEPTH:
        raise InvalidArgument("arg.metadata_depth", limit=METADATA_MAX_DEPTH)
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument("arg.metadata_json", detail=str(exc)[:80]) from None
    if "\\u0000" in encoded or "\x00" in encoded:
        raise InvalidArgument("arg.nul", name="metadata")
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidArgument("arg.encoding", name="metadata") from None
    if size > limit:
        raise TooLarge("arg.metadata_size", got=size, limit=limit)
    return value


def json_depth(value: Any, stop: int) -> int:
    """How deeply lists and dicts nest in `value` (a scalar is 0), without recursion; stops past `stop`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, (list, tuple)):
            continue
        deepest = max(deepest, depth)
        if deepest > stop:
            return deepest
        stack.extend((child, depth + 1) for child in item)
    return deepest


def id_arg(value: Any, name: str = "id") -> str:
    if value is None:
        raise InvalidArgument("arg.required", name=name)
    if not isinstance(value, str):
        raise InvalidArgument("arg.type", name=name, expected="a string", got=type_name(value))
    # Ids are opaque (contract v2): any other string is simply an id that was never issued, so the
    # lookup answers not_found; only empty, NUL-bearing and absurdly long strings are refused here.
    if not value.strip():
        raise InvalidArgument("arg.empty", name=name)
    if "\x00" in value:  # no engine can hold it (PostgreSQL text refuses NUL), so no id has one
        raise InvalidArgument("arg.nul", name=name)
    if len(value) > ID_MAX_CHARS:  # far longer than any id issued; it would fill the not_found message
        raise TooLarge("arg.too_long", name=name, got=len(value), limit=ID_MAX_CHARS)
    return value


def choice_arg(value: Any, name: str, allowed: tuple[str, ...], default: str) -> str:
    """One of `allowed` (a string), or `default` when absent."""
    if value is None:
        return default
    if not isinstance(value, str) or value not in allowed:
        raise InvalidArgument("arg.choice", name=name, allowed=", ".join(allowed), got=_show(value))
    return value


def is_placeholder(text: str) -> bool:
    """True for 'test', 'hello', '?', '...', '测试' and the like: probes, not memories or questions."""
    squashed = "".join(ch for ch in text.casefold() if ch.isalnum())
    return not squashed or squashed in PLACEHOLDERS


def entities_arg(entities: Any, max_entities: int, name_chars: int = 200) -> list[tuple[str, str | None, list[str]]]:
    """memory_remember's `entities`: names or {name, kind, aliases}, as (name, kind, aliases)."""
    if entities is None:
        return []
    if not isinstance(entities, (list, tuple)):
        raise InvalidArgument("arg.type", name="entities", expected="a list", got=type_name(entities))
    if len(entities) > max_entities:
        raise TooLarge("arg.too_many", name="entities", got=len(entities), limit=max_entities)
    out: list[tuple[str, str | None, list[str]]] = []
    for item in entities:
        if isinstance(item, str):
            out.append((text_arg(item, "entities[].name", name_chars) or "", None, []))
        elif isinstance(item, dict):
            extra = set(item) - {"name", "kind", "aliases"}
            if extra:
                raise InvalidArgument("arg.unknown", name="entities[]." + sorted(extra)[0],
                                      allowed="name, kind, aliases")
            name = text_arg(item.get("name"), "entities[].name", name_chars) or ""
            kind = text_arg(item.get("kind"), "entities[].kind", 32, required=False)
            aliases = str_list_arg(item.get("aliases"), "entities[].aliases", 32, name_chars)
            out.append((name, kind.lower() if kind else None, aliases))
        else:
            raise InvalidArgument("arg.entity", got=type_name(item))
    return out
