"""The data model: one record type for every memory layer, plus messages and hits.

All times are timezone-aware UTC. Naive datetimes (and ISO strings without an offset)
are taken as UTC; aware ones are converted to UTC. Content is stored verbatim; the
NFC-normalised form is used only for hashing and indexing.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import re
import threading
import time
import unicodedata
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mnemolayer.errors import ValidationError

__all__ = [
    "PENDING_KINDS",
    "SOURCES",
    "TRUSTED_SOURCES",
    "Entity",
    "Fact",
    "HistoryEvent",
    "Hit",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "Message",
    "PendingKind",
    "Source",
    "content_hash",
    "message_hash",
    "new_id",
    "normalize_text",
    "to_utc",
    "validate_content",
    "validate_metadata",
]

MAX_METADATA_BYTES = 64 * 1024
_METADATA_KEY = re.compile(r"^\w[\w\-.:/ ]{0,127}$")


class MemoryKind(StrEnum):
    """The memory layer a record belongs to (DESIGN.md, "The layers")."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PREFERENCE = "preference"
    PROCEDURAL = "procedural"
    SUMMARY = "summary"


#: Enrichment a stored record may still wait for (:attr:`MemoryRecord.pending`):
#: ``"embedding"`` (no vectors yet: found by keyword only) and ``"extraction"`` (its
#: facts not extracted yet).
PendingKind = Literal["embedding", "extraction"]
PENDING_KINDS: tuple[PendingKind, ...] = ("embedding", "extraction")

#: Where a memory came from (:attr:`MemoryRecord.source`; :mod:`mnemolayer.trust`).
Source = Literal["user", "assistant", "tool", "web", "import", "agent"]
SOURCES: tuple[Source, ...] = ("user", "assistant", "tool", "web", "import", "agent")
#: Sources taken as the user's own truth: what the user or the assistant said in the
#: conversation. Tool output, web pages, imports and other agents are untrusted: kept
#: and searchable, but out of ``context()`` unless asked for, and never superseding a
#: current fact (:mod:`mnemolayer.lifecycle.conflicts`, rule 9).
TRUSTED_SOURCES: frozenset[str] = frozenset({"user", "assistant"})

_id_lock = threading.Lock()
_last_id = 0


def new_id() -> str:
    """A time-sortable unique id: a UUIDv7 (RFC 9562) as 32 lowercase hex digits.

    Ids made later sort after ids made earlier, also within one millisecond in one
    process (RFC 9562 §6.2, method 2: the random tail is incremented), so the store can
    page by id and list records in the order they were added.
    """
    global _last_id
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version 7
    value |= ((rand >> 68) & 0xFFF) << 64  # rand_a, 12 bits
    value |= 0b10 << 62  # RFC 9562 variant
    value |= rand & ((1 << 62) - 1)  # rand_b, 62 bits
    with _id_lock:
        if value <= _last_id and (_last_id >> 80) == (value >> 80):
            value = _last_id + 1  # same millisecond: keep order (rand_b has 62 bits of room)
        _last_id = value
    return f"{value:032x}"


