"""Entity names: normalization, stock-code canonical forms, and finding entity mentions in text.

Pure functions with no database and no global state beyond lazily loaded, read-only segmenters.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from contract.errors import InvalidArgument
from lang import entity_kinds

# ---------------------------------------------------------------- normalization

_WS = re.compile(r"\s+")
# C0/C1 controls (but tab/newline) and the bidi embedding/override/isolate marks.
_STRIP_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")


def strip_controls(text: str) -> str:
    """Drop control and bidi-override characters (kept: tab and newlines)."""
    return _STRIP_CHARS.sub("", text)


def norm(name: str) -> str:
    """The lookup key of a name: NFKC (folds full-width), case-folded, single-spaced; stock codes canonical."""
    folded = _WS.sub(" ", unicodedata.normalize("NFKC", name)).strip()
    stock = canonical_stock(folded)
    if stock:
        return stock.casefold()
    return folded.casefold()


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def cjk_ratio(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _CJK.match(c)) / len(letters)


def detect_lang(text: str) -> str:
    """'zh' when CJK characters are a real share of the letters, else 'en'."""
    return "zh" if cjk_ratio(text) >= 0.2 else "en"


# ---------------------------------------------------------------- stock codes

_A_SHARE_PREFIXED = re.compile(r"^(sh|sz|bj)(\d{6})$", re.I)
_A_SHARE_SUFFIXED = re.compile(r"^(\d{6})\.(sh|sz|bj|ss)$", re.I)
_A_SHARE_BARE = re.compile(r"^\d{6}$")
_HK_PREFIXED = re.compile(r"^hk(\d{4,5})$", re.I)
_HK_SUFFIXED = re.compile(r"^(\d{4,5})\.hk$", re.I)
_US_DOLLAR = re.compile(r"^\$([A-Za-z]{1,5}(?:\.[A-Za-z])?)$")
_US_SUFFIXED = re.compile(r"^([A-Za-z]{1,5})\.us$", re.I)

# Inside free text: the forms that are unambiguous without a kind hint.
STOCK_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:sh|sz|bj)\d{6}|\d{6}\.(?:sh|sz|bj|ss)|hk\d{4,5}|\d{4,5}\.hk|\d{6})(?![A-Za-z0-9.])"
    r"|(?<![A-Za-z0-9$])\$[A-Za-z]{1,5}(?![A-Za-z])",
    re.I,
)


def _a_share_exchange(code: str) -> str | None:
    if code[0] in "569":
        return "SH"
    if code[0] in "0123":
        return "SZ"
    if code[0] in "48":
        return "BJ"
    return None


def canonical_stock(text: str, assume_ticker: bool = False) -> str | None:
    """The canonical form of a stock code, or None if `text` is not one.

    sh600089, SH600089, 600089.SH and 600089 → 600089.SH; 0700.HK and hk00700 → 00700.HK;
    $AAPL (and AAPL when `assume_ticker`, i.e. the caller said kind=stock) → AAPL.
    """
    s = text.strip()
    if m := _A_SHARE_PREFIXED.match(s):
        return f"{m.group(2)}.{m.group(1).upper()}"
    if m := _A_SHARE_SUFFIXED.match(s):
        ex = m.group(2).upper()
        return f"{m.group(1)}.{'SH' if ex == 'SS' else ex}"
    if _A_SHARE_BARE.match(s):
        ex = _a_share_exchange(s)
        return f"{s}.{ex}" if ex else None
    if m := _HK_PREFIXED.match(s) or _HK_SUFFIXED.match(s):
        return f"{int(m.group(1)):05d}.HK"
    if m := _US_DOLLAR.match(s):
        return m.group(1).upper()
    if m := _US_SUFFIXED.match(s):
        return m.group(1).upper()
    if assume_ticker and re.fullmatch(r"[A-Za-z]{1,5}(?:\.[A-Za-z])?", s):
        return s.upper()
    return None


def stock_codes_in(text: str) -> list[str]:
    """Canonical stock codes mentioned in free text, in order, without repeats."""
    seen: dict[str, None] = {}
    for m in STOCK_IN_TEXT.finditer(unicodedata.normalize("NFKC", text)):
        code = canonical_stock(m.group(0))
        if code:
            seen.setdefault(code, None)
    return list(seen)


# ---------------------------------------------------------------- mentions in text


@dataclass(frozen=True)
class Mention:
    name: str
    kind: str


_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})")
# Product names with dots (Next.js, Node.js, ASP.NET): a capital, then dotted parts with no space between.
_DOTTED = re.compile(r"(?<![\w@#$.])[A-Z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)+(?!\w)(?!\.\w)")
_POSSESSIVE = re.compile(r"['’]s\b|(?<=s)['’](?!\w)")
# Organisation words at the end of a name (Acme Corp, Deutsche Bank) and place words (Lake Tahoe).
_ORG_WORDS = frozenset("inc inc. corp corp. corporation ltd ltd. llc gmbh ag co co. company group bank labs lab "
                       "university college institute foundation association agency studio studios systems "
                       "technologies capital partners ventures holdings".split())
_PLACE_WORDS = frozenset("city street road avenue lake river mountain mount island bay county province state "
                         "park valley beach airport station".split())
# Honorifics and kinship terms before a name ("Dr. Sousa", "Mrs Patel", "Grandma Rose"): no name themselves,
# and the word after them names a person.
HONORIFICS = frozenset("dr doctor mr mrs ms mx miss prof professor sir dame madam rev reverend grandma grandpa "
                       "granny grandad uncle aunt auntie coach".split())
_HONORIFIC_BEFORE = re.compile(r"\b(?:" + "|".join(sorted(HONORIFICS)) + r")\.?\s+$", re.I)
# Head nouns of job titles: "Senior Staff Engineer", "Head of Platform" name a role, not one entity.
_ROLE_WORDS = frozenset("engineer engineers developer developers manager managers director directors head lead "
                        "officer president designer analyst architect scientist intern administrator consultant "
                        "coordinator specialist recruiter chair".split())
# Contractions ("You've", "We'll", "Can't", "She'd") are sentence fragments, never names.
_CONTRACTION = re.compile(r"(?:['’](?:ve|ll|re|d|m)|n['’]t)$", re.I)
# Plural acronyms ("DAGs", "PRs", "PDFs") are kinds of things, not a name nor part of one.
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")
# A product line with a model code ("ThinkPad X1 Carbon Gen 11", "MacBook Air M2"): one name, numbers
# included, when a code of capitals and digits (X1, M2, S24; not a quarter, Q3) sits among its words.
_MODEL_CODE = re.compile(r"(?!Q[1-4]$)[A-Z]{1,3}\d{1,4}[a-z]?")
_MODEL_TOKEN = re.compile(r"[A-Za-z0-9]+")
# Brand names that start with one small letter (iPhone, iPad, eBay, iOS).
_SMALL_CAP = re.compile(r"(?<![\w@#$.-])[a-z][A-Z][A-Za-z]+(?![\w-])")
_PERSON_CUE = re.compile(r"^\s*(?:said|says|told|asked|thinks|wants|likes|loves|prefers|uses|hates|reviews|"
                         r"lives|lived|works|worked|"
                         r"leads|manages|joined|moved|and\s+I|['’]s\s+(?:wife|husband|partner|son|daughter|mother|"
                         r"father|brother|sister|friend|boss|cat|dog|birthday))\b")
# "ask Priya", "met Sam Altman": a verb whose object is a person; "works at Stripe", "Henrik from Spotify".
_PERSON_BEFORE = re.compile(r"\b(?:ask|asked|met|meet|told|tell|ping|pinged|thank|thanks|call|called|email|"
                            r"emailed|pair|pairs|paired)\s+(?:with\s+)?$", re.I)
_ORG_BEFORE = re.compile(r"\b(?:(?:works?|worked|working|interns?|interned|jobs?)\s+(?:at|for)|joined|"
                         r"contract\s+with|[A-Z][a-z]+\s+from)\s+$")
# A name greeted or thanked at the start of a turn is a person ("Bye Joanna!", "Thanks, Nate").
_GREETED = re.compile(r"(?:^|[.!?:\n]\s*)(?:hi|hello|hey|bye|goodbye|thanks|thank\s+you|congrats|"
                      r"congratulations|welcome|dear|good\s+(?:morning|night))[,!]?\s+$", re.I)
_FROM_ORG = re.compile(r"^\s+from\s+(?:the\s+)?[A-ZÀ-ÖØ-Þ]")  # "Sarah from Acme Corp": a person from an org
_PLACE_CUE = re.compile(r"\b(?:in|to|from|near|at|visit|visited|visiting|based in|moved to|lives in|flew to)\s+$")
_HASHTAG = re.compile(r"(?<![\w#&])#([^\s#\d][^\s#]{0,63})")
_UP, _LOW = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"  # Latin capitals and small letters, accented ones included (Müller)
_WORD_CAP = f"[{_UP}][{_UP}{_LOW}'’-]*[{_LOW}][{_UP}{_LOW}'’-]*"
_PROPER = re.compile(rf"\b{_WORD_CAP}(?:\s+(?:of\s+|de\s+|van\s+)?{_WORD_CAP})*")
_ACRONYM_NAME = re.compile(rf"(?<![\w$@#.-])([A-Z]{{2,5}}) ({_WORD_CAP})(?![\w'’-])")
# Capitalized words that start sentences or questions, not names.
FUNCTION_WORDS = frozenset(
    """a an the this that these those it its i we you he she they my our your his her their me us them
    what when where who whom whose why which how is are was were be been am do does did done have has had
    can could should would will shall may might must if then else and or but so because since as at by
    for from in into of on to with without about after before during until while also yes no not ok okay
    hi hello hey thanks thank please sorry well oh wow yeah yep nope sure just maybe today yesterday
    tomorrow tonight now then there here let lets let's any some all every each both either neither
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july
    august september october november december great good nice cool awesome congrats congratulations
    that's it's i'm i've i'd i'll you're we're they're there's here's what's how's""".split()
) | frozenset(  # interjections and spoken contractions: chat turns start with them ("Bye Joanna!", "Woah,")
    """bye goodbye whoa woah aww awww aw ah ahh ahem uh um uhh umm hmm mmm mm huh yay yup yea nah nope oops
    phew ugh oof ouch yum yikes haha hah ha lol gosh geez jeez welp gotcha gonna wanna gotta lemme kinda
    sorta dunno y'all ya""".split()
) | frozenset(  # sentence adverbs ("Honestly the new camera…"); not any word in -ly: Ledgerly, Calendly are names
    """honestly actually basically really seriously personally hopefully luckily unfortunately fortunately
    finally obviously apparently definitely absolutely totally literally certainly clearly surely probably
    lately recently thankfully sadly ideally generally usually normally originally eventually currently
    anyway anyways meanwhile otherwise besides instead perhaps""".split()
)

