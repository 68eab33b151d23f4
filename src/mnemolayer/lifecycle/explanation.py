"""What :meth:`mnemolayer.Memory.explain` returns: why a memory ranks where it does, or why
recall leaves it out (retention, importance, expiry, supersession, archive, merge,
consolidation, and for a query its rank), as JSON-ready pydantic models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.decay import RetentionExplanation
from mnemolayer.lifecycle.expiry import effective_expires_at, is_expired
from mnemolayer.models import MemoryKind, MemoryRecord

__all__ = [
    "ExpiryExplanation",
    "Explanation",
    "ImportanceExplanation",
    "QueryExplanation",
    "SupersededExplanation",
    "expiry_of",
    "summary_lines",
    "suppressed_by",
    "will_be_forgotten",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ImportanceExplanation(_Frozen):
    """A memory's importance and where it comes from.

    Attributes:
        value: the stored importance, in [0, 1].
        source: ``"estimate"`` (the write-time rules gave it), ``"reinforced"`` (the
            estimate, raised by recalls: ``access_importance_bump`` per access up to
            ``max_reinforced_importance``), ``"fact"`` (a fact's sentence record, set by
            its category) or ``"set"`` (given by the caller or an update).
        estimate: what the write-time rules give this content and kind (``None`` for a
            fact's record).
        reasons: the signals behind the estimate, or the fact's category.
    """

    value: float
    source: Literal["estimate", "reinforced", "fact", "set"]
    estimate: float | None
    reasons: list[str]


class ExpiryExplanation(_Frozen):
    """When a memory expires.

    Attributes:
        expires_at: its effective expiry (:func:`~mnemolayer.lifecycle.effective_expires_at`),
            or ``None`` when it never expires; for a pinned memory, its own
            ``expires_at`` (which does not apply while it is pinned).
        source: ``"record"`` (its own ``expires_at``), ``"ttl"`` (its kind's default
            TTL), ``"pinned"`` (pinned memories never expire: recall keeps them and
            maintenance does not delete them) or ``"none"``. Either way, once expired a
            memory is out of recall and the next maintenance pass deletes it.
        ttl_days: the kind's default TTL when that applies.
        expired: whether ``expires_at`` has passed (never for a pinned memory).
    """

    expires_at: datetime | None
    source: Literal["record", "ttl", "pinned", "none"]
    ttl_days: float | None
    expired: bool


class SupersededExplanation(_Frozen):
    """A memory that is no longer true: ``by`` (the id of the record that replaced it)
    and ``valid_to`` (when it stopped being true, when known)."""

    by: str
    valid_to: datetime | None


class QueryExplanation(_Frozen):
    """How a memory fares for one query (searched over its whole user's memories, all
    kinds, current knowledge only, with the configured candidate pool).

    Attributes:
        query: the query text.
        rank: its 1-based rank, or ``None`` when it is not returned.
        score: its final score, or ``None``.
        scores: its breakdown (as :attr:`Hit.scores`), empty when not ranked.
        ranking: :func:`~mnemolayer.retrieval.search.ranking_explanation` of its rank.
        excluded: why it is not ranked (suppressed by its state, or not among the
            candidates), else ``None``.
    """

    query: str
    rank: int | None
    score: float | None
    scores: dict[str, float]
    ranking: dict[str, Any] | None
    excluded: str | None


class Explanation(_Frozen):
    """Why a memory ranks where it does, or why recall leaves it out.

    Attributes:
        memory_id, user_id, kind: the memory.
        at: the time the explanation is for (the memory's clock).
        recallable: whether search returns it at all (not expired, archived, merged or
            superseded; superseded ones only with ``include_history``).
        suppressed: why search leaves it out: any of ``"expired"``, ``"archived"``,
            ``"merged"``, ``"superseded"``; empty when recallable.
        retention: the retention value and its parts, judged as maintenance judges
            them (a restore from the archive counts as an access).
        will_be_forgotten: whether the next maintenance pass forgets it by decay
            (archives it, or deletes it under ``forget_action="delete"`` unless current
            knowledge cites it): ``retention.forgotten`` for a memory that is not
            already archived, merged or expired (those are out of the forgetting step's
            reach). Maintenance decides by the same rule, so the two always agree.
        importance: the importance and its source.
        pinned: pinned memories keep retention 1 and are never forgotten.
        expiry: when it expires.
        superseded: what replaced it, or ``None``.
        archived_at: when it was archived, or ``None``.
        merged_into: the near-duplicate it was merged into, or ``None``.
        consolidated_into: the semantic record that consolidates it, or ``None``.
        session_only, session_id: a session-only memory goes when its session ends.
        query: with ``explain(..., query=...)``, how it ranks for that query.
        summary: the same, one readable line per point.
    """

    memory_id: str
    user_id: str
    kind: MemoryKind
    at: datetime
    recallable: bool
    suppressed: list[str]
    retention: RetentionExplanation
    will_be_forgotten: bool
    importance: ImportanceExplanation
    pinned: bool
    expiry: ExpiryExplanation
    superseded: SupersededExplanation | None
    archived_at: datetime | None
    merged_into: str | None
    consolidated_into: str | None
    session_only: bool
    session_id: str | None
    query: QueryExplanation | None
    summary: list[str]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601)."""
        return self.model_dump(mode="json")


def suppressed_by(record: MemoryRecord, now: datetime, cfg: LifecycleConfig) -> list[str]:
    """Why recall leaves ``record`` out (the conditions of
    :func:`mnemolayer.retrieval.search.active_where`, in the same order): past its
    effective expiry (own ``expires_at``, else its kind's TTL; never when pinned),
    archived, merged, superseded."""
    out = []
    if not record.pinned and is_expired(effective_expires_at(record, cfg), now):
        out.append("expired")
    if record.archived_at is not None:
        out.append("archived")
    if record.merged_into is not None:
        out.append("merged")
    if record.superseded_by is not None:
        out.append("superseded")
    return out


def expiry_of(record: MemoryRecord, now: datetime, cfg: LifecycleConfig) -> ExpiryExplanation:
    """When ``record`` expires (:class:`ExpiryExplanation`); pinned ones never do."""
    if record.pinned:
        return ExpiryExplanation(
            expires_at=record.expires_at, source="pinned", ttl_days=None, expired=False
        )
    expires = effective_expires_at(record, cfg)
    source: Literal["record", "ttl", "none"] = (
        "record" if record.expires_at is not None else "ttl" if expires is not None else "none"
    )
    return ExpiryExplanation(
        expires_at=expires,
        source=source,
        ttl_days=cfg.ttl_days.get(record.kind) if source == "ttl" else None,
        expired=is_expired(expires, now),
    )


def _forgetting_note(r: RetentionExplanation, e: dict[str, Any]) -> str:
    """What maintenance's forgetting step makes of the memory now (nothing for one that
    is archived, merged or expired: forgetting skips those)."""
    if not r.below_threshold or {"archived", "merged", "expired"} & set(e["suppressed"]):
        return ""
    if e["will_be_forgotten"]:
        return (
            f" — below the archive threshold {r.archive_threshold:g} with importance "
            f"{r.importance:.2f} < {r.forget_below_importance:g}: will be forgotten "
            "by the next maintenance pass"
        )
    return (
        f" — below the archive threshold {r.archive_threshold:g}, but kept: importance "
        f"{r.importance:.2f} ≥ {r.forget_below_importance:g}"
    )


def summary_lines(e: dict[str, Any], record: MemoryRecord) -> list[str]:
    """The readable lines of an explanation (``e``: its fields before the summary)."""
    r: RetentionExplanation = e["retention"]
    imp: ImportanceExplanation = e["importance"]
    lines = [
        "pinned: retention 1, never decays or is forgotten"
        if r.pinned
        else f"retention {r.value:.3f}: {r.age_days:.1f} days since {r.anchor}, half-life "
        f"{r.half_life_days:.1f} d ({record.kind.value} {r.base_half_life_days:g} d "
        f"× importance {r.importance_factor:.2f} × accesses {r.reinforcement_factor:.2f})"
        + _forgetting_note(r, e),
        f"importance {imp.value:.2f} ({imp.source}"
        + (f": {'; '.join(imp.reasons)}" if imp.reasons else "")
        + ")",
    ]
    ex: ExpiryExplanation = e["expiry"]
    if ex.source == "pinned":
        lines.append("never expires while pinned")
    elif ex.expires_at is not None:
        state = "expired" if ex.expired else "expires"
        lines.append(f"{state} at {ex.expires_at.isoformat()} ({ex.source})")
    if e["superseded"] is not None:
        lines.append(f"superseded by {e['superseded'].by}")
    if record.archived_at is not None:
        lines.append(f"archived at {record.archived_at.isoformat()}")
    if record.merged_into is not None:
        lines.append(f"merged into {record.merged_into}")
    if record.consolidated_into is not None:
        lines.append(f"consolidated into {record.consolidated_into}")
    if record.session_only:
        lines.append(f"session-only: deleted when session {record.session_id} ends")
    lines.append(
        "recalled by search"
        if e["recallable"]
        else f"left out of search: {', '.join(e['suppressed'])}"
    )
    q: QueryExplanation | None = e["query"]
    if q is not None:
        lines.append(
            q.ranking["summary"]
            if q.ranking is not None
            else f"query {q.query!r}: not ranked ({q.excluded})"
        )
    return lines


def will_be_forgotten(retention: RetentionExplanation, suppressed: list[str]) -> bool:
    """Whether the next maintenance pass forgets a memory by decay: its retention says
    so and it is not already archived, merged or expired (expiry deletes it first)."""
    return retention.forgotten and not {"archived", "merged", "expired"} & set(suppressed)
