"""Secret and personal-data scan for text memlane is asked to store or log.

`scan(text)` finds API keys and tokens, PEM private keys, card numbers, emails, CN mobile numbers and
CN resident ID numbers, and returns their kinds and spans (never their values to callers that log).
`apply(text, mode)` is what `Memory.remember`/`update` call on content: it warns, redacts or rejects by
the `pii` config knob (`secrets`, the default, redacts the credentials of SECRET_KINDS and stores
personal data with a warning; `warn` stores everything with a warning; `redact` redacts every kind;
`reject` refuses any finding); `apply_fields(fields, mode)` does the same for every other text argument (source,
tags, metadata, entity names and aliases, relation ends), walking strings inside lists and dicts.
`scrub(text)` always redacts, and more widely (bearer tokens, any valid phone number); it is used for
anything written to a log, such as recall_log queries.

Libraries do the detecting wherever one fits:
- detect-secrets plugins: vendor keys and tokens (OpenAI, GitHub, AWS, Slack, Stripe, GitLab, ...),
  JWTs (with its structural check) and PEM private-key headers;
- python-stdnum: the Luhn checksum for card numbers and the GB 11643 checksum for CN resident IDs;
- phonenumbers: CN mobile numbers, by its own matcher and number-type metadata.
Hand-written, because none of them covers it:
- emails (none of the three detects emails in free text; the stdlib only parses address headers);
- generic `sk-…` keys: the detect-secrets OpenAI plugin only matches keys carrying OpenAI's
  `T3BlbkFJ` marker, so Anthropic (`sk-ant-…`) and other `sk-` keys would pass;
- the span of a PEM key: the plugin reports only the `BEGIN … PRIVATE KEY` header, and redacting
  the header alone would leave the key material behind (likewise a JWT's signature, which the
  plugin's lazy pattern leaves out of its match);
- the digit-run candidates handed to stdnum (stdnum validates a number, it does not find one).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import i18n_messages
from contract.errors import InvalidArgument

MODES = ("secrets", "warn", "redact", "reject")
KINDS = ("private_key", "api_key", "bearer_token", "jwt", "card_number", "cn_id", "cn_mobile", "phone", "email")
# Credentials: a value that grants access by itself and is never a fact about the user worth recalling.
# Mode `secrets` (the default) redacts these and keeps personal data (a user's own email or phone number
# is often the fact they asked to remember) with a warning.
SECRET_KINDS = frozenset({"private_key", "api_key", "bearer_token", "jwt"})
MAX_SCAN_CHARS = 200_000  # bound the work; memlane's own limits are far below this
MAX_FIELD_NODES = 20_000  # strings, lists and dicts apply_fields walks in one call
MAX_FIELD_WARNINGS = 20

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])")
_SK_KEY = re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,200}")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|---- END SSH2 ENCRYPTED PRIVATE KEY ----")
_PEM_BEGIN = re.compile(r"-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-{4,5}|PuTTY-User-Key-File-2")
# 13-19 digits, optionally grouped by single spaces or dashes, not inside a longer digit run.
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_=+/.-]*")
_CN_ID = re.compile(r"(?<!\d)\d{17}[\dXx](?![\dXx])")
# "Authorization: Bearer <token>": the credential is what follows the scheme. At least 16 characters with a
# digit, so that "the bearer instrument" is prose, not a token.
_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9])bearer\s+((?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,4096})")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]*")
# What every detect-secrets pattern (and _SK_KEY) needs somewhere in a match: a run of 20 token characters
# (`\d` is any script's digit, as in their patterns), or the literal of the few short ones (Slack's xox,
# URL credentials, JWT, npm, private keys). A text with none has no secret, and the plugins, which import
# requests (10 MB), are not loaded for it. tests/test_pii.py generates each pattern's matches to hold this.
_MAYBE_SECRET = re.compile(r"[A-Za-z\d_+/=-]{20,}|(?i:xox|://|eyj|_authtoken|private key|putty-user-key)")
_DIGIT = re.compile(r"\d")  # the candidates of stdnum and phonenumbers are digit runs
# A Chinese mobile number is 11 digits (1[3-9] and nine more), so phonenumbers can find one only in a text
# with at least that many; the digits of its candidates are `\d` too. tests/test_pii.py holds this.
CN_MOBILE_DIGITS = 11
_PRIORITY = {k: i for i, k in enumerate(KINDS)}  # overlapping findings: the more specific kind wins


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


def _secret_plugins() -> list[object]:
    # Imported lazily: detect-secrets pulls in requests, which the daemon does not need at import.
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector

    return [
        OpenAIDetector(), GitHubTokenDetector(), AWSKeyDetector(), SlackDetector(), StripeDetector(),
        GitLabTokenDetector(), DiscordBotTokenDetector(), TelegramBotTokenDetector(), SendGridDetector(),
        PypiTokenDetector(), NpmDetector(), MailchimpDetector(), AzureStorageKeyDetector(),
        BasicAuthDetector(), JwtTokenDetector(),
    ]


def _plugin_spans(plugin: object, text: str) -> Iterator[tuple[int, int]]:
    """Where a plugin's findings are. Plugins report values (sometimes a capture group), not positions,
    so we rerun their own patterns and keep the matches whose text the plugin reported (and thereby
    validated, e.g. the JWT structure check)."""
    values = set(plugin.analyze_string(text))  # type: ignore[attr-defined]
    if not values:
        return
    for regex in plugin.denylist:  # type: ignore[attr-defined]
        for m in regex.finditer(text):
            if m.group(0) in values:
                yield m.span(0)
                continue
            groups = [i for i in range(1, (regex.groups or 0) + 1) if m.group(i) in values]
            if not groups:
                continue
            best = max(groups, key=lambda i: len(m.group(i)))
            # A long group is the secret itself (an assignment's value); a short one is a prefix
            # such as "ghp", and then the whole match is the token.
            yield m.span(best) if len(m.group(best)) >= 16 else m.span(0)


def _secrets(text: str) -> Iterator[Finding]:
    if not _MAYBE_SECRET.search(text):
        return
    # Deferred: heavy, loaded only when a text has that kind of candidate (tests/test_pii.py).
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    for plugin in _secret_plugins():  # cheap, stateless objects; no module-level cache
        kind = "jwt" if isinstance(plugin, JwtTokenDetector) else "api_key"
        for s, e in _plugin_spans(plugin, text):
            if kind == "jwt":
                # The plugin's signature part is lazy (`*?`), so its match stops before the signature.
                tail = _JWT_TAIL.match(text, e)  # always matches (possibly empty)
                e = tail.end() if tail else e
            yield Finding(kind, s, e)
    if any(True for _ in PrivateKeyDetector().analyze_string(text)):
        for m in _PEM_BEGIN.finditer(text):
            end = _PEM_END.search(text, m.end())
            yield Finding("private_key", m.start(), end.end() if end else len(text))
    for m in _SK_KEY.finditer(text):
        yield Finding("api_key", m.start(), m.end())


def _whole_token(text: str, f: Finding) -> Finding:
    """A key pattern of fixed length (ghp_ + 36) must not leave the rest of a longer token behind."""
    tail = _TOKEN_CHARS.match(text, f.end)
    return Finding(f.kind, f.start, tail.end() if tail else f.end)


def _bearers(text: str) -> Iterator[Finding]:
    for m in _BEARER.finditer(text):
        yield Finding("bearer_token", m.start(1), m.end(1))


def _numbers(text: str) -> Iterator[Finding]:
    if not (_CN_ID.search(text) or _CARD.search(text)):
        return
    # Deferred: loaded only when a text has a number candidate (tests/test_pii.py).
    from stdnum import luhn
    from stdnum.cn import ric

    for m in _CN_ID.finditer(text):
        if ric.is_valid(m.group()):
            yield Finding("cn_id", m.start(), m.end())
    for m in _CARD.finditer(text):
        digits = re.sub(r"[ -]", "", m.group())
        if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn.is_valid(digits):
            yield Finding("card_number", m.start(), m.end())


def _phones(text: str) -> Iterator[Finding]:
    if len(_DIGIT.findall(text)) < CN_MOBILE_DIGITS:
        return
    # Deferred: heavy, loaded only when a text has a phone-number candidate (tests/test_pii.py).
    import phonenumbers

    for m in phonenumbers.PhoneNumberMatcher(text, "CN", leniency=phonenumbers.Leniency.VALID, max_tries=200):
        if m.number.country_code == 86 and phonenumbers.number_type(m.number) in (
            phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
        ):
            yield Finding("cn_mobile", m.start, m.end)


def _any_phones(text: str) -> Iterator[Finding]:
    """Every valid phone number: CN and US national formats and any international +number (for logs)."""
    if not _DIGIT.search(text):
        return
    # Deferred: heavy, loaded only when a text has a phone-number candidate (tests/test_pii.py).
    import phonenumbers

    for region in ("CN", "US", "ZZ"):  # ZZ: only numbers written with a +country code
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID, max_tries=200):
            yield Finding("phone", m.start, m.end)


def _emails(text: str) -> Iterator[Finding]:
    for m in _EMAIL.finditer(text):
        yield Finding("email", m.start(), m.end())


def scan(text: str, *, for_log: bool = False) -> list[Finding]:
    """Findings in `text`, ordered by position, without overlaps (the more specific kind wins).

    `for_log` also finds phone numbers of any country (a log keeps no number at all)."""
    if not text:
        return []
    text = text[:MAX_SCAN_CHARS]
    if not _DIGIT.search(text) and "@" not in text and not _MAYBE_SECRET.search(text):
        return []  # every detector needs one of these: a digit (numbers, phones, a bearer token), @, a secret's run
    keys = [_whole_token(text, f) if f.kind == "api_key" else f for f in _secrets(text)]
    found = [*keys, *_bearers(text), *_numbers(text), *_phones(text), *_emails(text)]
    if for_log:
        found += _any_phones(text)
    # A private key or token wins over digits inside it; an ID wins over the phone-like run inside it.
    found.sort(key=lambda f: (_PRIORITY[f.kind], f.start, -(f.end - f.start)))
    kept: list[Finding] = []
    for f in found:
        if all(f.end <= k.start or f.start >= k.end for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: f.start)


def placeholder(kind: str) -> str:
    """What a redacted value is replaced by: language-neutral and stable, so duplicates still match."""
    return f"[redacted:{kind}]"


def redact(text: str, findings: list[Finding] | None = None) -> str:
    findings = scan(text) if findings is None else findings
    out, pos = [], 0
    for f in findings:
        out.append(text[pos:f.start])
        out.append(placeholder(f.kind))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def scrub(text: str) -> str:
    """`text` with every finding replaced, phone numbers of any country too; for logs, which never hold
    a detected secret."""
    return redact(text, scan(text, for_log=True))


def kinds(findings: list[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    return counts


def redacts(mode: str, kind: str) -> bool:
    """Whether `mode` stores a placeholder for a finding of `kind` (reject refuses before asking)."""
    return mode == "redact" or (mode == "secrets" and kind in SECRET_KINDS)


def _warning(mode: str, kind: str, count: int, name: str) -> str:

    msg_id = "data.pii_redacted" if redacts(mode, kind) else "data.pii_found"
    return f"[pii:{kind}] " + i18n_messages.t(msg_id, kind=kind, count=count, name=name)


def _apply_findings(text: str, findings: list[Finding], mode: str) -> str:
    """`text` with the findings that `mode` redacts replaced."""
    return redact(text, [f for f in findings if redacts(mode, f.kind)])


def apply(text: str, mode: str, *, name: str = "content") -> tuple[str, list[str]]:
    """Scan `text` by the `pii` mode: returns (text to store, warnings); reject raises InvalidArgument.

    Each warning names a kind and a count, never the value: `[pii:email] …`.
    """
    findings = scan(text)
    if not findings:
        return text, []
    counts = kinds(findings)
    listed = ", ".join(sorted(counts))
    if mode == "reject":
        raise InvalidArgument("data.pii_rejected", name=name, kinds=listed)
    warnings = [_warning(mode, kind, n, name) for kind, n in sorted(counts.items())]
    return _apply_findings(text, findings, mode), warnings


def apply_fields(fields: dict[str, Any], mode: str) -> tuple[dict[str, Any], list[str]]:
    """`apply` for every string inside `fields` (lists and dicts walked, keys included).

    Returns (fields with the strings to store, warnings); with reject, raises InvalidArgument naming
    the first field found, e.g. `metadata.auth` or `entities[0].aliases[1]`. Values that are not
    strings, lists or dicts are kept as they are. Call it after the arguments are validated, so that
    sizes and depths are already bounded; the walk is bounded again by MAX_FIELD_NODES.
    """
    found: dict[tuple[str, str], int] = {}  # (field, kind) -> count
    budget = [MAX_FIELD_NODES]

    def clean(text: str, where: str) -> str:
        findings = scan(text)
        if not findings:
            return text
        if mode == "reject":
            raise InvalidArgument("data.pii_rejected", name=where, kinds=", ".join(sorted(kinds(findings))))
        for kind, n in kinds(findings).items():
            found[(where, kind)] = found.get((where, kind), 0) + n
        return _apply_findings(text, findings, mode)

    def walk(value: Any, where: str) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise InvalidArgument("arg.too_many", name=where, got=MAX_FIELD_NODES, limit=MAX_FIELD_NODES)
        if isinstance(value, str):
            return clean(value, where)
        if isinstance(value, (list, tuple)):
            return [walk(item, f"{where}[{i}]") for i, item in enumerate(value)]
        if isinstance(value, dict):
            out = {}
            for k, item in value.items():
                # The path names the key in messages, so a secret used as a key is shown redacted.
                shown = redact(k) if isinstance(k, str) else k
                out[clean(k, where) if isinstance(k, str) else k] = walk(item, f"{where}.{shown}")
            return out
        return value

    cleaned = {name: walk(value, name) for name, value in fields.items()}
    warnings = [_warning(mode, kind, n, where[:80]) for (where, kind), n in sorted(found.items())][:MAX_FIELD_WARNINGS]
    return cleaned, warnings