_jieba_lock = threading.Lock()
_posseg = None
# A CJK run longer than this is segmented in its first MAX_SEGMENT_CHARS characters only: real text
# breaks into runs at punctuation, and the cost of a segmenter grows with the run (docs/BENCHMARKS.md).
MAX_SEGMENT_CHARS = 4096


class _Tagger:
    """rjieba (jieba-rs: jieba's dictionary and cuts, in Rust) with jieba.posseg's `cut` shape."""

    def __init__(self, rjieba: Any) -> None:
        self._rjieba = rjieba

    def cut(self, run: str) -> list[tuple[str, str]]:
        return self._rjieba.tag(run[:MAX_SEGMENT_CHARS])

    def words(self, run: str) -> list[str]:
        return self._rjieba.cut(run[:MAX_SEGMENT_CHARS])


def _jieba_posseg() -> _Tagger:
    """The part-of-speech segmenter, loaded once on first Chinese text. rjieba makes jieba's cuts
    (identical on the dev sets) at a fraction of its time and memory, and its tagger has no HMM pass
    over unknown characters (jieba.posseg took ~14 s for 1,000 random characters)."""
    global _posseg
    with _jieba_lock:
        if _posseg is None:
            # Deferred: the segmenter (tens of MB): loaded on the first Chinese text.
            import rjieba

            _posseg = _Tagger(rjieba)
    return _posseg


