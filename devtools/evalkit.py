"""Shared parts of the evaluation scripts: a backend (in-process Memory or a daemon over MCP),
ablation switches, and small metric helpers. Used by eval_locomo.py and eval_bilingual.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from config import load_config
from i18n_messages import t

# The recall-quality techniques that --disable can switch off (Config booleans of the same name).
TECHNIQUES = ("facts", "auto_entities", "query_split", "rerank", "supersession", "crosslingual",
              "lexical_precision", "cooccurs", "context_expansion", "context_vectors", "time_grounding", "replies",
              "thread_prior", "asked_relevance", "relevance_order", "verbatim", "successor_order",
              "supersession_scoring")
LANE_NAMES = ("vector", "graph", "meta", "entity")


def add_run_arguments(ap: argparse.ArgumentParser) -> None:
    """The options both evaluations share: lanes, ablation switches, the backend, JSON output."""
    ap.add_argument("--lanes", default="", help=t("cli.help.eval_lanes"))
    ap.add_argument("--disable", default="", help=t("cli.help.eval_disable", techniques=", ".join(TECHNIQUES)))
    ap.add_argument("--enable", default="", help=t("cli.help.eval_enable"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=t("cli.help.eval_set"))
    ap.add_argument("--url", default="", help=t("cli.help.eval_url"))
    ap.add_argument("--token", default="", help=t("cli.help.eval_token"))
    ap.add_argument("--db", default="", help=t("cli.help.eval_db"))
    ap.add_argument("--json", default="", help=t("cli.help.eval_json"))
    ap.add_argument("--min-relevance", type=float, default=None, help=t("cli.help.eval_min_relevance"))


def recall_args(args: argparse.Namespace, query: str, namespace: str, lanes: list[str] | None) -> dict[str, Any]:
    """memory_recall arguments of one evaluation question: full hits (the scripts read metadata), top 10."""
    kw: dict[str, Any] = {"query": query, "namespace": namespace, "top_k": 10, "detail": "full"}
    if lanes:
        kw["lanes"] = lanes
    if args.min_relevance is not None:
        kw["min_relevance"] = args.min_relevance
    return kw


def parse_list(raw: str | None, allowed: Sequence[str], what: str) -> list[str]:
    if not raw:
        return []
    items = [x.strip() for x in raw.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad:
        raise SystemExit(t("quality.eval_bad_choice", what=what, got=", ".join(bad), allowed=", ".join(allowed)))
    return items


class InProcess:
    """Memory in this process, on a fresh database in a temporary folder (or --db)."""

    def __init__(self, disable: list[str], db: str | None = None, enable: list[str] | None = None,
                 settings: dict[str, str] | None = None) -> None:
        # Deferred: the model and the store: loaded when the command runs, not for --help.
        from memory import Memory

        self._tmp = tempfile.TemporaryDirectory(prefix="memlane-eval-")
        home = self._tmp.name
        overrides: dict[str, Any] = {name: True for name in enable or []}
        overrides.update({name: False for name in disable})
        overrides.update(settings or {})  # strings, cast and checked by load_config like a config file's
        self.cfg = load_config({"HOME": home}, overrides=overrides)
        # --db as given: a postgresql:// URL must stay a string (Path() would fold its "//").
        self.mem = Memory(db or Path(home) / "eval.db", config=self.cfg)

    def remember(self, **kw: Any) -> dict[str, Any]:
        return self.mem.remember(**kw)

    def recall(self, **kw: Any) -> dict[str, Any]:
        return self.mem.recall(**kw)

    def count(self, namespace: str) -> int:
        """The memories `namespace` holds (eval locomo --reuse-db: a conversation already imported)."""
        return self.mem.store.count_memories(namespace)

    def flush(self) -> None:
        """Wait for the own vectors, then the context windows; print how long each took after the import."""
        t0 = time.perf_counter()
        if not self.mem.flush(timeout=3600, context=False):
            raise SystemExit(t("quality.eval_no_drain", seconds=3600))
        t1 = time.perf_counter()
        if not self.mem.flush(timeout=3600):
            raise SystemExit(t("quality.eval_no_drain", seconds=3600))
        print(t("quality.eval_drain", own=f"{t1 - t0:.1f}", context=f"{time.perf_counter() - t1:.1f}"),
              file=sys.stderr)

    def db(self) -> Any:
        return self.mem.store.reader()

    def close(self) -> None:
        self.mem.close()
        self._tmp.cleanup()


class Remote:
    """A running memlane daemon, over MCP Streamable HTTP (`--url http://127.0.0.1:8086/mcp`).

    Techniques cannot be disabled remotely (they are the daemon's config); lanes can.
    """

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url
        self.token = token
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._session: Any = None
        self._stack: Any = None
        self._run(self._open())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=600)

    async def _open(self) -> None:


        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        self._stack = AsyncExitStack()
        client = await self._stack.enter_async_context(create_mcp_http_client(headers=headers))
        streams = await self._stack.enter_async_context(streamable_http_client(self.url, http_client=client))
        self._session = await self._stack.enter_async_context(ClientSession(streams[0], streams[1]))
        await self._session.initialize()

    async def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        res = await self._session.call_tool(tool, args)
        if res.is_error:
            text = " ".join(getattr(c, "text", "") for c in res.content)
            raise SystemExit(f"{tool}: {text}")  # the daemon's own "[code] message", already localized
        if res.structured_content:
            return dict(res.structured_content)
        return json.loads(res.content[0].text)

    def remember(self, **kw: Any) -> dict[str, Any]:
        return self._run(self._call("memory_remember", kw))

    def recall(self, **kw: Any) -> dict[str, Any]:
        return self._run(self._call("memory_recall", kw))

    def flush(self) -> None:
        """Wait until the daemon reports nothing left to embed: own vectors and context windows."""
        for _ in range(3600):
            stats = self._run(self._call("memory_stats", {}))
            if not stats.get("pending_embeddings") and not stats.get("pending_context"):
                return
            time.sleep(1)
        raise SystemExit(t("quality.eval_no_drain", seconds=3600))

    def db(self) -> Any:
        return None

    def close(self) -> None:
        if self._stack is not None:
            try:
                self._run(self._stack.aclose())
            except Exception:  # closing a broken session must not hide the results
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)


def parse_settings(items: Sequence[str]) -> dict[str, str]:
    """--set KEY=VALUE pairs (any Config field, e.g. context_fusion=vector)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(t("quality.eval_bad_set", got=item))
        out[key.strip()] = value.strip()
    return out


def make_backend(url: str | None, token: str | None, disable: list[str], db: str | None,
                 enable: list[str] | None = None, settings: dict[str, str] | None = None) -> Any:
    if url:
        if disable or enable or settings:
            raise SystemExit(t("quality.eval_remote_disable"))
        return Remote(url, token)
    return InProcess(disable, db, enable, settings)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def fmt(x: float) -> str:
    return "  -  " if x != x else f"{x:.3f}"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [headers] + [[c if isinstance(c, str) else fmt(c) if isinstance(c, float) else str(c) for c in r]
                         for r in rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(cells):
        lines.append("  ".join(str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i])
                               for i, c in enumerate(r)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_json(dest: str, payload: dict[str, Any]) -> None:
    """The --json output: to stdout for '-', else to the file (UTF-8, Chinese kept readable)."""
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    if dest == "-":
        print(text)
    else:
        Path(dest).write_text(text + "\n", encoding="utf-8")
