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
record, the time and the :class:`~mnemolayer.lifecycle.config.LifecycleConfig`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryKind, MemoryRecord, to_utc

__all__ = [
    "AccessUpdate",
    "Reinforceable",
    "RetentionExplanation",
    "RetentionFields",
    "RetentionInput",
    "as_accessed",
    "explain_retention",
    "forgetting_action",
    "is_pinned",
    "rank_score",
    "rank_scores",
    "reinforce",
    "retention",
    "retention_many",
]

_SECONDS_PER_DAY = 86_400.0


def is_pinned(record: MemoryRecord) -> bool:
    """Whether a record is pinned (its ``pinned`` field, set by ``Memory.add(pinned=True)``
    or ``Memory.pin``). Pinned memories never decay and are never forgotten. Metadata
    never pins: a ``"pinned"`` key there is the caller's own data."""
    return record.pinned is True


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
        importance: the memory's importance, in [0, 1].
        forget_below_importance: the configured importance floor of forgetting.
        forgotten: whether maintenance forgets it now (archives or deletes it, per
            ``forget_action``): below the threshold *and* importance below the floor,
            never when pinned. :func:`forgetting_action` decides from this same field,
            so an explanation and a maintenance pass at the same time always agree.
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
    importance: float
    forget_below_importance: float
    forgotten: bool

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
    parts = _parts(inp, _now(now), cfg)
    below = (not inp.pinned) and parts.value < cfg.archive_threshold
    return RetentionExplanation(
        **parts._asdict(),
        pinned=inp.pinned,
        archive_threshold=cfg.archive_threshold,
        below_threshold=below,
        importance=inp.importance,
        forget_below_importance=cfg.forget_below_importance,
        forgotten=below and inp.importance < cfg.forget_below_importance,
    )


class _Parts(NamedTuple):
    value: float
    anchor: Literal["occurred_at", "last_accessed_at"]
    anchor_time: datetime
    age_days: float
    base_half_life_days: float
    importance_factor: float
    reinforcement_factor: float
    half_life_days: float


# The formula of explain_retention, in three pieces that take floats or numpy arrays
# alike, so that one memory (_parts) and a batch (retention_many) share one implementation.


def _anchor(
    occurred_at: datetime, last_accessed_at: datetime | None
) -> tuple[Literal["occurred_at", "last_accessed_at"], datetime]:
    """Where the age counts from: an access restarts the clock."""
    if last_accessed_at is not None and last_accessed_at > occurred_at:
        return "last_accessed_at", last_accessed_at
    return "occurred_at", occurred_at


def _factors(cfg: LifecycleConfig, importance: Any, access_count: Any) -> tuple[Any, Any]:
    """``(importance factor, reinforcement factor)`` of the half-life."""
    imp_factor = cfg.importance_span ** (importance - 0.5)
    reinf = 1.0 + cfg.access_reinforcement * np.minimum(access_count, cfg.access_cap)
    return imp_factor, reinf


def _decay(age_days: Any, half_life_days: Any) -> Any:
    return np.exp(-math.log(2.0) * age_days / half_life_days)


def _parts(inp: RetentionInput, at: datetime, cfg: LifecycleConfig) -> _Parts:
    """The retention of one memory with its parts (no explanation model is built, so
    :func:`retention` stays cheap)."""
    anchor, t0 = _anchor(inp.occurred_at, inp.last_accessed_at)
    age = max(0.0, (at - t0).total_seconds() / _SECONDS_PER_DAY)
    base = cfg.base_half_life_days(inp.kind, inp.outcomes)
    imp_factor, reinf = (float(x) for x in _factors(cfg, inp.importance, inp.access_count))
    half_life = base * imp_factor * reinf
    value = 1.0 if inp.pinned else float(_decay(age, half_life))
    return _Parts(value, anchor, t0, age, base, imp_factor, reinf, half_life)


class RetentionFields(Protocol):
    """What :func:`retention_many` reads of each memory: the fields of
    :class:`RetentionInput` (which satisfies it), already valid."""

    @property
    def kind(self) -> MemoryKind: ...
    @property
    def importance(self) -> float: ...
    @property
    def occurred_at(self) -> datetime: ...
    @property
    def last_accessed_at(self) -> datetime | None: ...
    @property
    def access_count(self) -> int: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def outcomes(self) -> int: ...


