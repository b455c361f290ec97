"""memlane's command line: one entry point with a subcommand for everything a user runs by hand.

    ./memlane <command> [args]        # or: python cli.py <command> [args]
    ./memlane --help                  # every command, in your language (MEMLANE_LANG, LC_ALL, LANG)
    ./memlane <command> --help

Each command lives in `commands/<module>.py` and is imported only when it runs, so `--help` stays
quick. The old paths (`python scripts/backup.py` ...) are aliases of these commands (scripts/_alias.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from commands._common import argument_parser, run
from i18n_messages import t

PROG = "memlane"

# words -> (module in commands/, help id). A two-word key ("eval locomo") is a command of a group.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("serve", "cli.help.serve"),
    "init": ("init_db", "cli.help.init"),
    "health": ("health_check", "health.help"),
    "backup": ("backup", "data.help.backup"),
    "restore": ("restore", "data.help.restore"),
    "clients": ("clients", "cli.help.clients"),
    "dashboard-link": ("dashboard_link", "cli.help.dashboard_link"),
    "token": ("token", "cli.help.token"),
    "export": ("export_jsonl", "data.help.export"),
    "import": ("import_jsonl", "data.help.import"),
    "import-mcp-memory": ("import_mcp_memory", "data.help.mcp"),
    "import-holdings": ("import_holdings", "data.help.holdings"),
    "import-identity-facts": ("import_identity_facts", "data.help.identity"),
    "repair": ("repair_vectors", "data.help.repair"),
    "reembed": ("reembed", "cli.help.reembed"),
    "bench": ("benchmark", "cli.help.bench"),
    "bench ann": ("bench_ann", "cli.help.bench_ann"),
    "bench dashboard": ("bench_dashboard", "cli.help.bench_dashboard"),
    "bench halfvec": ("bench_halfvec", "cli.help.bench_halfvec"),
    "bench profile": ("bench_profile", "cli.help.bench_profile"),
    "bench recall-latency": ("bench_recall_latency", "cli.help.bench_recall_latency"),
    "bench worker": ("bench_worker", "cli.help.bench_worker"),
    "eval locomo": ("eval_locomo", "cli.help.eval_locomo"),
    "eval bilingual": ("eval_bilingual", "cli.help.eval_bilingual"),
    "eval foreign": ("eval_foreign", "cli.help.eval_foreign"),
    "eval entities": ("eval_entities", "cli.help.eval_entities"),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: its help lists every command; each command parses its own arguments."""
    p = argument_parser(PROG, t("cli.description"), t("cli.epilog"))
    sub = p.add_subparsers(title=t("cli.commands"), metavar="<command>")
    for words, (_, help_id) in COMMANDS.items():
        sub.add_parser(words, help=t(help_id), add_help=False)
    return p


def resolve(argv: list[str]) -> tuple[str, list[str]] | None:
    """(command words, the command's own arguments), or None when argv names no command."""
    if len(argv) >= 2 and f"{argv[0]} {argv[1]}" in COMMANDS:
        return f"{argv[0]} {argv[1]}", argv[2:]
    if argv and argv[0] in COMMANDS:
        return argv[0], argv[1:]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help(None if argv else sys.stderr)
        return 0 if argv else 2
    found = resolve(argv)
    if found is None:
        group = [w.split(" ", 1)[1] for w in COMMANDS if w.startswith(f"{argv[0]} ")]
        if group and argv[1:2] in (["-h"], ["--help"]):
            parser.print_help()
            return 0
        if group:
            parser.error(t("cli.group_needs", group=argv[0], choices=", ".join(group)))
        parser.error(t("cli.unknown_command", command=argv[0],
                       commands=", ".join(dict.fromkeys(w.split(" ")[0] for w in COMMANDS))))
    words, rest = found
    module = importlib.import_module(f"commands.{COMMANDS[words][0]}")
    return run(module.main, rest)


if __name__ == "__main__":
    raise SystemExit(main())
