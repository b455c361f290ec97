"""Shared by the commands: their parsers, config, and the one place errors become exit code 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from config import Config, load_config
from contract.errors import InvalidArgument, MemlaneError, Unavailable  # noqa: F401
from i18n_messages import t
from server import private

ROOT = Path(__file__).resolve().parent.parent


class _Formatter(argparse.HelpFormatter):
    """argparse's help with its own words ("usage:") in the reader's language."""

    def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, t("cli.usage") if prefix is None else prefix)


def argument_parser(prog: str, description: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """An argparse parser whose own texts (usage, section titles, -h) are in the reader's language."""
    p = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, add_help=False,
                                formatter_class=_Formatter)
    p._positionals.title = t("cli.positionals")
    p._optionals.title = t("cli.options")
    p.add_argument("-h", "--help", action="help", help=t("cli.help_flag"))
    return p


def parser(help_id: str, prog: str) -> argparse.ArgumentParser:
    p = argument_parser(prog, t(help_id))
    p.add_argument("--db", help=t("data.help.db"))
    return p


def config(args: argparse.Namespace) -> Config:
    return load_config(overrides={"db_path": args.db} if getattr(args, "db", None) else None)


def say(msg_id: str, **params: object) -> None:
    print(t(msg_id, **params))


def warn(msg_id: str, **params: object) -> None:
    print(t(msg_id, **params), file=sys.stderr)


def run(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run a command's main; a MemlaneError (or a file error) is one rendered line and exit code 1.

    Every file a command creates (backups, exports, a new database) is 0600 in a 0700 folder.
    """
    private.restrict_umask()
    try:
        return main(argv)
    except MemlaneError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    except OSError as exc:
        print(Unavailable("db.open", path=str(exc.filename or ""), detail=exc.strerror or str(exc)).render(),
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def progress(total: int | None, quiet: bool, unit: str = "it") -> object:
    """A tqdm bar on stderr (hidden with --quiet)."""

    return tqdm(total=total, unit=unit, unit_scale=unit == "B", disable=quiet, file=sys.stderr, leave=False)


__all__ = ["ROOT", "InvalidArgument", "MemlaneError", "Unavailable", "argument_parser", "config", "import_main",
           "parser", "progress", "report", "run", "say", "warn"]


def report(res: dict[str, object]) -> int:
    """Print an importer's errors and summary; exit code 1 when any record failed."""
    errors = res.get("errors") or []
    for line, err in errors[:200]:  # type: ignore[union-attr]
        warn("data.record_error", where=t("data.line", line=line), error=err)
    say("data.import_summary", created=res.get("created", 0), existing=res.get("existing", 0),
        relations=res.get("relations", 0), errors=len(errors))  # type: ignore[arg-type]
    if errors:
        warn("data.errors_total", count=len(errors))  # type: ignore[arg-type]
        return 1
    return 0


@contextmanager
def record_errors(out: dict[str, Any], line: int) -> Iterator[None]:
    """An imported record that is invalid or too large is listed in out["errors"] and skipped; any other
    error stops the import."""
    try:
        yield
    except MemlaneError as exc:
        if exc.code not in ("invalid_argument", "too_large"):
            raise
        out["errors"].append((line, exc.render()))


def count(out: dict[str, Any], result: dict[str, Any]) -> None:
    """Count a remembered record as created or as one that existed already."""
    out["created" if result["created"] else "existing"] += 1


def import_main(argv: list[str] | None, prog: str, help_id: str, open_file: Callable[[Path], IO[Any]],
                do_import: Callable[[Any, IO[Any], str | None, Config], dict[str, object]]) -> int:
    """The importers' shared command line: FILE, --namespace, --embed, --db; then the summary."""
    p = parser(help_id, prog)
    p.add_argument("file", help=t("data.help.file"))
    p.add_argument("--namespace", help=t("data.help.into_namespace"))
    p.add_argument("--embed", action="store_true", help=t("data.help.embed"))
    args = p.parse_args(argv)
    cfg = config(args)
    # Deferred: the model and the store: loaded when the command runs, not for --help.
    from memory import Memory

    with Memory(config=cfg, start_worker=False) as mem, open_file(Path(args.file).expanduser()) as fh:
        res = do_import(mem, fh, args.namespace, cfg)
        if args.embed:
            say("data.embedding", count=mem.pending_embeddings())
            mem.embed_pending()
    return report(res)