_CN_KINDS = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "org", "nz": "concept"}


# Words that end an organisation's name (星展银行, 全季酒店, 苹果公司) after a word that names it.
ZH_ORG_SUFFIXES = ("银行", "公司", "集团", "大学", "学院", "酒店", "医院", "研究所", "研究院", "证券", "科技", "基金")
# Tags of words that cannot be, or end, the given name after a surname (潘/nr 婷婷/z → 潘婷婷).
_NOT_GIVEN_TAGS = ("v", "p", "u", "d", "c", "r", "m", "t", "x", "f", "q", "y", "e", "o", "a", "eng")
MAX_NAME_TOKENS = 4  # jieba tokens that one dictionary name may span (字节/跳动, 海底/捞)


def _proper_only(word: str, lexicon: Any) -> str | None:
    """The kind of a word CC-CEDICT lists as a proper name and not also as an ordinary word, else None.

    小米 (Xiaomi, also millet) and 大理 (Dali, also a judge) are ordinary words too; 苹果公司's only gloss
    is its own name, Apple Inc.
    """
    named = lexicon.zh_names.get(word)
    if not named:
        return None
    names = {n.casefold() for n, _ in named}
    if any(g not in names for g in lexicon.zh2en.get(word, ())):
        return None
    return next((k for _, k in named if k != "concept"), "concept")


