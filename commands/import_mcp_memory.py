"""Import the knowledge graph of the MCP reference memory server (`memory.jsonl`).

    memlane import-mcp-memory memory.jsonl [--db PATH] [--namespace NS] [--embed]

Each line is `{"type": "entity", "name", "entityType", "observations": [...]}` or
`{"type": "relation", "from", "to", "relationType"}`. Each observation becomes a memory linked to its
entity (prefixed with the entity's name when it does not mention it, so that it reads on its own);
each relation becomes a memlane relation. Running it twice stores nothing new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from commands import _common as c

PROG = "memlane import-mcp-memory"

SOURCE = "mcp-memory"
MAX_LINE_BYTES = 4 * 1024 * 1024


def import_graph(mem: Any, lines: Iterable[bytes], namespace: str | None = None) -> dict[str, Any]:
    """Import the lines into `mem`; returns counts and [(line, error text)]."""
    out: dict[str, Any] = {"created": 0, "existing": 0, "relations": 0, "relations_existing": 0, "errors": []}
    kinds: dict[str, str] = {}
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            if len(raw) > MAX_LINE_BYTES:
                raise c.InvalidArgument("data.line_too_long", line=n)
            try:
                rec = json.loads(raw)
            except ValueError:
                raise c.InvalidArgument("data.bad_json", line=n) from None
            if not isinstance(rec, dict):
                raise c.InvalidArgument("data.bad_json", line=n)
            if rec.get("type") == "entity":
                name = rec.get("name")
                kind = str(rec.get("entityType") or "concept").strip().lower()[:32] or "concept"
                if isinstance(name, str):
                    kinds[name] = kind
                observations = rec.get("observations") or []
                if not isinstance(observations, list):
                    raise c.InvalidArgument("arg.type", name="observations", expected="a list",
                                            got=type(observations).__name__)
                texts = [o for o in observations if isinstance(o, str) and o.strip()]
                if not texts:  # an entity without observations still says what the entity is
                    texts = [c.t("data.mcp_entity_only", name=name, kind=kind)]
                for obs in texts:
                    content = obs if isinstance(name, str) and name.casefold() in obs.casefold() else f"{name}: {obs}"
                    r = mem.remember(content, namespace=namespace, source=SOURCE,
                                     entities=[{"name": name, "kind": kind}], metadata={"mcp_entity": name})
                    out["created" if r["created"] else "existing"] += 1
            elif rec.get("type") == "relation":
                subj, obj = rec.get("from"), rec.get("to")
                r = mem.relate(subj, rec.get("relationType"), obj, namespace=namespace,
                               subject_kind=kinds.get(subj) if isinstance(subj, str) else None,
                               object_kind=kinds.get(obj) if isinstance(obj, str) else None)
                out["relations" if r["created"] else "relations_existing"] += 1
            else:
                raise c.InvalidArgument("data.bad_record", kind=str(rec.get("type"))[:40])
        except c.MemlaneError as exc:
            # A bad record is reported and skipped; a store that fails (disk full, ...) stops the run.
            if exc.code not in ("invalid_argument", "too_large", "not_found", "conflict"):
                raise
            out["errors"].append((n, exc.render()))
    return out


def main(argv: list[str] | None = None) -> int:
    return c.import_main(argv, PROG, "data.help.mcp", lambda path: path.open("rb"),
                         lambda mem, fh, ns, cfg: import_graph(mem, fh, ns))
