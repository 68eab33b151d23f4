"""The Mem0 side of the Mem0-compatible routes: request bodies as mem0ai's
``MemoryClient`` (2.2) sends them, Mem0's response shapes, and the translation of Mem0's
entity ids and ``filters`` onto a user, an agent, a session and a metadata filter."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer.errors import ValidationError
from mnemolayer.models import HistoryEvent, MemoryRecord
from mnemolayer.privacy.mem0 import MEM0_KEY

__all__ = [
    "Mem0AddBody",
    "Mem0Done",
    "Mem0Event",
    "Mem0GetAllBody",
    "Mem0Memory",
    "Mem0Message",
    "Mem0Page",
    "Mem0Ping",
    "Mem0Results",
    "Mem0Scope",
    "Mem0SearchBody",
    "Mem0UpdateBody",
    "event_of",
    "item_of",
    "refuse_extra",
    "scope_of",
]

#: Mem0 options these routes do not carry out, and what to do instead.
UNSUPPORTED = {
    "custom_categories": "categories are not assigned here",
    "custom_instructions": "extraction runs the server's extractor (--extractor)",
    "agent_custom_instructions": "extraction runs the server's extractor (--extractor)",
    "structured_data_schema": "structured extraction is not offered",
    "includes": "extraction runs the server's extractor (--extractor)",
    "excludes": "extraction runs the server's extractor (--extractor)",
    "categories": "categories are not assigned here, so they cannot be filtered on",
    "fields": "every field is returned",
    "reference_date": "relative times in the query count from now",
    "timestamp": "an update keeps the memory's time",
    "app_id": "apps are not a scope here; use metadata",
    "show_expired": "expired memories are out of recall",
}

_ENTITY = {"user_id": "user_id", "agent_id": "agent_id", "run_id": "session_id"}
_RECORD_FIELDS = ("created_at", "updated_at", "categories", "keywords", "memory_ids", "hash")
_OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains"})


def refuse_extra(body: BaseModel) -> None:
    """Raises: ValidationError naming the first field of ``body`` these routes do not
    take (a Mem0 option they cannot honour, or an unknown one)."""
    for key in body.model_extra or {}:
        why = UNSUPPORTED.get(key)
        if why is not None:
            raise ValidationError(key, f"not supported by mnemolayer's Mem0 API: {why}")
        raise ValidationError(key, "unknown field")


class _Body(BaseModel):
    # Extra fields are kept so that refuse_extra can name them with a reason.
    model_config = ConfigDict(extra="allow")


class Mem0Message(BaseModel):
    """One message: ``role`` (user, assistant, system or tool) and text ``content``."""

    model_config = ConfigDict(extra="forbid")
    role: str = Field(description="user, assistant, system or tool.")
    content: str = Field(description="The message's text.")
    name: str | None = Field(None, description="Who said it, when not the role's speaker.")


class Mem0AddBody(_Body):
    """``MemoryClient.add``: ``POST /v3/memories/add/``."""

    messages: list[Mem0Message] = Field(min_length=1, description="The conversation turns.")
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = Field(None, description="Stored as the session id.")
    filters: dict[str, Any] | None = Field(None, description="Entity ids, as in search.")
    metadata: dict[str, Any] | None = None
    infer: bool = Field(
        True,
        description="true: the answer lists the facts the server's extractor drew from "
        "the messages too; false: only the messages. The messages are stored verbatim "
        "either way.",
    )
    timestamp: int | None = Field(None, description="When the messages happened, Unix seconds.")
    expiration_date: str | None = Field(None, description="YYYY-MM-DD: when they expire.")


class Mem0SearchBody(_Body):
    """``MemoryClient.search``: ``POST /v3/memories/search/``."""

    query: str = Field(min_length=1)
    filters: dict[str, Any] | None = None
    top_k: int = Field(10, ge=0, le=1000, description="At most this many results.")
    threshold: float | None = Field(None, ge=0.0, le=1.0, description="Minimum score.")
    rerank: bool | None = Field(None, description="Accepted; recall always reranks.")
    keyword_search: bool | None = Field(None, description="Accepted; recall is always hybrid.")
    latest_only: bool | None = Field(
        None, description="false: superseded versions of changed facts too."
    )


class Mem0GetAllBody(_Body):
    """``MemoryClient.get_all``: ``POST /v3/memories/`` (``page``, ``page_size`` in the query)."""

    filters: dict[str, Any] | None = None
    start_date: str | None = Field(None, description="Created on or after (ISO-8601).")
    end_date: str | None = Field(None, description="Created on or before (ISO-8601).")
    latest_only: bool | None = Field(None, description="Accepted; listing has every memory.")


class Mem0UpdateBody(_Body):
    """``MemoryClient.update``: ``PUT /v1/memories/{memory_id}/``."""

    text: str | None = Field(None, description="The new text.")
    metadata: dict[str, Any] | None = Field(None, description="Merged into the metadata.")
    expiration_date: str | None = Field(None, description="Not supported: 422 when given.")


class Mem0Memory(BaseModel):
    """A memory as Mem0 answers it; Mem0 fields kept from an import come along, and
    ``score`` (search), ``event`` (add: ``ADD``) or ``message`` (update)."""

    model_config = ConfigDict(extra="allow")
    id: str
    memory: str
    user_id: str
    agent_id: str | None = None
    run_id: str | None = None
    hash: str = Field(description="MD5 of the text, as Mem0 computes it.")
    metadata: dict[str, Any] | None = None
    categories: list[Any] = []
    created_at: str
    updated_at: str
    expiration_date: str | None = None


class Mem0Results(BaseModel):
    results: list[Mem0Memory]


class Mem0Page(BaseModel):
    count: int
    next: str | None = None
    previous: str | None = None
    results: list[Mem0Memory]


class Mem0Event(BaseModel):
    id: str
    memory_id: str
    user_id: str
    old_memory: str | None = None
    new_memory: str | None = None
    event: str
    metadata: dict[str, Any] | None = None
    is_deleted: bool
    created_at: str
    updated_at: str


class Mem0Ping(BaseModel):
    status: str
    org_id: str | None = None
    project_id: str | None = None
    user_email: str | None = None


class Mem0Done(BaseModel):
    message: str


def item_of(rec: MemoryRecord, score: float | None = None) -> dict[str, Any]:
    """A record as a Mem0 memory item."""
    meta = dict(rec.metadata)
    extra = meta.pop(MEM0_KEY, {})
    out: dict[str, Any] = {
        **(extra if isinstance(extra, dict) else {}),
        "id": rec.id, "memory": rec.content, "user_id": rec.user_id,
        "agent_id": rec.agent_id, "run_id": rec.session_id,
        "hash": hashlib.md5(rec.content.encode(), usedforsecurity=False).hexdigest(),
        "metadata": meta or None, "created_at": rec.created_at.isoformat(),
        "updated_at": rec.updated_at.isoformat(),
        "expiration_date": rec.expires_at.date().isoformat() if rec.expires_at else None,
    }  # fmt: skip
    out.setdefault("categories", [])
    if not isinstance(out["categories"], list):
        out["categories"] = [out["categories"]]
    if score is not None:
        out["score"] = score
    return out


def event_of(event: HistoryEvent) -> dict[str, Any]:
    """A history event as Mem0's history answers it."""
    at = event.created_at.isoformat()
    return {
        "id": event.id, "memory_id": event.memory_id, "user_id": event.user_id,
        "old_memory": event.old_content, "new_memory": event.new_content,
        "event": event.event, "metadata": event.new_metadata,
        "is_deleted": event.event == "DELETE", "created_at": at, "updated_at": at,
    }  # fmt: skip