def _jieba_kind(word: str, flag: str, lexicon: Any) -> str | None:
    """The kind of one jieba word from its tag and CC-CEDICT, or None when it is no name."""
    kind = _CN_KINDS.get(flag)
    if not kind or len(word) < 2:
        return None
    if lexicon is not None:
        named = lexicon.zh_names.get(word)
        if kind == "person" and not any(k == "person" for _, k in named or ()) and _not_a_person(word):
            return None
        if named:  # a name CC-CEDICT knows only as a thing (安卓 Android) is no person, whatever jieba says,
            # unless CC-CEDICT reads it as a person's name (李娜 [Li3 Na4]: its gloss then only lacks a known kind)
            thing = kind == "person" and word not in entity_kinds.zh_person_readings()
            kind = next((k for _, k in named if k != "concept"), "concept" if thing else kind)
        elif kind != "person" and word in lexicon.zh2en:
            return None
        elif kind == "concept":
            return None  # jieba's "other proper noun" outside the dictionary is mostly a common phrase
        elif kind == "person" and (len(word) > 4 or word in lexicon.zh2en or word[:2] in lexicon.zh2en):
            return None  # a person's name is not, and does not start with, an ordinary word (连接池)
    return kind


def _not_a_person(word: str) -> bool:
    """A word jieba tags as a person that CC-CEDICT reads as an ordinary word (清仓, 贝斯 bass guitar), or a
    verb-object phrase, a character no surname is followed by an ordinary word (喝咖啡 to drink coffee)."""
    ordinary = entity_kinds.zh_ordinary_words()
    return word in ordinary or (word[0] not in entity_kinds.zh_surnames() and word[1:] in ordinary)


def chinese_mentions(text: str, lexicon: Any = None) -> list[Mention]:
    """Names jieba tags as person, place, organisation or other proper noun.

    With the CC-CEDICT `lexicon` (crosslingual.Lexicon), a word the dictionary lists as a proper name takes
    the kind its gloss names (北京: place, 华为: org), and a word it lists only as an ordinary word (城市,
    连接池) is dropped unless jieba calls it a person. The dictionary also finds the names jieba cuts in
    pieces (字节/跳动 → 字节跳动, 海底/捞 → 海底捞); a name before an organisation word is one
    organisation (星展/银行 → 星展银行), and a surname before a short given name is one person (潘/婷婷).
    """
    out = []
    for run in _CJK_RUN.findall(text):
        toks = [_Tok(w, f) for w, f in _jieba_posseg().cut(run)]
        i = 0
        while i < len(toks):
            got = _chinese_name_at(toks, i, lexicon)
            if got:
                name, kind, i = got
                out.append(Mention(name, kind))
                continue
            i += 1
    return out


class _Tok(NamedTuple):
    """One segmented word and its part-of-speech tag (rjieba gives them as pairs)."""

    word: str
    flag: str


def _chinese_name_at(toks: list[_Tok], i: int, lexicon: Any) -> tuple[str, str, int] | None:
    """(name, kind, the index after it) for a name that starts at token i, or None."""
    word, flag = toks[i].word, toks[i].flag
    if flag == "t":
        return None  # time words (周三, 春节) are capitalised in CC-CEDICT's pinyin but name no entity
    if lexicon is not None:
        for j in range(min(len(toks), i + MAX_NAME_TOKENS), i + 1, -1):
            joined = "".join(t.word for t in toks[i:j])
            kind = _proper_only(joined, lexicon) if len(joined) <= MAX_CJK_SUBSTRING else None
            if kind:
                return joined, kind, j
    kind = _jieba_kind(word, flag, lexicon)
    if kind == "person" and len(word) == 3 and word[2] in _zh_function_chars():
        return word[:2], kind, i + 1  # 谢婷用 (Vim), 郑浩是: jieba glued a verb to a two-character name
    unknown_noun = kind is None and flag.startswith("n") and lexicon is not None and word not in lexicon.zh2en
    if lexicon is not None and i + 1 < len(toks) and toks[i + 1].word in ZH_ORG_SUFFIXES and len(word) >= 2 \
            and (kind not in (None, "place") or unknown_noun):  # 星展/银行, but 深圳/研究所 stays a place
        return word + toks[i + 1].word, "org", i + 2
    if kind is None and lexicon is not None and len(word) >= 2 and _proper_only(word, lexicon):
        kind = _proper_only(word, lexicon)  # a name jieba tags as an ordinary noun (百度/n, 钉钉/n)
    if kind is None and flag == "nr" and len(word) == 1 and i + 1 < len(toks):
        given = toks[i + 1]
        if 1 <= len(given.word) <= 2 and _CJK.match(given.word) and not given.flag.startswith(_NOT_GIVEN_TAGS):
            return word + given.word, "person", i + 2
    if kind is None:
        return None
    return word, kind, i + 1


def cjk_words(text: str) -> list[str]:
    """The words of the CJK runs in `text`, segmented as jieba does (each run bounded in length)."""
    if not has_cjk(text):
        return []
    seg = _jieba_posseg()
    return [w for run in _CJK_RUN.findall(text) for w in seg.words(run)]


