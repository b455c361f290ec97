"""Import a memlane JSON Lines export. Idempotent (a second run changes nothing), streaming.

    memlane import FILE [--db PATH] [--embed] [--quiet]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from commands import _common as c
from store import portable

PROG = "memlane import"


def main(argv: list[str] | None = None) -> int:
    p = c.parser("data.help.import", PROG)
    p.add_argument("file", help=c.t("data.help.file"))
    p.add_argument("--embed", action="store_true", help=c.t("data.help.embed"))
    p.add_argument("--quiet", action="store_true", help=c.t("data.help.quiet"))
    args = p.parse_args(argv)
    cfg = c.config(args)
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    src = Path(args.file).expanduser()
    size = src.stat().st_size
    with Memory(config=cfg, start_worker=False) as mem, src.open("rb") as fh:
        bar = c.progress(size, args.quiet, unit="B")

        def lines() -> Iterator[bytes]:
            for line in fh:
                bar.update(len(line))  # type: ignore[attr-defined]
                yield line

        rep = portable.import_records(mem, lines())
        bar.close()  # type: ignore[attr-defined]
        if args.embed and rep.queued:
            c.say("data.embedding", count=mem.pending_embeddings())
            mem.embed_pending()
    for line, err in rep.errors[:200]:
        c.warn("data.record_error", where=c.t("data.line", line=line), error=err)
    c.say("data.import_done", chunks=rep.inserted["chunk"], chunks_skipped=rep.skipped["chunk"],
          entities=rep.inserted["entity"], entities_skipped=rep.skipped["entity"], aliases=rep.inserted["alias"],
          relations=rep.inserted["relation"], relations_skipped=rep.skipped["relation"], vectors=rep.vectors,
          queued=rep.queued)
    if rep.errors:
        c.warn("data.errors_total", count=len(rep.errors))
        return 1
    return 0