def retention_many(
    items: Sequence[RetentionFields],
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> np.ndarray:
    """Retention of many memories at ``now`` at once (formula: :func:`explain_retention`;
    recall ranks its candidates with it).

    Unlike :func:`retention`, the items are not validated: they must hold what a
    :class:`RetentionInput` would (aware UTC times, importance in [0, 1], counts ≥ 0,
    outcomes ≥ 1), as rows read back from the store do.

    Returns:
        ``(len(items),)`` float64 array of values in [0, 1].

    Raises:
        ValidationError: ``now`` is not a time.
    """
    cfg = config or LifecycleConfig()
    at = _now(now)
    n = len(items)
    ages = np.empty(n, dtype=np.float64)
    bases = np.empty(n, dtype=np.float64)
    importance = np.empty(n, dtype=np.float64)
    accesses = np.empty(n, dtype=np.float64)
    pinned = np.zeros(n, dtype=bool)
    base_of: dict[tuple[MemoryKind, int], float] = {}
    for i, it in enumerate(items):
        ages[i] = (at - _anchor(it.occurred_at, it.last_accessed_at)[1]).total_seconds()
        key = (it.kind, it.outcomes)
        if key not in base_of:
            base_of[key] = cfg.base_half_life_days(it.kind, it.outcomes)
        bases[i] = base_of[key]
        importance[i], accesses[i], pinned[i] = it.importance, it.access_count, it.pinned
    ages = np.maximum(ages / _SECONDS_PER_DAY, 0.0)
    imp_factor, reinf = _factors(cfg, importance, accesses)
    values: np.ndarray = np.where(pinned, 1.0, _decay(ages, bases * imp_factor * reinf))
    return values


def retention(
    item: RetentionInput | MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> float:
    """Retention of a memory at ``now``, in [0, 1] (formula: :func:`explain_retention`).

    Raises:
        ValidationError: as :func:`explain_retention`.
    """
    return _parts(_input(item), _now(now), config or LifecycleConfig()).value


def forgetting_action(
    item: RetentionInput | MemoryRecord,
    now: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> Literal["keep", "archive", "delete"]:
    """What maintenance does with a memory: ``"keep"`` it, or forget it by the configured
    ``forget_action`` when its retention is below ``archive_threshold`` and its importance
    below ``forget_below_importance`` (:attr:`RetentionExplanation.forgotten`). Pinned
    memories are always kept.

    Raises:
        ValidationError: as :func:`explain_retention`.
    """
    cfg = config or LifecycleConfig()
    return cfg.forget_action if explain_retention(item, now, cfg).forgotten else "keep"


def as_accessed(record: MemoryRecord, restored_at: datetime | None) -> MemoryRecord:
    """``record`` as forgetting judges it: a restore from the archive (``restored_at``,
    the time of its latest ``RESTORE`` event) counts as an access, so a memory brought
    back is not forgotten again at once. Maintenance and ``Memory.explain`` both judge
    through this."""
    last = record.last_accessed_at
    if restored_at is None or (last is not None and last >= restored_at):
        return record
    return record.model_copy(update={"last_accessed_at": restored_at})


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
    return float(rank_scores(np.array([score]), np.array([retention_value]), config)[0])


def rank_scores(
    scores: np.ndarray, retention_values: np.ndarray, config: LifecycleConfig | None = None
) -> np.ndarray:
    """:func:`rank_score` of many scores at once, elementwise (the same arithmetic):
    ``(n,)`` scores and ``(n,)`` retentions give ``(n,)`` float64.

    Raises:
        ValidationError: a retention outside [0, 1] or a score not finite (the first).
    """
    scores = np.asarray(scores, dtype=np.float64)
    kept = np.asarray(retention_values, dtype=np.float64)
    if not np.isfinite(scores).all():
        bad = float(scores[~np.isfinite(scores)][0])
        raise ValidationError("score", f"must be finite, got {bad!r}")
    out_of_range = ~((kept >= 0.0) & (kept <= 1.0))
    if out_of_range.any():
        raise ValidationError(
            "retention", f"must be in [0, 1], got {float(kept[out_of_range][0])!r}"
        )
    w = (config or LifecycleConfig()).ranking_weight
    out: np.ndarray = scores * (1.0 - w + w * kept)
    return out


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


class Reinforceable(Protocol):
    """What :func:`reinforce` reads of a memory (a :class:`MemoryRecord` has it)."""

    @property
    def importance(self) -> float: ...
    @property
    def access_count(self) -> int: ...
    @property
    def last_accessed_at(self) -> datetime | None: ...


def reinforce(
    record: Reinforceable,
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
