"""The store protocol: everything recall and the write path need from storage.

`Memory` (memory.py) validates arguments and runs the embedding worker; the `recall` package ranks.
Both reach the data only through these methods, so a second engine implements this protocol and
touches neither. Rows are addressed by `seq` (an engine-assigned integer, stable for a chunk version)
and, for clients, by the opaque text `id`. Times are ISO-8601 UTC strings of one fixed width.

Reads take a `Filter` (what a recall may see); writes take the transaction handle that
`atomic()` yields, so one call of `Memory` is one transaction whatever the engine.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class Filter:
    """Which chunk versions a read may return: one namespace, a validity rule and optional narrowing."""

    namespace: str
    as_of: str | None = None  # versions valid at this time (closed ones included)
    include_history: bool = False  # every version, live or closed
    source: str | None = None
    tags: tuple[str, ...] = ()
    since: str | None = None  # created_at >= since
    until: str | None = None  # created_at <= until

    @property
    def live_only(self) -> bool:
        return not self.as_of and not self.include_history

    @property
    def narrowed(self) -> bool:
        """True when a filter beyond namespace and liveness applies (candidates must be re-checked)."""
        return bool(self.source or self.tags or self.since or self.until) or not self.live_only


@dataclass(frozen=True)
class NewChunk:
    """One chunk version to store; the store writes it with all its derived rows."""

    namespace: str
    content: str
    content_hash: str
    source: str | None
    importance: float
    tags: list[str]
    metadata: dict[str, Any]
    lang: str
    created_at: str
    valid_from: str
    previous_id: str | None = None
    kind: str = "memory"  # 'memory' or 'fact'
    parent_id: str | None = None
    thread: str | None = None  # the thread it was said in (ingest/threads.py); facts have none
    thread_pos: int | None = None  # its position in the thread; None: after every earlier memory
    thread_by: str | None = None  # how it came to the thread: client, session or time (ingest/threads.py)


@dataclass
class Neighbours:
    """Nearest vectors: (seq, cosine distance, memory language), nearest first.

    `exact` is False when an approximate pass produced them. `scored` is False when their distances
    are not calibrated cosine distances; recall then uses their order as it is.
    """

    rows: list[tuple[int, float, str]] = field(default_factory=list)
    exact: bool = True
    scored: bool = True


@dataclass(frozen=True)
class QueuedChunk:
    """A chunk waiting for its vector."""

    seq: int
    namespace: str
    content: str
    lang: str


@dataclass(frozen=True)
class ThreadView:
    """A memory's thread and its live neighbours, nearest first: (chunk id, content) pairs."""

    thread: str
    before: list[tuple[str, str]]
    after: list[tuple[str, str]]