_ACRONYM = re.compile(r"(?<![\w$@#.-])[A-Z][A-Z0-9&]{1,5}(?![\w-])")
# All-caps words that are not names.
NOT_ACRONYMS = frozenset("I A OK AM PM TV ID FAQ FYI ASAP ETA TBD TODO LOL OMG BTW IMO IMHO PS NB RE CC BCC".split())
# All-caps words for kinds of things and roles, not for one named thing (the API, our CTO, the ETL jobs).
# CI stays a name: a team has one CI system, and questions name it ("before we switched CI providers").
GENERIC_ACRONYMS = frozenset("""API APIS SDK CLI GUI UI UX ML AI LLM ETL CTO CEO CFO COO CPO VP HR QA PR PRS MR
    DB SQL OS CPU GPU RAM SSD HDD PDF CSV JSON XML YAML HTML CSS URL URI HTTP HTTPS DNS TLS SSL VPN IP TCP UDP
    KPI OKR SLA SLO MVP ROI PM PMS EOD EOW OOO WFH PTO SRE SRES SWE SDE EM TL PO""".split())
_SENTENCE_START = re.compile(r"(?:^|[.!?:;。！？；\n]\s*|^\W*)$")


_INFLECTIONS = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("d", ""))


def _is_common(word: str, common_words: Container[str]) -> bool:
    """An ordinary English word in any of its inflections (Deploys, Moved, Running, Getting)."""
    w = word.casefold()
    forms = [w]
    for suf, rep in _INFLECTIONS:
        if w.endswith(suf) and len(w) - len(suf) >= (2 if suf == "ing" else 3):  # Being, Doing
            stem = w[: -len(suf)]
            forms.append(stem + rep)
            if suf in ("ed", "ing") and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                forms.append(stem[:-1])  # getting → get, planned → plan (but not calling → cal)
    return any(f in common_words for f in forms)


def _is_function_word(name: str) -> bool:
    """A function word, weekday or month, also in the plural ("on Fridays", "Mondays are quiet")."""
    w = name.casefold()
    return w in FUNCTION_WORDS or (w.endswith("s") and w[:-1] in FUNCTION_WORDS and w[:-1].endswith("day"))


def _is_irregular_past(word: str) -> bool:
    return word.casefold() in entity_kinds.IRREGULAR_PAST


def _zh_function_chars() -> frozenset[str]:
    return entity_kinds.zh_function_chars()


def _english_verbs() -> frozenset[str]:
    return entity_kinds.english_verbs()


_SUBJECT_OF = re.compile(r"^\s*(?:is|are|was|were|has|have|had|will|would|can|could|should|did|does|said|"
                         r"says)\b")


def _leading_verb(words: list[str], piece: str, before: str, after: str, verbs: frozenset[str],
                  lexicon: Any) -> bool:
    """Whether the first of several capitalised words is a verb that starts the sentence, not part of the
    name: "Prefers PostgreSQL", "Use Sentry", "Met Sam Altman", but not "Lake Geneva", "Mark Chen" (a given
    name), "United States" (CC-CEDICT knows the whole name) or "Trail of Bits" (a name joined by "of")."""
    first = words[0]
    if not _SENTENCE_START.search(before + piece[: piece.find(first)]):
        return False
    if first.casefold() in _PLACE_WORDS | _ORG_WORDS or words[1].casefold() in ("of", "de", "van"):
        return False
    if _SUBJECT_OF.match(after):
        return False  # "Grace Hopper is ...": the capitalised words are the subject, a name
    if lexicon is not None and (" ".join(words).casefold() in lexicon.en_names
                                or first.casefold() in lexicon.given_names):
        return False
    return entity_kinds.is_verb(first, verbs)


def _dictionary_kind(name: str, lexicon: Any) -> str | None:
    """The kind CC-CEDICT gives this very name: a place, org or person it glosses by this name, not by a
    longer one. "Kafka" is only the surname in Franz Kafka: a surname alone is no evidence of a person (the
    tool Kafka). An acronym must be written so in the dictionary too: "CI" is not 磁县 (Ci, a county)."""
    for zh in lexicon.en_names.get(name.casefold(), ()):
        for named, kind in lexicon.zh_names.get(zh, ()):
            same = named == name if name.isupper() else named.casefold() == name.casefold()
            if kind != "concept" and same:
                return kind
    return None


