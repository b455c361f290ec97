"""Optional LLM fact extraction (config extractor = "openai"), off by default.

Sends the content to an OpenAI-compatible chat-completions endpoint the user configured (a local
Ollama or llama.cpp server, or any other), asks for typed atomic facts as JSON, and returns them.
Failures (network, timeout, HTTP error, malformed JSON) are retried with exponential backoff; after
the last attempt the caller falls back to the rule extractor. The memory itself is always stored.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from typing import Any

from config import Config
from lang.facts import MAX_FACTS, Fact

FACT_TYPES = ("fact", "preference", "event", "relationship", "procedure", "decision", "bug", "todo",
              "location", "role", "quantity", "date")
MAX_FACT_CHARS = 1000
BACKOFF_S = 0.2  # first retry delay; doubles each time
MAX_BACKOFF_S = 5.0

PROMPT = (
    "Split the user's note into atomic facts. Each fact is one short standalone sentence in the note's own "
    "language, with pronouns replaced by the names they refer to. Reply with JSON only, exactly: "
    '{"facts": [{"type": "<one of: ' + ", ".join(FACT_TYPES) + '>", "text": "<the fact>"}]}. '
    "If the note holds a single fact, return it as the only item."
)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.M)


class ExtractorError(Exception):
    """The endpoint failed or answered something that is not the facts JSON."""


def parse_facts(body: Any) -> list[Fact]:
    """Facts from a chat-completions response body; raises ExtractorError when malformed."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ExtractorError(f"no message content in the response ({type(exc).__name__})") from exc
    if not isinstance(content, str):
        raise ExtractorError("message content is not text")
    try:
        data = json.loads(_FENCE.sub("", content.strip()))
    except json.JSONDecodeError as exc:
        raise ExtractorError(f"malformed JSON: {exc.msg}") from exc
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ExtractorError("JSON has no 'facts' list")
    out: list[Fact] = []
    for item in items[:MAX_FACTS]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        text = " ".join(item["text"].split())[:MAX_FACT_CHARS]
        kind = str(item.get("type", "fact")).lower()
        if text:
            out.append(Fact(text, (kind if kind in FACT_TYPES else "fact",)))
    return out


def _call(text: str, cfg: Config, environ: Mapping[str, str]) -> list[Fact]:
    # Deferred: only when the LLM extractor is configured.
    import httpx

    headers = {"Content-Type": "application/json"}
    key = environ.get(cfg.extractor_key_env, "") if cfg.extractor_key_env else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    payload = {"model": cfg.extractor_model or "default", "temperature": 0,
               "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": text}]}
    url = cfg.extractor_url.rstrip("/") + "/chat/completions"
    try:
        resp = httpx.post(url, json=payload, headers=headers, timeout=cfg.extractor_timeout_ms / 1000)
    except httpx.TimeoutException as exc:
        raise ExtractorError("timed out") from exc
    except httpx.HTTPError as exc:
        raise ExtractorError(f"{type(exc).__name__}") from exc
    if resp.status_code != 200:
        raise ExtractorError(f"HTTP {resp.status_code}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise ExtractorError("response is not JSON") from exc
    return parse_facts(body)


def extract(text: str, cfg: Config, sleep: Any = time.sleep,
            environ: Mapping[str, str] | None = None) -> tuple[list[Fact] | None, str]:
    """(facts, "") on success; (None, reason) after every attempt failed, so the caller uses rules.

    The API key is read at call time from the variable named by `extractor_key_env` (never stored).
    """
    env = os.environ if environ is None else environ
    reason = ""
    attempts = 1 + max(0, cfg.extractor_retries)
    for attempt in range(attempts):
        try:
            got = _call(text, cfg, env)
            # A single fact equal to the note adds nothing: the memory is that fact already.
            if len(got) == 1 and got[0].text.strip() == text.strip():
                return [], ""
            return got, ""
        except ExtractorError as exc:
            reason = str(exc)
        if attempt + 1 < attempts:
            sleep(min(MAX_BACKOFF_S, BACKOFF_S * (2 ** attempt)))
    return None, reason
