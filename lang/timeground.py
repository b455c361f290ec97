"""Time grounding: relative times in a memory, resolved against its valid_from into absolute dates.

"I went yesterday", said on 8 May 2023, is about 7 May 2023; "上个月" said then is April 2023. The
dates become derived text (store/derived.add_dates) that the lexical lane matches ("in May 2023"),
the embedding includes and a full hit shows. A small bounded rule set in English and Chinese
(day, week, weekend, weekday, month and year expressions, "N days ago", "三天前", …); no library:
the well-kept parsers (dateparser, ctparse) resolve one expression in a string, not every one in
a sentence, and are slower than the embedding they would feed. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

MAX_DATES = 6  # expressions resolved per memory
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS_ZH = "一二三四五六日"
_EN_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_N = r"(\d{1,3}|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_ZH_N = r"(\d{1,3}|[零一二两三四五六七八九十]{1,3})"
_UNITS = {"day": "day", "week": "week", "month": "month", "year": "year", "天": "day", "日": "day",
          "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}


def _zh_num(s: str) -> int | None:
    if s.isdigit():
        return int(s)
    if s == "十":
        return 10
    if "十" in s:
        tens, _, ones = s.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    return _ZH_DIGITS.get(s) if len(s) == 1 else None


def _en_num(s: str) -> int | None:
    return int(s) if s.isdigit() else _EN_NUM.get(s.lower())


def _add_months(d: date, n: int) -> date:
    m = d.month - 1 + n
    return date(d.year + m // 12, m % 12 + 1, 1)


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


# A resolved expression: (kind, date), kind in day | week | month | year.
Resolved = tuple[str, date]


def _shift(kind: str, n: int, base: date) -> Resolved:
    if kind == "day":
        return "day", base + timedelta(days=n)
    if kind == "week":
        return ("day", base + timedelta(weeks=n)) if n else ("week", _monday(base))
    if kind == "month":
        return "month", _add_months(base, n)
    return "year", date(base.year + n, 1, 1)


def _period(kind: str, step: int, base: date) -> Resolved:
    """last/this/next week, month, year or weekend."""
    if kind == "week":
        return "week", _monday(base) + timedelta(weeks=step)
    if kind == "weekend":
        return "day", _monday(base) + timedelta(weeks=step, days=5)
    return _shift(kind, step, base)


def _weekday(step: int, wd: int, base: date) -> Resolved:
    """last/next <weekday>: in the week before / after the base date's week; 'this': in its week."""
    return "day", _monday(base) + timedelta(weeks=step, days=wd)


_STEP_EN = {"last": -1, "past": -1, "this past": -1, "this": 0, "next": 1, "this coming": 1, "coming": 1}
_STEP_ZH = {"上": -1, "这": 0, "本": 0, "下": 1}
_FIXED_EN = (("the day before yesterday", -2), ("the day after tomorrow", 2), ("yesterday", -1),
             ("last night", -1), ("tonight", 0), ("today", 0), ("this morning", 0), ("this afternoon", 0),
             ("this evening", 0), ("tomorrow", 1))
_FIXED_ZH = (("大前天", -3), ("前天", -2), ("昨天", -1), ("昨日", -1), ("昨晚", -1), ("今天", 0), ("今日", 0),
             ("今晚", 0), ("明天", 1), ("明日", 1), ("后天", 2))
_YEARS_ZH = (("前年", -2), ("去年", -1), ("今年", 0), ("明年", 1))

Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], Resolved | None]]


def _ago_en(m: re.Match[str], base: date) -> Resolved | None:
    n = _en_num(m.group(1))
    return None if n is None else _shift(_UNITS[m.group(2).lower()], -n, base)


def _in_en(m: re.Match[str], base: date) -> Resolved | None:
    n = _en_num(m.group(1))
    return None if n is None else _shift(_UNITS[m.group(2).lower()], n, base)


def _rel_zh(m: re.Match[str], base: date) -> Resolved | None:
    n = _zh_num(m.group(1))
    if n is None:
        return None
    return _shift(_UNITS[m.group(2)], -n if m.group(3)[-1] == "前" else n, base)


