"""Retention: how much of a memory is still "remembered", from its age, kind, importance
and use.

The model is the exponential forgetting curve of Ebbinghaus (*Über das Gedächtnis*, 1885),
``R = e^(-t/S)``, in the form MemoryBank uses for LLM agents (Zhong et al., "MemoryBank:
Enhancing Large Language Models with Long-Term Memory", AAAI 2024, arXiv:2305.10250):
the strength ``S`` grows each time a memory is recalled and the clock ``t`` restarts at
the recall, so what is used is kept and what is not fades. Here the strength is written
as a half-life (``S = h / ln 2``), and it is set per kind and stretched by importance and
by (capped) access count; see :func:`explain_retention` for the formula.

Everything here is a pure function of plain values: the caller (``Memory``) reads the
record, the time and the :class:`~memstrata.lifecycle.config.LifecycleConfig`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import ValidationError
from ..models import MemoryKind, MemoryRecord, to_utc
from .config import LifecycleConfig

__all__ = [
    "AccessUpdate",
    "RetentionExplanation",
    "RetentionInput",
    "explain_retention",
    "forgetting_action",
    "is_pinned",
    "rank_score",
    "reinforce",
    "retention",
]

_SECONDS_PER_DAY = 86_400.0


def is_pinned(record: MemoryRecord) -> bool:
    """Whether a record is pinned: a ``pinned`` attribute set true, or ``metadata["pinned"]``
    being ``True``. Pinned memories never decay."""
    return getattr(record, "pinned", False) is True or record.metadata.get("pinned") is True


@dataclass(frozen=True)
class RetentionInput:
    """The fields of a memory that its retention depends on.

    Attributes:
        kind: the memory's layer.
        importance: in [0, 1].
        occurred_at: when it happened (or was stored, when the event time is unknown);
            aware UTC (naive is taken as UTC).
        last_accessed_at: the last recall that returned it, or ``None``.
        access_count: how many recalls returned it, ≥ 0.
        pinned: pinned memories keep retention 1.
        outcomes: for procedural memories, how many outcomes back the strategy (≥ 1).

    Raises:
        ValidationError: a field is out of range (the error names it).
    """

    kind: MemoryKind
    importance: float
    occurred_at: datetime
    last_accessed_at: datetime | None = None
    access_count: int = 0
    pinned: bool = False
    outcomes: int = 1

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "kind", MemoryKind(self.kind))
        except ValueError as exc:
            raise ValidationError("kind", f"unknown kind {self.kind!r}") from exc
        imp = self.importance
        if isinstance(imp, bool) or not isinstance(imp, int | float) or not 0.0 <= imp <= 1.0:
            raise ValidationError("importance", f"must be a number in [0, 1], got {imp!r}")
        for name in ("access_count", "outcomes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationError(name, f"must be an integer ≥ 0, got {value!r}")
        object.__setattr__(self, "occurred_at", to_utc(self.occurred_at, "occurred_at"))
        if self.occurred_at is None:
            raise ValidationError("occurred_at", "is required")
        object.__setattr__(
            self, "last_accessed_at", to_utc(self.last_accessed_at, "last_accessed_at")
        )

    @classmethod
    def from_record(cls, record: MemoryRecord, *, outcomes: int | None = None) -> RetentionInput:
        """The retention fields of ``record``.

        ``occurred_at`` falls back to ``created_at``; ``pinned`` is :func:`is_pinned`;
        ``outcomes`` defaults to ``metadata["outcome_count"]`` when that is a positive
        integer, else 1.
        """
        if outcomes is None:
            stored = record.metadata.get("outcome_count")
            valid = isinstance(stored, int) and not isinstance(stored, bool) and stored > 0
            outcomes = stored if valid and isinstance(stored, int) else 1
        return cls(
            kind=record.kind,
            importance=record.importance,
            occurred_at=record.occurred_at or record.created_at,
            last_accessed_at=record.last_accessed_at,
            access_count=record.access_count,
            pinned=is_pinned(record),
            outcomes=outcomes,
        )


class RetentionExplanation(BaseModel):
    """The parts of one retention value (for ``mem.explain``).

    Attributes:
        value: retention in [0, 1].
        pinned: the memory is pinned (then ``value`` is 1 and nothing decays).
        anchor: ``"occurred_at"`` or ``"last_accessed_at"``: which time the age counts from.
        anchor_time: that time (UTC).
        age_days: days from ``anchor_time`` to now (0 when the anchor is in the future).
        base_half_life_days: the kind's half-life.
        importance_factor: ``importance_span ** (importance - 0.5)``.
        reinforcement_factor: ``1 + access_reinforcement · min(access_count, access_cap)``.
        half_life_days: ``base · importance_factor · reinforcement_factor``.
        archive_threshold: the configured threshold; ``below_threshold`` whether ``value``
            is under it (never for a pinned memory).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float
    pinned: bool
    anchor: Literal["occurred_at", "last_accessed_at"]
    anchor_time: datetime
    age_days: float
    base_half_life_days: float
    importance_factor: float
    reinforcement_factor: float
    half_life_days: float
    archive_threshold: float
    below_threshold: bool

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the time as ISO-8601)."""
        return self.model_dump(mode="json")


def _input(item: RetentionInput | MemoryRecord) -> RetentionInput:
    if isinstance(item, RetentionInput):
        return item
    if isinstance(item, MemoryRecord):
        return RetentionInput.from_record(item)
    raise ValidationError(
        "item", f"expected a RetentionInput or MemoryRecord, got {type(item).__name__}"
    )


def _now(now: datetime | str | float) -> datetime:
    value = to_utc(now, "now")
    if value is None:
        raise ValidationError("now", "is required")
    return value


def explain_retention(
    item: RetentionInput | MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> RetentionExplanation:
    """Retention of a memory at ``now``, with the parts it is made of.

    The formula::

        t0 = max(occurred_at, last_accessed_at)            # an access restarts the clock
        Δ  = max(0, now - t0) in days
        h  = H(kind) · s^(importance - 0.5) · (1 + r · min(access_count, c))
        R  = e^(-ln 2 · Δ / h)   (= 0.5^(Δ / h); 1 when pinned)

    where ``H(kind)`` is :meth:`LifecycleConfig.base_half_life_days` (procedural:
    per-outcome half-life × outcomes, capped), ``s`` is ``importance_span``, ``r`` is
    ``access_reinforcement`` and ``c`` is ``access_cap``. The access term is MemoryBank's
    strength increment per recall (Zhong et al. 2023, see the module docstring), capped
    so that a memory recalled a thousand times still decays once it stops being used.

    Args:
        item: a :class:`RetentionInput`, or a record (read with
            :meth:`RetentionInput.from_record`).
        now: the time to evaluate at (aware UTC; naive is taken as UTC).
        config: the lifecycle settings; defaults to ``LifecycleConfig()``.

    Returns:
        The :class:`RetentionExplanation`; its ``value`` is in [0, 1].

    Raises:
        ValidationError: ``now`` is not a time, or ``item`` has a field out of range.
    """
    cfg = config or LifecycleConfig()
    inp = _input(item)
    at = _now(now)
    anchor: Literal["occurred_at", "last_accessed_at"] = "occurred_at"
    t0 = inp.occurred_at
    if inp.last_accessed_at is not None and inp.last_accessed_at > t0:
        anchor, t0 = "last_accessed_at", inp.last_accessed_at
    age = max(0.0, (at - t0).total_seconds() / _SECONDS_PER_DAY)
    base = cfg.base_half_life_days(inp.kind, inp.outcomes)
    imp_factor = cfg.importance_span ** (inp.importance - 0.5)
    reinf = 1.0 + cfg.access_reinforcement * min(inp.access_count, cfg.access_cap)
    half_life = base * imp_factor * reinf
    value = 1.0 if inp.pinned else math.exp(-math.log(2.0) * age / half_life)
    return RetentionExplanation(
        value=value,
        pinned=inp.pinned,
        anchor=anchor,
        anchor_time=t0,
        age_days=age,
        base_half_life_days=base,
        importance_factor=imp_factor,
        reinforcement_factor=reinf,
        half_life_days=half_life,
        archive_threshold=cfg.archive_threshold,
        below_threshold=(not inp.pinned) and value < cfg.archive_threshold,
    )


def retention(
    item: RetentionInput | MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> float:
    """Retention of a memory at ``now``, in [0, 1] (formula: :func:`explain_retention`).

    Raises:
        ValidationError: as :func:`explain_retention`.
    """
    return explain_retention(item, now, config).value


def forgetting_action(
    item: RetentionInput | MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> Literal["keep", "archive", "delete"]:
    """What maintenance does with a memory: ``"keep"`` it, or forget it by the configured
    ``forget_action`` when its retention is below ``archive_threshold``. Pinned memories
    are always kept.

    Raises:
        ValidationError: as :func:`explain_retention`.
    """
    cfg = config or LifecycleConfig()
    return cfg.forget_action if explain_retention(item, now, cfg).below_threshold else "keep"


def rank_score(
    score: float, retention_value: float, config: LifecycleConfig | None = None
) -> float:
    """A recall score adjusted by retention: ``score · (1 - w + w · retention)``.

    With ``w = ranking_weight``, a fully retained memory keeps its score and a forgotten
    one keeps ``1 - w`` of it; multiplying (rather than adding) keeps an irrelevant memory
    from rising just because it is fresh.

    Args:
        score: the relevance score (any non-negative scale, normally [0, 1]).
        retention_value: in [0, 1].
        config: the lifecycle settings.

    Raises:
        ValidationError: ``retention_value`` outside [0, 1] or ``score`` not finite.
    """
    if not math.isfinite(score):
        raise ValidationError("score", f"must be finite, got {score!r}")
    if not 0.0 <= retention_value <= 1.0:
        raise ValidationError("retention", f"must be in [0, 1], got {retention_value!r}")
    w = (config or LifecycleConfig()).ranking_weight
    return score * (1.0 - w + w * retention_value)


@dataclass(frozen=True)
class AccessUpdate:
    """The new reinforcement fields of a memory that recall returned.

    Attributes:
        access_count: the count plus one.
        last_accessed_at: the time of this access (UTC).
        importance: the importance after the capped bump.
    """

    access_count: int
    last_accessed_at: datetime
    importance: float

    def as_changes(self) -> dict[str, Any]:
        """The fields as a dict, ready for a store update."""
        return {
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at,
            "importance": self.importance,
        }


def reinforce(
    record: MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> AccessUpdate:
    """The fields to store when recall returns ``record`` at ``now``.

    The access count grows by one, the last access becomes ``now`` (restarting the decay
    clock), and importance grows by ``access_importance_bump`` up to
    ``max_reinforced_importance``; an importance already above that cap (set by the
    caller) is left as it is, never lowered.

    Raises:
        ValidationError: ``now`` is not a time.
    """
    cfg = config or LifecycleConfig()
    at = _now(now)
    if record.last_accessed_at is not None and record.last_accessed_at > at:
        at = record.last_accessed_at  # a clock behind the store's never moves access back
    importance = record.importance
    if importance < cfg.max_reinforced_importance:
        importance = min(importance + cfg.access_importance_bump, cfg.max_reinforced_importance)
    return AccessUpdate(record.access_count + 1, at, importance)
