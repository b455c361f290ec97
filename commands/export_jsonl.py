"""Export a memlane database as JSON Lines: every version, forgotten ones with their reasons,
entities, aliases, relations and namespaces; vectors with --vectors.

    memlane export [--db PATH] [--out FILE|-] [--vectors] [--namespace NS]

The export reads one consistent snapshot, so it is safe while the daemon runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from commands import _common as c
from contract import validate
from store import maintenance, portable

PROG = "memlane export"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.export", PROG)
    p.add_argument("--out", default="-", help=c.t("data.help.out"))
    p.add_argument("--vectors", action="store_true", help=c.t("data.help.vectors"))
    p.add_argument("--namespace", help=c.t("data.help.namespace"))
    p.add_argument("--quiet", action="store_true", help=c.t("data.help.quiet"))
    args = p.parse_args(argv)
    cfg = c.config(args)

    ns = validate.namespace_arg(args.namespace) if args.namespace else None
    if cfg.db_url:
        snapshot = maintenance.pg_snapshot(cfg.db_url, cfg.db_label())
    else:
        snapshot = maintenance.file_snapshot(cfg.resolved_db_path())
    with snapshot as db:  # one read snapshot: a consistent export while the daemon writes
        _write(db, args, ns)
    return 0


def _write(db: Any, args: Any, ns: str | None) -> None:
    """Every record from `db` (inside its read snapshot) to --out, through a .partial file renamed at the end."""

    out_path = None if args.out == "-" else Path(args.out).expanduser()
    tmp = out_path.with_name(out_path.name + ".partial") if out_path else None
    counts: dict[str, int] = {}
    try:
        total = maintenance.chunk_count(db)
        bar = c.progress(total, args.quiet or out_path is None)
        with (open(tmp, "w", encoding="utf-8", newline="\n") if tmp else _stdout()) as fh:
            for rec in portable.export_records(db, vectors=args.vectors, namespace=ns):
                fh.write(portable.dumps(rec) + "\n")
                if rec["type"] == "chunk":
                    bar.update(1)  # type: ignore[attr-defined]
                elif rec["type"] == "end":
                    counts = rec["counts"]
            fh.flush()
            if tmp:
                os.fsync(fh.fileno())
        bar.close()  # type: ignore[attr-defined]
    except BaseException:
        if tmp:
            tmp.unlink(missing_ok=True)
        raise
    if tmp and out_path:
        tmp.replace(out_path)
    print(c.t("data.export_done", path=str(out_path or "-"), namespaces=counts.get("namespace", 0),
              chunks=counts.get("chunk", 0), entities=counts.get("entity", 0),
              relations=counts.get("relation", 0)), file=sys.stderr)


class _stdout:  # noqa: N801 - a context manager that leaves sys.stdout open
    def __enter__(self):  # type: ignore[no-untyped-def]
        return sys.stdout

    def __exit__(self, *exc: object) -> None:
        sys.stdout.flush()
