"""Import a holdings CSV as stock entities plus dated facts.

    memlane import-holdings holdings.csv [--db PATH] [--namespace NS] [--embed]

Columns: code,name,quantity,cost,date (a header row with these names, or 代码,名称,数量,成本,日期, is
optional). Each row becomes a memory "Holding <name> (<code>): <quantity> shares at a cost of <cost>,
as of <date>" in the configured language, valid from <date>, linked to the stock entity whose
canonical code is its name and whose display name is an alias. Running it twice stores nothing new.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from typing import Any

import entity_resolve as er
from commands import _common as c
from contract import validate as v

PROG = "memlane import-holdings"

SOURCE = "holdings"
COLUMNS = ("code", "name", "quantity", "cost", "date")
ZH_COLUMNS = {"代码": "code", "名称": "name", "数量": "quantity", "成本": "cost", "日期": "date"}
MAX_ROWS = 1_000_000


def _number(raw: str, name: str) -> str:
    text = raw.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        raise c.InvalidArgument("data.bad_number", name=name, got=repr(raw[:40])) from None
    if not math.isfinite(value) or value < 0:
        raise c.InvalidArgument("data.bad_number", name=name, got=repr(raw[:40]))
    return text


def import_holdings(mem: Any, text_lines: Iterable[str], namespace: str | None = None,
                    lang: str | None = None) -> dict[str, Any]:

    out: dict[str, Any] = {"created": 0, "existing": 0, "relations": 0, "errors": []}
    reader = csv.reader(text_lines)
    order = list(COLUMNS)
    for n, row in enumerate(reader, 1):
        if n > MAX_ROWS:
            break
        if not row or not any(cell.strip() for cell in row):
            continue
        cells = [cell.strip().lstrip("\ufeff") for cell in row]
        lowered = [ZH_COLUMNS.get(x, x.lower()) for x in cells]
        if n == 1 and set(lowered) >= set(COLUMNS):
            order = lowered
            continue
        with c.record_errors(out, n):
            if len(cells) < len(order):
                raise c.InvalidArgument("data.bad_csv", detail=c.t("data.line", line=n))
            rec = dict(zip(order, cells, strict=False))
            code = er.canonical_stock(rec["code"], assume_ticker=True)
            if not code:
                raise c.InvalidArgument("data.bad_stock", got=repr(rec["code"][:40]))
            qty, cost = _number(rec["quantity"], "quantity"), _number(rec["cost"], "cost")
            when = v.time_arg(rec["date"], "date")
            day = rec["date"].strip()
            name = rec["name"] or code
            content = c.t("data.holding_fact", lang, name=name, code=code, quantity=qty, cost=cost, date=day)
            c.count(out, mem.remember(
                content, namespace=namespace, source=SOURCE, tags=["holding"], valid_from=when,
                entities=[{"name": code, "kind": "stock", "aliases": [name, rec["code"]]}],
                metadata={"code": code, "name": name, "quantity": qty, "cost": cost, "date": day}))
    return out


def main(argv: list[str] | None = None) -> int:
    return c.import_main(argv, PROG, "data.help.holdings", lambda path: path.open(encoding="utf-8-sig", newline=""),
                         lambda mem, fh, ns, cfg: import_holdings(mem, fh, ns, cfg.lang or None))