def to_utc(value: datetime | str | int | float | None, field: str = "timestamp") -> datetime | None:
    """Convert a datetime, ISO-8601 string or Unix epoch (seconds) to an aware UTC datetime.

    Naive values are taken as UTC. ``None`` stays ``None``.

    Raises:
        ValidationError: the value is not a time (names ``field``).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValidationError(field, "expected a datetime, ISO-8601 string or epoch seconds")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValidationError(field, "epoch seconds must be finite")
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise ValidationError(field, f"epoch seconds out of range: {value}") from exc
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            value = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValidationError(field, f"not an ISO-8601 time: {value!r}") from exc
    if not isinstance(value, datetime):
        raise ValidationError(field, f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError) as exc:
        raise ValidationError(field, f"time out of range: {value!r}") from exc


def normalize_text(text: str) -> str:
    """NFC-normalise ``text`` (for hashing and indexing; stored content stays verbatim)."""
    return unicodedata.normalize("NFC", text)


def validate_content(content: Any, field: str = "content", max_chars: int = 1_000_000) -> str:
    """Check that ``content`` is a non-blank string without NUL bytes and return it unchanged.

    Raises:
        ValidationError: not a string, blank, contains ``\\x00`` or lone surrogates, or is
            longer than ``max_chars`` characters.
    """
    if not isinstance(content, str):
        raise ValidationError(field, f"must be a string, got {type(content).__name__}")
    if not content.strip():
        raise ValidationError(field, "must not be empty or whitespace only")
    if "\x00" in content:
        raise ValidationError(field, "must not contain NUL characters")
    if len(content) > max_chars:
        raise ValidationError(field, f"is {len(content)} characters; the limit is {max_chars}")
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(field, "contains unpaired surrogates (not valid Unicode)") from exc
    return content


def _check_json_value(value: Any, field: str, depth: int) -> None:
    if depth > 16:
        raise ValidationError(field, "nested deeper than 16 levels")
    if value is None or isinstance(value, bool | int | str):
        if isinstance(value, str):
            validate_text_value(value, field)
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(field, "must be a finite number (NaN and infinity are not JSON)")
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_json_value(item, f"{field}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            check_metadata_key(key, field)
            _check_json_value(item, f"{field}.{key}", depth + 1)
        return
    raise ValidationError(field, f"must be JSON data, got {type(value).__name__}")


def validate_text_value(value: str, field: str) -> None:
    """Reject strings that cannot be stored as UTF-8 text (NUL, lone surrogates)."""
    if "\x00" in value:
        raise ValidationError(field, "must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(field, "contains unpaired surrogates (not valid Unicode)") from exc


def check_metadata_key(key: Any, parent: str = "metadata") -> None:
    """A metadata key is a string of 1-128 word characters, ``-``, ``.``, ``:``, ``/`` or space,
    starting with a word character (any script).

    Raises:
        ValidationError: naming ``parent`` and the key.
    """
    if not isinstance(key, str):
        raise ValidationError(parent, f"keys must be strings, got {type(key).__name__} {key!r}")
    if not _METADATA_KEY.match(key):
        raise ValidationError(
            f"{parent}.{key}" if key else parent,
            "invalid key: use 1-128 letters, digits, '_', '-', '.', ':', '/' or spaces, "
            "starting with a letter, digit or '_'",
        )


def validate_metadata(metadata: Any, field: str = "metadata") -> dict[str, Any]:
    """Validate metadata: a JSON object (string keys, finite numbers, ≤ 64 KiB encoded).

    Returns:
        A deep copy made through JSON, so later changes by the caller do not leak in.

    Raises:
        ValidationError: naming the offending key.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise ValidationError(field, f"must be a dict, got {type(metadata).__name__}")
    _check_json_value(metadata, field, 0)
    encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
        raise ValidationError(field, f"is larger than {MAX_METADATA_BYTES} bytes as JSON")
    result: dict[str, Any] = json.loads(encoded)
    return result


def content_hash(content: str, *parts: str | None) -> str:
    """SHA-256 (hex) of the NFC-normalised, whitespace-collapsed content and scope ``parts``.

    Used for idempotent adds: the same content in the same scope hashes the same.
    """
    norm = " ".join(normalize_text(content).split())
    key = "\x1f".join([*(p or "" for p in parts), norm])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def message_hash(
    content: str,
    agent_id: str | None,
    session_id: str | None,
    kind: str,
    speaker: str | None,
    *,
    session_only: bool = False,
    source: str | None = None,
) -> str:
    """The idempotency key of a stored message (:func:`content_hash` of its content and
    scope: agent, session, kind and speaker or role; and ``source`` when it is given,
    which the write path does only for a source other than its role's default, so that
    a web page's words and the same words said by the user are two records).

    A session-only message is keyed apart from a permanent one with the same words, so
    neither add can turn the other's record temporary or permanent: the same text added
    both ways is two records, and only the session-only one goes when the session ends.
    Permanent messages keep the key they had before session-only memories existed.
    """
    extra: tuple[str, ...] = ("session-only",) if session_only else ()
    extra += (f"source:{source}",) if source is not None else ()
    return content_hash(content, agent_id, session_id, kind, speaker, *extra)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Message(_Model):
    """One conversation message handed to :meth:`Memory.add`.

    Attributes:
        role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``.
        content: the text, stored verbatim.
        name: who said it (a speaker's name); defaults to the role.
        timestamp: when it was said (UTC-aware); defaults to the ``timestamp`` given to ``add``.
        id: a caller-side message id, kept as provenance in ``source_ids``; one is made if absent.
        metadata: extra JSON data, merged over the metadata given to ``add``.
    """

    role: str = "user"
    content: str
    name: str | None = None
    timestamp: datetime | None = None
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timestamp", mode="before")
    @classmethod
    def _utc(cls, v: Any) -> datetime | None:
        return to_utc(v)


