"""Date phrases in English and Chinese chat, resolved to ISO dates against a message's time.

Relative dates ("yesterday", "next Friday", "三天前", "下个月") mean nothing without a
reference point, and for memory the reference is always **the message's own timestamp**,
never the time the message happens to be processed: "yesterday" in a message sent on
2023-05-08 is 2023-05-07 whether it is read the same day or five years later.

The work is split in two:

- **Finding** candidate phrases in a text uses compiled regular expressions
  (:func:`find_date_spans`), because scanning a whole message with
  ``dateparser.search`` is slow and far too eager (it reads dates into ordinary words).
- **Resolving** a phrase uses `dateparser <https://dateparser.readthedocs.io>`_ with
  ``RELATIVE_BASE`` set to the message time. Before that, each phrase is normalised into a
  form dateparser reads: Chinese numerals become digits (``三天前`` → ``3天前``), synonyms
  become the form it knows (``上星期`` → ``上周``, ``5月7号`` → ``5月7日``), and the few
  forms it does not read at all are computed here by calendar arithmetic: weekends
  ("this weekend", ``周末``) and Chinese weekdays of a given week (``下周五``, ``上周六``),
  which in Chinese name a day of the previous/next calendar week (weeks start on Monday).
  The most common phrases of all, a fixed count of days, weeks, months or years from the
  message day ("yesterday", "3 days ago", "next month", ``前天``, ``上个月``), are computed
  by the same calendar arithmetic dateparser applies (a test checks they agree), because
  a dateparser call costs about half a millisecond and its first use ~100 ms of imports.
- A day of the month must be a day: "May 45" is no date (dateparser would read 2045).

Conventions: a week starts on Monday; "this/next/last weekend" is the Saturday of this,
next or last week; a month given without a day ("May 2022", ``2022年5月``) resolves to its
first day; a month and day without a year take the base's year; "next Friday" is the
first Friday after the base day (dateparser's reading). An aware base datetime is used
with its own wall-clock time (its date is the date in its own time zone).

Results are cached per (phrase, day of the base, language, preference), so resolving the
same phrase for many messages of one day costs one dateparser call (a phrase counted in
hours or minutes keeps the base's time of day, since "in 3 hours" can cross midnight).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from mnemolayer.extract.base import ResolvedDate

__all__ = ["Preference", "chinese_number", "find_date_spans", "find_dates", "resolve_date"]

#: Which way an ambiguous weekday ("on Friday", ``周五``) points: the most recent one
#: (``"past"``), the next one (``"future"``), or ``None`` (English: dateparser's default,
#: the current week's day if it is not after the base, else last week's; Chinese: the day
#: of the base's own week).
Preference = Literal["past", "future"] | None

# A reference point for phrases that carry their own year; it never shows in a result.
_ANY_BASE = datetime(2000, 1, 1)

# ----------------------------------------------------------------------------- English

_EN_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_EN_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_EN_COUNT = (
    r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|"
    r"forty|fifty|sixty|a\s+couple\s+of|couple\s+of)"
)
_EN_UNIT = r"(?:days?|weeks?|fortnights?|months?|years?)"
# A day of the month, 1 to 31 ("7", "07", "7th", "31st"); "May 45" is not a date.
_EN_ORDINAL = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"

_EN_DATE = re.compile(
    r"\b(?:"
    # the day before yesterday / the day after tomorrow
    r"(?:the\s+)?day\s+(?:before\s+yesterday|after\s+tomorrow)"
    # numeric dates: 2023-05-07, 2023/5/7, 5/7/2023
    r"|\d{4}-\d{1,2}-\d{1,2}(?!\d)|\d{4}/\d{1,2}/\d{1,2}(?!\d)|\d{1,2}/\d{1,2}/\d{4}(?!\d)"
    # 7 May 2023, the 7th of May, May 7th, 2023; optionally after "on"
    rf"|(?:on\s+)?(?:the\s+)?{_EN_ORDINAL}\s+(?:of\s+)?{_EN_MONTH}(?:,?\s+\d{{4}}(?!\d))?"
    rf"|(?:on\s+)?{_EN_MONTH}\s+(?:the\s+)?{_EN_ORDINAL}(?!\d)(?:,?\s+\d{{4}}(?!\d))?"
    # May 2022
    rf"|{_EN_MONTH},?\s+(?:of\s+)?\d{{4}}(?!\d)"
    # last week, next month, this weekend, this coming Friday
    rf"|(?:(?:this\s+)?coming|next|last|this)\s+(?:weekend|week|month|year|{_EN_WEEKDAY})(?!s)"
    # three days ago, a couple of weeks ago, in two weeks, 3 days from now
    rf"|{_EN_COUNT}\s+{_EN_UNIT}\s+(?:ago|from\s+now)"
    rf"|in\s+{_EN_COUNT}\s+{_EN_UNIT}"
    r"|yesterday|today|tomorrow|tonight|last\s+night|this\s+(?:morning|afternoon|evening)"
    # on Friday, Friday (not "Fridays", which is a habit)
    rf"|(?:on\s+)?{_EN_WEEKDAY}(?!s)"
    r")\b",
    re.IGNORECASE,
)

_EN_WEEKEND = re.compile(r"^(?:(this\s+)?coming|next|last|this)\s+weekend$")
_EN_FROM_NOW = re.compile(rf"^({_EN_COUNT}\s+{_EN_UNIT})\s+from\s+now$")
_EN_COUPLE = re.compile(r"\ba\s+couple\s+of\b|\bcouple\s+of\b")
_EN_FORTNIGHT = re.compile(r"\b(an?|\d+|\w+)\s+fortnights?\b")
_EN_MONTH_YEAR = re.compile(rf"^{_EN_MONTH},?\s+(?:of\s+)?\d{{4}}$")
_EN_COMING = re.compile(r"^(?:this\s+)?coming\s+")
_EN_LEADING_ON = re.compile(r"^on\s+(?:the\s+)?")
# A month name next to a one- or two-digit number: the number must be a day (1-31), or
# dateparser reads it as a year ("May 45" → 2045).
_EN_MONTH_NUMBER = re.compile(
    rf"^(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}"
    rf"|^{_EN_MONTH}\s+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?!\d)"
)
# Phrases whose date can depend on the time of day ("in 3 hours" said at 23:00).
_EN_CLOCK_UNITS = re.compile(r"\b(?:hours?|hrs?|minutes?|mins?|seconds?|secs?)\b")
_EN_RELATIVE_WORDS = re.compile(
    r"\b(?:ago|in|next|last|this|coming|now|yesterday|today|tomorrow|tonight)\b"
)

# ----------------------------------------------------------------------------- Chinese

_CN_DIGITS = "0-9０-９零〇一二两三四五六七八九十百"
_CN_NUM = f"[{_CN_DIGITS}]{{1,4}}"
_CN_WEEK = r"(?:个?星期|个?礼拜|周)"
_CN_WEEKDAY_CHARS = "一二三四五六日天1-7１-７"

_ZH_DATE = re.compile(
    # numeric dates
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)"
    # 2023年5月7日, 去年5月7号, 5月7日, 二〇二三年五月七日
    rf"|(?:(?:[0-9０-９]{{4}}|[零〇一二三四五六七八九]{{4}})年|去年|今年|明年|前年)?{_CN_NUM}月{_CN_NUM}[日号]"
    # 2023年5月 (a month of a given year)
    rf"|(?:[0-9０-９]{{4}}|[零〇一二三四五六七八九]{{4}})年{_CN_NUM}月(?![{_CN_DIGITS}])"
    # three days ago / in three weeks
    rf"|(?:{_CN_NUM}|半)(?:天|日|{_CN_WEEK}|个月|年)(?:之|以)?[前后]"
    # weekends
    rf"|(?:上|下|这|本)?个?(?:周|星期|礼拜)末"
    # a weekday of a given week: 下周五, 上星期六, 这周三
    rf"|(?:上上|下下|上|下|这|本){_CN_WEEK}[{_CN_WEEKDAY_CHARS}]"
    # a week: 上周, 下个星期, 下下周
    rf"|(?:上上|下下|上|下|这|本)个?{_CN_WEEK}"
    # a month: 上个月, 下下个月, 这个月, 本月
    r"|(?:上上|下下|上|下|这|本)个?月"
    r"|去年|前年|今年|明年|后年"
    r"|大前天|大后天|(?<![之以最然])前天|昨天|昨晚|昨日|今天|今晚|今早|今日|明天|明晚|明早|"
    r"(?<![之以最然])后天"
    # a bare weekday: 周五, 星期六
    rf"|(?<!每)(?:星期|礼拜|周)[{_CN_WEEKDAY_CHARS}]"
)

_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_DIGIT = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_NUMBER = re.compile(f"[{_CN_DIGITS}]+")
_ZH_WEEK_OF = re.compile(rf"^(上上|下下|上|下|这|本)?{_CN_WEEK}([{_CN_WEEKDAY_CHARS}])$")
_ZH_WEEKEND = re.compile(r"^(上|下|这|本)?个?(?:周|星期|礼拜)末$")
_ZH_MONTH_DAY = re.compile(r"^(?:(\d{4})年|(去年|今年|明年|前年))?(\d{1,2})月(\d{1,2})日$")
_ZH_YEAR_MONTH = re.compile(r"^(\d{4})年(\d{1,2})月$")
_ZH_COUNT = re.compile(r"^(\d+)(天|日|周|个月|年)[前后]$")
_ZH_MAX_COUNT = {"天": 3660, "日": 3660, "周": 520, "个月": 1200, "年": 150}
_ZH_CLOCK_UNITS = re.compile(r"小时|钟头|分钟|秒")
_ZH_YEAR_WORD = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}
_ZH_SHIFT_WEEK = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
# Synonyms dateparser does not read, rewritten to ones it does (after numerals are digits).
_ZH_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^昨晚$"), "昨天"),
    (re.compile(r"^昨日$"), "昨天"),
    (re.compile(r"^今(?:晚|早|日)$"), "今天"),
    (re.compile(r"^明(?:晚|早)$"), "明天"),
    (re.compile(r"^明日$"), "明天"),
    (re.compile(r"^前年$"), "2年前"),
    (re.compile(r"^后年$"), "2年后"),
    (re.compile(r"^上上个?(?:周|星期|礼拜)$"), "2周前"),
    (re.compile(r"^下下个?(?:周|星期|礼拜)$"), "2周后"),
    (re.compile(r"^上上个?月$"), "2个月前"),
    (re.compile(r"^下下个?月$"), "2个月后"),
    (re.compile(r"^上个?(?:星期|礼拜)$"), "上周"),
    (re.compile(r"^下个?(?:星期|礼拜)$"), "下周"),
    (re.compile(r"^(?:这|本)个?(?:周|星期|礼拜)$"), "本周"),
    (re.compile(r"^(?:这|本)个?月$"), "本月"),
    (re.compile(r"^上月$"), "上个月"),
    (re.compile(r"^下月$"), "下个月"),
    (re.compile(r"^半年"), "6个月"),
    (re.compile(r"^半个?月"), "15天"),
    (re.compile(r"个?(?:星期|礼拜)"), "周"),
    (re.compile(r"(?:之|以)(?=[前后]$)"), ""),
    (re.compile(r"号$"), "日"),
)


def chinese_number(text: str) -> int | None:
    """``"三"`` → 3, ``"十二"`` → 12, ``"二十"`` → 20, ``"一百零五"`` → 105,
    ``"二〇二三"`` → 2023 (digit by digit), ``"15"`` → 15; ``None`` if unreadable."""
    text = text.translate(_FULLWIDTH_DIGITS)
    if text.isdigit():
        return int(text)
    if "十" not in text and "百" not in text:
        digits = [_ZH_DIGIT.get(ch) for ch in text]
        if any(d is None for d in digits):
            return None
        return int("".join(str(d) for d in digits))
    total = 0
    current = 0
    for ch in text:
        if ch in _ZH_DIGIT:
            current = _ZH_DIGIT[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


_FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")


def _digits_for_numerals(phrase: str) -> str:
    """Every run of Chinese numerals (or full-width digits) in ``phrase`` as ASCII digits."""

    def repl(m: re.Match[str]) -> str:
        value = chinese_number(m.group(0))
        return m.group(0) if value is None else str(value)

    return _ZH_NUMBER.sub(repl, phrase)


# ----------------------------------------------------------------------------- finding


def _lang(lang: str) -> str:
    code = lang.strip().lower()
    if code.startswith("zh"):
        return "zh"
    if code.startswith("en"):
        return "en"
    raise ValueError(f"unsupported language {lang!r}: expected 'en' or 'zh'")


def find_date_spans(text: str, lang: str) -> list[tuple[int, int]]:
    """Where candidate date phrases are in ``text``.

    Args:
        text: any text.
        lang: ``"en"`` or ``"zh"`` (``"zh-CN"``, ``"zh-Hans"``… count as ``"zh"``).

    Returns:
        ``(start, end)`` character offsets of each phrase, in order, non-overlapping.
        A span is only a candidate: :func:`find_dates` drops the ones that do not resolve.

    Raises:
        ValueError: ``lang`` is neither English nor Chinese.
    """
    pattern = _ZH_DATE if _lang(lang) == "zh" else _EN_DATE
    return [m.span() for m in pattern.finditer(text)]


def find_dates(
    text: str, base: datetime | None, lang: str, *, prefer: Preference = None
) -> list[ResolvedDate]:
    """Every date phrase in ``text`` that resolves, with the ISO date it means.

    Args:
        text: any text (a chat message).
        base: the message's own timestamp, the reference for relative phrases. ``None``
            → only phrases that carry their own year ("7 May 2023", ``2023年5月7日``,
            "2023-05-07") resolve; relative ones are left out.
        lang: ``"en"`` or ``"zh"``.
        prefer: how to read a weekday without "last"/"next"/``上``/``下`` (see
            :data:`Preference`); the caller knows the tense.

    Returns:
        One :class:`ResolvedDate` per resolved phrase, in text order; ``text`` is the
        phrase exactly as written (possibly with a leading "on").

    Raises:
        ValueError: ``lang`` is neither English nor Chinese.
    """
    code = _lang(lang)
    found: list[ResolvedDate] = []
    for start, end in find_date_spans(text, code):
        phrase = text[start:end]
        value = resolve_date(phrase, base, code, prefer=prefer) if base else _absolute(phrase, code)
        if value is not None:
            found.append(ResolvedDate(text=phrase, value=value))
    return found


_FOUR_DIGITS = re.compile(r"[0-9０-９零〇一二三四五六七八九]{4}")


def _absolute(phrase: str, lang: str) -> date | None:
    """``phrase`` resolved without a reference time: only when it names its own year."""
    key = phrase.lower()
    if lang == "en" and _EN_RELATIVE_WORDS.search(key):
        return None
    if lang == "zh" and any(word in phrase for word in ("去年", "今年", "明年", "前年")):
        return None
    if not _FOUR_DIGITS.search(phrase):
        return None
    return resolve_date(phrase, _ANY_BASE, lang)


# --------------------------------------------------------------------------- resolving


def resolve_date(
    phrase: str, base: datetime | None, lang: str, *, prefer: Preference = None
) -> date | None:
    """The date ``phrase`` means when said at ``base``.

    Args:
        phrase: one date expression ("yesterday", "next Friday", "7 May 2023",
            ``三天前``, ``下周五``, ``2023年5月7日``…), surrounding whitespace ignored.
        base: the message's own timestamp (naive or aware; an aware one is read in its own
            time zone). ``None`` → ``None``.
        lang: ``"en"`` or ``"zh"``.
        prefer: how to read a bare weekday (see :data:`Preference`).

    Returns:
        The ISO date, or ``None`` when the phrase is not a date dateparser or the rules
        here can read. Never raises on odd input other than an unknown ``lang``.

    Raises:
        ValueError: ``lang`` is neither English nor Chinese.
    """
    code = _lang(lang)
    if base is None or not isinstance(phrase, str):
        return None
    text = " ".join(phrase.split())
    if not text or len(text) > 80:
        return None
    naive = base.replace(tzinfo=None)
    if code == "zh":
        return _resolve_zh(text, naive, prefer)
    return _resolve_en(text.lower(), naive, prefer)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _resolve_en(text: str, base: datetime, prefer: Preference) -> date | None:
    weekend = _EN_WEEKEND.match(text)
    if weekend:
        shift = {"last": -1, "next": 1}.get(text.split()[0], 0)
        if text.startswith(("coming", "this coming")):
            shift = 1 if base.weekday() >= 5 else 0
        return _monday(base.date()) + timedelta(weeks=shift, days=5)
    text = _EN_LEADING_ON.sub("", text)
    day_of_month = _EN_MONTH_NUMBER.match(text)
    if day_of_month:
        day = int(day_of_month.group(1) or day_of_month.group(2))
        if not 1 <= day <= 31:
            return None
    text = _EN_COMING.sub("next ", text)
    from_now = _EN_FROM_NOW.match(text)
    if from_now:
        text = f"in {from_now.group(1)}"
    text = _EN_COUPLE.sub("2", text)
    text = _EN_FORTNIGHT.sub(lambda m: f"{_fortnights(m.group(1))} weeks", text)
    fixed = _en_fixed_offset(text, base.date())
    if fixed is not None:
        return fixed
    month_only = _EN_MONTH_YEAR.match(text) is not None
    if not _EN_CLOCK_UNITS.search(text):
        base = _noon(base)
    return _dateparser(text, base, "en", prefer or "current_period", month_only=month_only)


_EN_DAY_WORDS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "yesterday": -1, "last night": -1, "tomorrow": 1,
    "the day before yesterday": -2, "day before yesterday": -2,
    "the day after tomorrow": 2, "day after tomorrow": 2,
}  # fmt: skip
_EN_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60,
}  # fmt: skip
_EN_OFFSET = re.compile(
    r"^(?:(?P<ago>\w+)\s+(?P<ago_unit>day|week|month|year)s?\s+ago"
    r"|in\s+(?P<in>\w+)\s+(?P<in_unit>day|week|month|year)s?"
    r"|(?P<rel>last|next)\s+(?P<rel_unit>week|month|year))$"
)


def _en_fixed_offset(text: str, today: date) -> date | None:
    """Phrases that are a fixed count of days, weeks, months or years from the message
    day ("yesterday", "3 days ago", "in two weeks", "last month"), by calendar arithmetic.

    They are the most common date phrases in chat, and computing them directly gives
    dateparser's answer (checked over every day of several years in the tests) without
    its cost. A month or year shift keeps the day of the month, clamped to the month's
    length ("a month ago" on 31 March is 28 or 29 February). ``None`` for anything else.
    """
    if text in _EN_DAY_WORDS:
        return today + timedelta(days=_EN_DAY_WORDS[text])
    m = _EN_OFFSET.match(text)
    if m is None:
        return None
    if m.group("rel"):
        count, unit = (1 if m.group("rel") == "next" else -1), m.group("rel_unit")
    else:
        word = m.group("ago") or m.group("in")
        number = int(word) if word.isdigit() else _EN_NUMBER_WORDS.get(word)
        if number is None:
            return None
        count = -number if m.group("ago") else number
        unit = m.group("ago_unit") or m.group("in_unit")
    return _shift(today, count, unit)


_ZH_DAY_WORDS = {"今天": 0, "昨天": -1, "明天": 1, "前天": -2, "后天": 2, "大前天": -3, "大后天": 3}
_ZH_PERIOD_WORDS = {
    "上周": (-1, "week"), "下周": (1, "week"), "本周": (0, "week"),
    "上个月": (-1, "month"), "下个月": (1, "month"), "本月": (0, "month"),
    "去年": (-1, "year"), "明年": (1, "year"), "今年": (0, "year"),
}  # fmt: skip
_ZH_UNITS = {"天": "day", "日": "day", "周": "week", "个月": "month", "年": "year"}


def _zh_fixed_offset(text: str, today: date) -> date | None:
    """The Chinese counterpart of :func:`_en_fixed_offset`, on a phrase already rewritten
    to the forms dateparser reads (``昨天``, ``3天前``, ``上周``, ``2个月后``)."""
    if text in _ZH_DAY_WORDS:
        return today + timedelta(days=_ZH_DAY_WORDS[text])
    if text in _ZH_PERIOD_WORDS:
        count, unit = _ZH_PERIOD_WORDS[text]
        return _shift(today, count, unit)
    m = _ZH_COUNT.match(text)
    if m is None:
        return None
    count = int(m.group(1)) * (-1 if text.endswith("前") else 1)
    return _shift(today, count, _ZH_UNITS[m.group(2)])


def _shift(today: date, count: int, unit: str) -> date | None:
    """``today`` moved by ``count`` days, weeks, months or years (a month or year shift
    keeps the day of the month, clamped to the month's length); ``None`` out of range."""
    try:
        if unit == "day":
            return today + timedelta(days=count)
        if unit == "week":
            return today + timedelta(weeks=count)
    except OverflowError:
        return None
    months = count * (12 if unit == "year" else 1)
    index = today.year * 12 + today.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        return None
    return date(year, month + 1, min(today.day, _days_in_month(year, month + 1)))


def _days_in_month(year: int, month: int) -> int:
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


def _noon(moment: datetime) -> datetime:
    """``moment``'s day at 12:00: for phrases counted in days or longer only the day
    matters, and one cache entry then serves every message of that day."""
    return datetime(moment.year, moment.month, moment.day, 12)


def _fortnights(count: str) -> int:
    numbers = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}
    if count.isdigit():
        return 2 * int(count)
    return 2 * numbers.get(count, 1)