@dataclass(frozen=True)
class Mem0Scope:
    """Mem0's entity ids and filters, as mnemolayer scopes them."""

    user_id: str
    agent_id: str | None
    session_id: str | None
    filters: dict[str, Any] | None


def scope_of(filters: dict[str, Any] | None, **given: str | None) -> Mem0Scope:
    """Translate Mem0's ``filters`` (and entity ids given at the top level of an add).

    ``user_id``, ``agent_id`` and ``run_id`` (plain ids, at the top level or under
    ``AND``) become the scope; ``metadata: {...}`` and any other key become a metadata
    filter with the operators ``eq ne gt gte lt lte in nin contains``; ``OR`` and ``NOT``
    hold metadata conditions only.

    Raises:
        ValidationError: no ``user_id``, two different ids for one entity, an entity id
            that is not a string (wildcards), an id inside ``OR``/``NOT``, a filter on a
            record field (``created_at``...), ``app_id`` or an unknown operator; the field
            is named (``filters.AND[1].user_id``).
    """
    ids: dict[str, str] = {}
    conditions: list[dict[str, Any]] = []
    for key, value in given.items():
        if value is not None:
            _entity(ids, key, value, key)
    if filters is not None:
        _walk_and(filters, "filters", ids, conditions)
    if "user_id" not in ids:
        raise ValidationError(
            "filters.user_id", "is required: every memory on this server belongs to a user"
        )
    meta = _merged(conditions) if conditions else None
    return Mem0Scope(ids["user_id"], ids.get("agent_id"), ids.get("run_id"), meta)


