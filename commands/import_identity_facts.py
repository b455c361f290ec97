"""Import a plain list of identity facts as canonical_fact entities.

    memlane import-identity-facts facts.txt [--db PATH] [--namespace NS] [--embed]

One fact per line; blank lines and lines starting with # are skipped. A line "key: value" (also
"key = value" or "key：value") names its canonical fact by the key (e.g. "name", "生日"), otherwise by
the whole line. Each fact is stored as an important memory tagged `identity`, linked to its
canonical_fact entity. Running it twice stores nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from commands import _common as c

PROG = "memlane import-identity-facts"

SOURCE = "identity"
_KEY = re.compile(r"^\s*([^:=：]{1,60}?)\s*[:=：]\s*\S")
MAX_LINES = 100_000


def import_facts(mem: Any, text_lines: Iterable[str], namespace: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"created": 0, "existing": 0, "relations": 0, "errors": []}
    for n, line in enumerate(text_lines, 1):
        if n > MAX_LINES:
            break
        fact = line.strip().lstrip("\ufeff")
        if not fact or fact.startswith("#"):
            continue
        m = _KEY.match(fact)
        name = (m.group(1).strip() if m else fact)[:200]
        with c.record_errors(out, n):
            c.count(out, mem.remember(fact, namespace=namespace, source=SOURCE, tags=["identity"], importance=0.9,
                                      entities=[{"name": name, "kind": "canonical_fact"}]))
    return out


def main(argv: list[str] | None = None) -> int:
    return c.import_main(argv, PROG, "data.help.identity", lambda path: path.open(encoding="utf-8-sig"),
                         lambda mem, fh, ns, cfg: import_facts(mem, fh, ns))
