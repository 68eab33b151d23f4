"""The days and the first conversation a query names (mnemolayer.text.dayrefs), English
and Chinese."""

from __future__ import annotations

from datetime import date

import pytest

from mnemolayer.text.dayrefs import DayRef, named_days, names_first_conversation


def _read(query: str) -> list[tuple[int | None, int | None, int]]:
    return [(d.year, d.month, d.day) for d in named_days(query)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What topic did we talk about on April 27th?", [(None, 4, 27)]),
        ("On May 4th, I shared with you some problems.", [(None, 5, 4)]),
        ("I mentioned on May 2nd that I went to the museum.", [(None, 5, 2)]),
        ("What did I say on Apr. 27?", [(None, 4, 27)]),
        ("What painting did Melanie show on October 13, 2023?", [(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [(2023, 2, 1)]),
        ("What did we do on the 27th of April?", [(None, 4, 27)]),
        ("What happened on 2023-04-27?", [(2023, 4, 27)]),
        ("On the 4th, what did I cook?", [(None, None, 4)]),
        ("Between May 1st and May 3rd?", [(None, 5, 1), (None, 5, 3)]),
        ("Feb 29, what did I do?", [(None, 2, 29)]),
        # Chinese: digits, numerals, with a year, the day alone after 在
        ("在4月27号我们聊了什么话题？", [(None, 4, 27)]),
        ("在5月1号我曾告诉过你我的旅行计划", [(None, 5, 1)]),
        ("2023年5月1日我做了什么菜？", [(2023, 5, 1)]),
        ("五月一日我去了哪里？", [(None, 5, 1)]),
        ("四月二十七日我们聊了什么？", [(None, 4, 27)]),
        ("我在27号做了什么？", [(None, None, 27)]),
    ],
)
def test_a_day_written_out_is_read(
    query: str, expected: list[tuple[int | None, int | None, int]]
) -> None:
    assert _read(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what we talked about?",  # a verb
        "What did I do in May 2023?",  # a month, not a day
        "It was on the 4th floor.",  # a floor
        "How long ago was Caroline's 18th birthday?",
        "It was April 31st.",  # no such day
        "February 30th",
        "We were 20 people.",
        "What did John do the week before August 3, 2023?",  # a range's bound
        "What did I read since May 1st?",
        "5月1号之前我读了什么书？",
        "我们什么时候聊过电影？",
        "",
    ],
)
def test_no_day_is_read(query: str) -> None:
    assert named_days(query) == []


def test_the_phrase_is_kept() -> None:
    assert [d.phrase for d in named_days("I mentioned on May 2nd that I went")] == ["May 2nd"]


def test_a_day_matches_in_any_year_or_month_left_open() -> None:
    assert DayRef(day=27, month=4).matches(date(2023, 4, 27))
    assert DayRef(day=27, month=4).matches(date(2019, 4, 27))
    assert not DayRef(day=27, month=4).matches(date(2023, 5, 27))
    assert DayRef(day=4).matches(date(2023, 7, 4))
    assert not DayRef(day=27, month=4, year=2024).matches(date(2023, 4, 27))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Do you remember what we talked about during our first conversation?", True),
        ("What did I tell you the first time we talked?", True),
        ("What did we discuss when we first chatted?", True),
        ("你还记得我们第一次对话的时候，聊了什么话题吗？", True),
        ("我们第一次聊天聊了什么？", True),
        ("我们最初的对话是关于什么的？", True),
        ("When was the first time I went hiking?", False),
        ("What was my first job?", False),
        ("我第一次去厦门是什么时候？", False),
    ],
)
def test_the_first_conversation(query: str, expected: bool) -> None:
    assert names_first_conversation(query) is expected
