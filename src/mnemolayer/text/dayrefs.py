"""Days and conversations that a *query* names, English and Chinese: "on April 27th",
"the 4th of May", "October 13, 2023", "2023-04-27", ``4月27号``, ``五月一日``; "our first
conversation", ``第一次聊天``.

Recall lifts the memories of the day or conversation named
(:mod:`mnemolayer.retrieval.named_time`). A question that names its day is about what
was said on that day ("What topics did we talk about on April 29th?"), and the words of
the question ("topics", "talk") match other days' small talk at least as well as they
match the day's own turns. A relative phrase ("last week", ``上周``) needs a reference time
and a range; this module only reads the calendar days written out, whose reference is the
user's own history (the latest such day on or before the search's time), and the first
conversation.

Only plain regular expressions: this runs on every search. What is read:

===========================================  ============================================
"April 27th", "Apr. 27", "May 4, 2023"       month and day (year when written)
"the 27th of April", "1 February, 2023"      the same, day first
"2023-04-27", "2023/4/27"                    year, month and day
"on the 4th" (then punctuation, the end of   the day of the month only
the question, or a pronoun)
``4月27号``, ``4月27日``, ``2023年5月1日``,     month and day (year when written); Chinese
``五月一日``                                    numerals read as numbers
``在27号``                                     the day of the month only
"our first conversation", "the first time    the first conversation
we talked", ``第一次对话``, ``第一次聊天``
===========================================  ============================================

A month name must be followed or preceded by a day (1-31): "in May" alone names a month,
and "May I ask?" nothing. A day that does not exist in its month ("April 31st") is no
day, and a day that bounds a range ("the week before August 3", "since May 1st",
``5月1号之前``) is not read as that day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from mnemolayer.extract.dates import chinese_number
from mnemolayer.text.months import month_number

__all__ = ["DayRef", "named_days", "names_first_conversation"]


@dataclass(frozen=True, slots=True)
class DayRef:
    """A calendar day written out in a query.

    Attributes:
        day: the day of the month, 1-31.
        month: 1-12, or ``None`` when only the day was named ("on the 4th").
        year: the year when written, else ``None``.
        phrase: the text of the query that named it.
    """

    day: int
    month: int | None = None
    year: int | None = None
    phrase: str = ""

    def matches(self, when: date) -> bool:
        """Whether ``when`` is this day, in any year (or month) the phrase left open."""
        return (
            when.day == self.day
            and (self.month is None or when.month == self.month)
            and (self.year is None or when.year == self.year)
        )


_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(3[01]|[12]\d|0?[1-9])"
_ORDINAL = rf"{_DAY}(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4})(?!\d))?"
# What may follow a day named alone ("on the 4th"): the end of a clause or a pronoun.
# "on the 4th floor" is a floor.
_DAY_ALONE_END = r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:i|we|you|he|she|they|my|our|did|was|were)\b)"

_EN = re.IGNORECASE
_EN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?!\d)"), "ymd"),
    (re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_ORDINAL}(?![\d:])\b{_YEAR}", _EN), "md"),
    (re.compile(rf"\b(?:the\s+)?{_ORDINAL}\s+(?:of\s+)?{_MONTH}(?![a-z]){_YEAR}", _EN), "dm"),
    (re.compile(rf"\bon\s+the\s+{_DAY}(?:st|nd|rd|th)\b{_DAY_ALONE_END}", _EN), "d"),
)

_ZH_NUM = r"([0-9０-９]{1,2}|[一二三四五六七八九十]{1,3})"
_ZH_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            rf"(?:([0-9０-９]{{4}}|[零〇一二三四五六七八九]{{4}})年)?{_ZH_NUM}月{_ZH_NUM}[日号]"
        ),
        "zh_ymd",
    ),
    (re.compile(rf"(?:在|于){_ZH_NUM}[日号](?![0-9０-９])"), "zh_d"),
)

# A day that bounds a range rather than naming the day: "the week before August 3",
# "since May 1st", ``5月1号之前``.
_ANCHOR_BEFORE = re.compile(
    r"\b(?:before|after|since|until|till|by|prior\s+to)\s+(?:the\s+)?$", re.IGNORECASE
)
_ANCHOR_AFTER = re.compile(r"\s*(?:之前|以前|之后|以后|以来|前|后)")

_FIRST_CONVERSATION = re.compile(
    r"\b(?:our|the|my)\s+(?:very\s+)?first\s+(?:conversation|chat|talk|session|discussion)s?\b"
    r"|\b(?:the\s+)?first\s+time\s+(?:we|you\s+and\s+i|i)\s+(?:talked|chatted|spoke|met)\b"
    r"|\bwhen\s+we\s+first\s+(?:talked|chatted|spoke|met)\b"
    r"|第一次(?:和你|跟你|与你)?(?:对话|聊天|谈话|交流|见面|聊)"
    r"|初次(?:对话|聊天|谈话|交流|见面)"
    r"|(?:最初|最开始|一开始)的?(?:对话|聊天|谈话|交流)",
    re.IGNORECASE,
)


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return month_number(name)


def _valid(year: int | None, month: int | None, day: int) -> bool:
    if not 1 <= day <= 31 or (month is not None and not 1 <= month <= 12):
        return False
    try:  # 2000 is a leap year: "February 29th" without a year is a day
        date(year if year is not None else 2000, month if month is not None else 1, day)
    except ValueError:
        return False
    return True


def _read(kind: str, m: re.Match[str]) -> DayRef | None:
    g = m.groups()
    year: int | None
    month: int | None
    if kind == "ymd":
        year, month, day = int(g[0]), int(g[1]), int(g[2])
    elif kind == "md":
        year, month, day = (int(g[2]) if g[2] else None), _month_number(g[0]), int(g[1])
    elif kind == "dm":
        year, month, day = (int(g[2]) if g[2] else None), _month_number(g[1]), int(g[0])
    elif kind == "d":
        year, month, day = None, None, int(g[0])
    elif kind == "zh_ymd":
        year = chinese_number(g[0]) if g[0] else None
        month, number = chinese_number(g[1]), chinese_number(g[2])
        if month is None or number is None:
            return None
        day = number
    else:  # zh_d
        number = chinese_number(g[0])
        if number is None:
            return None
        year, month, day = None, None, number
    if not _valid(year, month, day):
        return None
    return DayRef(day=day, month=month, year=year, phrase=m.group(0))


def named_days(query: str) -> list[DayRef]:
    """The calendar days written out in ``query`` (table in the module docstring), in the
    order they occur; a phrase read once, by the first pattern that reads it.

    Args:
        query: the search text.

    Returns:
        One :class:`DayRef` per day named; ``[]`` when the query names none.

    Example:
        >>> [(d.month, d.day) for d in named_days("What did I say on May 4th?")]
        [(5, 4)]
    """
    found: list[tuple[int, DayRef]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in (*_EN_PATTERNS, *_ZH_PATTERNS):
        for m in pattern.finditer(query):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            taken.append(m.span())
            if _ANCHOR_BEFORE.search(query, 0, m.start()) or _ANCHOR_AFTER.match(query, m.end()):
                continue  # "before May 4th": the day bounds a range, it is not the day
            ref = _read(kind, m)
            if ref is not None:
                found.append((m.start(), ref))
    return [ref for _, ref in sorted(found, key=lambda item: item[0])]


def names_first_conversation(query: str) -> bool:
    """Whether ``query`` asks about the first conversation ("what did we talk about in
    our first conversation?", ``我们第一次聊天聊了什么？``)."""
    return _FIRST_CONVERSATION.search(query) is not None