def english_kind(name: str, before: str, after: str, lexicon: Any = None) -> str:
    """person, place, org or concept for an English name, from its own words, CC-CEDICT and its context."""
    words = name.split()
    last = words[-1].casefold()
    if last in _ORG_WORDS and len(words) > 1:
        return "org"
    if _HONORIFIC_BEFORE.search(before[-16:]) and not name.isupper():
        return "person"  # "Dr. Sousa", "Mrs Patel"
    if lexicon is not None:
        kind = _dictionary_kind(name, lexicon)
        if kind:
            return kind
        if len(words) in (2, 3) and (words[0].casefold() in lexicon.given_names or any(
                k == "person" for zh in lexicon.en_names.get(last, ()) for _, k in lexicon.zh_names.get(zh, ()))):
            return "person"  # a known given name or surname: Bob Müller, Alice Chen
    if last in _PLACE_WORDS and len(words) > 1:
        return "place"
    if _ORG_BEFORE.search(before[-30:]):
        return "org"
    if _PLACE_CUE.search(before[-20:]) and not name.isupper():
        if lexicon is not None and name.casefold() in lexicon.given_names \
                and name.casefold() not in lexicon.common_en:
            return "person"  # "to Leo", "from Elena": a given name (not also a word, as Go is) after "to"
        if lexicon is None:
            return "place"
        kinds = {k for zh in lexicon.en_names.get(name.casefold(), ()) for _, k in lexicon.zh_names.get(zh, ())}
        return "place" if kinds - {"person"} else "concept"  # "to Bach": a surname the dictionary knows
    if (_PERSON_CUE.match(after) or _FROM_ORG.match(after) or _PERSON_BEFORE.search(before[-20:])
            or _GREETED.search(before[-24:])) and not name.isupper():
        return "person"
    return "concept"


def _is_role_title(words: list[str], common_words: Container[str] | None) -> bool:
    """A job title in capitals ("Senior Staff Engineer", "Head of Platform"): ordinary words around a role."""
    if not common_words or len(words) < 2:
        return False
    low = [w.casefold() for w in words]
    role = low[-1] in _ROLE_WORDS or (low[0] in _ROLE_WORDS and low[1] == "of")
    return role and all(w in ("of", "and") or _is_common(w, common_words) for w in low)


def _trim_name(words: list[str]) -> tuple[list[str], int]:
    """The words of a name without leading function words and contractions ("What Alice said", "You've"),
    a leading honorific ("Dr Sousa"), trailing joiners and plural acronyms ("Airflow DAGs"); and how many
    function words led."""
    lead = 0
    while words and (words[0].casefold().strip("'’") in FUNCTION_WORDS or _CONTRACTION.search(words[0])):
        words.pop(0)
        lead += 1
    if words and words[0].casefold().rstrip(".") in HONORIFICS:
        words.pop(0)
    while words and (words[-1].casefold() in ("of", "de", "van") or _PLURAL_ACRONYM.fullmatch(words[-1])):
        words.pop()
    return words, lead


def _model_part(tok: str) -> str:
    """'code', 'word' (Carbon, ThinkPad, iPhone), 'number' (up to four digits) or '' for a product-line token."""
    if _MODEL_CODE.fullmatch(tok):
        return "code"
    if tok[0].isupper() and tok.isalpha() and not tok.isupper() or (len(tok) > 2 and tok[0].islower()
                                                                    and tok[1].isupper() and tok.isalpha()):
        return "word"
    return "number" if tok.isdigit() and len(tok) <= 4 else ""


def _model_lines(text: str) -> list[tuple[int, int]]:
    """Spans of product lines with a model code: from each code, out over the words, codes and numbers
    one space apart, starting at a word. Linear in the text (a single regex for this backtracked badly)."""
    toks = [(m.start(), m.end(), m.group(0)) for m in _MODEL_TOKEN.finditer(text)]
    parts = [_model_part(t) for _, _, t in toks]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if parts[i] != "code" or (out and toks[i][0] < out[-1][1]):
            i += 1
            continue
        lo = hi = i
        while lo > 0 and parts[lo - 1] and text[toks[lo - 1][1]:toks[lo][0]] == " ":
            lo -= 1
        while hi + 1 < len(toks) and parts[hi + 1] and text[toks[hi][1]:toks[hi + 1][0]] == " " \
                and not re.match(r"[.,]\d", text[toks[hi + 1][1]:toks[hi + 1][1] + 2]):  # not "3" of 3.12
            hi += 1
        while lo < i and parts[lo] != "word":
            lo += 1  # a line starts at a word ("ThinkPad X1"), not at a number
        start, end = toks[lo][0], toks[hi][1]
        if parts[lo] == "word" and text[start - 1:start] not in ("@", "#", "$", ".", "-", "_") \
                and text[end:end + 1] not in ("-", "_"):
            out.append((start, end))
        i = hi + 1
    return out