class Store(Protocol):
    """What an engine provides. SQLite + sqlite-vec + FTS5 is store.sqlite.SqliteStore."""

    dim: int
    path: Any  # what identifies the database in messages and /health (a file path, or a URL without secret)
    supersession_scoring: bool  # which rule lang/supersession.detect applies on write (config supersession_scoring)

    @property
    def DERIVED(self) -> Any:  # noqa: N802 - the engines' class constant
        """The engine's derived-row module (store/sqlite/derived.py, store/postgres/derived.py)."""
        ...

    # ---- lifecycle and transactions
    def atomic(self) -> AbstractContextManager[Any]:
        """One write transaction; yields the handle every write method takes as `tx`."""
        ...

    def close(self) -> None: ...

    def meta(self, keys: Sequence[str]) -> dict[str, str]: ...

    def set_meta(self, tx: Any, values: dict[str, str]) -> None: ...

    migrations_applied: list[int]  # schema versions this open applied
    schema_version: int  # the database's schema version after open, in the engine's own record

    def check_writable(self) -> None:
        """Refuse at start, not at the first write, when the database cannot be written."""
        ...

    def reader(self) -> Any:
        """This thread's read handle, for the store-side modules that read in bulk (store/portable.py)."""
        ...

    # ---- candidate lists (recall)
    def nearest(self, flt: Filter, qv: np.ndarray, k: int, depth: int | None = None) -> Neighbours:
        """The k nearest vectors that pass `flt`; the engine picks exact or approximate search (an
        approximate pass returns its `depth` best, with Neighbours.exact False)."""
        ...

    def text_top(self, flt: Filter, field: str, words: Sequence[str], depth: int) -> list[int]:
        """Best full-text matches of any of `words`: field 'latin' (stemmed words, BM25), 'cjk' (3+
        characters) or 'when' (the derived dates of relative times)."""
        ...

    def term_stats(self, field: str, words: Sequence[str], seqs: Sequence[int]) -> tuple[int, list[int], list[set[int]]]:
        """(chunks indexed, document frequency per word, which of `seqs` contain each word)."""
        ...

    def short_cjk_rows(self, flt: Filter, words: Sequence[str], limit: int = 20_000) -> list[tuple[Any, ...]]:
        """Chunks containing any 2-character CJK word: (seq, has word 1, has word 2, …)."""
        ...

    def short_cjk_top(self, flt: Filter, words: Sequence[str], depth: int) -> list[int]:
        """Chunks ranked by how many of the 2-character CJK words they contain."""
        ...

    def count(self, flt: Filter) -> int:
        """Chunks that pass `flt` (cached for a short while in large namespaces)."""
        ...

    def count_memories(self, namespace: str) -> int:
        """Live chunks of kind 'memory' in a namespace."""
        ...

    def match_aliases(self, namespace: str, norms: Sequence[str]) -> list[tuple[str, str, str]]:
        """Entities answering to any of `norms`: (entity_id, kind, norm)."""
        ...

    def entity_chunk_counts(self, entity_ids: Sequence[str]) -> dict[str, int]: ...

    def chunks_by_entity_weight(self, flt: Filter, weights: dict[str, float], depth: int) -> list[tuple[int, float]]:
        """Chunks linked to the weighted entities, by summed weight: (seq, score)."""
        ...

    def entities_of(self, seqs: Sequence[int]) -> list[str]: ...

    def relations_touching(self, namespace: str, entity_ids: Sequence[str], as_of: str | None, limit: int,
                           weak_predicate: str, weak_min: float) -> list[tuple[str, str, float, str | None]]:
        """Live (or valid at `as_of`) relations of these entities: (subject, object, confidence, evidence chunk id)."""
        ...

    def chunks_of_entities(self, flt: Filter, entity_ids: Sequence[str], limit: int) -> list[tuple[int, str]]: ...

    def seqs_of_ids(self, flt: Filter, chunk_ids: Sequence[str]) -> list[tuple[int, str]]: ...

    def fact_parents(self, seqs: Iterable[int]) -> dict[int, int]:
        """For derived facts among `seqs`: fact seq → its memory's seq."""
        ...

    def linked(self, seqs: Sequence[int], entity_ids: Sequence[str]) -> set[int]: ...

    def contents(self, seqs: Sequence[int]) -> dict[int, str]: ...

    def rank_rows(self, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None, str, str | None]]:
        """What the reranker reads: seq → (content, valid_from, superseded_by, id, thread), `thread` only
        when a client or a session asserts it (None for an inferred thread or none)."""
        ...

    def alias_norms(self, seqs: Sequence[int]) -> dict[int, set[str]]: ...

    def hit_rows(self, seqs: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Hydration: seq → the contract's hit fields, plus `superseded_by`: the memory that replaced this
        one (its superseded_by link, else the version an update wrote after it), or None."""
        ...

    def similarities(self, seqs: Sequence[int], qv: np.ndarray) -> dict[int, tuple[np.ndarray, str]]:
        """Cosine similarity of each row of `qv` (one vector, or a matrix of them) to each chunk's stored
        vector, with the chunk's language: seq → (one similarity per row, lang). Chunks without a vector
        yet are left out. Relevance reads only the few hits."""
        ...

    def entity_names(self, seqs: Sequence[int]) -> dict[int, list[str]]: ...

    def log_recall(self, row: tuple[Any, ...]) -> None:
        """Queue one recall_log row; written when the writer is free, never waited for."""
        ...

    def drain_log(self, wait: bool = False) -> None:
        """Write the queued recall_log rows if the writer is free; with `wait`, wait for it (memory_stats)."""
        ...

    # ---- writes (each inside atomic())
    def live_duplicate(self, tx: Any, namespace: str, content_hash: str) -> str | None: ...

    def insert_chunk(self, tx: Any, chunk: NewChunk) -> tuple[str, int]:
        """Store a chunk version with all its derived rows (full text, queue); returns (id, seq)."""
        ...

    def resolve_entity(self, tx: Any, namespace: str, display: str, key: str, kind: str | None,
                       aliases: Sequence[tuple[str, str]], now: str) -> dict[str, Any]:
        """Find the entity answering to `key` or create it; record (norm, alias) pairs."""
        ...

    def link_entity(self, tx: Any, seq: int, entity_id: str) -> None: ...

    def chunk_entities(self, tx: Any, chunk_id: str) -> list[dict[str, Any]]:
        """The entities a chunk links to: {id, name, kind}; `tx` may be None (read outside a write)."""
        ...

    def chunk_entity_kinds(self, tx: Any, seq: int) -> list[tuple[str, str]]: ...

    def embedding_state(self, tx: Any, chunk_id: str) -> str:
        """'queued' while the chunk waits for its vector, else 'done'."""
        ...

    def chunk_exists(self, tx: Any, chunk_id: str, namespace: str) -> bool: ...

    def chunk_row(self, tx: Any, chunk_id: str, namespace: str) -> dict[str, Any] | None:
        """seq, source, importance, tags, metadata, valid_until, kind, thread fields and superseded_by of
        one version."""
        ...

    def successor(self, tx: Any, chunk_id: str) -> str | None:
        """The id of the version that replaced this one."""
        ...

    def relation_closed_at(self, tx: Any, relation_id: str, namespace: str) -> tuple[bool, str | None]: ...

    def close_relation(self, tx: Any, relation_id: str, now: str, reason: str | None) -> None: ...

    def bump_cooccur(self, tx: Any, namespace: str, a: str, b: str, now: str) -> None: ...

    def upsert_relation(self, tx: Any, namespace: str, subject_id: str, predicate: str, object_id: str,
                        confidence: float, chunk_id: str | None, now: str, valid_from: str) -> tuple[str, bool]: ...

    def close_chunk(self, tx: Any, seq: int, chunk_id: str, now: str, reason: str | None) -> None:
        """Close a version, its facts and their derived rows; with a reason, the relations it is evidence for.
        The context vectors of the windows that held it are re-made without it."""
        ...

    def write_vectors(self, tx: Any, items: Sequence[tuple[QueuedChunk, np.ndarray]]) -> list[int]:
        """Store vectors of chunks still queued and dequeue them; returns the seqs written."""
        ...

    def move_namespace(self, src: str, dst: str) -> dict[str, int]:
        """Move every row of `src` to the empty namespace `dst` in one transaction; rows moved per table."""
        ...

    def purge(self, namespace: str, chunk_id: str, now: str) -> dict[str, Any] | None:
        """Delete a memory for good, in one transaction of its own: every version of its chain, the facts
        derived from them, every derived row, entity links, relations and entities only it supported, and
        the recall_log rows that name or quote it. Returns {purged: [chunk ids], relations, entities,
        recall_log}, or None when `chunk_id` is not in the namespace."""
        ...

    # ---- supersession (inside the embedding batch's transaction) and near-duplicates (lang/near_duplicates.py;
    #      on a reader, so `tx` there may be either)
    def memory_vector(self, tx: Any, seq: int) -> tuple[str, str, str, str, Any] | None:
        """(id, namespace, content, valid_from, vector) of a live memory that has its vector; the vector in
        the engine's own form (float32 bytes, or an array), handed back to nearest_live."""
        ...

    def nearest_live(self, tx: Any, vec: Any, namespace: str, lang: str, k: int) -> list[tuple[int, float]]:
        """(seq, cosine distance) of the `k` live vectors of `namespace` in `lang` closest to `vec` (the engine's
        own form, or a float32 array); `tx` may be a reader (supersession.neighbours, before the batch's
        transaction)."""
        ...

    def older_current(self, tx: Any, seq: int, before: str) -> tuple[str, str] | None:
        """(id, content) of a live, not yet superseded memory that started before `before`."""
        ...

    def live_memories(self, db: Any, seqs: Sequence[int]) -> dict[int, tuple[str, str, str | None]]:
        """seq -> (id, content, superseded_by) of those of `seqs` that are live memories (not facts);
        `db` is a transaction or a reader."""
        ...

    def mark_superseded(self, tx: Any, old_id: str, new_id_: str) -> None: ...

    # ---- history, graph, stats
    def version_chain(self, namespace: str, chunk_id: str) -> list[dict[str, Any]] | None:
        """Every version of the chain `chunk_id` belongs to, oldest first; None when it is not there. A
        version that a newer memory superseded carries `superseded_by`."""
        ...

    def superseded_by_any(self, namespace: str, chunk_ids: Sequence[str], limit: int) -> list[dict[str, Any]]:
        """The memories that a newer one among `chunk_ids` superseded (chunk_id, content, valid_from and
        valid_until when closed), the newest such version of each, oldest first, at most `limit`."""
        ...

    def people_without_alias(self, first_char: str, after: str, limit: int) -> list[tuple[str, str, str]]:
        """(id, namespace, name) of up to `limit` person entities, by id after `after`, none of whose alias
        keys starts with the character `first_char` (Memory.add_name_readings)."""
        ...

    def find_entity(self, namespace: str, name: str, key: str) -> tuple[str, str, str] | None:
        """(id, name, kind) of the entity with this id, else the one answering to the normalized name."""
        ...

    def neighbourhood(self, namespace: str, root: tuple[str, str, str], root_key: str, depth: int,
                      predicates: Sequence[str], limit: int, as_of: str | None) -> dict[str, Any]:
        """memory_graph_query's result: root, nodes, edges, truncated."""
        ...

    def counts(self, namespace: str | None, since: str) -> dict[str, Any]:
        """memory_stats before formatting: counts, size, and recall latencies since `since`."""
        ...

    # ---- browsing (the dashboard; store/browse.py and store/shared.py, one SQL for both engines)
    def namespaces(self, limit: int) -> list[str]:
        """Namespaces that hold any chunk, by name, up to `limit`."""
        ...

    def has_namespace(self, namespace: str) -> bool:
        """True when any chunk version, live or closed, is in `namespace`."""
        ...

    def memories_page(self, namespace: str, *, before: int, limit: int, live_only: bool) -> dict[str, Any]:
        """The newest memories of a namespace below key `before`, the first 300 characters of each."""
        ...

    def memory_detail(self, namespace: str, chunk_id: str, limit: int) -> dict[str, Any] | None:
        """One chunk with its embedding state, linked entities, facts and relations (up to `limit` each)."""
        ...

    def chunk_fields(self, chunk_id: str) -> dict[str, Any] | None:
        """The stored tags, metadata (JSON text), source and importance of one chunk version."""
        ...

    def entities_page(self, namespace: str, norm_part: str, *, after: str, limit: int) -> dict[str, Any]:
        """Entities whose normalized name contains `norm_part`, by normalized name after `after`."""
        ...

    def namespaces_page(self, *, after: str, limit: int) -> dict[str, Any]:
        """Namespaces after `after` with their chunk, live chunk, entity and live relation counts."""
        ...

    def activity(self, namespace: str | None, *, since: str, bucket_width: int, scan_limit: int,
                 growth_since: str, log_since: str) -> dict[str, Any]:
        """What the health view plots: recall latencies by bucket, growth per day, entity kinds, the
        queue, and the slowest and empty recalls since `log_since`."""
        ...

    # ---- threads and context
    def last_memory(self, tx: Any, namespace: str) -> dict[str, Any] | None:
        """The namespace's most recently written memory: {thread, thread_by, source, metadata, valid_from,
        created_at} (thread inference reads it inside the write transaction)."""
        ...

    def thread_neighbours(self, flt: Filter, seqs: Sequence[int], span: int,
                          asserted: bool = False) -> dict[int, tuple[list[int], list[int]]]:
        """For each of `seqs` in a thread (with `asserted`, only a thread a client or a session asserts):
        its neighbours that pass `flt`, up to `span` positions before and after, nearest first."""
        ...

    def thread_view(self, namespace: str, chunk_id: str, span: int) -> ThreadView | None:
        """A memory's thread and its live neighbours (memory_history, a full hit, the dashboard)."""
        ...

    def nearest_context(self, flt: Filter, qv: np.ndarray, k: int) -> list[int]:
        """The k nearest context vectors (a memory with its thread neighbours) that pass `flt`."""
        ...

    def dates_of(self, seqs: Sequence[int]) -> dict[int, str]:
        """Derived date text of the chunks that have some."""
        ...

    # ---- the embedding queue
    def queued(self, limit: int, skip: Collection[int] = ()) -> list[QueuedChunk]:
        """Up to `limit` queued chunks, fewest failures first, none of `skip` (the seqs another embedding
        worker of this process holds); PostgreSQL claims them for this daemon."""
        ...

    def pending(self, namespace: str | None = None) -> int: ...

    def embed_failed(self, seqs: Sequence[int], error: str) -> None: ...

    # ---- the context-window queue (embedded only when the embedding queue is empty)
    def context_queued(self, limit: int, skip: Collection[int] = ()) -> list[tuple[int, int, list[str]]]:
        """Queued windows not in `skip`: (seq, gen, texts in thread order); no texts when the memory gets no
        context vector."""
        ...

    def context_queued_vectors(self, limit: int,
                               unmade: bool = False) -> list[tuple[int, int, list[tuple[int, np.ndarray | None]]]]:
        """Queued windows as context_queued gives them, with each member's (thread distance, own vector or
        None while not written) in place of its text (context_mode "mean": no model call). With `unmade`,
        only windows that have no context vector yet (context_mode "staged")."""
        ...

    def pending_context(self, namespace: str | None = None) -> int: ...

    def index_building(self, namespace: str | None = None) -> int:
        """Approximate-index builds and compactions running now, of `namespace` or of all (recall searches
        exactly meanwhile)."""
        ...

    def write_contexts(self, tx: Any, items: Sequence[tuple[int, int, np.ndarray | None]], keep: bool = False) -> int:
        """Store or remove each (seq, gen, vector) and dequeue it, unless it was re-queued meanwhile; returns done.
        With `keep` (a provisional vector, context_mode "staged") each stays queued for its text vector, and
        on PostgreSQL its claim goes back."""
        ...

    def context_failed(self, seqs: Sequence[int], error: str) -> None: ...


def chunk_filter(namespace: str, **kw: Any) -> Filter:
    """A Filter with list arguments turned into tuples."""
    if "tags" in kw and kw["tags"] is not None:
        kw["tags"] = tuple(kw["tags"])
    return Filter(namespace, **{k: v for k, v in kw.items() if v is not None})


__all__ = ["Filter", "NewChunk", "Neighbours", "QueuedChunk", "Store", "ThreadView", "chunk_filter", "Iterator"]
