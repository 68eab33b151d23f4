"""The day or conversation a query names, at recall: "What did we talk about on April
27th?", ``在5月1号我告诉过你……``, "our first conversation" (:mod:`mnemolayer.text.dayrefs`).

A candidate is *named* (``named_time`` 1 in its breakdown) when its event time (UTC) is on
a day the query names, or it is a turn of the user's first conversation (the session
whose earliest turn is earliest) when the query asks about that. When at least one
candidate is named, relevance becomes ``(rel + w · named) / (1 + w)``
(``w = RetrievalConfig.named_time_weight``, default 1): with ``w = 1`` every named
candidate (at least 0.5) ranks above every other (at most 0.5) before the conversation
features, while the relevance orders the named ones among themselves. A rule, not a
fitted weight: the day a question names is a constraint, the words around it ("what did
we talk about") are not. When no candidate is named (a day with no memory) nothing
changes, so a wrong reading of a date never empties or reorders the result.

A day written without its year (or month) means the latest such day on or before the
search's time among the candidates: "April 27th" asked in 2025 of a history that has
April 27th 2023 and 2024 is 2024's. The named day's session turns (and the first
conversation's) join the candidates, at most :data:`NAMED_CANDIDATES`, so a day whose
words miss the question is still ranked.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

import numpy as np

from mnemolayer.retrieval.conversation import ConversationIndex
from mnemolayer.text.dayrefs import DayRef, named_days, names_first_conversation

__all__ = ["NAMED_CANDIDATES", "first_session", "lift_named", "named_mask", "named_turns"]

#: At most this many turns of the named days (or first conversation) join the candidates.
NAMED_CANDIDATES = 50


def _day(when: datetime) -> date:
    return (when.astimezone(UTC) if when.tzinfo is not None else when).date()


def first_session(conv: ConversationIndex) -> int | None:
    """The number of the session whose earliest turn is earliest (``None`` without
    sessions or turn times). Session numbers follow the session ids, not time."""
    starts = [
        (min(conv.when[r] for r in turns), number)
        for number, turns in enumerate(conv.turns)
        if turns and all(r in conv.when for r in turns)
    ]
    return min(starts)[1] if starts else None


def _resolve(refs: Sequence[DayRef], days: Sequence[date], today: date) -> set[date]:
    """The days ``refs`` name among ``days``: for each, the latest matching day on or
    before ``today`` (an exact date is that date, whenever it is)."""
    out: set[date] = set()
    for ref in refs:
        matching = [d for d in days if ref.matches(d)]
        if ref.year is not None and ref.month is not None:
            out.update(matching)
            continue
        past = [d for d in matching if d <= today]
        if past:
            out.add(max(past))
    return out


def named_turns(query: str, conv: ConversationIndex, now: datetime) -> list[int]:
    """The session turns on the days ``query`` names, and of the first conversation when it
    asks about that: at most :data:`NAMED_CANDIDATES`, latest days first, in turn order."""
    refs = named_days(query)
    picked: list[int] = []
    if refs:
        by_day: dict[date, list[int]] = {}
        for turns in conv.turns:
            for r in turns:
                if r in conv.when:
                    by_day.setdefault(_day(conv.when[r]), []).append(r)
        for d in sorted(_resolve(refs, list(by_day), _day(now)), reverse=True):
            picked.extend(by_day[d])
    if names_first_conversation(query):
        first = first_session(conv)
        if first is not None:
            picked.extend(conv.turns[first])
    return list(dict.fromkeys(picked))[:NAMED_CANDIDATES]


def named_mask(
    query: str,
    rowids: Sequence[int],
    occurred: Sequence[datetime],
    conv: ConversationIndex | None,
    now: datetime,
) -> np.ndarray | None:
    """1 for each candidate on a day ``query`` names or in the first conversation it asks
    about, else 0, shape ``(len(rowids),)``; ``None`` when the query names neither.

    Args:
        query: the search text.
        rowids: the candidates.
        occurred: their event times (creation time when they have none), aligned.
        conv: the user's sessions, for the first conversation (``None``: not read).
        now: the search's time: a day without a year is the latest one up to it.
    """
    refs = named_days(query)
    first = names_first_conversation(query)
    if not refs and not first:
        return None
    mask = np.zeros(len(rowids))
    if refs:
        days = [_day(w) for w in occurred]
        named = _resolve(refs, sorted(set(days)), _day(now))
        mask[[i for i, d in enumerate(days) if d in named]] = 1.0
    if first and conv is not None:
        number = first_session(conv)
        if number is not None:
            turns = set(conv.turns[number])
            mask[[i for i, r in enumerate(rowids) if r in turns]] = 1.0
    return mask


def lift_named(relevance: np.ndarray, mask: np.ndarray, weight: float) -> np.ndarray:
    """``(rel + weight · mask) / (1 + weight)`` when any candidate is named, else
    ``relevance`` unchanged (shape ``(n,)``, values in [0, 1])."""
    if weight <= 0 or not mask.any():
        return relevance
    return (relevance + weight * mask) / (1.0 + weight)
