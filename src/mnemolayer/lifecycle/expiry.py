"""Time-to-live: when a memory expires, by its own ``expires_at`` or its kind's default TTL.

A memory's *effective* expiry (:func:`effective_expires_at`) is its own ``expires_at``
when set, else its kind's ``LifecycleConfig.ttl_days`` counted from when it happened.
Pinned memories never expire. Recall (:func:`mnemolayer.retrieval.search.active_where`),
maintenance (which deletes what expired) and ``Memory.explain`` all judge expiry by
:func:`expired_where` / :func:`is_expired` over this one definition.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryKind, MemoryRecord, to_utc
from mnemolayer.store.sqlite.engine import iso

__all__ = ["default_expires_at", "effective_expires_at", "expired_where", "is_expired"]


def default_expires_at(
    kind: MemoryKind | str,
    start: datetime | str | float,
    config: LifecycleConfig | None = None,
) -> datetime | None:
    """When a memory of ``kind`` that happened at ``start`` expires by default.

    Args:
        kind: the memory's layer.
        start: when it happened (``occurred_at``, else ``created_at``); naive is UTC.
        config: the lifecycle settings; its ``ttl_days`` gives the TTL per kind.

    Returns:
        ``start + ttl_days[kind]`` (UTC), or ``None`` when the kind has no default TTL.

    Raises:
        ValidationError: unknown ``kind`` or ``start`` not a time.
    """
    try:
        kind = MemoryKind(kind)
    except ValueError as exc:
        raise ValidationError("kind", f"unknown kind {kind!r}") from exc
    at = to_utc(start, "start")
    if at is None:
        raise ValidationError("start", "is required")
    days = (config or LifecycleConfig()).ttl_days.get(kind)
    if days is None:
        return None
    try:
        return at + timedelta(days=days)
    except OverflowError:  # a TTL reaching past year 9999 never expires in practice
        return datetime.max.replace(tzinfo=UTC)


def effective_expires_at(
    record: MemoryRecord, config: LifecycleConfig | None = None
) -> datetime | None:
    """The time ``record`` expires: its own ``expires_at`` when set (the caller's choice
    wins, later or earlier), else its kind's default TTL from when it happened. This is
    the record's time whether pinned or not; a pinned record does not expire while it is
    pinned (recall keeps it, maintenance does not delete it)."""
    if record.expires_at is not None:
        return record.expires_at
    return default_expires_at(record.kind, record.occurred_at or record.created_at, config)


def is_expired(expires_at: datetime | None, now: datetime | str | float) -> bool:
    """Whether a memory with this expiry time has expired at ``now`` (expiry is inclusive:
    at ``expires_at`` it is gone). ``None`` never expires.

    Raises:
        ValidationError: ``now`` is not a time.
    """
    at = to_utc(now, "now")
    if at is None:
        raise ValidationError("now", "is required")
    expiry = to_utc(expires_at, "expires_at")
    return expiry is not None and expiry <= at


def expired_where(
    now: datetime, config: LifecycleConfig | None = None, prefix: str = ""
) -> tuple[str, list[Any]]:
    """SQL for "past its effective expiry at ``now``" over the ``memories`` table
    (aliased by ``prefix``, e.g. ``"m."``), with its parameters; pinning is not
    considered (callers add ``pinned = 0`` or ``pinned = 1 OR NOT (...)``). ``config``
    gives the default TTLs per kind (``None``: the defaults, which have none).

    Never NULL, so ``NOT (...)`` selects exactly the records that have not expired.
    Times compare as stored text (fixed-width UTC ISO-8601).
    """
    ttl = config.ttl_days if config is not None else {}  # the default config has none
    parts = [f"({prefix}expires_at IS NOT NULL AND {prefix}expires_at <= ?)"]
    params: list[Any] = [iso(now)]
    for kind, days in sorted(ttl.items(), key=lambda kv: kv[0].value):
        parts.append(
            f"({prefix}expires_at IS NULL AND {prefix}kind = ? "
            f"AND COALESCE({prefix}occurred_at, {prefix}created_at) <= ?)"
        )
        params += [kind.value, iso(now - timedelta(days=days))]
    return f"({' OR '.join(parts)})", params
