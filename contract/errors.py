"""memlane's typed errors: one base class, one subclass per contract error code.

Each error carries a message id and its parameters, not a rendered string, so that every
adapter (MCP, HTTP, scripts) renders it once, in the daemon's language, in one place.
"""

from __future__ import annotations

from typing import Any

import i18n_messages


class MemlaneError(Exception):
    """Base class of every error memlane raises on purpose."""

    code = "internal"

    def __init__(self, msg_id: str, **params: Any) -> None:
        self.msg_id = msg_id
        self.params = params
        super().__init__(self.render("en"))

    def message(self, lang: str | None = None) -> str:
        """The human message in `lang` (the process locale when None), without the code."""
        return i18n_messages.t(self.msg_id, lang, **self.params)

    def render(self, lang: str | None = None) -> str:
        """The contract's error text: `[code] message`."""
        return f"[{self.code}] {self.message(lang)}"


class InvalidArgument(MemlaneError):
    """An argument is missing, of the wrong type, or out of range."""

    code = "invalid_argument"


class NotFound(MemlaneError):
    """The id or entity named does not exist in this namespace."""

    code = "not_found"


class TooLarge(MemlaneError):
    """A value exceeds a size limit."""

    code = "too_large"


class Conflict(MemlaneError):
    """The request conflicts with the current state (e.g. updating a closed version)."""

    code = "conflict"


class Unavailable(MemlaneError):
    """A resource is missing or exhausted: disk full, database locked by another daemon, model absent."""

    code = "unavailable"


class Internal(MemlaneError):
    """An unexpected failure; the log has the traceback."""

    code = "internal"


class ConfigError(InvalidArgument):
    """A configuration key is unknown or has a bad value."""


ERROR_CODES = ("invalid_argument", "not_found", "too_large", "conflict", "unavailable", "internal")
