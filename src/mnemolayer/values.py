"""The plain values that cross the seams: what an extractor finds in a message, what a
session store keeps of a working-memory window, and an importance estimate.

They sit on the bottom floor with :mod:`mnemolayer.models`, so that the seams
(:mod:`mnemolayer.protocols`) and every backend (the rule and LLM extractors, the SQLite and
Redis session stores, the importance estimators) can name them without importing one
another. Their usual import paths stay: :mod:`mnemolayer.extract.base`,
:mod:`mnemolayer.layers.working.state` and :mod:`mnemolayer.lifecycle.importance`
re-export them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ExtractedEntity",
    "ExtractedFact",
    "Extraction",
    "ImportanceEstimate",
    "ResolvedDate",
    "SessionInfo",
    "WindowState",
    "WorkingMessage",
]

# -- extraction (the subject "I" resolves to mnemolayer.extract.base.SELF) ---------------


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One subject–predicate–object triple found in a message.

    Attributes:
        subject: entity name (:data:`~mnemolayer.extract.base.SELF`, the speaker's name, or a third party's name).
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


# -- working memory ----------------------------------------------------------------------


@dataclass(frozen=True)
class WorkingMessage:
    """One message in a working-memory window.

    Attributes:
        id: the message id (hex), stable across resumes; pass it to
            :meth:`~mnemolayer.layers.working.window.WorkingMemory.pin`.
        role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``.
        content: the text as the model sees it (cut to fit when ``truncated``).
        created_at: when it was added (aware UTC).
        pinned: kept through every compaction.
        archived_id: id of the episodic record already holding the full text (set for
            a truncated turn, which is archived as soon as it is added), else ``None``.
    """

    id: str
    role: str
    content: str
    created_at: datetime
    pinned: bool = False
    archived_id: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether ``content`` is a cut of a longer turn (archived in full)."""
        return self.archived_id is not None

    def as_dict(self) -> dict[str, str]:
        """``{"role": ..., "content": ...}``, the chat-completion message shape."""
        return {"role": self.role, "content": self.content}


@dataclass
class WindowState:
    """Everything a :class:`~mnemolayer.protocols.SessionStore` persists for one window.

    Attributes:
        user_id, session_id: the scope (required); agent_id: optional narrower scope.
        budget_tokens: the window's budget, in tokens.
        encoding: the token counter's name (``"o200k_base"``).
        messages: pinned and recent messages, oldest first.
        summary: the running summary text (``""`` when nothing was compacted yet).
        summary_rounds: how many times the summary was itself re-summarised.
        evicted_count: how many turns were compacted out of the window so far.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    encoding: str
    messages: list[WorkingMessage] = field(default_factory=list)
    summary: str = ""
    summary_rounds: int = 0
    evicted_count: int = 0


@dataclass(frozen=True)
class SessionInfo:
    """One saved window, as :meth:`~mnemolayer.protocols.SessionStore.list_sessions` describes it.

    Attributes:
        user_id, session_id, agent_id: the window's scope.
        budget_tokens: its budget, in tokens.
        messages: how many messages it holds (pinned and recent; the summary not counted).
        evicted_count: how many turns were compacted out of it so far.
        summary_rounds: how many times its summary was re-summarised.
        updated_at: when it was last saved (aware UTC), ``None`` when the store does not
            know.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    messages: int
    evicted_count: int
    summary_rounds: int
    updated_at: datetime | None


# -- importance --------------------------------------------------------------------------


class ImportanceEstimate(BaseModel):
    """An importance and why.

    Attributes:
        value: in [0, 1].
        reasons: one line per signal that contributed, with its weight
            (``"identity fact (+0.25)"``); empty when only the base applied.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float
    reasons: list[str]
