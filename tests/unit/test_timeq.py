"""Relative time in queries (mnemolayer.text.timeq): every phrase, week starts, month
boundaries and the year rollover of a named month."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemolayer.text.timeq import time_window

WED = datetime(2024, 5, 8, 15, 30, tzinfo=UTC)  # a Wednesday


def d(y: int, m: int, day: int, h: int = 0, mi: int = 0) -> datetime:
    return datetime(y, m, day, h, mi, tzinfo=UTC)


CASES = [
    ("yesterday", WED, d(2024, 5, 7), d(2024, 5, 8)),
    ("昨天", WED, d(2024, 5, 7), d(2024, 5, 8)),
    ("the day before yesterday", WED, d(2024, 5, 6), d(2024, 5, 7)),
    ("前天", WED, d(2024, 5, 6), d(2024, 5, 7)),
    ("today", WED, d(2024, 5, 8), d(2024, 5, 9)),
    ("3 days ago", WED, d(2024, 5, 5), d(2024, 5, 6)),
    ("three days ago", WED, d(2024, 5, 5), d(2024, 5, 6)),
    ("三天前", WED, d(2024, 5, 5), d(2024, 5, 6)),
    ("十天前", WED, d(2024, 4, 28), d(2024, 4, 29)),
    ("this week", WED, d(2024, 5, 6), d(2024, 5, 13)),
    ("这周", WED, d(2024, 5, 6), d(2024, 5, 13)),
    ("本周", WED, d(2024, 5, 6), d(2024, 5, 13)),
    ("last week", WED, d(2024, 4, 29), d(2024, 5, 6)),
    ("上周", WED, d(2024, 4, 29), d(2024, 5, 6)),
    ("上个星期", WED, d(2024, 4, 29), d(2024, 5, 6)),
    ("two weeks ago", WED, d(2024, 4, 22), d(2024, 4, 29)),
    ("两周前", WED, d(2024, 4, 22), d(2024, 4, 29)),
    ("the past 7 days", WED, d(2024, 5, 1, 15, 30), d(2024, 5, 8, 15, 30)),
    ("过去7天", WED, d(2024, 5, 1, 15, 30), d(2024, 5, 8, 15, 30)),
    ("过去七天", WED, d(2024, 5, 1, 15, 30), d(2024, 5, 8, 15, 30)),
    ("last 3 days", WED, d(2024, 5, 5, 15, 30), d(2024, 5, 8, 15, 30)),
    ("this month", WED, d(2024, 5, 1), d(2024, 6, 1)),
    ("last month", WED, d(2024, 4, 1), d(2024, 5, 1)),
    ("上个月", WED, d(2024, 4, 1), d(2024, 5, 1)),
    ("三个月前", WED, d(2024, 2, 1), d(2024, 3, 1)),
    ("in March", WED, d(2024, 3, 1), d(2024, 4, 1)),
    ("三月", WED, d(2024, 3, 1), d(2024, 4, 1)),
    ("3月份", WED, d(2024, 3, 1), d(2024, 4, 1)),
    ("in May 2023", WED, d(2023, 5, 1), d(2023, 6, 1)),
    ("2023年5月", WED, d(2023, 5, 1), d(2023, 6, 1)),
    ("last year", WED, d(2023, 1, 1), d(2024, 1, 1)),
    ("去年", WED, d(2023, 1, 1), d(2024, 1, 1)),
    # Week starts on Monday: asked on a Monday, "last week" is the seven days before it,
    # asked on a Sunday it is the week before the Monday six days earlier.
    ("last week", d(2024, 5, 6, 9), d(2024, 4, 29), d(2024, 5, 6)),
    ("this week", d(2024, 5, 12, 23), d(2024, 5, 6), d(2024, 5, 13)),
    # Month and year boundaries.
    ("yesterday", d(2024, 3, 1, 8), d(2024, 2, 29), d(2024, 3, 1)),
    ("last month", d(2024, 1, 15), d(2023, 12, 1), d(2024, 1, 1)),
    ("上个月", d(2024, 1, 15), d(2023, 12, 1), d(2024, 1, 1)),
    ("last week", d(2024, 1, 3), d(2023, 12, 25), d(2024, 1, 1)),
    # A named month asked before it comes round: the most recent past one.
    ("in March", d(2024, 1, 20), d(2023, 3, 1), d(2023, 4, 1)),
    ("三月", d(2024, 1, 20), d(2023, 3, 1), d(2023, 4, 1)),
    ("in March", d(2024, 3, 2), d(2024, 3, 1), d(2024, 4, 1)),
    ("十二月", d(2024, 1, 20), d(2023, 12, 1), d(2024, 1, 1)),
]


@pytest.mark.parametrize(("phrase", "ref", "start", "end"), CASES)
def test_each_phrase_resolves_to_its_range(
    phrase: str, ref: datetime, start: datetime, end: datetime
) -> None:
    w = time_window(f"What did I do {phrase}?", ref)
    assert w is not None and w.phrase.lower().endswith(phrase.split()[-1].lower())
    assert w.start == start
    # "the past N days" runs up to the reference time itself (inclusive).
    assert w.end == end or (w.end - end).total_seconds() < 1e-3


@pytest.mark.parametrize(
    "query",
    ["I may go hiking", "3月5日我去了哪里", "What is my favourite week?", "Where do I live?"],
)
def test_no_time_phrase_no_window(query: str) -> None:
    assert time_window(query, WED) is None


def test_the_phrase_is_taken_out_of_the_rest() -> None:
    w = time_window("What did I cook last week?", WED)
    assert w is not None and w.rest == "What did I cook?" and w.phrase == "last week"
    zh = time_window("我上周做了什么菜？", WED)
    assert zh is not None and zh.rest == "我做了什么菜？"


def test_a_naive_reference_is_utc() -> None:
    w = time_window("yesterday", datetime(2024, 5, 8, 1))
    assert w is not None and w.start == d(2024, 5, 7)


@pytest.mark.parametrize(
    "query",
    [
        "How many pets will Andrew have, as of December 2023?",
        "Where was Tim in the week before 16 November 2023?",
        "What did I cook since March?",
        "What painting did she show on October 13, 2023?",
        "截至三月我去过哪里？",
    ],
)
def test_a_time_that_bounds_the_question_is_no_window(query: str) -> None:
    assert time_window(query, WED) is None


@pytest.mark.parametrize(
    "query",
    [
        "What did I do on the 27th of April?",
        "What happened April 27?",
        "Where was I 3 May 2024?",
        "What did we eat on the 1st of March, 2024?",
    ],
)
def test_a_month_with_its_day_names_a_day_not_the_month(query: str) -> None:
    """A day is left to the day references (text/dayrefs.py): read as its whole month,
    it would lift thirty days of unrelated memories."""
    assert time_window(query, WED) is None


@pytest.mark.parametrize(
    ("query", "start"),
    [("What did I do in April?", d(2024, 4, 1)), ("in May 2023 we met", d(2023, 5, 1))],
)
def test_a_month_alone_or_with_its_year_is_still_the_month(query: str, start: datetime) -> None:
    w = time_window(query, WED)
    assert w is not None and w.start == start


def test_a_weekday_beside_a_written_out_day_is_left_to_that_day() -> None:
    ref = datetime(2024, 7, 17, 10, tzinfo=UTC)  # a Wednesday
    assert time_window("What did Joanna finish last Friday on 23 January, 2022?", ref) is None
    week = time_window("What did I do last Friday?", ref)
    assert week is not None and (week.start.day, week.end.day) == (12, 13)