def _entity(ids: dict[str, str], key: str, value: Any, where: str) -> None:
    if not isinstance(value, str) or value in ("", "*"):
        raise ValidationError(
            where, "must be one id (a string); wildcards and operators on ids are not supported"
        )
    if ids.get(key, value) != value:
        raise ValidationError(where, f"two different {key}s given: {ids[key]!r} and {value!r}")
    ids[key] = value


def _walk_and(f: Any, at: str, ids: dict[str, str], conditions: list[dict[str, Any]]) -> None:
    if not isinstance(f, dict):
        raise ValidationError(at, "must be an object")
    for key, value in f.items():
        where = f"{at}.{key}"
        if key in ("AND", "and"):
            if not isinstance(value, list) or not value:
                raise ValidationError(where, "must be a non-empty list of filters")
            for i, part in enumerate(value):
                _walk_and(part, f"{where}[{i}]", ids, conditions)
        elif key in ("OR", "or"):
            conditions.append({"or": [_meta(p, f"{where}[{i}]") for i, p in _parts(value, where)]})
        elif key in ("NOT", "not"):
            conditions.append({"not": _meta(value, where)})
        elif key in _ENTITY:
            _entity(ids, key, value, where)
        else:
            conditions.append(_condition(key, value, where))


def _parts(value: Any, where: str) -> list[tuple[int, Any]]:
    if not isinstance(value, list) or not value:
        raise ValidationError(where, "must be a non-empty list of filters")
    return list(enumerate(value))


def _meta(f: Any, at: str) -> dict[str, Any]:
    """A filter inside ``OR`` or ``NOT``: metadata conditions only."""
    if not isinstance(f, dict) or not f:
        raise ValidationError(at, "must be a non-empty object")
    parts: list[dict[str, Any]] = []
    for key, value in f.items():
        where = f"{at}.{key}"
        if key.lower() in ("and", "or"):
            parts.append(
                {key.lower(): [_meta(p, f"{where}[{i}]") for i, p in _parts(value, where)]}
            )
        elif key.lower() == "not":
            parts.append({"not": _meta(value, where)})
        elif key in _ENTITY:
            raise ValidationError(where, "user, agent and run ids cannot be inside OR or NOT")
        else:
            parts.append(_condition(key, value, where))
    return _merged(parts)


def _merged(conditions: list[dict[str, Any]]) -> dict[str, Any]:
    return conditions[0] if len(conditions) == 1 else {"and": conditions}


def _condition(key: str, value: Any, where: str) -> dict[str, Any]:
    """One metadata condition (``metadata: {...}`` is several, ANDed)."""
    if key == "app_id":
        raise ValidationError(where, f"not supported by mnemolayer's Mem0 API: {UNSUPPORTED[key]}")
    if key in _RECORD_FIELDS:
        raise ValidationError(where, "filters on memory fields are not supported; filter metadata")
    if key == "metadata":
        if not isinstance(value, dict) or not value:
            raise ValidationError(where, "must be a non-empty object of metadata conditions")
        return _merged([_condition(k, val, f"{where}.{k}") for k, val in value.items()])
    if isinstance(value, dict):
        for op in value:
            if op not in _OPERATORS:
                raise ValidationError(
                    f"{where}.{op}", f"unknown operator; use one of {', '.join(sorted(_OPERATORS))}"
                )
    if value == "*":
        raise ValidationError(where, "wildcards are not supported")
    return {key: value}
