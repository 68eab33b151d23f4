"""Relative time in a *query*, English and Chinese: "what did I do last week?", "三天前".

:func:`time_window` finds one time phrase in a search query and resolves it against a
reference time (the store's clock, or the search's ``as_of``) into a half-open range
``[start, end)`` of UTC datetimes that recall uses to boost, and filter with a fallback,
the memories whose event time falls inside (:mod:`mnemolayer.retrieval.timewin`).

Unlike :mod:`mnemolayer.extract.dates`, which resolves a *message's* phrases to one day
at write time, this gives a range, and runs on every search, so it is plain regular
expressions and calendar arithmetic (no dateparser).

Phrases and their ranges (``d`` is the reference day at 00:00 UTC; weeks start on
Monday, ISO 8601):

=================================================  ===========================================
"today" / 今天                                      ``[d, d+1)``
"yesterday" / 昨天; "the day before yesterday" /     ``[d-1, d)``; ``[d-2, d-1)``
前天
"N days ago" / N天前                                 ``[d-N, d-N+1)``
"this week" / 这周, 本周, 这个星期                     ``[monday, monday+7)``
"last week" / 上周, 上个星期, 上礼拜                   ``[monday-7, monday)``
"last Monday" / 上周一; "this Monday" / 这周一         that day of last week; of this week
                                                    (not when the query writes out a day)
"N weeks ago" / N周前, N个星期前                      the week ``N`` weeks before this one
"the past N days", "last N days" / 过去N天, 最近N天    ``[ref - N days, ref]``
"this month" / 这个月, 本月; "last month" / 上个月     the calendar month; the one before
"N months ago" / N个月前                              the calendar month ``N`` before
"in March", "during March", "last March" / 三月, 3月   the most recent March that has begun
                                                    (asked in January: last year's)
"this year" / 今年; "last year" / 去年                the calendar year; the one before
=================================================  ===========================================

A month may carry its year ("in May 2023", ``2023年5月``): then it is that month.
A time after "as of", "before", "after", "since", "until", "between", "on" (or 截至,
之前, 之后, 自从, 直到) is a bound, not the range asked about, and gives no window.
Counts may be digits or words ("three", "a"; 三, 两, 十二). A Chinese month followed by
a day (``3月5日``) is a date, not a month, and is left alone, as is an English month
with its day ("the 27th of April", "April 27", "3 May"); so is "may" outside "in May" /
"during May".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mnemolayer.text.dayrefs import named_days
from mnemolayer.text.months import MONTHS, month_number

__all__ = ["TimeWindow", "time_window"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A query's time phrase resolved to ``[start, end)`` (UTC).

    Attributes:
        start, end: the range, ``start < end``.
        phrase: the text of the query that named it.
        rest: the query without the phrase (what keyword matching should see: "last"
            and "week" are not about the memories' words).
    """

    start: datetime
    end: datetime
    phrase: str
    rest: str


_EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fourteen": 14,
    "thirty": 30,
    "couple of": 2,
    "few": 3,
}
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_ZH_DIGITS |= {"七": 7, "八": 8, "九": 9}