RULES: tuple[Rule, ...] = (
    *((re.compile(rf"\b{re.escape(p)}\b", re.I), lambda m, b, n=n: ("day", b + timedelta(days=n)))
      for p, n in _FIXED_EN),
    (re.compile(rf"\b{_EN_N} (day|week|month|year)s? (?:ago|before)\b", re.I), _ago_en),
    (re.compile(rf"\bin {_EN_N} (day|week|month|year)s?\b", re.I), _in_en),
    (re.compile(r"\b(this past|this coming|last|past|this|next|coming) (week|weekend|month|year)\b", re.I),
     lambda m, b: _period(m.group(2).lower(), _STEP_EN[m.group(1).lower()], b)),
    (re.compile(rf"\b(this past|this coming|last|this|next|coming) ({'|'.join(WEEKDAYS_EN)})\b", re.I),
     lambda m, b: _weekday(_STEP_EN[m.group(1).lower()], WEEKDAYS_EN.index(m.group(2).lower()), b)),
    (re.compile(rf"{_ZH_N}个?(天|日|周|星期|礼拜|月|年)(以前|之前|前|以后|之后|后)"), _rel_zh),
    (re.compile(r"(上|这|本|下)个?(?:周|星期|礼拜)([一二三四五六日天])"),
     lambda m, b: _weekday(_STEP_ZH[m.group(1)], WEEKDAYS_ZH.index(m.group(2).replace("天", "日")), b)),
    (re.compile(r"(上|这|本|下)个?(?:周末)"), lambda m, b: _period("weekend", _STEP_ZH[m.group(1)], b)),
    (re.compile(r"(上|这|本|下)个?(?:周|星期|礼拜)"), lambda m, b: _period("week", _STEP_ZH[m.group(1)], b)),
    (re.compile(r"(上|这|本|下)个月|(上|本|下)月"),
     lambda m, b: _period("month", _STEP_ZH[m.group(1) or m.group(2)], b)),
    *((re.compile(p), lambda m, b, n=n: ("year", date(b.year + n, 1, 1))) for p, n in _YEARS_ZH),
    *((re.compile(p), lambda m, b, n=n: ("day", b + timedelta(days=n))) for p, n in _FIXED_ZH),
)


def resolve(text: str, base: date) -> list[Resolved]:
    """Every relative time in `text` resolved against `base`, in reading order, at most MAX_DATES.
    Earlier rules win over later ones on overlapping text ("三天前" is not "前天")."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Resolved]] = []
    for pattern, fn in RULES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            got = fn(m, base)
            if got is not None:
                taken.append((m.start(), m.end()))
                found.append((m.start(), got))
    out: list[Resolved] = []
    for _, r in sorted(found, key=lambda x: x[0]):
        if r not in out:
            out.append(r)
    return out[:MAX_DATES]


def render(r: Resolved) -> str:
    """One resolved date as text in both languages: '7 May 2023 (2023-05-07, 2023年5月7日)'."""
    kind, d = r
    if kind == "day":
        return f"{d.day} {MONTHS[d.month - 1]} {d.year} ({d.isoformat()}, {d.year}年{d.month}月{d.day}日)"
    if kind == "week":
        return f"week of {d.day} {MONTHS[d.month - 1]} {d.year} ({d.year}年{d.month}月{d.day}日那周)"
    if kind == "month":
        return f"{MONTHS[d.month - 1]} {d.year} ({d.year}-{d.month:02d}, {d.year}年{d.month}月)"
    return f"{d.year} ({d.year}年)"


_MONTH_WORDS = {m.casefold() for m in MONTHS} | {m[:3].casefold() for m in MONTHS}
_YEAR = re.compile(r"(19|20)\d\d")


_ABSOLUTE = re.compile(rf"\b(19|20)\d\d\b|\b\d{{1,2}} (?:{'|'.join(MONTHS)})\b|\b(?:{'|'.join(MONTHS)}) \d{{1,2}}\b|"
                       r"\d{4}年|\d{1,2}月\d{1,2}[日号]", re.I)


def has_date(text: str) -> bool:
    """True when the text states an absolute date or year itself ("on 8 May", "in 2022", "5月8日")."""
    return bool(_ABSOLUTE.search(text))


def date_words(words: list[str]) -> list[str]:
    """The words of a question that name a month or a year (what derived dates can match)."""
    return [w for w in words if w.casefold() in _MONTH_WORDS or _YEAR.fullmatch(w)]


def date_text(text: str, valid_from: str) -> str:
    """The derived date text of a memory ('' when it names no relative time)."""
    try:
        base = datetime.fromisoformat(valid_from).date()
    except ValueError:
        return ""
    return "; ".join(render(r) for r in resolve(text, base))
