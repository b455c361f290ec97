"""Predicate-aware reranking of the fused candidates: a pure function per candidate, no model, no I/O.

`predicate_classes(text)` maps text to the classes of what it states (residence, work, decision, fix,
buy, sell, …) through verb synonyms and vocabulary bridges in English and Chinese. `rerank_score`
adjusts one candidate's fused score: a shared predicate class, numbers for "how many", the newest
version for "now", a penalty for a superseded version or a missing required name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import entity_resolve as er
from lang import timeground
from lang.query_plan import Analysis
from recall.fusion import RRF_K

UNIT = 1.0 / (RRF_K + 1)  # the RRF score of a rank-1 hit in one lane; bonuses are fractions of it

# class -> (English words/phrases, Chinese words). English entries are matched as whole words,
# with an optional plural/verb suffix; Chinese entries as substrings.
CLASSES: dict[str, tuple[str, str]] = {
    "residence": ("live|lives|living|lived|reside|resides|resident|based|move|moved|moving|relocate|relocated|"
                  "home|city|hometown|settle|settled|apartment|flat",
                  "住|居住|搬到|搬家|搬去|定居|住在|城市|老家|公寓"),
    "work": ("work|works|worked|working|employ|employed|employer|employs|role|position|company|hired|"
             "join|joined|career|profession|living|occupation|lead|leads|engineer|manager|owns|responsible|"
             "startup|firm|intern",
             "工作|任职|就职|职位|公司|上班|负责|担任|职业|跳槽|入职|上班|做什么|经理|工程师|医生|老师|打工|写后端|角色"),
    "decision": ("decide|decided|decision|chose|choose|chosen|picked|pick|settled|agreed|went with|selected|"
                 "select|opted|ruled out|choice|plan|planned|switched to|switch to|migrated to|instead",
                 "决定|选定|选了|选择|最后用|定了|采用|选型|没选|敲定|方案|拍板|作废|改用|换用|换成"),
    "fix": ("fix|fixed|fixes|patch|patched|resolve|resolved|solved|solve|root cause|cause|caused|bug|broke|"
            "broken|failing|flaky|leak|error|outage",
            "修复|解决|修好|根因|原因|查到|故障|事故|报错|泄漏|时好时坏|问题|导致"),
    "buy": ("buy|buying|bought|purchase|purchased|position|entry|entered|adding|add|accumulate|long|shares|pay|paid",
            "建仓|买入|加仓|买|入场|持仓|开仓|股"),
    "sell": ("sell|selling|sold|trim|trimmed|reduce|reduced|exit|exited|dump|cut|lose|lost|loss",
             "减仓|卖出|清仓|卖|抛|止损|亏"),
    "price": ("price|target|cost|paid|pay|valuation|stop|level|dividend|payout",
              "价|目标价|成本|价位|止损|分红|派息|元|美元"),
    "schedule": ("meeting|meetings|sync|appointment|schedule|scheduled|rescheduled|slot|calendar|weekly|"
                 "standup|call|calls|when|date|time|day",
                 "会|周会|例会|预约|改期|时间|几点|日程|哪天|哪一天|每周|周[一二三四五六日]|星期"),
    "database": ("database|databases|db|postgres|postgresql|mysql|sqlite|mongodb|cockroachdb|dynamodb|"
                 "sql|pgbouncer|jsonb|schema",
                 "数据库|库|表结构"),
    "deploy": ("deploy|deployed|deployment|host|hosted|hosting|fargate|ec2|server|servers|cloud|aws|gcp|azure|"
               "kubernetes|k8s|region|run on|runs on|production|prod|staging|infra|infrastructure",
               "部署|上线|服务器|运维|云|机房|区域|生产环境|集群"),
    "device": ("laptop|notebook|machine|computer|macbook|thinkpad|pc|desktop|phone|device|hardware",
               "电脑|笔记本|主力机|手机|设备|机器"),
    "limit": ("limit|limits|cap|capped|max|maximum|at most|quota|rate|throttle|threshold|exceed",
              "限流|上限|最多|限制|额度|不超过|超过|阈值"),
    "queue": ("queue|queues|worker|workers|job|jobs|streams|sqs|kafka|rabbitmq|celery|async|middleware|broker",
              "队列|任务|中间件|消息|异步"),
    "family": ("wife|husband|spouse|partner|daughter|son|kid|kids|child|children|brother|sister|mother|father|"
               "mom|dad|parents|family",
               "太太|妻子|老婆|丈夫|老公|爱人|另一半|女儿|儿子|孩子|哥哥|弟弟|姐姐|妹妹|父母|妈妈|爸爸|家人"),
    "preference": ("like|likes|love|loves|favorite|favourite|prefer|prefers|preference|hate|hates|can't stand|"
                   "allergic|allergy|allergies|avoid|never|enjoy|obsessed",
                   "喜欢|爱|最爱|讨厌|偏好|过敏|避开|不要|别再|只用|讲究"),
    "travel": ("fly|flying|flight|trip|travel|traveling|hotel|conference|visit|vacation|holiday",
               "飞|出差|酒店|旅行|旅游|参加|会议|度假"),
    "health": ("doctor|dentist|clinic|hospital|health|sick|medicine|allergic|allergy",
               "医生|牙医|诊所|医院|健康|看牙|过敏|生病"),
    "review": ("review|reviews|reviewer|reviewers|approve|approval|sign off|merge|pr|pull request|codeowners",
               "评审|审核|合并|approve|代码审查"),
    "logging": ("log|logs|logging|alert|alerts|alerting|monitoring|observability|retention|retain|keep",
                "日志|告警|报警|监控|保留"),
    "auth": ("auth|login|sign in|sign-in|token|tokens|credential|credentials|password|session|expire|expires",
             "登录|认证|令牌|凭证|密码|过期|刷新"),
}

NUMBER = re.compile(r"\d|[一二三四五六七八九十百千万两半]+[个次天年月周岁点号股手分元块]")
_TIME_WORD = re.compile(r"\b(19|20)\d\d\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
                        r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|last|ago)\b|"
                        r"年|月|号|周[一二三四五六日]|星期|上午|下午", re.I)


SUFFIXES = ("", "s", "es", "ed", "d")
_WORD = re.compile(r"\w+")


def _en_words(en: str) -> list[str]:
    return [w.replace(" ", r"\s+") for w in en.split("|")]


def _compile() -> dict[str, tuple[re.Pattern[str], re.Pattern[str]]]:
    out = {}
    for name, (en, zh) in CLASSES.items():
        en_re = re.compile(r"\b(?:" + "|".join(_en_words(en)) + r")(?:s|es|ed|d)?\b", re.I)
        zh_re = re.compile("|".join(re.escape(w) for w in zh.split("|")))
        out[name] = (en_re, zh_re)
    return out


_PATTERNS = _compile()


def _lookups() -> tuple[dict[str, frozenset[str]], dict[str, re.Pattern[str]]]:
    r"""The English alternatives split in two. A one-word alternative (word characters only) inside
    `\b...(?:s|es|ed|d)?\b` matches exactly a whole `\w+` run equal to it plus a suffix, so those are
    looked up token by token; the rest (sign in, can't stand) keep a pattern per class."""
    words: dict[str, set[str]] = {}
    phrases: dict[str, re.Pattern[str]] = {}
    for name, (en, _) in CLASSES.items():
        rest = []
        for w in en.split("|"):
            if re.fullmatch(r"[a-z0-9_]+", w):
                for suffix in SUFFIXES:
                    words.setdefault(w + suffix, set()).add(name)
            else:
                rest.append(w.replace(" ", r"\s+"))
        if rest:
            phrases[name] = re.compile(r"\b(?:" + "|".join(rest) + r")(?:s|es|ed|d)?\b", re.I)
    return {w: frozenset(c) for w, c in words.items()}, phrases


_EN_WORDS, _EN_PHRASES = _lookups()


@lru_cache(maxsize=4096)
def predicate_classes(text: str) -> frozenset[str]:
    """The predicate classes a text states or asks about, in English and Chinese: what the class patterns
    (_PATTERNS) find, found faster (tests/test_quality_units.py holds the two equal)."""
    found: set[str] = set()
    for tok in _WORD.findall(text):
        if tok.isascii():
            found |= _EN_WORDS.get(tok.lower(), frozenset())
        elif not er.has_cjk(tok):  # re.I folds a few letters onto ASCII ones (K, the Kelvin sign): ask the patterns
            found |= {name for name, (en_re, _) in _PATTERNS.items() if en_re.fullmatch(tok)}
    for name, pattern in _EN_PHRASES.items():
        if name not in found and pattern.search(text):
            found.add(name)
    if er.has_cjk(text) or _ZH_NOT_CJK.search(text):
        found |= {name for name, (_, zh_re) in _PATTERNS.items() if name not in found and zh_re.search(text)}
    return frozenset(found)


# The few words of the Chinese lists without a CJK character (approve) are searched in any text.
_ZH_NOT_CJK = re.compile("|".join(re.escape(w) for _, zh in CLASSES.values() for w in zh.split("|")
                                  if not er.has_cjk(w)) or r"(?!)")


@dataclass(frozen=True)
class Candidate:
    """What the reranker sees of one fused hit."""

    content: str
    valid_from: str
    superseded: bool = False
    names: frozenset[str] = frozenset()  # casefolded entity names and aliases linked to the hit
    newest_in_class: bool = False  # the newest candidate sharing a predicate class with the query
    dated: bool = False  # its relative times were grounded to dates (lang/timeground.py)


# Weights, as fractions of UNIT. Ranks 1 and 10 of one lane differ by 0.13 UNIT, so these nudge
# near-ties; they never overturn a hit that two lanes agree on.
W_CLASS = 0.05  # one shared class: about two ranks in one lane
W_NUMBER = 0.05
W_NOW = 0.3
W_SUPERSEDED = 0.5
W_MISSING_NAME = 0.1
W_WHEN = 0.1  # a "when" question: a memory that carries a date


def rerank_score(info: Analysis, q_classes: frozenset[str], hit: Candidate, score: float) -> float:
    """The candidate's new score. Pure: depends only on its arguments."""
    text = hit.content
    bonus = 0.0
    shared = q_classes & predicate_classes(text)
    if shared:
        bonus += W_CLASS * min(2, len(shared))
    if info.wants_quantity and (NUMBER.search(text) or _TIME_WORD.search(text)):
        bonus += W_NUMBER
    if info.wants_when and (hit.dated or timeground.has_date(text)):
        bonus += W_WHEN
    if info.wants_now and hit.newest_in_class:
        bonus += W_NOW
    if hit.superseded and info.wants_now:
        # Asked about the present: an old version drops. Otherwise it keeps its place (the caller
        # still ranks it below the memory that superseded it), so "where did I live in 2019" works.
        bonus -= W_SUPERSEDED
    if info.proper_nouns:
        low = text.casefold()
        missing = [n for n in info.proper_nouns if n.casefold() not in low and n.casefold() not in hit.names]
        if missing and len(missing) == len(info.proper_nouns):
            bonus -= W_MISSING_NAME
    return score + bonus * UNIT


def newest_in_class(q_classes: frozenset[str], cands: list[tuple[int, str, str]], window: int = 10) -> set[int]:
    """Among the top `window` candidates (seq, content, valid_from), the newest one per query class."""
    best: dict[str, tuple[str, int]] = {}
    for seq, content, vfrom in cands[:window]:
        for cls in q_classes & predicate_classes(content):
            if cls not in best or vfrom > best[cls][0]:
                best[cls] = (vfrom, seq)
    return {seq for _, seq in best.values()}
