"""The seams: what the services of :class:`mnemolayer.Memory` need from the parts that can
be swapped (the store, models, clocks), in one place.

The protocols of the pluggable parts are defined next to their implementations and
re-exported here (:class:`Embedder`, :class:`Extractor`, :class:`Summarizer`,
:class:`ImportanceEstimator`, :class:`TokenCounter`, :class:`Clock`,
:class:`SessionStore`); the ones the services themselves define live here
(:class:`Store`, :class:`ChatModel`, :class:`EpisodicSink`). The deterministic stand-ins
for tests are in :mod:`mnemolayer.testing`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from mnemolayer.embed.base import Embedder, EmbedKind
from mnemolayer.extract.base import Extractor
from mnemolayer.extract.summarize import Summarizer
from mnemolayer.layers.working.state import SessionStore
from mnemolayer.lifecycle.clock import Clock
from mnemolayer.lifecycle.importance import ImportanceEstimator
from mnemolayer.text.tokens import TokenCounter

if TYPE_CHECKING:
    import numpy as np

    from mnemolayer.models import HistoryEvent, MemoryRecord

__all__ = [
    "ChatModel",
    "Clock",
    "Deadline",
    "EmbedKind",
    "Embedder",
    "EpisodicSink",
    "Extractor",
    "ImportanceEstimator",
    "Progress",
    "SessionStore",
    "Store",
    "Summarizer",
    "TokenCounter",
    "Txn",
]

T = TypeVar("T")

#: Called after each batch of a long operation with ``(done, total)``.
Progress = Callable[[int, int], None]

#: The handle a store passes to the function it runs in a write transaction
#: (:meth:`Store.transact`): a ``sqlite3.Connection`` on SQLite, the PostgreSQL store's
#: adapter of it there. Services only hand it back to the store's own methods.
Txn = Any


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a call to the model must have its answer.

    Attributes:
        at: the end, in :func:`time.monotonic` seconds.
        budget_s: the seconds the call was given, for error messages.
    """

    at: float
    budget_s: float

    @classmethod
    def after(cls, budget_s: float) -> Deadline:
        """The deadline ``budget_s`` seconds from now."""
        return cls(time.monotonic() + budget_s, budget_s)

    def remaining(self) -> float:
        """Seconds left until :attr:`at`; ``<= 0`` once it has passed."""
        return self.at - time.monotonic()


@runtime_checkable
class ChatModel(Protocol):
    """One chat completion at a time, within a deadline: what the LLM extractor, summariser
    and importance estimator ask (:class:`mnemolayer.llm.client.ChatClient` over an
    OpenAI-compatible endpoint; :class:`mnemolayer.testing.ScriptedChatModel` in tests)."""

    def complete(
        self,
        messages: list[Any],
        deadline: Deadline,
        *,
        max_tokens: int | None = None,
        response_format: Any | None = None,
    ) -> str:
        """The answer's text to ``messages`` (``{"role", "content"}`` dicts, oldest first).

        Raises:
            TimeoutError: no answer before ``deadline``.
        """
        ...

    def close(self) -> None:
        """Release the connections."""
        ...


