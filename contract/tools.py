"""The tool contract, written once: every MCP tool, its arguments, limits, defaults and hints.

This table drives the daemon's tool list (mcp_server.py), the argument checks `Memory` runs (`check`),
and is what tests hold the Python client (api/memlane_client.py) and docs/CONTRACT.md to. Descriptions
are brief on purpose: an agent pays for every token of the tool list in every session. What all tools
share (namespace, ids, times, errors) is said once, in the server's instructions.

A limit is a number, or the name of a `Config` field (e.g. "max_tags") when the operator can change it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from contract import validate as v
from ingest.threads import MAX_THREAD_CHARS
from recall.query import LANES
from recall.relevance import MIN_RELEVANCE

NAMESPACE_PATTERN = f"^{v.NAMESPACE_RE.pattern}$"  # contract/validate.py matches it with fullmatch
ENTITY_NAME_CHARS = 200
KIND_CHARS = 32
PREDICATE_CHARS = 128
Limit = int | str  # a number, or a Config field name

# Each kind's JSON schema type; "entities" and "lanes" add their own items.
SCHEMA_TYPES = {"text": "string", "id": "string", "time": "string", "choice": "string", "namespace": "string",
                "int": "integer", "number": "number", "bool": "boolean", "strings": "array", "lanes": "array",
                "entities": "array", "metadata": "object"}


@dataclass(frozen=True)
class Arg:
    """One argument: its JSON type (by `kind`), bounds, the default an omitted value means, and its description."""

    name: str
    kind: str  # a key of SCHEMA_TYPES
    desc: str = ""
    required: bool = False
    default: Any = None  # what leaving it out means; None: nothing (or "unchanged", said in desc)
    low: float | None = None  # int and number
    high: float | None = None
    max_len: Limit | None = None  # text: characters; strings: each item's characters
    max_items: Limit | None = None  # strings, entities
    choices: tuple[str, ...] = ()  # choice

    def limit(self, which: Limit | None, cfg: Any) -> int | None:
        return getattr(cfg, which) if isinstance(which, str) else which

    def check(self, value: Any, cfg: Any, default: Any = None) -> Any:
        """The cleaned value, or the typed error naming this argument (contract/validate.py)."""
        dflt = self.default if default is None else default
        k = self.kind
        if k == "namespace":
            return v.namespace_arg(value)
        if k == "text":
            return v.text_arg(value, self.name, self.limit(self.max_len, cfg) or 0, required=self.required)
        if k == "id":
            return v.id_arg(value, self.name) if value is not None or self.required else None
        if k == "time":
            return v.time_arg(value, self.name)
        if k == "int":
            return v.int_arg(value, self.name, int(self.low or 0), int(self.high or 0), dflt)
        if k == "number":
            return v.number_arg(value, self.name, self.low or 0.0, self.high or 0.0, dflt)
        if k == "bool":
            return v.bool_arg(value, self.name, bool(dflt))
        if k == "choice":
            return v.choice_arg(value, self.name, self.choices, dflt)
        if k == "strings":
            return v.str_list_arg(value, self.name, self.limit(self.max_items, cfg) or 0,
                                  self.limit(self.max_len, cfg) or 0)
        if k == "metadata":
            return v.metadata_arg(value, self.limit(self.max_len, cfg) or 0)
        if k == "entities":
            return v.entities_arg(value, self.limit(self.max_items, cfg) or 0, ENTITY_NAME_CHARS)
        raise AssertionError(f"no check for kind {k}")  # lanes: Memory._lanes_arg

    def schema(self, cfg: Any) -> dict[str, Any]:
        """This argument's JSON schema: type, bounds and default as keywords, so descriptions need not repeat them."""
        out: dict[str, Any] = {"type": SCHEMA_TYPES[self.kind]}
        if self.desc:
            out["description"] = self.desc.format(limit=self.limit(self.max_len, cfg))
        if self.kind == "namespace":
            out["pattern"] = NAMESPACE_PATTERN
        if self.kind == "choice":
            out["enum"] = list(self.choices)
        if self.low is not None:
            out["minimum"], out["maximum"] = self.low, self.high
        if self.kind == "text" and self.max_len is not None:
            out["maxLength"] = self.limit(self.max_len, cfg)
        if self.kind in ("strings", "lanes", "entities"):
            item: dict[str, Any] = {"type": "string"}
            if self.kind == "lanes":
                item["enum"] = list(LANES)
            if self.kind == "entities":
                item = {"anyOf": [item, ENTITY_SCHEMA]}
            out["items"] = item
        if self.max_items is not None:
            out["maxItems"] = self.limit(self.max_items, cfg)
        if self.default is not None:
            out["default"] = self.default
        return out


ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["name"],
    "properties": {"name": {"type": "string"}, "kind": {"type": "string"},
                   "aliases": {"type": "array", "items": {"type": "string"}}},
}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: the `Memory` method it calls, whether it is heavy, and its client hints."""

    name: str
    method: str  # the Memory method, called with the arguments by name
    desc: str
    args: tuple[Arg, ...]
    heavy: bool = False  # recall and graph queries: their cost depends on the query and the data
    read_only: bool = True
    destructive: bool = False  # forget hides a memory (nothing is deleted, but recall stops returning it)
    idempotent: bool = False

    @cached_property  # read on every call
    def arg(self) -> dict[str, Arg]:
        return {a.name: a for a in self.args}

    def check(self, name: str, value: Any, cfg: Any, default: Any = None) -> Any:
        return self.arg[name].check(value, cfg, default)

    def input_schema(self, cfg: Any) -> dict[str, Any]:
        required = [a.name for a in self.args if a.required]
        out: dict[str, Any] = {"type": "object", "properties": {a.name: a.schema(cfg) for a in self.args}}
        if required:
            out["required"] = required
        return out


NAMESPACE = Arg("namespace", "namespace")  # described in the server's instructions
IMPORTANCE = Arg("importance", "number", "Weight.", low=0, high=1, default=0.5)
TAGS = Arg("tags", "strings", "Labels.", max_items="max_tags", max_len="max_tag_chars")
METADATA = Arg("metadata", "metadata", "≤ {limit} bytes of JSON.", max_len="max_metadata_bytes")
SOURCE = Arg("source", "text", "e.g. chat, code.", max_len="max_source_chars")
KIND = "e.g. person, place, org, stock."

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory_remember", "remember",
        "Store a durable fact, preference or decision the user states or asks you to remember. "
        "A repeat returns duplicate_of; to change a fact, use memory_update.",
        (Arg("content", "text", "One self-contained fact: names, not pronouns; absolute dates.", required=True,
             max_len="max_content_chars"),
         NAMESPACE, SOURCE, IMPORTANCE, TAGS,
         Arg("entities", "entities", "What it is about: names or {{name, kind, aliases}}.", max_items="max_entities"),
         METADATA,
         Arg("valid_from", "time", "When it became true; default now."),
         Arg("thread", "text", "Conversation id; inferred if omitted.", max_len=MAX_THREAD_CHARS),
         Arg("wait_embedded", "bool", "Wait for its vector; list near_duplicates.", default=False)),
        read_only=False, idempotent=True),
    ToolSpec(
        "memory_recall", "recall",
        "Search memory before answering about the user, their projects or past work. Best first; relevance 0-1 "
        "means the same everywhere; no hits: nothing relevant stored; status superseded: see superseded_by.",
        (Arg("query", "text", "A short, specific question, any language.", required=True, max_len="max_query_chars"),
         NAMESPACE,
         Arg("top_k", "int", "Most hits.", low=1, high=100, default=10),
         Arg("min_relevance", "number", "Leave out hits below.", low=0, high=1, default=MIN_RELEVANCE),
         Arg("detail", "choice", "Fields per hit.", choices=("brief", "full"), default="brief"),
         Arg("lanes", "lanes", "Default all."),
         Arg("as_of", "time", "What was valid at this time."),
         Arg("include_history", "bool", "Also closed versions.", default=False),
         Arg("source", "text", "Filter.", max_len="max_source_chars"),
         Arg("tags", "strings", "Filter: every tag.", max_items="max_tags", max_len="max_tag_chars"),
         Arg("since", "time", "Created at or after."),
         Arg("until", "time", "Created before.")),
        heavy=True, idempotent=True),
    ToolSpec(
        "memory_relate", "relate",
        "Record subject —predicate→ object (Alice —works_at→ SAP) when the user states a clear link. "
        "Entities match by name or alias; missing ones are created.",
        (Arg("subject", "text", "Name, alias or id.", required=True, max_len=ENTITY_NAME_CHARS),
         Arg("predicate", "text", "e.g. works_at, lives_in.", required=True, max_len=PREDICATE_CHARS),
         Arg("object", "text", "Name, alias or id.", required=True, max_len=ENTITY_NAME_CHARS),
         NAMESPACE,
         Arg("subject_kind", "text", KIND, max_len=KIND_CHARS),
         Arg("object_kind", "text", KIND, max_len=KIND_CHARS),
         Arg("confidence", "number", "How sure.", low=0, high=1, default=1.0),
         Arg("chunk_id", "id", "The evidence memory."),
         Arg("valid_from", "time", "Default now.")),
        read_only=False),
    ToolSpec(
        "memory_forget", "forget",
        "Forget a memory or relation when the user retracts it. Nothing is deleted.",
        (Arg("id", "id", "A chunk or relation id.", required=True),
         NAMESPACE,
         Arg("reason", "text", "Why (kept in history).", max_len=500)),
        read_only=False, destructive=True, idempotent=True),
    ToolSpec(
        "memory_purge", "purge",
        "Erase a memory and all its versions for good, only when the user asks (e.g. a leaked secret). "
        "To retract a fact, use memory_forget.",
        (Arg("id", "id", "Any version's chunk_id.", required=True),
         Arg("confirm", "bool", "Must be true.", required=True),
         NAMESPACE),
        read_only=False, destructive=True),
    ToolSpec(
        "memory_update", "update",
        "Replace a memory with a new version when a stored fact changes; the old one stays in memory_history.",
        (Arg("id", "id", "A memory's chunk_id (not a relation's).", required=True),
         Arg("content", "text", "The corrected memory.", required=True, max_len="max_content_chars"),
         NAMESPACE, SOURCE,
         Arg("importance", "number", "Default unchanged.", low=0, high=1),
         Arg("tags", "strings", "Default unchanged.", max_items="max_tags", max_len="max_tag_chars"),
         Arg("metadata", "metadata", "≤ {limit} bytes of JSON; default unchanged.", max_len="max_metadata_bytes"),
         Arg("valid_from", "time", "Default now."),
         Arg("reinstate", "bool", "Current again if superseded.", default=False)),
        read_only=False),
    ToolSpec(
        "memory_history", "history",
        "Every version of a memory, oldest first: how something changed.",
        (Arg("id", "id", "Any version's chunk_id.", required=True), NAMESPACE),
        idempotent=True),
    ToolSpec(
        "memory_graph_query", "graph_query",
        "The relations around an entity, breadth first.",
        (Arg("entity", "text", "Name, alias or id.", required=True, max_len=ENTITY_NAME_CHARS),
         NAMESPACE,
         Arg("depth", "int", "Hops.", low=1, high=3, default=2),
         Arg("predicates", "strings", "Only these predicates.", max_items=32, max_len=PREDICATE_CHARS),
         Arg("limit", "int", "Most nodes.", low=1, high=500, default=100),
         Arg("as_of", "time", "The graph at this time.")),
        heavy=True, idempotent=True),
    ToolSpec(
        "memory_stats", "stats",
        "Counts, sizes and recall latency: of one namespace, or of all.",
        (NAMESPACE,),
        idempotent=True),
)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
HEAVY_TOOLS = frozenset(t.name for t in TOOLS if t.heavy)
