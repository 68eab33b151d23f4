"""How a record lies in the ``memories`` table, shared by both engines: its columns, its
times as text, and the light row shapes that ranking and access counting read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

from mnemolayer.models import MemoryKind

__all__ = [
    "COLUMNS",
    "COLUMN_NAMES",
    "TIME_FIELDS",
    "AccessState",
    "RankSignals",
    "from_iso",
    "iso",
]

#: The columns of ``memories`` in the order records are written and read.
COLUMNS = (
    "id, user_id, agent_id, session_id, kind, content, role, speaker, metadata, importance, "
    "created_at, updated_at, occurred_at, valid_from, valid_to, expires_at, access_count, "
    "last_accessed_at, superseded_by, source_ids, entities, content_hash, embedding_model, "
    "session_only, pinned, archived_at, merged_into, consolidated_into, "
    "pending_embedding, pending_extraction, source, flags"
)
COLUMN_NAMES = [n.strip() for n in COLUMNS.split(",")]
#: The columns that hold times (fixed-width UTC ISO-8601 text, see :func:`iso`).
TIME_FIELDS = (
    "created_at",
    "updated_at",
    "occurred_at",
    "valid_from",
    "valid_to",
    "expires_at",
    "last_accessed_at",
    "archived_at",
)


def iso(dt: datetime | None) -> str | None:
    """Store times as fixed-width UTC ISO-8601 so text order is time order."""
    if dt is None:
        return None
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def from_iso(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


class AccessState(NamedTuple):
    """A record's reinforcement fields, as :meth:`SQLStore.record_access` reads them."""

    id: str
    importance: float
    access_count: int
    last_accessed_at: datetime | None


class RankSignals(NamedTuple):
    """The fields ranking needs (relevance rerank and retention), without building a
    whole record."""

    importance: float
    occurred_at: datetime  # event time, else creation time
    access_count: int
    kind: MemoryKind
    last_accessed_at: datetime | None
    pinned: bool
    outcomes: int  # procedural: metadata["outcome_count"] when a positive integer, else 1