class EpisodicSink(Protocol):
    """Where a working-memory window stores the turns that leave it: ``add`` as
    :meth:`mnemolayer.Memory.add` (the episodic writer, or the facade itself)."""

    def add(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[MemoryRecord]: ...


class Store(Protocol):
    """What the services ask of the memory store (:class:`~mnemolayer.store.sqlite.store.SQLiteStore`
    and :class:`~mnemolayer.store.postgres.store.PostgresStore` provide it).

    Writes happen inside :meth:`transact`: the service passes a function of the
    transaction handle (:data:`Txn`) and calls the store's write methods with it.
    ``where`` arguments are SQL conditions over the ``memories`` table in the SQLite
    dialect (the PostgreSQL store translates them); they are on their way to named
    store methods.
    """

    path: str
    read_only: bool
    crypto: Any

    # -- transactions and raw reads
    def transact(self, fn: Callable[[Txn], T]) -> T: ...
    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def close(self) -> None: ...

    # -- meta and bookkeeping
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def init_meta(self, defaults: dict[str, str]) -> dict[str, str]: ...
    def schema_version(self) -> int: ...
    def file_size(self) -> int: ...
    def counts(self, user_id: str | None) -> dict[str, Any]: ...
    def is_empty(self) -> bool: ...
    def truncate_log(self) -> bool: ...

    # -- reading records
    def get(self, memory_id: str) -> MemoryRecord | None: ...
    def select(
        self, where: str, params: Sequence[Any], *, order: str = "id", limit: int | None = None
    ) -> list[MemoryRecord]: ...
    def select_rows(self, where: str, params: Sequence[Any]) -> list[tuple[int, MemoryRecord]]: ...
    def ids(self) -> list[str]: ...
    def ids_where(self, where: str, params: Sequence[Any]) -> set[str]: ...
    def user_ids(self) -> list[str]: ...
    def active_ids(self, user_id: str, now: datetime) -> set[str]: ...
    def find_by_hash(
        self, c: Txn | None, user_id: str, hashes: Sequence[str]
    ) -> dict[str, MemoryRecord]: ...
    def as_stored(self, record: MemoryRecord) -> MemoryRecord: ...
    def owners(self, ids: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]: ...
    def fact_sentences(self, ids: Sequence[str]) -> dict[str, str]: ...
    def citing(self, c: Txn | None, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]: ...
    def restored_at(self, ids: Sequence[str]) -> dict[str, datetime]: ...
    def dangling_targets(self, user_id: str) -> list[str]: ...
    def latest_update(self, user_id: str) -> str | None: ...
    def top_rowid(self, at_most: int | None = None) -> tuple[int, str] | None: ...
    def rowid_holds(self, rowid: int, memory_id: str) -> bool: ...
    def load_vectors(self, user_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]: ...

    # -- history
    def history(self, memory_id: str) -> list[HistoryEvent]: ...
    def history_rows(self, user_id: str | None) -> list[HistoryEvent]: ...
    def add_history(
        self,
        c: Txn,
        memory_id: str,
        user_id: str,
        event: str,
        old: MemoryRecord | None,
        new: MemoryRecord | None,
        at: datetime,
    ) -> None: ...
    def insert_history(self, c: Txn, e: HistoryEvent, *, conflict: str = ...) -> None: ...
    def delete_user_history(self, c: Txn, user_id: str) -> None: ...

    # -- writing records (inside a transaction)
    def insert(
        self, c: Txn, record: MemoryRecord, terms: str, vectors: np.ndarray, *, history: bool = True
    ) -> MemoryRecord | None: ...
    def insert_many(
        self, c: Txn, items: Sequence[tuple[MemoryRecord, str, np.ndarray]]
    ) -> list[bool]: ...
    def update_record(self, c: Txn, r: MemoryRecord) -> None: ...
    def replace_index(self, c: Txn, memory_id: str, terms: str, vectors: np.ndarray) -> None: ...
    def replace_terms(self, c: Txn, memory_id: str, terms: str) -> None: ...
    def record_vectors(self, c: Txn, memory_id: str) -> np.ndarray: ...
    def delete_where(
        self, c: Txn, where: str, params: Sequence[Any]
    ) -> list[tuple[int, str, str]]: ...
    def existing_ids(self, c: Txn, ids: Sequence[str]) -> set[str]: ...
    def add_source(self, c: Txn, memory_id: str, source_id: str) -> None: ...
    def set_state(
        self, c: Txn, memory_id: str, changes: Mapping[str, Any]
    ) -> MemoryRecord | None: ...
    def set_validity(
        self,
        c: Txn,
        memory_id: str,
        *,
        valid_from: datetime | None,
        valid_to: datetime | None,
        superseded_by: str | None,
        at: datetime,
    ) -> MemoryRecord | None: ...
    def is_active(self, c: Txn, memory_id: str, *, unconsolidated: bool = False) -> bool: ...
    def archive_unchanged(self, c: Txn, r: MemoryRecord, at: datetime) -> bool: ...
    def mark_merged(self, c: Txn, merged_id: str, survivor_id: str, at: datetime) -> bool: ...
    def mark_consolidated(self, c: Txn, memory_id: str, into: str) -> bool: ...
    def absorb(
        self,
        c: Txn,
        survivor_id: str,
        source_ids: Sequence[str],
        *,
        importance: float,
        restated_at: datetime | None,
    ) -> None: ...
    def release_links(
        self, c: Txn, user_id: str, gone: Sequence[str], at: datetime
    ) -> tuple[list[str], list[str]]: ...
    def bump_generation(self, c: Txn, user_id: str) -> None: ...
    def drop_generation(self, c: Txn, user_id: str) -> int: ...

    # -- encryption at rest
    def encryption_mark(self) -> str | None: ...
    def use_encryption(self, cipher: Any, keyring_id: str) -> None: ...
