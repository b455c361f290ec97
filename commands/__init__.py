"""memlane's commands, one module per command or group; cli.py runs them (`./memlane <command>`).

Each module exposes `main(argv: list[str] | None = None) -> int`. The checkout's root must be on
sys.path (cli.py is at the root; scripts/_alias.py puts it there for the old script paths).
"""
