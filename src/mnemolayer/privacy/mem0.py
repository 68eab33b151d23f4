"""Import of a Mem0 export: what Mem0's ``get_all`` returned, and optionally the
``history`` of its memories, as mnemolayer memories with the same ids.

Input shapes (mem0ai 2.x, read from ``mem0/memory/main.py``, ``mem0/memory/storage.py``
and ``mem0/client/main.py``):

* the export: ``{"results": [item, ...]}`` (``Memory.get_all`` and the platform's
  ``MemoryClient.get_all``, which adds ``count``, ``next`` and ``previous``), or a bare
  list of items. An item has ``id`` and ``memory`` (required), ``user_id``,
  ``agent_id``, ``run_id``, ``metadata``, ``created_at``, ``updated_at`` and any of
  ``hash``, ``categories``, ``app_id``, ``actor_id``, ``role``, ``expiration_date``, …
* the history: a list of events (``Memory.history`` of one memory, or several of those
  joined), or ``{memory_id: [event, ...]}``. An event has ``id``, ``memory_id``,
  ``event`` (``ADD``, ``UPDATE`` or ``DELETE``), ``old_memory``, ``new_memory``,
  ``created_at`` and ``updated_at`` (when the event happened; ``created_at`` is the
  memory's creation for an UPDATE or DELETE).

How an item is stored: one episodic record with the item's ``id`` as its id (so the
Mem0-compatible REST routes and ``Memory.get`` address it by Mem0's id), ``memory`` as
its content, ``user_id`` / ``agent_id`` as its scope, ``run_id`` as its ``session_id``,
``created_at`` as its time (``created_at`` and ``occurred_at``), ``updated_at`` (or
``created_at``), its ``metadata``, and ``expiration_date`` as ``expires_at``. Every other
field (``categories``, ``app_id``, ``actor_id``, …; not ``hash``, which Mem0 recomputes
from the text) is kept under the metadata key :data:`MEM0_KEY`. The record's role is the
item's ``role`` (default ``"user"``), its source that role's: Mem0 wrote these memories
from the application's own conversations. Facts are not extracted at import;
``mnemolayer extract`` (``Memory.extract_facts``) mines them afterwards.

A history event is stored with an id made from its time (history reads in id order;
Mem0's event ids are random), ``updated_at`` (or ``created_at``) as its time, and
``old_memory`` / ``new_memory`` as its old and new content. Events of a memory that is
not in the export are errors: its user is unknown.

Mem0's memory ids are random UUIDs, so listing (which pages in id order) returns the
imported memories in no particular time order.

Importing twice changes nothing: a memory whose id (or content, in its scope) the store
holds already is skipped, its history with it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.models import MemoryKind, message_hash, to_utc
from mnemolayer.trust import default_source

__all__ = [
    "MEM0_KEY",
    "Mem0ImportError",
    "Mem0ImportReport",
    "expiration_time",
    "import_mem0",
    "mem0_items",
    "mem0_rows",
]

#: The metadata key that keeps a Mem0 item's fields that have no mnemolayer field.
MEM0_KEY = "_mem0"

#: Item fields mapped onto record fields (the rest go under :data:`MEM0_KEY`).
_MAPPED = frozenset(
    {"id", "memory", "user_id", "agent_id", "run_id", "metadata", "created_at",
     "updated_at", "hash", "score", "role", "expiration_date"}
)  # fmt: skip
_EVENTS = ("ADD", "UPDATE", "DELETE")


class Mem0ImportError(BaseModel):
    """One item or event that was not imported: the field at fault (``results[3].memory``,
    ``history[0].event``) and why."""

    field: str
    message: str


class Mem0ImportReport(BaseModel):
    """What an import did.

    Attributes:
        imported: memories stored.
        skipped: memories the store held already (same id, or same content in the
            same scope): a re-import skips them all.
        history_imported: history events stored (events of skipped memories are not).
        errors: the items and events left out because they are malformed, each naming
            its field; the others are imported all the same.
    """

    imported: int = 0
    skipped: int = 0
    history_imported: int = 0
    errors: list[Mem0ImportError] = []


class RowSink(Protocol):
    """What :func:`import_mem0` writes to: :meth:`mnemolayer.Memory.import_rows`."""

    def import_rows(self, rows: Iterable[dict[str, Any]], *, progress: Any = None) -> int: ...

    def get(self, memory_id: str, *, user_id: str | None = None) -> Any: ...


def mem0_items(export: Any, field: str = "export") -> list[Any]:
    """The items of a Mem0 export: the ``results`` of a ``get_all`` answer, or a bare list.

    Raises:
        ValidationError: neither shape (names ``field``, or ``field.results``).
    """
    if isinstance(export, dict):
        if "results" not in export:
            raise ValidationError(
                field, 'expected Mem0\'s get_all answer, {"results": [...]}, or a list'
            )
        export = export["results"]
        field = f"{field}.results"
    if not isinstance(export, list):
        raise ValidationError(field, f"expected a list of memories, got {type(export).__name__}")
    return export


def _history_events(history: Any) -> list[tuple[str, Any]]:
    """``(field, event)`` pairs of a history: a list, or ``{memory_id: [events]}``."""
    if history is None:
        return []
    if isinstance(history, dict):
        out: list[tuple[str, Any]] = []
        for memory_id, events in history.items():
            if not isinstance(events, list):
                raise ValidationError(f"history.{memory_id}", "expected a list of events")
            out += [(f"history.{memory_id}[{i}]", e) for i, e in enumerate(events)]
        return out
    if not isinstance(history, list):
        raise ValidationError(
            "history", f"expected a list of events or {{memory_id: [events]}}, got "
            f"{type(history).__name__}",
        )  # fmt: skip
    return [(f"history[{i}]", e) for i, e in enumerate(history)]


def _time(item: dict[str, Any], key: str, where: str) -> datetime | None:
    value = item.get(key)
    if value is None or value == "":
        return None
    return to_utc(value, f"{where}.{key}")


def expiration_time(value: Any, where: str) -> datetime | None:
    """Mem0's ``expiration_date``: ``YYYY-MM-DD`` (the day's start, UTC) or ISO-8601.

    Raises:
        ValidationError: neither (names ``where``).
    """
    if value is None or value == "":
        return None
    if isinstance(value, str) and len(value) == 10:
        try:
            return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError as exc:
            raise ValidationError(where, f"expected YYYY-MM-DD, got {value!r}") from exc
    return to_utc(value, where)


def _memory_row(item: Any, where: str, default_user: str | None, now: datetime) -> dict[str, Any]:
    """One Mem0 item as an export ``memory`` row.

    Raises:
        ValidationError: naming ``where`` and the field.
    """
    if not isinstance(item, dict):
        raise ValidationError(where, f"expected an object, got {type(item).__name__}")
    if "id" not in item:
        raise ValidationError(f"{where}.id", "is required")
    memory_id = v.memory_id(item["id"] if isinstance(item["id"], str) else None, f"{where}.id")
    if not isinstance(item.get("memory"), str):
        raise ValidationError(f"{where}.memory", "must be the memory's text, a string")
    content = v.content(item["memory"], f"{where}.memory")
    user_id = item.get("user_id") or default_user
    if user_id is None:
        raise ValidationError(
            f"{where}.user_id", "is required (every mnemolayer memory belongs to a user); "
            "give a default user for items without one",
        )  # fmt: skip
    user_id = v.scope_id(user_id, f"{where}.user_id", required=True)
    agent_id = v.scope_id(item.get("agent_id"), f"{where}.agent_id")
    session_id = v.scope_id(item.get("run_id"), f"{where}.run_id")
    meta = item.get("metadata") or {}
    meta = dict(v.metadata(meta, f"{where}.metadata"))
    if MEM0_KEY in meta:
        raise ValidationError(f"{where}.metadata.{MEM0_KEY}", "is reserved for Mem0's fields")
    extra = {k: val for k, val in item.items() if k not in _MAPPED and val is not None}
    if extra:
        meta[MEM0_KEY] = extra
        v.metadata(meta, f"{where}.metadata")  # the extras must be JSON values too
    created = _time(item, "created_at", where) or now
    updated = _time(item, "updated_at", where) or created
    role = item.get("role") or "user"
    if role not in v.ROLES:
        raise ValidationError(f"{where}.role", f"must be one of {', '.join(v.ROLES)}")
    expires = expiration_time(item.get("expiration_date"), f"{where}.expiration_date")
    return {
        "type": "memory", "id": memory_id, "user_id": user_id, "agent_id": agent_id,
        "session_id": session_id, "kind": MemoryKind.EPISODIC.value, "content": content,
        "role": role, "metadata": meta, "created_at": created.isoformat(),
        "updated_at": max(updated, created).isoformat(), "occurred_at": created.isoformat(),
        "expires_at": expires.isoformat() if expires else None,
        "source_ids": [memory_id], "source": default_source(role),
        "content_hash": message_hash(content, agent_id, session_id, "episodic", role),
    }  # fmt: skip


def _history_row(event: Any, where: str, owners: dict[str, str]) -> dict[str, Any]:
    """One Mem0 history event as an export ``history`` row.

    Raises:
        ValidationError: naming ``where`` and the field.
    """
    if not isinstance(event, dict):
        raise ValidationError(where, f"expected an object, got {type(event).__name__}")
    for key in ("id", "memory_id", "event"):
        if not isinstance(event.get(key), str):
            raise ValidationError(f"{where}.{key}", "is required, a string")
    memory_id = v.memory_id(event["memory_id"], f"{where}.memory_id")
    if event["event"] not in _EVENTS:
        raise ValidationError(f"{where}.event", f"must be one of {', '.join(_EVENTS)}")
    if memory_id not in owners:
        raise ValidationError(
            f"{where}.memory_id", f"memory {memory_id} is not in the export, so its user is unknown"
        )
    for key in ("old_memory", "new_memory"):
        if event.get(key) is not None and not isinstance(event[key], str):
            raise ValidationError(f"{where}.{key}", "must be a string or null")
    at = _time(event, "updated_at", where) or _time(event, "created_at", where)
    if at is None:
        raise ValidationError(f"{where}.updated_at", "an event needs updated_at or created_at")
    # History is read in id order: an id that sorts by the event's time keeps the
    # trail in order (Mem0's event ids are random UUIDs).
    return {
        "type": "history", "id": _time_id(at, v.memory_id(event["id"], f"{where}.id")),
        "memory_id": memory_id, "user_id": owners[memory_id], "event": event["event"],
        "old_content": event.get("old_memory"), "new_content": event.get("new_memory"),
        "created_at": at.isoformat(),
    }  # fmt: skip


def _time_id(at: datetime, seed: str) -> str:
    """A UUIDv7-shaped hex id whose first 48 bits are ``at`` in Unix milliseconds and
    whose rest is drawn from ``seed``: the same event gets the same id on every import."""
    ms = max(0, int(at.timestamp() * 1000)) & (2**48 - 1)
    rest = hashlib.sha256(seed.encode()).hexdigest()
    variant = "89ab"[int(rest[3], 16) % 4]
    return f"{ms:012x}7{rest[:3]}{variant}{rest[4:19]}"


def mem0_rows(
    export: Any,
    history: Any = None,
    *,
    user_id: str | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> tuple[list[dict[str, Any]], list[Mem0ImportError]]:
    """A Mem0 export (and history) as mnemolayer export rows, for ``Memory.import_rows``.

    Args:
        export: Mem0's ``get_all`` answer or a list of its items (module docstring).
        history: Mem0 history events, a list or ``{memory_id: [events]}``; ``None``: none.
        user_id: the user of items without a ``user_id`` (agent- or run-only memories);
            ``None``: such items are errors.
        clock: the time of items without ``created_at``.

    Returns:
        ``(rows, errors)``: the rows of the well-formed items and events, and one error
        per item or event left out (an item given twice is an error the second time).

    Raises:
        ValidationError: ``export`` or ``history`` has neither accepted shape.
    """
    default_user = v.scope_id(user_id, "user_id")
    items = mem0_items(export)
    field = "export.results" if isinstance(export, dict) else "export"
    events = _history_events(history)
    now = clock()
    rows: list[dict[str, Any]] = []
    errors: list[Mem0ImportError] = []
    owners: dict[str, str] = {}
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        try:
            row = _memory_row(item, where, default_user, now)
            if row["id"] in owners:
                raise ValidationError(f"{where}.id", f"memory {row['id']} is in the export twice")
        except ValidationError as exc:
            errors.append(Mem0ImportError(field=exc.field or where, message=exc.message))
            continue
        owners[row["id"]] = row["user_id"]
        rows.append(row)
    for where, event in events:
        try:
            rows.append(_history_row(event, where, owners))
        except ValidationError as exc:
            errors.append(Mem0ImportError(field=exc.field or where, message=exc.message))
    return rows, errors


def import_mem0(
    mem: RowSink, export: Any, history: Any = None, *, user_id: str | None = None
) -> Mem0ImportReport:
    """Import a Mem0 export into ``mem`` (a :class:`mnemolayer.Memory`), keeping Mem0's
    ids, users, agents and runs (as sessions), metadata and times.

    Args:
        mem: the store.
        export: Mem0's ``get_all`` answer (``{"results": [...]}``) or a list of items;
            a ``str`` or ``bytes`` is parsed as JSON.
        history: Mem0's history events (a list, or ``{memory_id: [events]}``), JSON
            text too; ``None``: none.
        user_id: the user of items without a ``user_id``.

    Returns:
        The :class:`Mem0ImportReport`: ``imported``, ``skipped`` (held already),
        ``history_imported`` and ``errors`` (malformed items and events, left out).

    Raises:
        ValidationError: the export or history is not JSON or has neither accepted
            shape (names ``export`` or ``history``); nothing is written then.
        EmbedderError: the embedder failed; nothing is written then.
    """
    export = _parsed(export, "export")
    history = _parsed(history, "history")
    rows, errors = mem0_rows(export, history, user_id=user_id)
    memories = [r["id"] for r in rows if r["type"] == "memory"]
    held = {m for m in memories if _held(mem, m)}
    imported = mem.import_rows(rows)
    # A memory skipped for its content (the same words in the same scope under another
    # id) is not stored under its own id; its history is skipped with it.
    stored = {m for m in memories if m not in held and _held(mem, m)}
    return Mem0ImportReport(
        imported=imported,
        skipped=len(memories) - imported,
        history_imported=sum(
            1 for r in rows if r["type"] == "history" and r["memory_id"] in stored
        ),
        errors=errors,
    )


def _held(mem: RowSink, memory_id: str) -> bool:
    try:
        mem.get(memory_id)
    except NotFoundError:
        return False
    return True


def _parsed(value: Any, field: str) -> Any:
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(field, f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    return value