def _special_names(text: str) -> tuple[list[Mention], list[tuple[int, int]]]:
    """Names the capitalised-word scan would cut or miss, and their spans: dotted (Next.js), product lines
    with a model code (ThinkPad X1 Carbon), brands with a small first letter (iPhone), acronym plus word
    (VS Code)."""
    out: list[Mention] = []
    spans: list[tuple[int, int]] = []
    for m in _DOTTED.finditer(text):
        out.append(Mention(m.group(0), "concept"))
        spans.append((m.start(), m.end()))
    for a, b in _model_lines(text):
        if not any(x <= a < y for x, y in spans):
            out.append(Mention(text[a:b], "concept"))
            spans.append((a, b))
    for m in _SMALL_CAP.finditer(text):
        if not any(a <= m.start() < b for a, b in spans):
            out.append(Mention(m.group(0), "concept"))
            spans.append((m.start(), m.end()))
    for m in _ACRONYM_NAME.finditer(text):
        if m.group(1) not in NOT_ACRONYMS | GENERIC_ACRONYMS and m.group(2).casefold() not in FUNCTION_WORDS \
                and not any(a <= m.start() < b for a, b in spans):
            out.append(Mention(m.group(0), "concept"))  # VS Code, AWS Lambda: an acronym naming with a word
            spans.append((m.start(), m.end()))
    return out, spans


def english_proper_nouns(text: str, common_words: Container[str] | None = None,
                         lexicon: Any = None) -> list[Mention]:
    """Capitalized names, product names with dots (Next.js) and all-caps acronyms (SAP, AWS), without
    sentence-initial function words, possessives ("Dana's" → Dana), honorifics, job titles or trailing
    punctuation.

    `common_words` (lowercase ordinary English words) drops a single capitalized word that only
    starts a sentence ("Never book meetings…", "Deploys go to…"); inside a sentence a capital still
    marks a name. With the CC-CEDICT `lexicon`, kinds come from the dictionary where it knows the name.
    """
    verbs = _english_verbs() if lexicon is not None else None
    out, spans = _special_names(text)
    for m in _PROPER.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        # "Alice Chen's GitHub" is two names: Alice Chen and GitHub.
        offset = m.start()
        for piece in _POSSESSIVE.split(m.group(0)):
            start = offset
            offset += len(piece) + 2
            words, lead = _trim_name(piece.split())
            if verbs and len(words) > 1 and _leading_verb(words, piece, text[:start], text[start + len(piece):],
                                                          verbs, lexicon):
                words.pop(0)  # "Ask Priya", "Met Sam Altman": the verb that starts the sentence is no name
            if not words or _is_role_title(words, common_words):
                continue
            name = " ".join(words).strip("'’-")
            if _is_function_word(name) or len(name) < 2 or name.casefold().rstrip(".") in HONORIFICS:
                continue
            at = text.find(name, start)
            at = start if at < 0 else at
            after = text[at + len(name):]
            if verbs and len(words) == 1 and not lead and _SENTENCE_START.search(text[:at]) \
                    and _is_irregular_past(name):
                continue  # "Flew to Tokyo": an irregular past tense that only starts the sentence
            if (common_words and len(words) == 1 and _is_common(name, common_words)
                    and (lead or _SENTENCE_START.search(text[:at])) and not _PERSON_CUE.match(after)):
                continue
            out.append(Mention(name, english_kind(name, text[:at], after, lexicon)))
    for m in _ACRONYM.finditer(text):
        word = m.group(0)
        if word not in NOT_ACRONYMS and word not in GENERIC_ACRONYMS and not word.isdigit() \
                and not canonical_stock(word):
            if any(a <= m.start() < b for a, b in spans):
                continue
            out.append(Mention(word, english_kind(word, text[: m.start()], text[m.end():], lexicon)))
    return out


def extract_mentions(text: str, common_words: Container[str] | None = None,
                     lexicon: Any = None) -> list[Mention]:
    """Entity mentions found in text: stock codes, @mentions, #tags, English proper nouns, Chinese names.

    Deduplicated by normalized name; the first kind seen wins. `lexicon` (crosslingual.Lexicon) tells
    places, people and organisations apart where CC-CEDICT knows the name.
    """
    found: dict[str, Mention] = {}

    def add(m: Mention) -> None:
        key = norm(m.name)
        if key and key not in found:
            found[key] = m

    for code in stock_codes_in(text):
        add(Mention(code, "stock"))
    for m in _MENTION.finditer(text):
        add(Mention("@" + m.group(1).rstrip(".-"), "person"))
    for m in _HASHTAG.finditer(text):
        add(Mention("#" + m.group(1).rstrip(".,;:!?"), "concept"))
    for mention in english_proper_nouns(text, common_words, lexicon):
        add(mention)
    if has_cjk(text):
        for mention in chinese_mentions(text, lexicon):
            add(mention)
    return list(found.values())


