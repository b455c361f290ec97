"""Run the daemon: `memlane serve [--host H] [--port P] [--db PATH] [--transport T] [--lang L]`.

The same as `python mcp_server.py` (what `make run` and the service files start), through cli.py.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    # Deferred: the daemon and its dependencies: loaded when the command runs, not for --help.
    import mcp_server

    return mcp_server.main(argv)