def _zh_number(text: str) -> int | None:
    """A Chinese or Arabic count up to 99 (三, 十二, 二十, 7)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, units = text.partition("十")
        t = _ZH_DIGITS.get(tens, 0) if tens else 1
        u = _ZH_DIGITS.get(units, 0) if units else 0
        if (tens and tens not in _ZH_DIGITS) or (units and units not in _ZH_DIGITS):
            return None
        return t * 10 + u
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


def _en_number(text: str) -> int | None:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _EN_NUMBERS.get(text)


def _day(ref: datetime) -> datetime:
    return ref.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int) -> datetime:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    return datetime(year, month, 1, tzinfo=UTC)


def _month(ref: datetime, back: int) -> tuple[datetime, datetime]:
    start = _month_start(ref.year, ref.month - back)
    return start, _month_start(start.year, start.month + 1)


def _week(ref: datetime, back: int) -> tuple[datetime, datetime]:
    d = _day(ref)
    monday = d - timedelta(days=d.weekday()) - timedelta(weeks=back)
    return monday, monday + timedelta(days=7)


def _named_month(ref: datetime, month: int) -> tuple[datetime, datetime]:
    """The most recent ``month`` that has begun at ``ref`` (this year's, else last
    year's)."""
    year = ref.year if month <= ref.month else ref.year - 1
    start = _month_start(year, month)
    return start, _month_start(year, month + 1)


#: Weekday names (English by their first three letters, Monday first; Chinese 一…日).
_WEEKDAYS_EN = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY_EN = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_COUNT_EN = r"(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty|couple\s+of|few)"
_COUNT_ZH = r"(\d{1,3}|[一二两三四五六七八九十]{1,3})"
_FULLMONTHS = "|".join(m for m in MONTHS if m != "may")  # "may" alone is a verb
_MONTH_EN = "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"

# (pattern, resolver(match, ref) -> (start, end) | None), tried in order: longer first.
_Resolver = tuple[re.Pattern[str], str]
_EN = re.IGNORECASE


def _resolve(kind: str, m: re.Match[str], ref: datetime) -> tuple[datetime, datetime] | None:
    d = _day(ref)
    one = timedelta(days=1)
    if kind == "today":
        return d, d + one
    if kind == "yesterday":
        return d - one, d
    if kind == "before_yesterday":
        return d - 2 * one, d - one
    if kind in ("days_ago_en", "days_ago_zh"):
        n = (_en_number if kind == "days_ago_en" else _zh_number)(m.group(1))
        return None if n is None else (d - n * one, d - (n - 1) * one)
    if kind in ("weeks_ago_en", "weeks_ago_zh"):
        n = (_en_number if kind == "weeks_ago_en" else _zh_number)(m.group(1))
        return None if n is None else _week(ref, n)
    if kind in ("months_ago_en", "months_ago_zh"):
        n = (_en_number if kind == "months_ago_en" else _zh_number)(m.group(1))
        return None if n is None else _month(ref, n)
    if kind in ("past_days_en", "past_days_zh"):
        n = (_en_number if kind == "past_days_en" else _zh_number)(m.group(1))
        if n is None or n < 1:
            return None
        return ref - n * one, ref + timedelta(microseconds=1)
    if kind in ("past_weeks_en", "past_weeks_zh"):
        n = (_en_number if kind == "past_weeks_en" else _zh_number)(m.group(1))
        if n is None or n < 1:
            return None
        return ref - timedelta(weeks=n), ref + timedelta(microseconds=1)
    if kind in ("weekday_en", "weekday_zh"):
        which, name = m.group(1).lower(), m.group(2).lower()
        day = _WEEKDAYS_EN.index(name[:3]) if kind == "weekday_en" else _WEEKDAYS_ZH[name]
        monday, _ = _week(ref, 1 if which in ("last", "上") else 0)
        return monday + day * one, monday + (day + 1) * one
    if kind == "this_week":
        return _week(ref, 0)
    if kind == "last_week":
        return _week(ref, 1)
    if kind == "this_month":
        return _month(ref, 0)
    if kind == "last_month":
        return _month(ref, 1)
    if kind == "this_year":
        return datetime(ref.year, 1, 1, tzinfo=UTC), datetime(ref.year + 1, 1, 1, tzinfo=UTC)
    if kind == "last_year":
        return datetime(ref.year - 1, 1, 1, tzinfo=UTC), datetime(ref.year, 1, 1, tzinfo=UTC)
    if kind == "month_en":
        name = m.group(1).lower()
        month = month_number(name)
        if m.group(2):
            return _month_start(int(m.group(2)), month), _month_start(int(m.group(2)), month + 1)
        return _named_month(ref, month)
    if kind == "month_zh":
        n = _zh_number(m.group(2))
        if n is None or not 1 <= n <= 12:
            return None
        if m.group(1):
            return _month_start(int(m.group(1)), n), _month_start(int(m.group(1)), n + 1)
        return _named_month(ref, n)
    raise AssertionError(kind)


_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bthe\s+day\s+before\s+yesterday\b", _EN), "before_yesterday"),
    (re.compile(r"前天"), "before_yesterday"),
    (re.compile(r"\byesterday\b", _EN), "yesterday"),
    (re.compile(r"昨天|昨日"), "yesterday"),
    (re.compile(r"\btoday\b", _EN), "today"),
    (re.compile(r"今天|今日"), "today"),
    (
        re.compile(
            rf"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:past|last)\s+{_COUNT_EN}\s+days?\b", _EN
        ),
        "past_days_en",
    ),
    (re.compile(rf"(?:过去|最近|近){_COUNT_ZH}天"), "past_days_zh"),
    (
        re.compile(
            rf"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:past|last)\s+{_COUNT_EN}\s+weeks?\b", _EN
        ),
        "past_weeks_en",
    ),
    (re.compile(rf"(?:过去|最近|近){_COUNT_ZH}(?:个)?(?:周|星期|礼拜)"), "past_weeks_zh"),
    (re.compile(rf"\b{_COUNT_EN}\s+days?\s+ago\b", _EN), "days_ago_en"),
    (re.compile(rf"{_COUNT_ZH}天(?:以)?前"), "days_ago_zh"),
    (re.compile(rf"\b{_COUNT_EN}\s+weeks?\s+ago\b", _EN), "weeks_ago_en"),
    (re.compile(rf"{_COUNT_ZH}(?:个)?(?:周|星期|礼拜)(?:以)?前"), "weeks_ago_zh"),
    (re.compile(rf"\b{_COUNT_EN}\s+months?\s+ago\b", _EN), "months_ago_en"),
    (re.compile(rf"{_COUNT_ZH}个月(?:以)?前"), "months_ago_zh"),
    (re.compile(rf"\b(?:on\s+)?(last|this)\s+({_WEEKDAY_EN})\b", _EN), "weekday_en"),
    (re.compile(r"(上|这|本)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"), "weekday_zh"),
    (re.compile(r"\b(?:during\s+|in\s+)?this\s+week\b", _EN), "this_week"),
    (re.compile(r"这周|本周|这个?星期|这个?礼拜"), "this_week"),
    (
        re.compile(r"\b(?:during\s+|in\s+)?(?:the\s+)?(?:last|past|previous)\s+week\b", _EN),
        "last_week",
    ),
    (re.compile(r"上周|上个?星期|上个?礼拜"), "last_week"),
    (re.compile(r"\b(?:during\s+|in\s+)?this\s+month\b", _EN), "this_month"),
    (re.compile(r"这个月|本月"), "this_month"),
    (
        re.compile(r"\b(?:during\s+|in\s+)?(?:the\s+)?(?:last|past|previous)\s+month\b", _EN),
        "last_month",
    ),
    (re.compile(r"上个?月"), "last_month"),
    (re.compile(r"\b(?:during\s+|in\s+)?this\s+year\b", _EN), "this_year"),
    (re.compile(r"今年"), "this_year"),
    (
        re.compile(r"\b(?:during\s+|in\s+)?(?:the\s+)?(?:last|past|previous)\s+year\b", _EN),
        "last_year",
    ),
    (re.compile(r"去年"), "last_year"),
    (
        re.compile(rf"\b(?:in|during|last)\s+({_MONTH_EN})\b\.?(?:,?\s*(\d{{4}})\b)?", _EN),
        "month_en",
    ),
    (re.compile(rf"\b({_FULLMONTHS})\b(?:,?\s*(\d{{4}})\b)?", _EN), "month_en"),
    (
        re.compile(
            r"(?:(\d{4})年)?(?<![\d一二两三四五六七八九十个])(十[一二]|[一二三四五六七八九十]|1[0-2]|[1-9])"
            r"月份?(?![\d一二两三四五六七八九十日号])"
        ),
        "month_zh",
    ),
]


