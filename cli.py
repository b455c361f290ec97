"""memlane's command line: one entry point with a subcommand for everything a user runs by hand.

    ./memlane <command> [args]        # or: python cli.py <command> [args]
    ./memlane --help                  # every command, in your language (MEMLANE_LANG, LC_ALL, LANG)
    ./memlane <command> --help

Each command lives in `commands/<module>.py` (benchmarks and evaluations in `devtools/`, outside the
product path) and is imported only when it runs, so `--help` stays quick. The old paths (`python scripts/backup.py` ...) are aliases of these commands (scripts/_alias.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from commands._common import argument_parser, run
from i18n_messages import t

PROG = "memlane"

# words -> (module: commands/ for the product, devtools/ for benchmarks and evaluations; help id).
# A two-word key ("eval locomo") is a command of a group.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("commands.serve", "cli.help.serve"),
    "init": ("commands.init_db", "cli.help.init"),
    "health": ("commands.health_check", "health.help"),
    "backup": ("commands.backup", "data.help.backup"),
    "restore": ("commands.restore", "data.help.restore"),
    "clients": ("commands.clients", "cli.help.clients"),
    "dashboard-link": ("commands.dashboard_link", "cli.help.dashboard_link"),
    "token": ("commands.token", "cli.help.token"),
    "export": ("commands.export_jsonl", "data.help.export"),
    "purge": ("commands.purge", "data.help.purge"),
    "import": ("commands.import_jsonl", "data.help.import"),
    "import-mcp-memory": ("commands.import_mcp_memory", "data.help.mcp"),
    "import-holdings": ("commands.import_holdings", "data.help.holdings"),
    "import-identity-facts": ("commands.import_identity_facts", "data.help.identity"),
    "repair": ("commands.repair_vectors", "data.help.repair"),
    "reembed": ("commands.reembed", "cli.help.reembed"),
    "bench": ("devtools.benchmark", "cli.help.bench"),
    "bench ab": ("devtools.bench_ab", "cli.help.bench_ab"),
    "bench ann": ("devtools.bench_ann", "cli.help.bench_ann"),
    "bench dashboard": ("devtools.bench_dashboard", "cli.help.bench_dashboard"),
    "bench halfvec": ("devtools.bench_halfvec", "cli.help.bench_halfvec"),
    "bench profile": ("devtools.bench_profile", "cli.help.bench_profile"),
    "bench recall-latency": ("devtools.bench_recall_latency", "cli.help.bench_recall_latency"),
    "bench worker": ("devtools.bench_worker", "cli.help.bench_worker"),
    "eval locomo": ("devtools.eval_locomo", "cli.help.eval_locomo"),
    "eval bilingual": ("devtools.eval_bilingual", "cli.help.eval_bilingual"),
    "eval foreign": ("devtools.eval_foreign", "cli.help.eval_foreign"),
    "eval entities": ("devtools.eval_entities", "cli.help.eval_entities"),
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
    module = importlib.import_module(COMMANDS[words][0])
    return run(module.main, rest)


if __name__ == "__main__":
    raise SystemExit(main())
