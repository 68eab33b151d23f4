"""Date phrases in English and Chinese chat, resolved against the message's own time.

The message time is fixed at 2023-05-08 13:56 UTC (a Monday). Every expected date below
is computed from that time, never from today's date: the same phrases said at another time
resolve to other dates (see the tests that move the base).
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemolayer.extract.dates import find_date_spans, find_dates, resolve_date

BASE = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday

ENGLISH = [
    ("yesterday", date(2023, 5, 7)),
    ("today", date(2023, 5, 8)),
    ("tonight", date(2023, 5, 8)),
    ("tomorrow", date(2023, 5, 9)),
    ("last night", date(2023, 5, 7)),
    ("the day before yesterday", date(2023, 5, 6)),
    ("the day after tomorrow", date(2023, 5, 10)),
    ("last week", date(2023, 5, 1)),
    ("next week", date(2023, 5, 15)),
    ("last month", date(2023, 4, 8)),
    ("next month", date(2023, 6, 8)),
    ("next Friday", date(2023, 5, 12)),
    ("last Saturday", date(2023, 5, 6)),
    ("on Saturday", date(2023, 5, 6)),
    ("3 days ago", date(2023, 5, 5)),
    ("three days ago", date(2023, 5, 5)),
    ("two weeks ago", date(2023, 4, 24)),
    ("a couple of weeks ago", date(2023, 4, 24)),
    ("a fortnight ago", date(2023, 4, 24)),
    ("in two weeks", date(2023, 5, 22)),
    ("in 10 days", date(2023, 5, 18)),
    ("two weeks from now", date(2023, 5, 22)),
    ("this weekend", date(2023, 5, 13)),
    ("last weekend", date(2023, 5, 6)),
    ("on May 7", date(2023, 5, 7)),
    ("May 7th", date(2023, 5, 7)),
    ("the 3rd of June", date(2023, 6, 3)),
    ("7 May 2023", date(2023, 5, 7)),
    ("Dec 25th, 2022", date(2022, 12, 25)),
    ("2023-05-07", date(2023, 5, 7)),
    ("5/7/2023", date(2023, 5, 7)),
    ("May 2022", date(2022, 5, 1)),
]

CHINESE = [
    ("昨天", date(2023, 5, 7)),
    ("昨晚", date(2023, 5, 7)),
    ("今天", date(2023, 5, 8)),
    ("明天", date(2023, 5, 9)),
    ("前天", date(2023, 5, 6)),
    ("大前天", date(2023, 5, 5)),
    ("后天", date(2023, 5, 10)),
    ("上周", date(2023, 5, 1)),
    ("上星期", date(2023, 5, 1)),
    ("下周", date(2023, 5, 15)),
    ("上个月", date(2023, 4, 8)),
    ("下个月", date(2023, 6, 8)),
    ("下周五", date(2023, 5, 19)),  # Friday of next Monday-to-Sunday week
    ("上周三", date(2023, 5, 3)),
    ("这周六", date(2023, 5, 13)),
    ("周六", date(2023, 5, 13)),  # the day of the base's own week
    ("三天前", date(2023, 5, 5)),
    ("两天前", date(2023, 5, 6)),
    ("3天前", date(2023, 5, 5)),
    ("十天后", date(2023, 5, 18)),
    ("半个月前", date(2023, 4, 23)),
    ("5月7日", date(2023, 5, 7)),
    ("5月7号", date(2023, 5, 7)),
    ("五月七日", date(2023, 5, 7)),
    ("2023年5月7日", date(2023, 5, 7)),
    ("去年5月7号", date(2022, 5, 7)),
    ("2022年5月", date(2022, 5, 1)),
    ("本周末", date(2023, 5, 13)),
]


@pytest.mark.parametrize(("phrase", "expected"), ENGLISH)
def test_english_phrases_resolve_against_the_message_time(phrase: str, expected: date) -> None:
    assert resolve_date(phrase, BASE, "en") == expected


@pytest.mark.parametrize(("phrase", "expected"), CHINESE)
def test_chinese_phrases_resolve_against_the_message_time(phrase: str, expected: date) -> None:
    assert resolve_date(phrase, BASE, "zh") == expected


@pytest.mark.parametrize(
    ("phrase", "lang", "shift"),
    [
        ("yesterday", "en", -1),
        ("3 days ago", "en", -3),
        ("last week", "en", -7),
        ("in two weeks", "en", 14),
        ("昨天", "zh", -1),
        ("前天", "zh", -2),
        ("三天前", "zh", -3),
        ("上周", "zh", -7),
    ],
)
def test_the_same_phrase_moves_with_the_message_time(phrase: str, lang: str, shift: int) -> None:
    """Resolution never reads the clock: in 1999, in 2023 and in 2041 the phrase means the
    same distance from the message, whatever today is."""
    for base in (
        datetime(1999, 12, 31, 8, 0, tzinfo=UTC),
        BASE,
        datetime(2041, 2, 28, 23, 0, tzinfo=UTC),
    ):
        assert resolve_date(phrase, base, lang) == base.date() + timedelta(days=shift)


def test_a_phrase_cached_for_one_day_is_not_reused_for_another() -> None:
    monday, tuesday = BASE, BASE + timedelta(days=1)
    assert resolve_date("yesterday", monday, "en") == date(2023, 5, 7)
    assert resolve_date("yesterday", tuesday, "en") == date(2023, 5, 8)
    assert resolve_date("yesterday", monday, "en") == date(2023, 5, 7)


def test_an_aware_time_is_read_on_its_own_calendar_day() -> None:
    late_in_new_york = datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=-4)))
    assert resolve_date("yesterday", late_in_new_york, "en") == date(2023, 5, 7)
    assert resolve_date("昨天", late_in_new_york, "zh") == date(2023, 5, 7)
    assert resolve_date("yesterday", datetime(2023, 5, 8, 23, 30), "en") == date(2023, 5, 7)


def test_hours_keep_the_time_of_day() -> None:
    late = datetime(2023, 5, 8, 23, 0)
    assert resolve_date("in 3 hours", late, "en") == date(2023, 5, 9)
    assert resolve_date("in 3 hours", datetime(2023, 5, 8, 9, 0), "en") == date(2023, 5, 8)


def test_a_bare_weekday_follows_the_preferred_direction() -> None:
    assert resolve_date("Friday", BASE, "en", prefer="past") == date(2023, 5, 5)
    assert resolve_date("Friday", BASE, "en", prefer="future") == date(2023, 5, 12)
    assert resolve_date("周五", BASE, "zh", prefer="past") == date(2023, 5, 5)
    assert resolve_date("周五", BASE, "zh", prefer="future") == date(2023, 5, 12)


@pytest.mark.parametrize(
    "phrase", ["May 45", "the 45th of May", "February 30th", "2023-13-45", "30月40日", "banana"]
)
def test_impossible_dates_do_not_resolve(phrase: str) -> None:
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in phrase) else "en"
    assert resolve_date(phrase, BASE, lang) is None


def test_without_a_base_nothing_resolves() -> None:
    assert resolve_date("yesterday", None, "en") is None
    assert resolve_date("昨天", None, "zh") is None


def test_find_dates_english() -> None:
    found = find_dates(
        "I went there yesterday and I'm back on May 12, see you next Friday!", BASE, "en"
    )
    assert [(d.text, d.value) for d in found] == [
        ("yesterday", date(2023, 5, 7)),
        ("on May 12", date(2023, 5, 12)),
        ("next Friday", date(2023, 5, 12)),
    ]


def test_find_dates_chinese() -> None:
    found = find_dates("我昨天去了北京，下周五回来，5月20日再走。", BASE, "zh")
    assert [(d.text, d.value) for d in found] == [
        ("昨天", date(2023, 5, 7)),
        ("下周五", date(2023, 5, 19)),
        ("5月20日", date(2023, 5, 20)),
    ]


def test_without_a_base_only_phrases_with_a_year_are_found() -> None:
    text = "Yesterday was long; on 7 May 2023 we met, and 2022-12-01 too."
    assert [(d.text, d.value) for d in find_dates(text, None, "en")] == [
        ("on 7 May 2023", date(2023, 5, 7)),
        ("2022-12-01", date(2022, 12, 1)),
    ]
    assert [(d.text, d.value) for d in find_dates("昨天和2023年5月7日", None, "zh")] == [
        ("2023年5月7日", date(2023, 5, 7)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I may go.",
        "We march on.",
        "I work Fridays.",
        "She is 45.",
        "Mayday!",
        "I have 3 days off.",
        "每周五都去",
    ],
)
def test_ordinary_words_are_not_dates(text: str) -> None:
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
    assert find_dates(text, BASE, lang) == []


def test_spans_are_in_order_and_do_not_overlap() -> None:
    text = "yesterday, last week and 3 days ago"
    spans = find_date_spans(text, "en")
    assert [text[s:e] for s, e in spans] == ["yesterday", "last week", "3 days ago"]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_language_codes() -> None:
    assert find_date_spans("昨天", "zh-CN") == [(0, 2)]
    assert find_date_spans("today", "en-GB") == [(0, 5)]
    with pytest.raises(ValueError, match="language"):
        find_dates("today", BASE, "fr")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=120), st.sampled_from(["en", "zh"]))
def test_any_text_is_safe(text: str, lang: str) -> None:
    for found in find_dates(text, BASE, lang):
        assert found.text in text
    resolve_date(text, BASE, lang)


FIXED_OFFSETS_EN = [
    "today", "tonight", "yesterday", "last night", "tomorrow", "the day before yesterday",
    "3 days ago", "a week ago", "two weeks ago", "in 10 days", "in two weeks", "in a month",
    "a month ago", "3 months ago", "a year ago", "in 2 years", "last week", "next week",
    "last month", "next month", "last year", "next year",
]  # fmt: skip
FIXED_OFFSETS_ZH = [
    "今天", "昨天", "明天", "前天", "后天", "大前天", "上周", "下周", "上个月", "下个月",
    "去年", "明年", "3天前", "10天后", "2周前", "1个月前", "2个月后", "3年前",
]  # fmt: skip
TRICKY_DAYS = [
    datetime(2024, 1, 31, 10, 0), datetime(2024, 2, 29, 10, 0), datetime(2023, 3, 31, 10, 0),
    datetime(2023, 12, 31, 23, 59), datetime(2024, 1, 1, 0, 1), datetime(2023, 8, 31, 12, 0),
]  # fmt: skip


def test_day_counted_phrases_agree_with_dateparser() -> None:
    """Phrases that are a fixed count of days, weeks, months or years are computed by
    calendar arithmetic (fast); they must mean what dateparser says they mean, month ends
    and leap days included."""
    import dateparser

    for base in TRICKY_DAYS:
        noon = base.replace(hour=12, minute=0)
        for lang, phrases in (("en", FIXED_OFFSETS_EN), ("zh", FIXED_OFFSETS_ZH)):
            for phrase in phrases:
                expected = dateparser.parse(
                    phrase,
                    languages=[lang],
                    settings={"RELATIVE_BASE": noon, "PREFER_DATES_FROM": "current_period"},
                )
                assert expected is not None, phrase
                assert resolve_date(phrase, base, lang) == expected.date(), (phrase, base)