#: Words that make the time after them a bound, not the range asked about ("as of
#: December 2023", "the week before 16 November", "since March"): no window then.
_BOUND = re.compile(
    r"(?:\bas\s+of|\bbefore|\bafter|\bsince|\buntil|\btill|\bby|\bbetween|\bfrom|\bto|"
    r"\band|\bon|截至|截止|之前|以前|之后|以后|自从|直到|到)(?:\s+\d{1,2}(?:st|nd|rd|th)?)?\s*$",
    re.IGNORECASE,
)


def _bound(query: str, at: int) -> bool:
    """Whether the phrase starting at ``at`` is a bound or a date of a day ("on
    October 13, 2023"), by the words just before it."""
    return _BOUND.search(query[max(0, at - 16) : at]) is not None


_DAY_BEFORE = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?$", re.IGNORECASE)
_DAY_AFTER = re.compile(r"^\s+\d{1,2}(?:st|nd|rd|th)?(?!\d)", re.IGNORECASE)


def _day_date(query: str, m: re.Match[str]) -> bool:
    """Whether an English month is part of a date of a day ("the 27th of April",
    "April 27", "3 May"): that names a day, not the month (left to day references)."""
    return bool(
        _DAY_BEFORE.search(query[max(0, m.start() - 12) : m.start()])
        or (not m.group(2) and _DAY_AFTER.match(query[m.end() :]))
    )


def _usable(query: str, m: re.Match[str], kind: str) -> bool:
    if kind in ("weekday_en", "weekday_zh") and named_days(query):
        # "last Friday on 23 January, 2022": the weekday is that day's, not the clock's;
        # the named day decides (mnemolayer.retrieval.named_time).
        return False
    return not _bound(query, m.start()) and not (kind == "month_en" and _day_date(query, m))


def time_window(query: str, ref: datetime) -> TimeWindow | None:
    """The first time phrase of ``query`` (table in the module docstring) resolved
    against ``ref`` (an aware datetime; a naive one is taken as UTC), or ``None`` when
    the query names no time.

    Example:
        >>> w = time_window("What did I cook last week?", datetime(2024, 5, 8, tzinfo=UTC))
        >>> (w.start.date().isoformat(), w.end.date().isoformat(), w.rest)
        ('2024-04-29', '2024-05-06', 'What did I cook?')
    """
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=UTC)
    best: tuple[int, int, re.Match[str], str] | None = None
    for pattern, kind in _PATTERNS:
        m = next((m for m in pattern.finditer(query) if _usable(query, m, kind)), None)
        if m is None:
            continue
        # The earliest phrase wins; at one position, the longest.
        key = (m.start(), -(m.end() - m.start()))
        if best is None or key < (best[0], best[1]):
            best = (key[0], key[1], m, kind)
    if best is None:
        return None
    m, kind = best[2], best[3]
    span = _resolve(kind, m, ref)
    if span is None:
        return None
    left, right = query[: m.start()].rstrip(), query[m.end() :].lstrip()
    sep = " " if left and right and left[-1].isascii() and right[0].isascii() else ""
    rest = " ".join((left + sep + right).split())
    rest = re.sub(r"\s+([?？!！.,。，])", r"\1", rest)
    return TimeWindow(start=span[0], end=span[1], phrase=m.group(0), rest=rest)