def _resolve_zh(text: str, base: datetime, prefer: Preference) -> date | None:
    text = _digits_for_numerals(text)
    today = base.date()
    weekend = _ZH_WEEKEND.match(text)
    if weekend:
        shift = _ZH_SHIFT_WEEK.get(weekend.group(1) or "这", 0)
        return _monday(today) + timedelta(weeks=shift, days=5)
    week_of = _ZH_WEEK_OF.match(text)
    if week_of:
        weekday = _ZH_WEEKDAY.get(week_of.group(2))
        if weekday is None:
            weekday = int(week_of.group(2)) - 1
        if not 0 <= weekday <= 6:
            return None
        if week_of.group(1) is not None:
            shift = _ZH_SHIFT_WEEK[week_of.group(1)]
        elif prefer == "past":
            shift = -1 if weekday > today.weekday() else 0
        elif prefer == "future":
            shift = 1 if weekday < today.weekday() else 0
        else:
            shift = 0
        return _monday(today) + timedelta(weeks=shift, days=weekday)
    for pattern, replacement in _ZH_REWRITES:
        text = pattern.sub(replacement, text)
    count = _ZH_COUNT.match(text)
    if count and int(count.group(1)) > _ZH_MAX_COUNT[count.group(2)]:
        return None  # "2020年前" is "before 2020", not two thousand years ago
    month_day = _ZH_MONTH_DAY.match(text)
    if month_day:
        year_digits, year_word, month, day = month_day.groups()
        if year_digits:
            year = int(year_digits)
        else:
            year = today.year + _ZH_YEAR_WORD.get(year_word or "今年", 0)
        return _safe_date(year, int(month), int(day))
    year_month = _ZH_YEAR_MONTH.match(text)
    if year_month:
        return _safe_date(int(year_month.group(1)), int(year_month.group(2)), 1)
    fixed = _zh_fixed_offset(text, today)
    if fixed is not None:
        return fixed
    if not _ZH_CLOCK_UNITS.search(text):
        base = _noon(base)
    return _dateparser(text, base, "zh", prefer or "current_period")


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


@lru_cache(maxsize=8192)
def _dateparser(
    text: str, base: datetime, lang: str, prefer: str, *, month_only: bool = False
) -> date | None:
    """One dateparser call, cached. ``None`` if dateparser reads no date.

    ``month_only``: the phrase names a month without a day ("May 2022"); it resolves to the
    month's first day rather than to the base's day of the month.
    """
    import dateparser  # imported on first use: it costs ~50 ms and most texts have no dates

    settings: dict[str, Any] = {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": prefer,
        "PREFER_DAY_OF_MONTH": "first" if month_only else "current",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    try:
        parsed = dateparser.parse(text, languages=[lang], settings=settings)
    except Exception:  # dateparser raises assorted errors on odd input
        return None
    return parsed.date() if parsed is not None else None
