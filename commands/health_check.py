"""The daily health summary of a memlane install: about ten lines marked 🟢/🟡/🔴.

    memlane health              # the daemon and database the config names
    memlane health --json       # the same facts for machines
    memlane health --url http://127.0.0.1:8086 --db ~/.memlane/memory.db

It asks the daemon's GET /health (no token needed) and reads the database itself, read-only, so it
also works, and says so, when the daemon is down. Exit code: 0 green, 1 yellow, 2 red (also 2 when
the configuration cannot be read: nothing could be checked).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx

import i18n_messages
from commands._common import argument_parser
from config import Config, env_warnings, load_config
from contract.errors import MemlaneError
from i18n_messages import t
from store.health_facts import (  # noqa: F401 - the facts' names, for callers and tests
    MAX_LATENCIES,
    NO_VECTOR_GRACE,
    QUICK_CHECK_ROWS,
    db_facts,
    iso,
    parse_time,
    percentile,
    pg_facts,
    wal_facts,
)
from store.util import is_pg_url, redact_url

GREEN, YELLOW, RED = "green", "yellow", "red"
MARK = {GREEN: "🟢", YELLOW: "🟡", RED: "🔴"}
EXIT = {GREEN: 0, YELLOW: 1, RED: 2}
_ORDER = (GREEN, YELLOW, RED)

# Thresholds: each one is where a person should take a look, not a hard failure.
WAL_WARN_BYTES = 256 * 1024 * 1024
SLOW_P95_MS = 2000.0
EMPTY_RATE_WARN = 0.5
MIN_CALLS = 20  # below this, p95 and the empty rate say little
DOMINANT_SHARE = 0.8
DOMINANT_MIN_ENTITIES = 20
BACKUP_WARN_AGE = timedelta(hours=36)
MAX_BACKUP_ENTRIES = 10_000


@dataclass
class Check:
    name: str
    level: str
    msg_id: str
    params: dict[str, Any] = field(default_factory=dict)

    def line(self, lang: str) -> str:
        return f"{MARK[self.level]} {t(self.msg_id, lang, **self.params)}"


def worst(levels: list[str]) -> str:
    return max(levels, key=_ORDER.index, default=GREEN)


# ---------------------------------------------------------------- formatting


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover


def human_age(seconds: float, lang: str) -> str:
    """The two largest units of a duration, in the chosen language (e.g. "2 h 5 min", "2 小时 5 分钟")."""
    seconds = max(0, int(seconds))
    parts = [("health.unit_days", seconds // 86400), ("health.unit_hours", seconds % 86400 // 3600),
             ("health.unit_minutes", seconds % 3600 // 60), ("health.unit_seconds", seconds % 60)]
    first = next((i for i, (_, n) in enumerate(parts) if n), len(parts) - 1)
    chosen = [p for p in parts[first:first + 2] if p[1]] or [parts[-1]]
    return " ".join(t(msg_id, lang, n=n) for msg_id, n in chosen)


def fmt_ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}" if value >= 10 else f"{value:.1f}"


# ---------------------------------------------------------------- facts


def daemon_url(cfg: Config) -> str:
    host = cfg.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"  # bound to every interface: loopback answers too
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{cfg.port}"


def probe_daemon(url: str, timeout: float) -> dict[str, Any]:
    """GET /health: {alive, status, version, uptime_s, db_path, reason} or {alive: False, error}."""
    try:
        response = httpx.get(url.rstrip("/") + "/health", timeout=timeout)
    except httpx.HTTPError as exc:
        return {"url": url, "alive": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return {"url": url, "alive": False, "error": f"HTTP {response.status_code}, not memlane's /health"}
    return {
        "url": url, "alive": True, "http_status": response.status_code, "status": body.get("status"),
        "version": body.get("version"), "uptime_s": body.get("uptime_s"), "db_path": body.get("db_path"),
        "reason": body.get("reason"), "pending_embeddings": body.get("pending_embeddings"),
    }


def backup_facts(backup_dir: Path, now: datetime) -> dict[str, Any]:
    """The newest entry in the backup folder (any name but hidden ones); bounded listing."""
    latest: tuple[float, str] | None = None
    try:
        with os.scandir(backup_dir) as entries:
            for i, entry in enumerate(entries):
                if i >= MAX_BACKUP_ENTRIES:
                    break
                if entry.name.startswith("."):
                    continue
                mtime = entry.stat().st_mtime
                if latest is None or mtime > latest[0]:
                    latest = (mtime, entry.path)
    except OSError:
        pass
    if latest is None:
        return {"dir": str(backup_dir), "latest": None, "age_s": None}
    return {"dir": str(backup_dir), "latest": latest[1], "age_s": now.timestamp() - latest[0]}


# ---------------------------------------------------------------- checks


def assess(facts: dict[str, Any], lang: str) -> list[Check]:
    """The checks of one health run, in report order: the daemon, then (when the store is readable) the
    database, its contents, recalls, entity kinds and backups."""
    checks = [_daemon_check(facts["daemon"], lang)]
    db = facts.get("db")
    if db is None or "error" in (db or {}):
        if db and db.get("missing"):
            checks.append(Check("database", RED, "health.db_missing", {"path": db["path"]}))
        else:
            checks.append(Check("database", RED, "health.db_unreadable",
                                {"path": (db or {}).get("path", "?"), "detail": (db or {}).get("error", "?")}))
        return checks
    checks += _database_checks(db)
    checks += _content_checks(db, lang)
    checks.append(_recall_check(db["recall_24h"]))
    checks.append(_kinds_check(db))
    if facts.get("backup") is not None:  # only when backups are configured (config.backup_dir)
        checks.append(_backup_check(facts["backup"], lang))
    return checks


def _daemon_check(d: dict[str, Any], lang: str) -> Check:
    if not d["alive"]:
        return Check("daemon", RED, "health.daemon_down", {"url": d["url"], "detail": d.get("error", "")})
    if d.get("status") == "ok":
        return Check("daemon", GREEN, "health.daemon_ok", {
            "url": d["url"], "version": d.get("version") or "?",
            "uptime": human_age(float(d.get("uptime_s") or 0), lang)})
    return Check("daemon", YELLOW, "health.daemon_degraded",
                 {"url": d["url"], "reason": d.get("reason") or f"HTTP {d.get('http_status')}"})


def _database_checks(db: dict[str, Any]) -> list[Check]:
    """The store itself: size and WAL (SQLite) or server and schema (PostgreSQL), and shared file modes."""
    checks: list[Check] = []
    wal = human_bytes(db["wal_bytes"])
    if db.get("engine") == "postgres":
        checks.append(Check("database", GREEN, "health.pg_db", {
            "path": db["path"], "size": human_bytes(db["bytes"]), "server": db["server"], "pgvector": db["pgvector"],
            "schema": db["schema"]}))
        if db["schema"] != db["schema_expected"]:
            checks.append(Check("schema", YELLOW, "health.pg_schema", {"schema": db["schema"],
                                                                      "expected": db["schema_expected"]}))
    elif db["wal_bytes"] > WAL_WARN_BYTES:
        checks.append(Check("database", YELLOW, "health.wal_big", {"wal": wal}))
    elif db["wal_frames"] is not None:
        checks.append(Check("database", GREEN, "health.db_size_frames", {
            "path": db["path"], "size": human_bytes(db["bytes"]), "wal": wal, "frames": db["wal_frames"],
            "backfilled": db["wal_backfilled"]}))
    else:
        checks.append(Check("database", GREEN, "health.db_size",
                            {"path": db["path"], "size": human_bytes(db["bytes"]), "wal": wal}))
    for shared in db.get("shared_files", []):  # only a warning line: a private file needs no line of its own
        checks.append(Check("permissions", YELLOW, "health.db_mode", {"path": shared["path"], "mode": shared["mode"]}))
    return checks


def _content_checks(db: dict[str, Any], lang: str) -> list[Check]:
    """Counts, the embedding queue, vectors against chunks, and the integrity check."""
    checks = [Check("counts", GREEN, "health.counts", {
        "live": db["live_chunks"], "total": db["chunks"], "entities": db["entities"],
        "relations": db["relations"], "vectors": db["vectors"]})]
    oldest = db["pending_oldest_s"]
    if db["pending_embeddings"] and oldest is not None and oldest > NO_VECTOR_GRACE.total_seconds():
        checks.append(Check("pending", YELLOW, "health.pending_stuck",
                            {"count": db["pending_embeddings"], "age": human_age(oldest, lang)}))
    else:
        checks.append(Check("pending", GREEN, "health.pending_ok", {"count": db["pending_embeddings"]}))
    if db["orphan_vectors"]:
        checks.append(Check("vectors", RED, "health.vectors_orphan", {"count": db["orphan_vectors"]}))
    if db["missing_vectors"]:
        checks.append(Check("vectors", YELLOW, "health.vectors_missing", {"count": db["missing_vectors"]}))
    if not db["orphan_vectors"] and not db["missing_vectors"]:
        checks.append(Check("vectors", GREEN, "health.vectors_ok"))
    pg = db.get("engine") == "postgres"
    if db["quick_check"] == ["ok"]:
        checks.append(Check("quick_check", GREEN, "health.pg_indexes_ok" if pg else "health.quick_check_ok"))
    else:
        checks.append(Check("quick_check", RED, "health.pg_indexes_bad" if pg else "health.quick_check_bad",
                            {"detail": "; ".join(db["quick_check"])[:300]}))
    return checks


def _recall_check(r: dict[str, Any]) -> Check:
    if not r["calls"]:
        return Check("recalls", GREEN, "health.recalls_none")
    params = {"count": r["calls"], "p50": fmt_ms(r["p50_ms"]), "p95": fmt_ms(r["p95_ms"]),
              "empty_pct": round(100 * r["empty"] / r["calls"])}
    if r["calls"] >= MIN_CALLS and r["p95_ms"] is not None and r["p95_ms"] > SLOW_P95_MS:
        return Check("recalls", YELLOW, "health.recalls_slow", params)
    if r["calls"] >= MIN_CALLS and r["empty"] / r["calls"] > EMPTY_RATE_WARN:
        return Check("recalls", YELLOW, "health.recalls_empty", params)
    return Check("recalls", GREEN, "health.recalls", params)


def _kinds_check(db: dict[str, Any]) -> Check:
    kinds = db["entity_kinds"]
    if not kinds:
        return Check("entity_kinds", GREEN, "health.kinds_none")
    top = ", ".join(f"{k['kind']} {k['count']}" for k in kinds)
    share = kinds[0]["count"] / max(1, db["entities"])
    if db["entities"] >= DOMINANT_MIN_ENTITIES and share > DOMINANT_SHARE:
        return Check("entity_kinds", YELLOW, "health.kinds_dominant",
                     {"top": top, "kind": kinds[0]["kind"], "share": round(100 * share)})
    return Check("entity_kinds", GREEN, "health.kinds", {"top": top})


def _backup_check(b: dict[str, Any], lang: str) -> Check:
    if b["latest"] is None:
        return Check("backup", YELLOW, "health.backup_none", {"dir": b["dir"]})
    params = {"age": human_age(b["age_s"], lang), "path": b["latest"]}
    if b["age_s"] > BACKUP_WARN_AGE.total_seconds():
        return Check("backup", YELLOW, "health.backup_old", params)
    return Check("backup", GREEN, "health.backup_ok", params)


def gather(cfg: Config, url: str | None, db: str | None, timeout: float, now: datetime) -> dict[str, Any]:
    daemon = probe_daemon(url or daemon_url(cfg), timeout)
    # The running daemon knows its own database best; --db and an explicit config still win.
    url_db = db if db and is_pg_url(db) else (cfg.db_url if not db else "")
    if url_db:  # PostgreSQL: MEMLANE_DB_URL, or --db given a URL
        facts: dict[str, Any] = {"daemon": daemon, "backup": None}
        label = redact_url(url_db)
        try:
            facts["db"] = pg_facts(url_db, label, now, timeout)
        except MemlaneError as exc:
            facts["db"] = {"path": label, "error": exc.message()}
        return facts
    if db:
        db_path = Path(os.path.expanduser(db))
    elif daemon.get("alive") and daemon.get("db_path") and Path(daemon["db_path"]).is_absolute():
        db_path = Path(daemon["db_path"])
    else:
        db_path = cfg.resolved_db_path()
    facts = {"daemon": daemon, "backup": None}
    if not db_path.is_file():
        facts["db"] = {"path": str(db_path), "missing": True, "error": "not found"}
    else:
        try:
            facts["db"] = db_facts(db_path, now)
        except MemlaneError as exc:
            facts["db"] = {"path": str(db_path), "error": exc.message()}
        except Exception as exc:  # a broken file must give a red line, not a traceback
            facts["db"] = {"path": str(db_path), "error": f"{type(exc).__name__}: {exc}"[:300]}
    if cfg.backup_dir is not None:
        facts["backup"] = backup_facts(Path(os.path.expanduser(str(cfg.backup_dir))), now)
    return facts


def parse_args(argv: list[str] | None, lang: str) -> argparse.Namespace:
    p = argument_parser("memlane health", t("health.help", lang))
    p.add_argument("--url", help=t("health.help_url", lang))
    p.add_argument("--db", help=t("health.help_db", lang))
    p.add_argument("--json", action="store_true", help=t("health.help_json", lang))
    p.add_argument("--lang", choices=("en", "zh"), help=t("health.help_lang", lang))
    p.add_argument("--timeout", type=float, default=5.0, help=t("health.help_timeout", lang))
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv, i18n_messages.detect_lang())
    lang = args.lang or i18n_messages.detect_lang()
    now = datetime.now(timezone.utc)
    try:
        cfg = load_config()
    except MemlaneError as exc:
        print(f"{MARK[RED]} {t('health.bad_config', lang, detail=exc.message(lang))}", flush=True)
        return EXIT[RED]
    lang = args.lang or cfg.lang or lang
    for warning in env_warnings(cfg, lang):  # stderr, so that --json output stays one JSON document
        print(f"{MARK[YELLOW]} {warning}", file=sys.stderr, flush=True)
    facts = gather(cfg, args.url, args.db, args.timeout, now)
    checks = assess(facts, lang)
    status = worst([c.level for c in checks])
    summary = {GREEN: "health.summary_green", YELLOW: "health.summary_yellow", RED: "health.summary_red"}[status]
    if args.json:
        out = {"status": status, "exit_code": EXIT[status], "lang": lang, "checked_at": iso(now),
               "summary": t(summary, lang),
               "checks": [{"name": c.name, "level": c.level, "id": c.msg_id, "message": t(c.msg_id, lang, **c.params)}
                          for c in checks],
               "facts": facts}
        print(json.dumps(out, ensure_ascii=False, indent=2, default=str))
    else:
        print(t("health.title", lang, when=now.astimezone().strftime("%Y-%m-%d %H:%M %Z")))
        for c in checks:
            print(c.line(lang))
        print(f"{MARK[status]} {t(summary, lang)}", flush=True)
    return EXIT[status]
