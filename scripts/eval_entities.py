"""Alias of `memlane eval entities` (commands/), kept for service files, docs and habits."""

import _alias

if __name__ == "__main__":
    raise SystemExit(_alias.run("eval", "entities"))
