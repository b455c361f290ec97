"""The memlane front door: `Memory`, one store over one database.

`Memory` validates every argument, runs the embedding worker, and delegates: storage to a store
(store/protocol.py; SQLite in store/sqlite/engine.py) and ranking to the recall wing (recall/). Its public
methods mirror the MCP tools one to one (see docs/CONTRACT.md).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

import entity_resolve as er
from config import Config, load_config
from contract import validate as v
from contract.errors import Conflict, InvalidArgument, NotFound, Unavailable
from contract.tools import BY_NAME
from embedder import Embedder, make_embedder, spare_core
from i18n_messages import t as t_msg
from ingest import embed_work
from ingest import threads as th
from lang import crosslingual as xl
from lang import extractor_llm, pii
from lang import facts as facts_mod
from lang import near_duplicates as nd
from recall import hydrate, pipeline, relevance
from recall.query import LANES, Plan, QueryInfo
from server import heaptrim
from store import local_dir, locate, open_store, portable
from store.protocol import NewChunk, Store, chunk_filter
from store.sqlite.db import SCHEMA_VERSION, connect, migrate
from store.util import content_hash, escape_like, fts_quote, new_id, predicate_key

__version__ = "0.1.0"
__all__ = ["LANES", "SCHEMA_VERSION", "Memory", "__version__", "connect", "content_hash", "escape_like",
           "fts_quote", "migrate", "new_id"]

log = logging.getLogger("memlane")

# The tool table (contract/tools.py) holds every argument's type, bounds and default; these check against it.
REMEMBER, RECALL, RELATE, FORGET = (BY_NAME[n] for n in ("memory_remember", "memory_recall", "memory_relate",
                                                         "memory_forget"))
UPDATE, GRAPH, PURGE = BY_NAME["memory_update"], BY_NAME["memory_graph_query"], BY_NAME["memory_purge"]
# Memory.warm_up's questions: one per script, so both query analyses (and the Chinese segmenter) load.
WARM_UP_QUERIES = ("what did we decide about the project last week?", "我们上周对项目做了什么决定？")
WARM_UP_WRITES = ("Alice moved to Berlin last spring.", "张伟上周在上海讨论了预算。")  # the extractor's, not stored
SUPERSEDES_MAX = 20  # predecessors memory_history lists
READINGS_META = "name_readings_at"  # when add_name_readings gave the older Chinese names their pinyin
WAIT_EMBEDDED_S = 60.0  # memory_remember with wait_embedded waits at most this long for its vector
# An extra embedding worker loads its model only when at least SPARE_BACKLOG texts are queued, and drops it
# (about 40 MB RSS) SPARE_IDLE_S after its last batch (a second instance loads in about 30 ms). Niced (config
# embed_nice), it embeds beside the recalls and the first worker leaves the shared model to them until none has
# come in for QUIET_S seconds; not niced, the extra worker is the one that waits for QUIET_S.
QUIET_S = 2.0
SPARE_BACKLOG = 32
SPARE_IDLE_S = 5.0


def _percentile(sorted_values: Sequence[float], q: float) -> float | None:
    if not sorted_values:
        return None
    idx = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return round(float(sorted_values[idx]), 3)


def _marks_recall(method: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Note when a recall starts and ends (Memory._query_at): extra embedding workers take no batch within
    QUIET_S of either, so a recall never shares the cores with them."""

    @functools.wraps(method)
    def marked(self: Memory, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._query_at = time.monotonic()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._query_at = time.monotonic()

    return marked


class Memory:
    """One memlane store. Thread-safe; one instance per process per database."""

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
        self.engine, self.target, self.path = locate(db_path, self.config)
        # Models (fastembed's tokenizer config) are cached beside the SQLite file, or the default one.
        models = local_dir(self.engine, self.path, self.config)
        self._cohort_dir = models / "models"  # the relevance cohort's cache file, beside the models
        self.embedder = embedder or make_embedder(
            self.config.embedder, self.config.model, self.config.model_path, self.config.dim,
            cache_dir=models / "models",
        )
        self.store: Store = open_store(self.engine, self.target, self.embedder, self.config)
        try:
            self.migrations_applied = self.store.migrations_applied
            self._check_model(allow_model_change)
            self.store.check_writable()
        except BaseException:
            self.store.close()
            raise
        self._pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="memlane-lane")
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._qcache_lock = threading.Lock()
        self._queue_cv = threading.Condition()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._spares: list[threading.Thread] = []
        self._claims = embed_work.Claims()  # the rows each embedding worker holds
        self._niced_models = 0  # extra workers that are niced and hold a model now (guarded by _queue_cv)
        # context_mode "staged": whether a window may lack its provisional vector (an own vector was written
        # since the mean pass last found none): the pass's scan of the queue is skipped meanwhile.
        self._means_due = True
        self._query_at = float("-inf")  # monotonic time a recall last started or ended (a plain store: cheap)
        self._closed = False
        if start_worker:
            self.start_worker()
        if self.config.crosslingual or self.config.lexical_precision:
            # Build the CC-CEDICT lexicon (a few seconds, once per process) off the request path.
            threading.Thread(target=xl.lexicon, name="memlane-lexicon", daemon=True).start()

    # ------------------------------------------------------------ lifecycle

    def _check_model(self, allow_change: bool) -> None:
        rows = self.store.meta(("embedder_model", "embedder_dim"))
        model, dim = self.embedder.model, self.embedder.dim
        if rows and not allow_change and (rows.get("embedder_model") != model or rows.get("embedder_dim") != str(dim)):
            raise Unavailable("embed.mismatch", stored_model=rows.get("embedder_model"),
                              stored_dim=rows.get("embedder_dim"), model=model, dim=dim)
        if not rows:
            with self.store.atomic() as tx:
                self.store.set_meta(tx, {"embedder_model": model, "embedder_dim": str(dim)})

    def start_worker(self) -> None:
        """Start the embedding worker and, with embed_workers above 1 and an embedder that has a `twin`, the
        extra workers (`_spare_loop`)."""
        if self._worker is None:
            self._stop.clear()
            self._worker = threading.Thread(target=self._embed_loop, name="memlane-embed", daemon=True)
            self._worker.start()
            if hasattr(self.embedder, "twin"):
                self._spares = [threading.Thread(target=self._spare_loop, name=f"memlane-embed-{i + 2}", daemon=True)
                                for i in range(self.config.embed_workers - 1)]
                for spare in self._spares:
                    spare.start()

    def stop_worker(self, timeout: float = 10.0) -> None:
        """Stop the embedding workers after their current batch; pending items stay queued on disk."""
        self._stop.set()
        with self._queue_cv:
            self._queue_cv.notify_all()
        for thread in [self._worker, *self._spares]:
            if thread is not None:
                thread.join(timeout)
        self._worker, self._spares = None, []

    def close(self) -> None:
        """Stop the worker, checkpoint the WAL and close every connection."""
        if self._closed:
            return
        self.stop_worker()
        self._pool.shutdown(wait=True)
        self.store.close()
        self._closed = True

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (benchmarks measure cold queries this way)."""
        with self._qcache_lock:
            self._qcache.clear()

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
        thread: Any = None,
        wait_embedded: Any = None,
    ) -> dict[str, Any]:
        """Store a memory durably; its embedding is queued. See memory_remember in the contract.

        Without `thread`, the memory joins the thread of the namespace's previous memory when ingest/threads.py
        says they were said together, else it starts one of its own."""
        cfg = self.config
        ns = v.namespace_arg(namespace)
        text = self._content_arg(content)
        src = REMEMBER.check("source", source, cfg)
        imp = REMEMBER.check("importance", importance, cfg)
        tag_list = REMEMBER.check("tags", tags, cfg)
        meta = REMEMBER.check("metadata", metadata, cfg)
        vfrom = v.time_arg(valid_from, "valid_from")
        named = self._thread_arg(thread)
        wait = REMEMBER.check("wait_embedded", wait_embedded, cfg)
        ents = REMEMBER.check("entities", entities, cfg)
        text, warnings = pii.apply(text, cfg.pii)  # warn, redact or reject secrets and personal data
        fields, more = pii.apply_fields({"source": src, "tags": tag_list, "metadata": meta,
                                         "entities": [{"name": n, "kind": k, "aliases": a} for n, k, a in ents]},
                                        cfg.pii)  # every other text field too
        src, meta, warnings = fields["source"], fields["metadata"], warnings + more
        tag_list = list(dict.fromkeys(fields["tags"]))  # two redacted tags can become equal
        ents = [(e["name"], e["kind"], e["aliases"]) for e in fields["entities"]]
        digest = content_hash(text)
        # Text analysis runs before the write transaction, so no write waits on another's analysis.
        derived = self._derive_facts(text, warnings) if cfg.facts else []
        wanted = er.with_mentions(ents, self._mentions(text))
        store = self.store
        with store.atomic() as tx:
            dup = store.live_duplicate(tx, ns, digest)
            if dup:
                return {"chunk_id": dup, "namespace": ns, "created": False, "duplicate_of": dup,
                        "entities": store.chunk_entities(tx, dup), "facts": [],
                        "embedding": store.embedding_state(tx, dup), "warnings": warnings}
            now = v.now_iso()
            last = store.last_memory(tx, ns)
            prev = None if last is None else th.Previous(
                last["thread"], last["thread_by"], last["source"], th.session_of(last["metadata"]), last["valid_from"],
                last["created_at"])
            thread_id, thread_by = th.choose(named, prev, src, th.session_of(meta), vfrom or now, now, new_id("t"))
            chunk = NewChunk(ns, text, digest, src, imp, tag_list, meta, er.detect_lang(text), now, vfrom or now,
                             thread=thread_id, thread_by=thread_by)
            cid, seq = store.insert_chunk(tx, chunk)
            linked = self._link(tx, ns, seq, wanted, now)
            fact_ids = [store.insert_chunk(tx, NewChunk(
                ns, f.text, content_hash(f.text), src, imp, tag_list, {"fact_kinds": list(f.kinds)},
                er.detect_lang(f.text), now, vfrom or now, kind="fact", parent_id=cid))[0]
                for f in derived[: facts_mod.MAX_FACTS]]
        self._wake_worker()
        state = "queued"
        out = {"chunk_id": cid, "namespace": ns, "created": True, "duplicate_of": None,
               "entities": linked, "facts": fact_ids, "embedding": state, "warnings": warnings}
        if wait:
            out["embedding"] = "done" if self._embedded(cid, WAIT_EMBEDDED_S) else "queued"
            out |= self._near_duplicates(seq, warnings)
        return out

    def _embedded(self, chunk_id: str, timeout: float) -> bool:
        """Wait until `chunk_id`'s own vector is written (not the whole queue's); True if within `timeout` s."""
        deadline = time.monotonic() + timeout
        if self._worker is None:
            self.embed_pending()
        self._wake_worker()
        while self.store.embedding_state(None, chunk_id) == "queued":
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with self._queue_cv:
                self._queue_cv.wait(min(0.05, remaining))
        return True

    def _near_duplicates(self, seq: int, warnings: list[str] | None = None) -> dict[str, Any]:
        """{near_duplicates: [...]} of the live memory `seq` (lang/near_duplicates.py), or {} when it has none;
        with `warnings`, also the warning that says to use memory_update."""
        found = nd.find(self.store, self.store.reader(), seq, self.config.near_duplicate_permille / 1000)
        if not found:
            return {}
        if warnings is not None:
            warnings.append(t_msg("quality.near_duplicate", ids=", ".join(x["chunk_id"] for x in found)))
        return {"near_duplicates": found}

    def _thread_arg(self, thread: Any) -> str | None:
        name = REMEMBER.check("thread", thread, self.config)
        if name and name.startswith(th.INFERRED_PREFIX):
            raise InvalidArgument("arg.thread_reserved", prefix=th.INFERRED_PREFIX)
        return name or None

    def _content_arg(self, content: Any) -> str:
        text = REMEMBER.check("content", content, self.config)
        assert text is not None
        if v.is_placeholder(text):
            raise InvalidArgument("arg.placeholder", got=repr(text[:40]))
        return text

    def _derive_facts(self, text: str, warnings: list[str]) -> list[Any]:
        """Atomic facts by rules, or by the optional LLM extractor with a fallback to rules."""
        if self.config.extractor == "openai":

            got, why = extractor_llm.extract(text, self.config)
            if got is not None:
                return got
            warnings.append(t_msg("quality.extractor_fallback", detail=why))
        return facts_mod.extract(text)

    def _mentions(self, text: str) -> list[er.Wanted]:
        """Entities the extractor finds in `text` (empty when auto_entities is off)."""
        if not self.config.auto_entities:
            return []
        common = xl.common_english() if self.config.lexical_precision else None
        return [(m.name, m.kind, []) for m in er.extract_mentions(text, common, xl.lexicon())]

    def _link(self, tx: Any, ns: str, seq: int, wanted: list[er.Wanted], now: str) -> list[dict[str, Any]]:
        return er.link(self.store, tx, ns, seq, wanted, now, limit=self.config.max_entities,
                       cooccurs=self.config.cooccurs, romanise=xl.romanised)

    @property
    def schema_version(self) -> int:
        """The database's schema version, as the engine in use records it (SQLite's user_version,
        PostgreSQL's memlane_schema table): the numberings are the engines' own."""
        return self.store.schema_version

    # ------------------------------------------------------------ embedding worker

    def pending_embeddings(self) -> int:
        """Chunks whose own vector is not written yet."""
        return self.store.pending()

    def pending_context(self) -> int:
        """Context windows queued for embedding (made only after every own vector; docs/QUALITY.md)."""
        return self.store.pending_context()

    def index_building(self) -> int:
        """Approximate-index builds running (recall is exact, and slower, until they end)."""
        return self.store.index_building()

    def _pending(self, context: bool) -> int:
        n = self.pending_embeddings()
        if context and self.config.context_vectors:
            n += self.pending_context()
        return n

    def _wake_worker(self) -> None:
        with self._queue_cv:
            self._queue_cv.notify_all()

    def flush(self, timeout: float | None = 60.0, *, context: bool = True) -> bool:
        """Wait until every own vector is written and, with `context` (and context_vectors on), every
        queued context window too; True if that happened within `timeout` seconds. The worker embeds
        context windows only while the embedding queue is empty, so `context=False` returns as soon as
        every memory is searchable by its own vector."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._worker is None:
            self.embed_pending()
            return self._pending(context) == 0
        self._wake_worker()
        while self._pending(context) > 0:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            with self._queue_cv:
                self._queue_cv.wait(min(0.05, remaining) if remaining is not None else 0.05)
        return True

    def embed_pending(self, max_batches: int | None = None) -> int:
        """Embed queued chunks, then queued context windows, in this thread (used by scripts and when no
        worker runs). Returns the count of texts embedded."""
        done = batches = 0
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
            if self._leave_to_spares():  # the model is the recalls'; the windows' means need none
                try:
                    made = self._mean_pass()
                except Exception:  # as below: the windows stay queued
                    log.exception("embedding worker error")
                    made = 0
                if made > 0:
                    self._wake_worker()
                    continue
                with self._queue_cv:
                    self._queue_cv.wait(0.25)
                continue
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

    def _quiet(self) -> bool:
        """True when no recall has started or ended for QUIET_S seconds: an extra worker may take a batch."""
        return time.monotonic() - self._query_at >= QUIET_S

    def _leave_to_spares(self) -> bool:
        """True while recalls are arriving and a niced extra worker has its model: the first worker then
        takes no batch, so a recall's question never waits for a background slice on the shared model."""
        with self._queue_cv:
            return self._niced_models > 0 and not self._quiet()

    def _spare_model(self, niced: bool, loaded: bool) -> None:
        """Count a niced extra worker's model in (loaded) or out."""
        if niced:
            with self._queue_cv:
                self._niced_models += 1 if loaded else -1

    def _spare_loop(self) -> None:
        """An extra embedding worker: it takes batches beside the first worker on a model instance of its own,
        loaded when a backlog appears and dropped when it has been idle a while. Niced (embed_nice, Linux), it
        goes on while recalls arrive, at a priority that leaves them the cores. Otherwise a recall arriving
        stops it taking batches, and hands the rest of its batch to the shared model."""
        spare: embed_work.Spare | None = None
        niced = embed_work.background_priority(self.config.embed_nice)
        idle_since = time.monotonic()
        while not self._stop.is_set():
            if spare is not None and time.monotonic() - idle_since >= SPARE_IDLE_S:
                spare = None  # no batch for a while (a backlog ended, or recalls keep it out): drop its memory
                self._spare_model(niced, False)
                self._trim_heap()
            wait = 0.0 if niced else QUIET_S - (time.monotonic() - self._query_at)
            if wait > 0:  # a recall came in: leave the cores to it
                with self._queue_cv:
                    self._queue_cv.wait(min(wait, 1.0))
                continue
            n = 0
            try:
                if spare is None and self._pending(True) - self._claims.held() >= SPARE_BACKLOG:
                    # No name for the twin in this frame: dropping `spare` must free the model.
                    spare = embed_work.Spare(self.embedder.twin(),  # type: ignore[attr-defined]
                                             self.embedder, (lambda: True) if niced else self._quiet)
                    self._spare_model(niced, True)
                    idle_since = time.monotonic()
                if spare is not None:
                    n = self._embed_batch(spare)
            except Exception:  # as in _embed_loop: the rows stay queued, the first worker goes on
                log.exception("extra embedding worker error")
                n = -1
            if n > 0:
                idle_since = time.monotonic()
                continue
            if n < 0:
                self._stop.wait(5.0)  # the first worker backs off and retries these rows meanwhile
                continue
            with self._queue_cv:
                self._queue_cv.wait(1.0)
        if spare is not None:
            self._spare_model(niced, False)

    def _trim_heap(self) -> None:
        """After the second model is dropped: hand the heap its buffers freed back to the OS (about 13 MB
        stays in malloc's arenas otherwise), unless a recall is running; the daemon trims after a burst."""
        if self._quiet():
            heaptrim.malloc_trim()

    def _embed_batch(self, embedder: Embedder | embed_work.Spare | None = None) -> int:
        """One batch of own vectors or, when none is free to take, of context windows, on `embedder` (by
        default the shared one). In context_mode "staged", the first worker makes the windows' provisional
        mean vectors before any text window.

        Returns the count embedded, 0 when both queues are empty, -1 when the embedder failed.
        """
        model = embedder or self.embedder
        n = embed_work.own_vectors(self.store, model, self.config, self._claims)
        mode = self.config.context_mode
        if n > 0:
            self._means_due = True
        if n == 0 and embedder is None:
            # No model call: the first worker alone makes them (a spare would only race it for the same rows).
            n = self._mean_pass()
        if n == 0 and self.config.context_vectors and mode != "mean":
            n = embed_work.context_vectors(self.store, model, self._claims)
        if n > 0:
            self._wake_worker()
        return n

    def _mean_pass(self) -> int:
        """Context vectors made from own vectors, no model call (context_mode "mean", or "staged"'s provisional
        ones): the count written, 0 when none is due."""
        mode = self.config.context_mode
        if not self.config.context_vectors or not (mode == "mean" or (mode == "staged" and self._means_due)):
            return 0
        # "staged": a provisional vector for each window that has none, its text vector made next. Cleared
        # before the pass, so an own vector written meanwhile (by the spare) sets it again; a window it
        # misses (made ready by another daemon) gets its text vector all the same.
        self._means_due = False
        n = embed_work.context_means(self.store, staged=mode == "staged")
        self._means_due = self._means_due or n > 0
        return n

    # ------------------------------------------------------------ recall

    @_marks_recall
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
        detail: Any = None,
        min_relevance: Any = None,
    ) -> dict[str, Any]:
        """Four-lane recall fused by RRF, hits at or above `min_relevance`. See memory_recall in the contract.

        `detail` "full" (the default here, for in-process callers) returns every field; "brief" what an agent
        reads (hydrate.py). The MCP tool defaults to "brief".
        """
        started = time.perf_counter()
        cfg = self.config
        ns = v.namespace_arg(namespace)
        text = RECALL.check("query", query, cfg)
        assert text is not None
        k = RECALL.check("top_k", top_k, cfg)
        lane_set = self._lanes_arg(lanes)
        full = RECALL.check("detail", detail, cfg, default="full") == "full"  # the tool's default is brief
        floor = RECALL.check("min_relevance", min_relevance, cfg)
        flt = chunk_filter(ns, as_of=v.time_arg(as_of, "as_of"),
                           include_history=RECALL.check("include_history", include_history, cfg),
                           source=RECALL.check("source", source, cfg), tags=RECALL.check("tags", tags, cfg),
                           since=v.time_arg(since, "since"), until=v.time_arg(until, "until"))
        if v.is_placeholder(text):
            took = (time.perf_counter() - started) * 1000
            self._log_recall(ns, text, took, {}, None, [], "placeholder")
            return {"hits": [], "took_ms": round(took, 3), "lanes": {}, "skipped": "placeholder"}
        plan = Plan(flt, QueryInfo(text), k, lane_set, cfg, floor)  # `config` is read per call: benchmarks replace it
        pool = self._pool if cfg.parallel_lanes else None
        hits, results, wall_ms = pipeline.recall(self.store, plan, self.query_vector, pool, self.cohort, full,
                                                 self.query_vector_beside if cfg.asked_beside else None)
        took = (time.perf_counter() - started) * 1000
        lanes_out = {name: {"hits": len(r.seqs), "ms": round(r.ms, 3)} for name, r in results.items()}
        self._log_recall(ns, text, took, lanes_out, wall_ms, hits, None)
        if not full:
            return {"hits": [hydrate.brief(h) for h in hits], "took_ms": round(took, 3)}
        return {"hits": hits, "took_ms": round(took, 3), "lanes": lanes_out, "skipped": None}

    def add_name_readings(self, batch: int = 500) -> int:
        """Give the Chinese person entities written before names were read in pinyin (issue 27) their readings,
        once per database (meta key READINGS_META); the daemon runs it after its start. Returns how many."""
        if self.store.meta([READINGS_META]).get(READINGS_META):
            return 0
        done, after, now = 0, "", v.now_iso()
        while rows := self.store.people_without_alias(er.ROMANISED, after, batch):
            after = rows[-1][0]
            todo = [(ns, name, got) for _, ns, name in rows if er.has_cjk(name) and (got := xl.romanised(name))]
            if todo:
                with self.store.atomic() as tx:
                    for ns, name, readings in todo:
                        er.resolve(self.store, tx, ns, name, "person", [], now, readings)
                done += len(todo)
        with self.store.atomic() as tx:
            self.store.set_meta(tx, {READINGS_META: now})
        if done:
            log.info("read %d Chinese names in pinyin for the entity lane", done)
        return done

    def warm_up(self, cohort: bool = True) -> None:
        """Pay now what the first recall after a start would pay: the model, the relevance cohort (about 130
        embeddings, 4-7 s on two busy cores), the query analysis, the lanes' imports and index pages; and
        what the first write would: the entity extractor's tagger.

        Runs the recall pipeline on one English and one Chinese question without logging them; reads only.
        `cohort=False` skips the cohort (built once per process) to warm another thread's read connection.
        """
        try:
            self._warm_up(cohort)
        except Exception as exc:  # noqa: BLE001 - a warm-up is an optimisation: the daemon starts without it
            log.warning("warm-up skipped (%s): the first recall pays what it would have warmed", exc)

    def _warm_up(self, cohort: bool) -> None:
        if cohort:
            self.cohort()
        for text in WARM_UP_QUERIES:
            plan = Plan(chunk_filter(v.namespace_arg(None)), QueryInfo(text), 10, LANES, self.config,
                        relevance.MIN_RELEVANCE)
            hits, _, _ = pipeline.recall(self.store, plan, self.embedder.embed_query,
                                         self._pool if self.config.parallel_lanes else None, self.cohort, False)
            for hit in hits:
                hydrate.brief(hit)
        if cohort:  # once a process: rjieba's tagger loads on the first Chinese name it meets (150 ms)
            for text in WARM_UP_WRITES:
                self._mentions(text)

    def cohort(self) -> relevance.Cohort:
        """The embedder's reference passages per language, which calibrate vector relevance (recall/relevance.py)."""
        return relevance.cohort_for(self.embedder, self._cohort_dir)

    def _lanes_arg(self, lanes: Any) -> tuple[str, ...]:
        if lanes is None:
            return LANES
        if isinstance(lanes, str) or not isinstance(lanes, (list, tuple)) or not lanes:
            raise InvalidArgument("arg.lanes", allowed=", ".join(LANES), got=repr(lanes)[:60])
        bad = [x for x in lanes if x not in LANES]
        if bad:
            raise InvalidArgument("arg.lanes", allowed=", ".join(LANES), got=repr(bad)[:60])
        return tuple(x for x in LANES if x in lanes)

    def query_vector(self, text: str) -> np.ndarray:
        """The query's embedding, from an LRU cache when possible."""
        hit = self._cached(text)
        if hit is not None:
            return hit
        vec = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        self._cache(text, vec)
        return vec

    def query_vector_beside(self, text: str, ahead: str) -> tuple[np.ndarray, np.ndarray | None]:
        """`text`'s vector, and `ahead`'s when it was cached or could be made beside it (embed_beside): a
        reading recall may need next, made on another core meanwhile, when one is free (spare_core). With
        `text` cached, `ahead` waits."""
        cached, later = self._cached(text), self._cached(ahead)
        beside = getattr(self.embedder, "embed_beside", None)
        if cached is not None or later is not None or beside is None or not spare_core():
            return (cached if cached is not None else self.query_vector(text)), later
        vec, ahead_vec = (np.asarray(x, dtype=np.float32) for x in beside(text, ahead))
        self._cache(text, vec)
        self._cache(ahead, ahead_vec)
        return vec, ahead_vec

    def _cached(self, text: str) -> np.ndarray | None:
        if not self.config.query_cache_size:
            return None
        with self._qcache_lock:
            hit = self._qcache.get(text)
            if hit is not None:
                self._qcache.move_to_end(text)
            return hit

    def _cache(self, text: str, vec: np.ndarray) -> None:
        size = self.config.query_cache_size
        if size:
            with self._qcache_lock:
                self._qcache[text] = vec
                while len(self._qcache) > size:
                    self._qcache.popitem(last=False)

    def _log_recall(self, ns: str, query: str, took: float, lanes: dict[str, Any], wall_ms: float | None,
                    hits: list[dict[str, Any]], skipped: str | None) -> None:
        details = [{"chunk_id": h["chunk_id"], "score": h["score"], "ranks": h["ranks"]} for h in hits[:5]]
        self.store.log_recall((ns, pii.scrub(query[:2000]), v.now_iso(), round(took, 3), json.dumps(lanes),
                               wall_ms, len(hits), skipped, json.dumps(details)))

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
        cfg = self.config
        subj = RELATE.check("subject", subject, cfg)
        pred = RELATE.check("predicate", predicate, cfg)
        pred = predicate_key(pred) if pred else pred
        obj = RELATE.check("object", object, cfg)
        skind = RELATE.check("subject_kind", subject_kind, cfg)
        okind = RELATE.check("object_kind", object_kind, cfg)
        conf = RELATE.check("confidence", confidence, cfg)
        evid = RELATE.check("chunk_id", chunk_id, cfg)
        vfrom = v.time_arg(valid_from, "valid_from")
        assert subj and pred and obj
        f, _ = pii.apply_fields({"subject": subj, "predicate": pred, "object": obj, "subject_kind": skind,
                                 "object_kind": okind}, self.config.pii)
        subj, pred, obj, skind, okind = f["subject"], f["predicate"], f["object"], f["subject_kind"], f["object_kind"]
        store = self.store
        with store.atomic() as tx:
            if evid and not store.chunk_exists(tx, evid, ns):
                raise NotFound("nf.chunk", id=evid, namespace=ns)
            now = v.now_iso()
            s = er.resolve(self.store, tx, ns, subj, skind.lower() if skind else None, [], now)
            o = er.resolve(self.store, tx, ns, obj, okind.lower() if okind else None, [], now)
            rid, created = store.upsert_relation(tx, ns, s["id"], pred, o["id"], conf, evid, now, vfrom or now)
        return {"relation_id": rid, "subject": s, "object": o, "created": created}

    def forget(self, id: Any, *, namespace: Any = None, reason: Any = None) -> dict[str, Any]:  # noqa: A002
        """Close a memory or relation (never delete). Forgetting twice is not an error."""
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        why = FORGET.check("reason", reason, self.config)
        store = self.store
        with store.atomic() as tx:
            now = v.now_iso()
            if target.startswith("r_"):
                exists, closed = store.relation_closed_at(tx, target, ns)
                if not exists:
                    raise NotFound("nf.id", id=target, namespace=ns)
                if closed:
                    return {"id": target, "forgotten": True, "valid_until": closed}
                store.close_relation(tx, target, now, why)
                return {"id": target, "forgotten": True, "valid_until": now}
            row = store.chunk_row(tx, target, ns)
            if not row:
                raise NotFound("nf.id", id=target, namespace=ns)
            if row["valid_until"]:
                return {"id": target, "forgotten": True, "valid_until": row["valid_until"]}
            store.close_chunk(tx, row["seq"], target, now, why or "")
            return {"id": target, "forgotten": True, "valid_until": now}

    def purge(self, id: Any, *, namespace: Any = None, confirm: Any = None) -> dict[str, Any]:  # noqa: A002
        """Delete a memory for good: every version of its chain (predecessors and successors), the facts
        derived from them and every row derived from those (store.purge), in one transaction. `confirm`
        must be True. Returns {purged: [chunk ids], relations, entities, recall_log} (rows removed)."""
        ns = PURGE.check("namespace", namespace, self.config)
        target = PURGE.check("id", id, self.config)
        if confirm is not True:  # not PURGE.check: only the literal true confirms, never "yes" or 1
            raise InvalidArgument("arg.purge_confirm", id=target)
        got = self.store.purge(ns, target, v.now_iso())
        if got is None:
            raise NotFound("nf.purge", id=target, namespace=ns)
        self.clear_query_cache()  # a cached query may quote the purged text
        self._wake_worker()  # the neighbours' context windows were re-queued
        return got

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
        reinstate: Any = None,
    ) -> dict[str, Any]:
        """Write a new version linked to the old one, and close the old one.

        A new version of a superseded memory stays superseded by the same memory (its result says
        `superseded_by`) unless `reinstate` is true: the caller says the rewritten memory is current again."""
        cfg = self.config
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        again = UPDATE.check("reinstate", reinstate, cfg)
        text = self._content_arg(content)
        src = UPDATE.check("source", source, cfg)
        # Left out, these stay as they were (the table has no default for them).
        imp = None if importance is None else UPDATE.check("importance", importance, cfg)
        tag_list = None if tags is None else UPDATE.check("tags", tags, cfg)
        meta = None if metadata is None else UPDATE.check("metadata", metadata, cfg)
        vfrom = v.time_arg(valid_from, "valid_from")
        text, warnings = pii.apply(text, cfg.pii)
        fields, more = pii.apply_fields({"source": src, "tags": tag_list, "metadata": meta}, cfg.pii)
        src, tag_list, meta, warnings = fields["source"], fields["tags"], fields["metadata"], warnings + more
        if tag_list is not None:
            tag_list = list(dict.fromkeys(tag_list))
        mentions = self._mentions(text)  # before the transaction: analysis never holds the writer
        store = self.store
        with store.atomic() as tx:
            row = store.chunk_row(tx, target, ns)
            if not row or row["kind"] != "memory":
                raise NotFound("nf.chunk", id=target, namespace=ns)
            if row["valid_until"]:
                raise Conflict("conflict.closed", id=target, valid_until=row["valid_until"],
                               current=store.successor(tx, target) or "-")
            now = v.now_iso()
            old_ents = store.chunk_entity_kinds(tx, row["seq"])
            store.close_chunk(tx, row["seq"], target, now, None)
            cid, seq = store.insert_chunk(tx, NewChunk(
                ns, text, content_hash(text), src if src is not None else row["source"],
                imp if imp is not None else row["importance"], tag_list if tag_list is not None else row["tags"],
                meta if meta is not None else row["metadata"], er.detect_lang(text), now, vfrom or now,
                previous_id=target, thread=row["thread"], thread_pos=row["thread_pos"],
                thread_by=row["thread_by"]))  # keeps its place in the thread
            # Entities the caller attached to the old version carry over when the new text still names them.
            carried: list[er.Wanted] = [(n, k, []) for n, k in old_ents if er.norm(n) in er.norm(text) or k == "stock"]
            self._link(tx, ns, seq, er.with_mentions(carried, mentions), now)
            newer = None if again else row["superseded_by"]
            if newer:  # rewriting an old value does not make it current: the newer memory still replaces it
                store.mark_superseded(tx, cid, newer)
        self._wake_worker()
        out = {"chunk_id": cid, "previous_id": target, "namespace": ns, "warnings": warnings}
        return out | ({"superseded_by": newer} if newer else {})

    def history(self, id: Any, *, namespace: Any = None) -> dict[str, Any]:  # noqa: A002
        """Every version of a memory, oldest first, with the memories it superseded (`supersedes`) and the
        one that superseded it (`superseded_by`: that memory's newest version)."""
        ns = v.namespace_arg(namespace)
        target = v.id_arg(id)
        chain = self.store.version_chain(ns, target)
        if chain is None:
            raise NotFound("nf.chunk", id=target, namespace=ns)
        out: dict[str, Any] = {"versions": chain}
        older = self.store.superseded_by_any(ns, [x["chunk_id"] for x in chain], SUPERSEDES_MAX)
        if older:
            out["supersedes"] = older
        newer = chain[-1].get("superseded_by")
        replacement = self.store.version_chain(ns, newer) if newer else None
        if replacement:
            last = replacement[-1]
            out["superseded_by"] = {k: last[k] for k in ("chunk_id", "content", "valid_from", "valid_until") if last[k]}
        newest = self.store.chunk_row(None, chain[-1]["chunk_id"], ns)
        if newest is not None and newest["valid_until"] is None:
            out |= self._near_duplicates(newest["seq"])
        view = self.store.thread_view(ns, chain[-1]["chunk_id"], th.VIEW_SPAN)
        if view is not None:
            out["thread"] = th.view_dict(view)
        return out

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
        cfg = self.config
        name = GRAPH.check("entity", entity, cfg)
        assert name is not None
        d = GRAPH.check("depth", depth, cfg)
        preds = [predicate_key(p) for p in GRAPH.check("predicates", predicates, cfg)]
        lim = GRAPH.check("limit", limit, cfg)
        at = v.time_arg(as_of, "as_of")
        root = self.store.find_entity(ns, name, er.norm(name))
        if not root:
            raise NotFound("nf.entity", name=name, namespace=ns)
        return self.store.neighbourhood(ns, root, er.norm(root[1]), d, preds, lim, at)

    def stats(self, *, namespace: Any = None) -> dict[str, Any]:
        """Counts, sizes and recent recall latency; for one namespace when given, else all."""
        ns = None if namespace is None else v.namespace_arg(namespace)
        # A recall that ended while the writer was busy left its log row pending: count it too.
        self.store.drain_log(wait=True)
        c = self.store.counts(ns, v.to_iso(datetime.now(timezone.utc) - timedelta(hours=24)))
        lat = c.pop("latencies")
        empty = c.pop("empty")
        return {
            **c, "embedder": {"model": self.embedder.model, "dim": self.embedder.dim},
            "recall_24h": {"calls": len(lat), "p50_ms": _percentile(lat, 0.5), "p95_ms": _percentile(lat, 0.95),
                           "empty": empty},
            "schema_version": self.schema_version, "version": __version__,
        }

    # ------------------------------------------------------------ namespaces, export and import

    def rename_namespace(self, old: Any, new: Any) -> dict[str, Any]:
        """Move every row of namespace `old` to the empty namespace `new`, in one transaction.

        Returns the number of rows moved per table.
        """
        src = v.namespace_arg(old)
        dst = v.namespace_arg(new)
        if src == dst:
            raise InvalidArgument("ui.rename_same", namespace=src)
        return {"old": src, "new": dst, "moved": self.store.move_namespace(src, dst)}

    def export_records(self, *, namespace: Any = None, vectors: bool = False) -> Iterator[dict[str, Any]]:
        """Every record (header, entities, aliases, chunk versions, relations) in the portable JSONL format."""

        ns = None if namespace is None else v.namespace_arg(namespace)
        return portable.export_records(self.store.reader(), vectors=vectors, namespace=ns)

    def import_records(self, lines: Iterable[bytes | str], **kw: Any) -> Any:
        """Import portable JSONL lines (see portable.import_records); derived rows are rebuilt here."""

        return portable.import_records(self, lines, **kw)
