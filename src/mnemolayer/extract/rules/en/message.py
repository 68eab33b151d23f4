"""The message being read by the English rule extractor: who says it and when,
the facts found so far (:class:`_Message`, which keeps an object only once it passes
:func:`~.phrases._clean_phrase`), and what a rule returns (:class:`_Hit`).

Also the rule machinery shared by the handler modules: :class:`_Ctx` (what a handler
sees), :class:`_Rule` and :func:`_rule`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from mnemolayer.extract.base import SELF, ExtractedEntity, ExtractedFact
from mnemolayer.extract.dates import Preference, find_dates, resolve_date
from mnemolayer.extract.rules.en.phrases import (
    _MONTH,
    _ON_PREFIX,
    _PHRASE_PREDICATES,
    _clean_phrase,
)
from mnemolayer.extract.rules.en.text import _Clause


@dataclass(frozen=True, slots=True)
class _Subject:
    name: str
    kind: str  # "self", "person" or "pet"
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class _Hit:
    """A fact a rule found, before negation and dates are applied."""

    predicate: str
    obj: str
    object_type: str | None = None
    confidence: float = 0.9
    timing: str | None = None  # "past" / "future": the fact takes the clause's date
    negated: bool = False
    subject: str | None = None  # the fact's subject when it is not the clause's
    entity: str | None = None  # the object's entity type when it names one


#: Predicates a "no longer…" cannot retract: events happened, decisions were taken (a plan
#: or a goal can be dropped: "I'm not going to Paris anymore").
_NOT_RETRACTABLE = frozenset({"name", "age", "did", "visited", "attended", "decided"})
_FUTURE_VAGUE = re.compile(
    r"^(?:next|this\s+coming|coming|later|soon|some\s*day|one\s+day|eventually|in\s+"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december))\b",
    re.I,
)
_FUTURE_WORDS = re.compile(
    r"\b(?:next|tomorrow|coming|from\s+now|tonight|in\s+(?:\d+|a|an|two|three|four|five|six|"
    r"a\s+couple\s+of)\s+\w+|this)\b",
    re.I,
)


@dataclass(slots=True)
class _Message:
    """One message being read: who said it and when, and what was found so far."""

    speaker: str
    timestamp: datetime | None
    facts: list[ExtractedFact] = field(default_factory=list)
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    last_person: str | None = None
    seen: set[tuple[str, str, str, bool]] = field(default_factory=set)
    decision_next: bool = False  # the last clause announced a decision ("Decision made:")

    def date_of(self, clause: _Clause, timing: str) -> date | None:
        """The first date of ``clause`` (else of its sentence) that fits ``timing``."""
        for phrases in (clause.dates, clause.sentence.dates):
            for phrase in phrases:
                day = self.resolve(phrase, timing)
                if day is not None:
                    return day
        return None

    def resolve(self, phrase: str, timing: str) -> date | None:
        prefer: Preference = "past" if timing == "past" else "future"
        if self.timestamp is None:
            found = find_dates(phrase, None, "en")
            return found[0].value if found else None
        day = resolve_date(phrase, self.timestamp, "en", prefer=prefer)
        if day is None:
            return None
        today = self.timestamp.date()
        if (timing == "past" and day > today) or (timing == "future" and day < today):
            return None
        return day

    def day_of_year(self, phrase: str) -> str | None:
        """A birthday as said ("October 12th", "the 3rd of May") when the phrase names its
        month, else the month and day it resolves to ("tomorrow" → "May 9")."""
        phrase = _ON_PREFIX.sub("", phrase.strip())
        if _MONTH.search(phrase):
            return phrase
        if self.timestamp is None:
            return None
        day = resolve_date(phrase, self.timestamp, "en", prefer="future")
        return f"{day:%B} {day.day}" if day is not None else None

    def has_future_date(self, clause: _Clause) -> bool:
        """Whether ``clause`` (or its sentence) names a time that is still to come: a day
        ("next Friday"), or a vague future ("next summer", "in June", "soon")."""
        if any(_FUTURE_VAGUE.match(phrase) for phrase in clause.vague):
            return True
        if self.timestamp is None:
            return any(_FUTURE_WORDS.search(p) for p in clause.dates + clause.sentence.dates)
        return self.date_of(clause, "future") is not None

    def add(self, subject: str, hit: _Hit, clause: _Clause, factor: float = 1.0) -> None:
        obj = " ".join(hit.obj.split()).strip(" ,.;:!?'\"-|")
        if hit.predicate in _PHRASE_PREDICATES:
            obj = _clean_phrase(obj) or ""
        if not obj or len(obj) > 120:
            return
        key = (subject.casefold(), hit.predicate, obj.casefold(), hit.negated)
        if key in self.seen:
            return
        self.seen.add(key)
        when = self.date_of(clause, hit.timing) if hit.timing else None
        self.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=hit.predicate,
                object=obj,
                object_type=hit.object_type or hit.entity,
                negated=hit.negated,
                date=when,
                confidence=round(hit.confidence * factor, 3),
                evidence=clause.evidence,
            )
        )
        if hit.entity:
            self.entity(obj, hit.entity)

    def name_pet(self, names: list[str]) -> bool:
        """Give the last unnamed pet of this message its name(s), said later ("We got a
        cat. Her name is Luna."): ``has_pet cat`` becomes ``has_pet Luna``. Returns
        whether there was such a pet."""
        for i in range(len(self.facts) - 1, -1, -1):
            fact = self.facts[i]
            if fact.predicate != "has_pet" or fact.negated or fact.object in self.entities:
                continue
            del self.facts[i]
            self.seen.discard((fact.subject.casefold(), "has_pet", fact.object.casefold(), False))
            for offset, name in enumerate(names):
                self.entity(name, "pet")
                self.seen.add((fact.subject.casefold(), "has_pet", name.casefold(), False))
                named = replace(fact, object=name, confidence=min(fact.confidence, 0.85))
                self.facts.insert(i + offset, named)
            return True
        return False

    def entity(self, name: str, kind: str) -> None:
        if name not in self.entities and name != SELF:
            self.entities[name] = ExtractedEntity(name=name, type=kind)

    def person(self, name: str, kind: str = "person") -> None:
        """``name`` is a third party of this message (for "he"/"she" later on)."""
        self.entity(name, kind)
        if kind == "person":
            self.last_person = name


@dataclass(slots=True)
class _Ctx:
    """What a rule handler sees: the message, the clause and its subject."""

    msg: _Message
    clause: _Clause
    subject: _Subject

    @property
    def is_self(self) -> bool:
        return self.subject.kind == "self"


_Handler = Callable[[re.Match[str], _Ctx], list[_Hit]]


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    handler: _Handler


def _rule(pattern: str, handler: _Handler) -> _Rule:
    return _Rule(re.compile(pattern, re.I), handler)


_BE = r"(?:am|is|are)"
_HAVE = r"(?:have|has)"
_AGE_END = (
    r"(?=\s*(?:$|[,;!|]|\.(?!\d)|(?:and|but|now|today|btw|lol|haha|myself|too|already|"
    r"this|as\s+of|turning|going\s+on)\b))"
)