class MemoryRecord(_Model):
    """One memory, in any layer (see ``kind``).

    Attributes:
        id: time-sortable id (UUIDv7 hex).
        user_id, agent_id, session_id: the scope; ``user_id`` is the tenant boundary.
        kind: the layer.
        content: verbatim text.
        role: role of the message it came from (episodic records), else ``None``.
        speaker: who said it (attribution).
        metadata: JSON object given by the caller (plus message metadata).
        importance: in [0, 1].
        created_at, updated_at: when mnemolayer stored / last changed it (UTC).
        occurred_at: when the event happened (message time), UTC.
        valid_from, valid_to: validity interval (semantic facts; open-ended when ``None``).
        expires_at: when it expires (``Memory.add(expires_at=...)``), or ``None``: then
            its kind's default TTL applies, if any (``LifecycleConfig.ttl_days``).
            Expired records are out of recall and deleted by maintenance; pinned ones
            never expire.
        access_count, last_accessed_at: reinforcement counters (recall updates them).
        superseded_by: id of the record that replaced this one.
        source_ids: provenance: ids of the messages or memories it was derived from.
        entities: names of entities it mentions.
        content_hash: SHA-256 of the normalised content and scope (idempotent add key).
        embedding_model: ``"name"`` of the model that embedded it.
        session_only: a temporary memory of its session (``session_id`` is then set):
            searchable like any other until :meth:`Memory.end_session` deletes it.
        pinned: never decays, archived or expired by the lifecycle (:mod:`mnemolayer.lifecycle`).
        archived_at: when the lifecycle archived it (out of recall, restorable), or ``None``.
        merged_into: id of the near-duplicate it was merged into (out of recall), or ``None``.
        consolidated_into: id of the semantic record that consolidates it (it stays in
            recall, downweighted by ``LifecycleConfig.consolidated_weight``), or ``None``.
        pending: the enrichment it still waits for, because the model was unavailable
            when it was stored (:data:`PENDING_KINDS`): ``"embedding"`` (stored and
            keyword-searchable, no vectors yet) and ``"extraction"`` (its facts not
            extracted yet). :meth:`Memory.maintain` completes it once the model is back;
            ``[]`` when nothing is pending.
        source: where it came from (:data:`SOURCES`): ``"user"`` or ``"assistant"``
            (said in the conversation: trusted), ``"tool"``, ``"web"``, ``"import"``,
            ``"agent"`` (untrusted; :attr:`trusted`, :mod:`mnemolayer.trust`).
        flags: what :func:`mnemolayer.trust.detect` found in its text at write
            (``"instruction"``, ``"roleplay"``, ``"hidden_text"``; ``[]``: nothing), and
            ``"candidate"`` on a fact's record kept as a candidate (an untrusted
            statement that contradicted a current fact).
    """

    id: str
    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    kind: MemoryKind = MemoryKind.EPISODIC
    content: str
    role: str | None = None
    speaker: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float = 0.5
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    superseded_by: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    content_hash: str = ""
    embedding_model: str | None = None
    session_only: bool = False
    pinned: bool = False
    archived_at: datetime | None = None
    merged_into: str | None = None
    consolidated_into: str | None = None
    pending: list[PendingKind] = Field(default_factory=list)
    source: Source = "user"
    flags: list[str] = Field(default_factory=list)

    @property
    def trusted(self) -> bool:
        """Whether its source is trusted (``"user"`` or ``"assistant"``)."""
        return self.source in TRUSTED_SOURCES

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 strings with ``+00:00``)."""
        return self.model_dump(mode="json")


class Hit(_Model):
    """One search result.

    Attributes:
        memory: the record.
        score: final score in [0, 1], higher is better.
        scores: the breakdown: ``vector`` (cosine similarity), ``keyword`` (BM25),
            ``vector_norm`` and ``keyword_norm`` (the same on [0, 1], as fused),
            ``context`` (best neighbouring turn's relevance), ``fact_key`` (the cosine
            of the record's best current fact when that beat its own), ``outdated`` (1
            when it was ranked down as no longer true), ``relevance`` (fused, [0, 1]),
            ``importance``, ``recency``, ``access``, ``reranked`` (relevance after the
            importance / recency / access rerank), ``retention`` (how much of the memory
            is still retained, [0, 1]; see :mod:`mnemolayer.lifecycle.decay`),
            ``consolidated`` (the weight, ``LifecycleConfig.consolidated_weight``, that
            ranked down a record maintenance consolidated into a semantic record the
            search may also return; absent otherwise) and ``final``
            (``reranked · (1 - w + w · retention) · consolidated``); a signal that did
            not find the record is absent.
        explanation: with ``search(..., explain=True)``, why it ranks where it does (a
            JSON-ready dict, see :func:`mnemolayer.retrieval.search.ranking_explanation`);
            else ``None``.
        provenance: the ids of the records this hit stands for, its own first: a fact
            and the message it was extracted from are one hit
            (``RetrievalConfig.collapse_facts``), the better ranked of the two, with
            both ids here. When two facts of one message are found, the hit shows the
            message (only it states both; never a message that stated an outdated
            version), ``score`` and ``scores["final"]`` being the best of the records it
            stands for and the other ``scores`` the message's own.
    """

    memory: MemoryRecord
    score: float
    scores: dict[str, float] = Field(default_factory=dict)
    explanation: dict[str, Any] | None = None
    provenance: list[str] = Field(default_factory=list)

    # Shortcuts so ``hit.id`` / ``hit.content`` read naturally.
    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def content(self) -> str:
        return self.memory.content


class HistoryEvent(_Model):
    """One entry of a memory's audit history.

    Attributes:
        id: event id.
        memory_id: the memory it concerns.
        event: ``"ADD"``, ``"UPDATE"``, ``"DELETE"``; for a fact's record also
            ``"SUPERSEDE"`` (``new_content`` is the newer fact) and ``"RETRACT"``
            (``new_content`` is the message that took it back).
        old_content, new_content: content before / after (``None`` where not applicable).
        old_metadata, new_metadata: metadata before / after.
        created_at: when it happened (UTC).
    """

    id: str
    memory_id: str
    user_id: str
    event: str
    old_content: str | None = None
    new_content: str | None = None
    old_metadata: dict[str, Any] | None = None
    new_metadata: dict[str, Any] | None = None
    created_at: datetime


class MemoryPage(_Model):
    """One page of :meth:`Memory.list`: ``items`` and the ``next_cursor`` (``None`` at the end)."""

    items: list[MemoryRecord]
    next_cursor: str | None = None

    def __iter__(self):  # type: ignore[override]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> MemoryRecord:
        return self.items[index]


class Entity(_Model):
    """A node of a user's knowledge graph: a person, place, organisation, pet or thing.

    Attributes:
        id: time-sortable id (UUIDv7 hex).
        user_id: the owner; entities never cross users.
        name: the name it was first seen under (``"user"`` for the user's own entity).
        type: ``"person"``, ``"place"``, ``"organization"``, ``"pet"``, ``"thing"``…
        aliases: other names that resolve to it, as they were written (``"Lena"`` for the
            user after "my name is Lena"); sorted, without ``name`` itself.
        created_at, updated_at: when mnemolayer stored / last changed it (UTC).
    """

    id: str
    user_id: str
    name: str
    type: str = "thing"
    aliases: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime

    @field_validator("created_at", "updated_at", mode="before")
    @classmethod
    def _utc(cls, v: Any) -> datetime | None:
        return to_utc(v)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 UTC strings)."""
        return self.model_dump(mode="json")


class Fact(_Model):
    """A subject–predicate–object fact of semantic memory, with validity in time.

    Bi-temporal: ``valid_from`` / ``valid_to`` say when the fact held in the world
    (valid time); ``created_at`` / ``expired_at`` say when mnemolayer recorded it and when
    it stopped being current in the store (transaction time).

    Attributes:
        id: time-sortable id (UUIDv7 hex).
        user_id: the owner.
        subject: the subject entity's name; ``subject_id`` its id.
        predicate: a key of :data:`mnemolayer.extract.predicates.PREDICATES`.
        object: the object as said (an entity's name, a place, a thing, a phrase).
        object_id: the object's entity id when the object is an entity, else ``None``.
        object_type: what the object is when known (``"place"``, ``"dog"``…).
        date: the event's date when one was said ("last Friday" → that day).
        valid_from: when it became true (UTC); ``valid_to``: when it stopped (``None``
            while current).
        created_at: when it was recorded; ``expired_at``: when it was closed (``None``
            while current).
        superseded_by: id of the fact that replaced it (``None`` while current or when a
            negation closed it).
        confidence: in [0, 1].
        source_ids: provenance: ids of the (episodic) memories it was extracted from.
        speaker: who stated it.
        memory_id: the semantic memory record that carries its sentence for retrieval.
    """

    id: str
    user_id: str
    subject: str
    subject_id: str
    predicate: str
    object: str
    object_id: str | None = None
    object_type: str | None = None
    date: _dt.date | None = None
    valid_from: datetime
    valid_to: datetime | None = None
    created_at: datetime
    expired_at: datetime | None = None
    superseded_by: str | None = None
    confidence: float = 0.8
    source_ids: list[str] = Field(default_factory=list)
    speaker: str | None = None
    memory_id: str | None = None

    @field_validator("valid_from", "valid_to", "created_at", "expired_at", mode="before")
    @classmethod
    def _utc(cls, v: Any) -> datetime | None:
        return to_utc(v)

    @property
    def current(self) -> bool:
        """True while the fact holds (no end of validity recorded)."""
        return self.valid_to is None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 strings, ``date`` as ``YYYY-MM-DD``) with
        ``current`` added."""
        data = self.model_dump(mode="json")
        data["current"] = self.current
        return data
