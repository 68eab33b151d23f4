"""A CrewAI memory storage (``crewai.Memory(storage=...)``) kept in a mnemolayer :class:`Memory`.

CrewAI 1.x has one memory, ``crewai.Memory``, whose records live in a pluggable
``StorageBackend`` (``crewai.memory.storage.backend``; LanceDB by default). A crew uses
it through ``Crew(memory=crewai.Memory(...))``; agents remember task results and recall
them for later tasks. :class:`MnemolayerStorage` is such a backend: CrewAI's records
become mnemolayer memories, found with mnemolayer's hybrid recall (vectors and keywords
fused, facts mined from the text) and visible to the rest of the Python API
(``mem.search``, ``mem.facts``) under one user.

Searching by text
-----------------
A ``StorageBackend`` is searched with a query *vector*, but mnemolayer ranks a query
*text* (its keywords and facts count as much as its vector). So the storage brings its
own embedding function, :attr:`MnemolayerStorage.embedder`, the Memory's embedder,
which CrewAI is given as ``crewai.Memory(embedder=storage.embedder)``: it remembers the
text of the last vectors it made (1,024), and :meth:`~MnemolayerStorage.search` runs the
text behind the vector it gets. A vector made by another embedder is refused with a
:class:`~mnemolayer.errors.ValidationError` naming ``query_embedding``.

How records map to memories
---------------------------
A CrewAI ``MemoryRecord`` is one episodic memory of the user ``user_id`` (default
``"crewai"``), in a session of its own (``"crewai-" + record.id``: mnemolayer keeps one
record per text and scope, so two CrewAI records with the same text stay two), pinned
(CrewAI decides what to forget, not mnemolayer's decay). Its ``content`` and
``importance`` are the memory's, its ``created_at`` the memory's ``occurred_at`` (the
message time); the rest goes in metadata: ``crewai_id``, ``crewai_scope``,
``crewai_categories``, ``crewai_metadata`` (the record's metadata as JSON text, so any
keys survive), ``crewai_source``, ``crewai_private`` and ``crewai_last_accessed``.

Scopes are paths (``/crew/research``); a ``scope_prefix`` matches the scope itself and
every scope below it (``/crew`` matches ``/crew/research``, not ``/crew2``).
``categories`` match a record with any of them, ``metadata_filter`` one whose metadata
has every key with an equal value. Scores are mnemolayer's final scores in [0, 1].
Filters are applied to mnemolayer's hits, which are fetched in growing pages until the
page is full; listing, counting and scope reads go through every record of the user
(CrewAI's own LanceDB storage scans its table for them as well).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from mnemolayer import _validate as v
from mnemolayer._extras import require
from mnemolayer.errors import ValidationError
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord

require("crewai.memory.types", extra="crewai", purpose="the CrewAI storage")
from crewai.memory.types import MemoryRecord as CrewRecord  # noqa: E402
from crewai.memory.types import ScopeInfo  # noqa: E402

__all__ = ["MnemolayerStorage", "TextRememberingEmbedder"]

_P = "crewai_"  # prefix of every metadata key this storage writes
_MAX_FETCH = 10_000  # mnemolayer's largest search limit
_PAGE = 500
# Every record this storage writes has the boolean crewai_private (the query language has
# no "exists": a missing key fails "in").
# CrewAI's records are the messages; the facts mined from them stay mnemolayer's.
_KINDS = ["episodic"]
_OURS = {f"{_P}private": {"in": [True, False]}}


class TextRememberingEmbedder:
    """A CrewAI embedding function over a mnemolayer embedder that remembers, for the
    last ``capacity`` vectors it made, the text each was made from.

    Called as CrewAI calls its embedder: ``embedder(["text", ...])`` returns one list of
    ``dim`` floats per text (mnemolayer's ``"document"`` embedding; CrewAI embeds
    queries and records alike).
    """

    def __init__(self, memory: Memory, capacity: int = 1024) -> None:
        self._embedder = memory.embedder
        self._texts: OrderedDict[bytes, str] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = np.asarray(self._embedder.embed(list(texts)), dtype=np.float32)
        out = vectors.tolist()
        with self._lock:
            for text, row in zip(texts, vectors, strict=True):
                key = row.tobytes()
                self._texts[key] = text
                self._texts.move_to_end(key)
            while len(self._texts) > self._capacity:
                self._texts.popitem(last=False)
        return out

    def text_of(self, vector: Sequence[float]) -> str | None:
        """The text ``vector`` was made from, or ``None`` when it was not made here lately."""
        key = np.asarray(vector, dtype=np.float32).tobytes()
        with self._lock:
            return self._texts.get(key)


class MnemolayerStorage:
    """CrewAI ``StorageBackend`` over a :class:`~mnemolayer.Memory` (see the module docs).

    Args:
        memory: the store; it stays the caller's (this object never closes it).
        user_id: the mnemolayer user every CrewAI record is stored under.
        role: the message role records are stored under (``"user"`` lets the fact
            extractor mine them; ``"assistant"`` stores them without mining).

    Attributes:
        embedder: the embedding function to give CrewAI (``crewai.Memory(embedder=...)``).

    Raises:
        MissingExtraError: crewai is not installed (names the ``crewai`` extra).
        ValidationError: a blank ``user_id`` or another ``role``.
    """

    def __init__(self, memory: Memory, *, user_id: str = "crewai", role: str = "user") -> None:
        if not isinstance(memory, Memory):
            raise ValidationError("memory", f"expected a Memory, got {type(memory).__name__}")
        if role not in ("user", "assistant"):
            raise ValidationError("role", f"expected 'user' or 'assistant', got {role!r}")
        self.memory = memory
        self.user_id = v.scope_id(user_id, "user_id", required=True)
        self.role = role
        self.embedder = TextRememberingEmbedder(memory)

    # -- writes ---------------------------------------------------------------------------

    def save(self, records: list[CrewRecord]) -> None:
        """Store CrewAI records (a record whose id is stored already is updated)."""
        for record in records:
            self._put(record)

    def update(self, record: CrewRecord) -> None:
        """Replace the stored record with ``record``'s id (stored anew if there is none)."""
        self._put(record)

    def _put(self, record: CrewRecord) -> None:
        meta = _metadata(record)
        found = self._by_id(record.id)
        if found is None:
            self.memory.add(
                {"role": self.role, "content": record.content},
                user_id=self.user_id,
                session_id=_session(record.id),
                timestamp=_utc(record.created_at),
                metadata=meta,
                importance=record.importance,
                pinned=True,
            )
            return
        self.memory.update(
            found.id,
            content=record.content if record.content != found.content else None,
            metadata=meta,
            importance=record.importance,
            user_id=self.user_id,
        )

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Delete the records matching every given criterion; returns how many.

        ``older_than`` is compared with ``created_at`` (a naive time is UTC).
        """
        ids = set(record_ids) if record_ids is not None else None
        cutoff = _utc(older_than) if older_than is not None else None
        doomed = [
            rec
            for rec in self._all()
            if _matches(rec, scope_prefix, categories, metadata_filter)
            and (ids is None or rec.metadata[f"{_P}id"] in ids)
            and (cutoff is None or _when(rec) < cutoff)
        ]
        for rec in doomed:
            self.memory.delete(rec.id, user_id=self.user_id)
        return len(doomed)

    def reset(self, scope_prefix: str | None = None) -> None:
        """Delete every record in ``scope_prefix`` (``None``: all of them)."""
        self.delete(scope_prefix=scope_prefix)

    # -- reads ----------------------------------------------------------------------------

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[CrewRecord, float]]:
        """The records most relevant to the text behind ``query_embedding``.

        Returns:
            Up to ``limit`` ``(record, score)`` pairs, score in [0, 1] and >= ``min_score``,
            best first.

        Raises:
            ValidationError: (field ``"query_embedding"``) the vector was not made by
                :attr:`embedder`.
        """
        text = self.embedder.text_of(query_embedding)
        if text is None:
            raise ValidationError(
                "query_embedding",
                "was not made by this storage's embedder; MnemolayerStorage searches by "
                "the text behind the vector: pass crewai.Memory(embedder=storage.embedder)",
            )
        if limit <= 0:
            return []
        fetch = min(_MAX_FETCH, max(limit * 2, 20))
        while True:
            hits = self.memory.search(
                text,
                user_id=self.user_id,
                kinds=_KINDS,
                limit=fetch,
                threshold=min_score if min_score > 0 else None,
            )
            kept = [
                (_record(h.memory), h.score)
                for h in hits
                if _matches(h.memory, scope_prefix, categories, metadata_filter)
            ]
            if len(kept) >= limit or len(hits) < fetch or fetch >= _MAX_FETCH:
                return kept[:limit]
            fetch = min(_MAX_FETCH, fetch * 4)

    def get_record(self, record_id: str) -> CrewRecord | None:
        """The record with ``record_id``, or ``None``."""
        found = self._by_id(record_id)
        return _record(found) if found is not None else None

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[CrewRecord]:
        """Records in ``scope_prefix``, newest first, ``offset`` skipped, at most ``limit``."""
        found = [_record(r) for r in self._all() if _matches(r, scope_prefix, None, None)]
        found.sort(key=lambda r: r.created_at, reverse=True)
        return found[max(offset, 0) : max(offset, 0) + max(limit, 0)]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """Record count, categories, date range and child scopes of ``scope``."""
        path = _norm(scope) or "/"
        inside = [_record(r) for r in self._all() if _matches(r, path, None, None)]
        return ScopeInfo(
            path=path,
            record_count=len(inside),
            categories=sorted({c for r in inside for c in r.categories}),
            oldest_record=min((r.created_at for r in inside), default=None),
            newest_record=max((r.created_at for r in inside), default=None),
            child_scopes=_children(path, [r.scope for r in inside]),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The scopes directly under ``parent`` that hold records (at any depth below)."""
        return _children(_norm(parent) or "/", [_scope(r) for r in self._all()])

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """Category → number of records in ``scope_prefix`` that carry it."""
        counts: dict[str, int] = {}
        for rec in self._all():
            if _matches(rec, scope_prefix, None, None):
                for c in rec.metadata.get(f"{_P}categories") or []:
                    counts[c] = counts.get(c, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        """Number of records in ``scope_prefix`` (``None``: all)."""
        return sum(1 for r in self._all() if _matches(r, scope_prefix, None, None))

    # -- async: the same calls in a worker thread -----------------------------------------

    async def asave(self, records: list[CrewRecord]) -> None:
        """:meth:`save` in a worker thread."""
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[CrewRecord, float]]:
        """:meth:`search` in a worker thread."""
        return await asyncio.to_thread(
            self.search,
            query_embedding,
            scope_prefix,
            categories,
            metadata_filter,
            limit,
            min_score,
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """:meth:`delete` in a worker thread."""
        return await asyncio.to_thread(
            self.delete, scope_prefix, categories, record_ids, older_than, metadata_filter
        )

    # -- helpers --------------------------------------------------------------------------

    def _by_id(self, record_id: str) -> MemoryRecord | None:
        page = self.memory.list(
            user_id=self.user_id,
            session_id=_session(record_id),
            kinds=_KINDS,
            filters={f"{_P}id": record_id},
            limit=1,
        )
        return page.items[0] if page.items else None

    def _all(self) -> Iterator[MemoryRecord]:
        cursor = None
        while True:
            page = self.memory.list(
                user_id=self.user_id, kinds=_KINDS, filters=_OURS, limit=_PAGE, cursor=cursor
            )
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


def _session(record_id: str) -> str:
    return f"crewai-{record_id}"


def _utc(moment: datetime) -> datetime:
    """A naive time (CrewAI's ``datetime.utcnow()``) as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _norm(scope: str | None) -> str:
    """A scope path without its trailing slash, with a leading one (``""`` for the root)."""
    path = (scope or "").strip().rstrip("/")
    return path if not path or path.startswith("/") else "/" + path


def _scope(rec: MemoryRecord) -> str:
    return str(rec.metadata.get(f"{_P}scope") or "/")


def _matches(
    rec: MemoryRecord,
    scope_prefix: str | None,
    categories: list[str] | None,
    metadata_filter: dict[str, Any] | None,
) -> bool:
    if f"{_P}id" not in rec.metadata:
        return False
    prefix = _norm(scope_prefix)
    scope = _norm(_scope(rec))
    if prefix and scope != prefix and not scope.startswith(prefix + "/"):
        return False
    if categories and not set(categories) & set(rec.metadata.get(f"{_P}categories") or []):
        return False
    if metadata_filter:
        extra = _crew_metadata(rec)
        return all(k in extra and extra[k] == val for k, val in metadata_filter.items())
    return True


def _children(parent: str, scopes: list[str]) -> list[str]:
    base = "" if parent == "/" else parent
    found: set[str] = set()
    for scope in scopes:
        path = _norm(scope)
        if path.startswith(base + "/") and path != base:
            first = path[len(base) + 1 :].split("/", 1)[0]
            if first:
                found.add(f"{base}/{first}")
    return sorted(found)


def _metadata(record: CrewRecord) -> dict[str, Any]:
    try:
        extra = json.dumps(record.metadata, allow_nan=False, default=str)
    except (TypeError, ValueError) as exc:
        raise ValidationError("metadata", f"must be JSON data: {exc}") from exc
    return {
        f"{_P}id": record.id,
        f"{_P}scope": record.scope,
        f"{_P}categories": list(record.categories),
        f"{_P}metadata": extra,
        f"{_P}source": record.source,
        f"{_P}private": bool(record.private),
        f"{_P}last_accessed": _utc(record.last_accessed).isoformat(),
    }


def _crew_metadata(rec: MemoryRecord) -> dict[str, Any]:
    loaded = json.loads(rec.metadata.get(f"{_P}metadata") or "{}")
    return loaded if isinstance(loaded, dict) else {}


def _record(rec: MemoryRecord) -> CrewRecord:
    """The CrewAI record a memory holds (times naive UTC, as CrewAI writes them)."""
    meta = rec.metadata
    accessed = meta.get(f"{_P}last_accessed")
    return CrewRecord(
        id=meta[f"{_P}id"],
        content=rec.content,
        scope=_scope(rec),
        categories=list(meta.get(f"{_P}categories") or []),
        metadata=_crew_metadata(rec),
        importance=rec.importance,
        created_at=_naive(_when(rec)),
        last_accessed=_naive(datetime.fromisoformat(accessed)) if accessed else _naive(_when(rec)),
        source=meta.get(f"{_P}source"),
        private=bool(meta.get(f"{_P}private")),
    )


def _when(rec: MemoryRecord) -> datetime:
    """The CrewAI record's ``created_at``: the memory's message time."""
    return rec.occurred_at or rec.created_at


def _naive(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)
