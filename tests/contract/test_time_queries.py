"""Relative time in queries at recall (issue 15, item 5), on both engines: a small dated
history where every phrase, asked at its reference time (the clock, or ``as_of``), has
exactly one right answer; the window filters, falls back when empty, and can be off."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.testing import FakeClock


def d(y: int, m: int, day: int, h: int = 12) -> datetime:
    return datetime(y, m, day, h, tzinfo=UTC)


HISTORY = [
    ("I went sailing with friends.", d(2023, 3, 20)),
    ("I went kayaking with friends.", d(2024, 3, 15)),
    ("I went bowling with friends.", d(2024, 4, 10)),
    ("I went climbing with friends.", d(2024, 4, 24)),
    ("I went fishing with friends.", d(2024, 5, 1, 10)),
    ("I went skating with friends.", d(2024, 5, 6)),  # a Monday
    ("I went hiking with friends.", d(2024, 5, 7)),
    ("I went surfing with friends.", d(2024, 5, 8, 9)),
]
NOW = None  # the clock: 2024-05-08 12:00 UTC, a Wednesday (conftest.CLOCK_START)

# phrase → (as_of or None for the clock, the one activity inside its window)
PHRASES: dict[str, tuple[datetime | None, str]] = {
    "yesterday": (NOW, "hiking"),
    "昨天": (NOW, "hiking"),
    "the day before yesterday": (NOW, "skating"),
    "前天": (NOW, "skating"),
    "3 days ago": (d(2024, 5, 9), "skating"),
    "三天前": (d(2024, 5, 9), "skating"),
    "last week": (NOW, "fishing"),
    "上周": (NOW, "fishing"),
    "this week": (d(2024, 4, 26), "climbing"),
    "这周": (d(2024, 4, 26), "climbing"),
    "the past 7 days": (d(2024, 4, 30), "climbing"),
    "过去7天": (d(2024, 4, 30), "climbing"),
    "two weeks ago": (NOW, "climbing"),
    "两周前": (NOW, "climbing"),
    "last month": (d(2024, 4, 15), "kayaking"),
    "上个月": (d(2024, 4, 15), "kayaking"),
    "in March": (NOW, "kayaking"),
    "三月": (NOW, "kayaking"),
    # Weekdays: "last" names the previous calendar week's, "this" the current week's.
    "last Monday": (d(2024, 5, 15), "skating"),
    "上周一": (d(2024, 5, 15), "skating"),
    "this Monday": (NOW, "skating"),
    "这周一": (NOW, "skating"),
    "last Wednesday": (d(2024, 5, 15), "surfing"),
    "上星期三": (d(2024, 5, 15), "surfing"),
    # Asked in January: the most recent March is last year's.
    "in March ": (d(2024, 1, 20), "sailing"),
    "三月 ": (d(2024, 1, 20), "sailing"),
}


@pytest.fixture
def dated(mem: Memory) -> Memory:
    for text, when in HISTORY:
        mem.add(text, user_id="u1", timestamp=when)
    return mem


def _ask(phrase: str) -> str:
    phrase = phrase.strip()
    if phrase.isascii():
        return f"What did I do {phrase}?"
    return f"我{phrase}做了什么？"


@pytest.mark.parametrize("phrase", sorted(PHRASES))
def test_each_phrase_finds_the_one_memory_of_its_window(dated: Memory, phrase: str) -> None:
    as_of, expected = PHRASES[phrase]
    hits = dated.search(_ask(phrase), user_id="u1", as_of=as_of)
    assert [h.content for h in hits] == [f"I went {expected} with friends."]
    assert hits[0].scores["time_window"] == 1.0


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_every_mode_uses_the_window(dated: Memory, mode: str) -> None:
    hits = dated.search("What did I do yesterday?", user_id="u1", mode=mode)
    assert [h.content for h in hits] == ["I went hiking with friends."]


def test_an_empty_window_falls_back_to_ordinary_recall(dated: Memory) -> None:
    hits = dated.search("What did I do with friends 10 days ago?", user_id="u1")
    assert len(hits) == len(HISTORY)  # nothing on 28 April: nothing is filtered out
    assert all(h.scores["time_window"] == 0.0 for h in hits)


def test_the_window_boosts_without_hiding_the_words(dated: Memory) -> None:
    hits = dated.search("Did I go bowling last week?", user_id="u1", limit=3)
    # Only fishing happened last week: the window filters to it.
    assert [h.content for h in hits] == ["I went fishing with friends."]


def test_the_window_can_be_turned_off(db_path: Path, clock: FakeClock) -> None:
    m = Memory(
        db_path,
        embedder="hashing",
        clock=clock,
        extractor=None,
        retrieval=RetrievalConfig(time_window=False),
    )
    try:
        for text, when in HISTORY:
            m.add(text, user_id="u1", timestamp=when)
        hits = m.search("What did I do yesterday?", user_id="u1")
        assert len(hits) == len(HISTORY) and all("time_window" not in h.scores for h in hits)
    finally:
        m.close()


def test_a_fact_dated_at_write_counts_by_its_event_date(smem: Memory) -> None:
    # Said on 3 June, "last month" puts the move in May: asked in June about last
    # month, the message is inside although it was sent in June.
    smem.add("I moved to Porto last month.", user_id="u1", timestamp=d(2024, 6, 3))
    smem.add("I bought a bike.", user_id="u1", timestamp=d(2024, 6, 2))
    hits = smem.search("What happened last month?", user_id="u1", as_of=d(2024, 6, 10))
    assert hits and "Porto" in hits[0].content
    assert all(h.scores["time_window"] == 1.0 for h in hits)
