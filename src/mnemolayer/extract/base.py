"""The extractor protocol and the types every extractor returns.

An extractor turns one message (text, who said it, when) into :class:`Extraction`:
facts as subject–predicate–object triples between entities, plus the entities and
absolute dates it found. Rule-based and LLM extractors return the same types, so the
rest of mnemolayer never knows which one ran.

Conventions every extractor follows:

- **Subjects.** First person ("I", "my", "我", "我的") resolves to the speaker: the
  ``speaker`` name when one is given, else :data:`SELF` (the user the memory belongs to).
  Third parties are their own entities, by name ("my sister Maria lives in Rome" →
  ``(Maria, lives_in, Rome)`` and ``(SELF, sister, Maria)``), never the speaker's.
- **Predicates** come from :data:`mnemolayer.extract.predicates.PREDICATES` (English
  snake_case identifiers, also for Chinese text). Objects keep the message's language
  and wording, trimmed of articles and possessives ("a dog named Max" → ``"Max"`` with
  ``object_type="dog"``; "peanuts"; "香菜").
- **Negation.** "I no longer eat meat" / "我不再喜欢咖啡" is a fact with ``negated=True``:
  it closes the matching current fact rather than stating a new one. "I don't like
  coriander" is not a negation but a ``dislikes`` fact.
- **Dates.** Relative dates ("yesterday", "next Friday", "上周", "下个月") resolve against
  the **message's own timestamp**, never the processing time, and are stored as ISO
  dates (``datetime.date``). A fact's ``date`` is when its event happens or happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Protocol, runtime_checkable

__all__ = ["SELF", "ExtractedEntity", "ExtractedFact", "Extraction", "Extractor", "ResolvedDate"]

#: The subject name for "I"/"我" when the message has no speaker name: the user the
#: memory belongs to. The store resolves it to that user's own entity.
SELF = "user"


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One subject–predicate–object triple found in a message.

    Attributes:
        subject: entity name (:data:`SELF`, the speaker's name, or a third party's name).
        predicate: a key of :data:`~mnemolayer.extract.predicates.PREDICATES`.
        object: the object as said (an entity name, a place, a thing, a short phrase).
        object_type: what the object is when known (``"person"``, ``"place"``,
            ``"organization"``, ``"dog"``…), else ``None``.
        negated: the message retracts this fact ("no longer", "不再").
        date: the event's date (ISO date), resolved against the message time.
        confidence: in [0, 1]; rules give fixed per-pattern values.
        evidence: the span of text the fact came from (for explanations).
    """

    subject: str
    predicate: str
    object: str
    object_type: str | None = None
    negated: bool = False
    date: date | None = None
    confidence: float = 0.8
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    """An entity named in a message: ``name`` and ``type`` (``person``, ``place``,
    ``organization``, ``pet``, ``thing``…); ``aliases`` are other names given for it
    ("my sister Maria" → name ``Maria``, aliases ``()``; relation terms are facts, not
    aliases)."""

    name: str
    type: str = "thing"
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResolvedDate:
    """A date expression in the text and the ISO date it resolves to."""

    text: str
    value: date


@dataclass(slots=True)
class Extraction:
    """Everything an extractor found in one message."""

    facts: list[ExtractedFact] = field(default_factory=list)
    entities: list[ExtractedEntity] = field(default_factory=list)
    dates: list[ResolvedDate] = field(default_factory=list)


@runtime_checkable
class Extractor(Protocol):
    """Turns one message into an :class:`Extraction`.

    Implementations must be thread-safe, must not raise on any text (return an empty
    :class:`Extraction` instead), and must resolve relative dates against ``timestamp``.
    """

    name: str

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        """Extract facts from ``text`` said by ``speaker`` (``None`` → :data:`SELF`) at
        ``timestamp`` (aware UTC; ``None`` → relative dates are left unresolved)."""
        ...