# ---------------------------------------------------------------- query candidates

_LATIN_TOKEN = re.compile(r"[$@#]?[0-9A-Za-z\u00c0-\u024f][0-9A-Za-z\u00c0-\u024f'’._-]*")
MAX_CJK_SUBSTRING = 8
MAX_CANDIDATES = 2000


def query_candidates(query: str) -> list[str]:
    """Normalized strings in a query that could name an entity: token n-grams, CJK substrings, codes.

    The entity lane looks these up by equality on an index, so no full scan of the alias table
    is needed even for a Chinese name inside an unsegmented sentence.
    """
    text = unicodedata.normalize("NFKC", query)
    out: dict[str, None] = {}
    for code in stock_codes_in(text):
        out.setdefault(code.casefold(), None)
    tokens = [t.rstrip("'’._-") for t in _LATIN_TOKEN.findall(text)]
    tokens = [t for t in tokens if t]
    for n in range(1, 5):
        for i in range(len(tokens) - n + 1):
            gram = " ".join(tokens[i : i + n])
            out.setdefault(norm(gram), None)
            if gram[0] in "$@#":
                out.setdefault(norm(gram[1:]), None)
    for run in _CJK_RUN.findall(text):
        for size in range(2, min(MAX_CJK_SUBSTRING, len(run)) + 1):
            for i in range(len(run) - size + 1):
                out.setdefault(run[i : i + size], None)
                if len(out) >= MAX_CANDIDATES:
                    return list(out)
    return list(out)


# ---------------------------------------------------------------- resolving and linking through a store

# The key of a Chinese person's name read in pinyin (林伟: "lin wei"), as an alias of that entity. A
# character no name's key starts with (a private-use one, valid in PostgreSQL text too) keeps it apart from
# the entity keys, so "Lin Wei" written in English is never resolved to 林伟's entity (nor two Chinese names
# read alike to each other), yet a question naming Lin Wei finds 林伟's memories (recall/lanes.py).
ROMANISED = "\ue000"


def romanised_key(reading: str) -> str:
    return ROMANISED + norm(reading)


COOCCUR_MAX = 8  # entities of one memory that get pairwise co_occurs relations (at most 28 pairs)
Wanted = tuple[str, "str | None", list[str]]  # (name, kind, aliases) as a caller or the extractor gives it


def with_mentions(explicit: list[Wanted], mentions: list[Wanted]) -> list[Wanted]:
    """The caller's entities, then the extracted ones they do not already name."""
    seen = {norm(n) for n, _, _ in explicit}
    return [*explicit, *(m for m in mentions if norm(m[0]) not in seen)]


def resolve(store: Any, tx: Any, namespace: str, name: str, kind: str | None, aliases: list[str],
            now: str, readings: Sequence[str] = ()) -> dict[str, Any]:
    """Find an entity by name or alias in the namespace, or create it; record new aliases.

    A stock is stored under its canonical code, with the name it was given as an alias. `readings` (a
    Chinese person's name in pinyin) are recorded under romanised_key.
    """

    display = name
    if kind == "stock":
        code = canonical_stock(name, assume_ticker=True)
        if code:
            display = code
            if norm(name) != norm(code):
                aliases = [name, *aliases]
    key = norm(display)
    if not key:
        raise InvalidArgument("arg.empty", name="entities[].name")
    pairs = [(norm(a), a) for a in aliases]
    pairs = [p for p in pairs if p[0]] + [(romanised_key(r), r.title()) for r in readings if norm(r)]
    return store.resolve_entity(tx, namespace, display, key, kind, pairs, now)


def link(store: Any, tx: Any, namespace: str, seq: int, wanted: list[Wanted], now: str, *, limit: int,
         cooccurs: bool, romanise: Callable[[str], Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """Resolve the wanted entities and link them to chunk `seq`; with `cooccurs`, pair them up. With
    `romanise` (crosslingual.romanised), a Chinese person's name also gets its pinyin readings."""
    linked: dict[str, dict[str, Any]] = {}
    for name, kind, aliases in wanted[:limit]:
        readings = romanise(name) if romanise is not None and kind == "person" and has_cjk(name) else ()
        ent = resolve(store, tx, namespace, name, kind, aliases, now, readings)
        if ent["id"] not in linked:
            linked[ent["id"]] = ent
            store.link_entity(tx, seq, ent["id"])
    if cooccurs and len(linked) > 1:
        ids = list(linked)[:COOCCUR_MAX]
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                store.bump_cooccur(tx, namespace, a, b, now)
    return list(linked.values())
