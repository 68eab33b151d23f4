"""Episodic memory's write path: validate → redact → estimate importance → extract facts
→ embed → insert in one transaction; and the same pipeline for updates and deletes.

Everything slow (the importance model, fact extraction, embedding) runs before the write
transaction opens, so a write holds the store's lock only for its inserts. Capture does
not depend on enrichment: when the embedder or the extractor raises, the words are stored
(and keyword-indexed) all the same, marked pending (:attr:`MemoryRecord.pending`), and
:mod:`~mnemolayer.layers.episodic.enrich` completes them later. The facade
(:class:`mnemolayer.Memory`) builds one :class:`EpisodicWriter` and delegates ``add``,
``update`` and ``delete`` to it; the semantic, procedural and session services write
through its :meth:`EpisodicWriter.records` and :meth:`EpisodicWriter.insert`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolayer.protocols import Txn

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from mnemolayer import _validate as v
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import ExtractedFact
from mnemolayer.layers.episodic.added import AddResult, SkippedMessage
from mnemolayer.layers.episodic.capture import embed_or_defer, with_pending
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.layers.episodic.read import get_record
from mnemolayer.layers.episodic.repeats import restatements
from mnemolayer.layers.semantic.apply import Pending, SemanticLayer
from mnemolayer.lifecycle.importance import ImportanceEstimator
from mnemolayer.lifecycle.states import KIND_IMPORTANCE_FLOOR
from mnemolayer.models import MemoryRecord, Message, message_hash, new_id
from mnemolayer.privacy.redact import RedactionConfig
from mnemolayer.privacy.wiring import (
    private_facts,
    redact_metadata,
    redact_text,
    report_part,
    with_report,
)
from mnemolayer.retrieval.index import keyword_terms
from mnemolayer.store.base import SQLStore
from mnemolayer.text.speakers import split_speaker
from mnemolayer.trust import default_source, detect, validate_source

__all__ = ["EpisodicWriter", "MessageInput"]

MessageInput = str | Message | dict[str, Any]


#: Roles whose text may name its speaker in a label (``"Caroline: ..."``).
_LABELLED_ROLES = frozenset({"user", "assistant"})


def _identity(record: MemoryRecord) -> tuple[str, str]:
    """A new record's message identity for tombstones: its caller message id (made
    when none was given, and then never seen again) and its dedup key."""
    return record.source_ids[0], record.content_hash


def _labelled_speaker(content: str, role: str) -> str | None:
    """The speaker a message with no ``name`` gives in front of its text
    (:func:`mnemolayer.text.speakers.split_speaker`), or ``None``. The content stays
    verbatim; what is derived from it reads the text after the label."""
    if role not in _LABELLED_ROLES:
        return None
    split = split_speaker(content)
    return split[0] if split is not None else None


class EpisodicWriter:
    """Writes records: :meth:`add`, :meth:`update`, :meth:`delete`, and the
    :meth:`records` / :meth:`insert` halves the other services compose.

    Args:
        store: the open store.
        embedder: embeds new records (and the sentence records of their facts).
        semantic: extracts and resolves facts inside the write transaction.
        privacy: what is redacted before anything is hashed or stored (``None``: off).
        importance: estimates the importance of a message given none.
        clock: returns "now" (aware UTC).
        guard: refuses writes while the store's vectors are another model's.

    ``deferred``, when set, leaves embedding to the background queue: records are stored
    pending, and it is called after each write (:mod:`~mnemolayer.layers.episodic.queue`).
    """

    def __init__(
        self,
        store: SQLStore,
        embedder: Embedder,
        semantic: SemanticLayer,
        privacy: RedactionConfig | None,
        importance: ImportanceEstimator,
        clock: Callable[[], datetime],
        guard: EmbeddingGuard,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.semantic = semantic
        self.privacy = privacy
        self.importance = importance
        self.clock = clock
        self.guard = guard
        self.deferred: Callable[[], None] | None = None
        #: Deletes the user's expired memories when any of these has expired (the facade
        #: wires maintenance's expiry step): words said again after their memory
        #: expired are stored anew, whether or not maintenance ran.
        self.expire_due: Callable[[str, list[MemoryRecord]], bool] | None = None

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
        source: str | None = None,
    ) -> AddResult:
        """Store one text or a list of messages: one record per message, in one transaction.

        Args:
            messages: a string (one user message), a :class:`Message`, a dict with
                ``role``/``content`` (and optionally ``name``, ``timestamp``, ``id``,
                ``metadata``), or a list of those. A user or assistant message with no
                ``name`` whose text starts with a speaker label (``"Caroline: I went
                hiking"``, ``"卡罗琳：我去徒步了"``; the conservative rules of
                :mod:`mnemolayer.text.speakers`) is attributed to that speaker: the
                record's ``speaker`` is the label, its ``content`` stays verbatim, and
                the indexes and fact extraction read the text after the label, as if
                ``name`` had been given.
            user_id: the tenant; required.
            agent_id, session_id: narrower scope.
            timestamp: when the messages happened (message ``timestamp`` wins); naive → UTC;
                default: now. Messages of one call that share a time keep their order
                (records are stored, and session neighbours read, in message order).
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
            source: where the messages came from (:data:`~mnemolayer.models.SOURCES`):
                ``"user"``, ``"assistant"`` (trusted), ``"tool"``, ``"web"``,
                ``"import"``, ``"agent"`` (untrusted: out of :meth:`context` unless
                asked for, and never superseding a current fact). ``None`` (default):
                each message's role decides (tool messages are ``"tool"``, assistant and
                system ones ``"assistant"``, the rest ``"user"``;
                :func:`mnemolayer.trust.default_source`). Instruction-like text is
                flagged either way (:attr:`MemoryRecord.flags`; ``docs/guide/trust.md``).

        Returns:
            The records in message order, as an :class:`~mnemolayer.AddResult` (a list).
            Idempotent: a message whose normalised content, speaker, kind and scope match
            an existing record returns that record unchanged (unless it has expired: then
            the expired memories go, as :meth:`maintain` deletes them, and the message is
            stored anew with its own time and expiry). Session-only and permanent
            records are matched apart: the same text added both ways is stored twice, and
            only the session-only copy goes when the session ends (see
            :func:`mnemolayer.models.message_hash`). A matching record keeps its own
            importance, pin and expiry (use :meth:`pin` to pin it).

            Deletions stay deleted: a message with a caller id (``Message.id``) whose
            memory was deleted (:meth:`delete`, or :meth:`delete_all` of an agent or
            session) is not stored again when the same id, content and scope come back
            (a replay, a sync retry); it has no record in the result and is listed in
            ``result.skipped`` (:class:`~mnemolayer.SkippedMessage`, ``reason
            "deleted"``), and its facts are not restated. The same words under a new id,
            without an id, or in another session are stored as usual. The tombstones
            hold no text (:mod:`mnemolayer.store.tombstones`) and go with
            :meth:`delete_all` of the whole user.

            The words are kept even when a model cannot answer: if the embedder raises
            (anything but :class:`~mnemolayer.EmbedderError`), the records are stored and keyword-indexed without vectors, with ``"embedding"``
            in their :attr:`~MemoryRecord.pending`; if the extractor raises on a message,
            it is stored with ``"extraction"`` pending (an LLM extractor that times out or
            is refused falls back to the rules instead, so its facts are there at once).
            :meth:`maintain` completes pending records once the model is back; keyword
            search finds them meanwhile (``docs/guide/episodic.md``, "When a model is down").

        Raises:
            ValidationError: blank content, bad scope ids, metadata, timestamp or
                importance; ``session_only`` not a bool or without a ``session_id``
                (field ``"session_only"``); ``pinned`` not a bool; ``expires_at`` not a
                time or not after a message's time (field ``"expires_at"``); an unknown
                ``source`` (field ``"source"``). Nothing is
                stored and the embedder is not called.
            EmbedderError: the embedder answered wrongly: the wrong number of vectors,
                vectors of another dimension than its ``dim``, or NaN or infinite values
                (:func:`~mnemolayer.embed.base.check_vectors`); nothing is stored (no
                record, no fact). An embedder that raises anything else (it could not
                answer) does not fail the add: the records are stored pending (above).
        """
        records = self.records(
            messages, user_id=user_id, agent_id=agent_id, session_id=session_id,
            timestamp=timestamp, metadata=metadata, importance=importance, kind=kind,
            session_only=session_only, pinned=pinned, expires_at=expires_at, source=source,
        )  # fmt: skip
        stored = self._insert(records, None, honour_deletions=True)
        return AddResult(
            [r for r in stored if r is not None],
            [
                SkippedMessage(index=i, message_id=records[i].source_ids[0])
                for i, r in enumerate(stored)
                if r is None
            ],
        )

    def records(
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
        source: str | None = None,
    ) -> list[MemoryRecord]:
        """Validate :meth:`add`'s arguments into records (nothing stored)."""
        given_source = validate_source(source)
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
        now = self.clock()
        records: list[MemoryRecord] = []
        for i, m in enumerate(msgs):
            meta = {**base_meta, **v.metadata(m.metadata, f"messages[{i}].metadata")}
            content, meta = self._redact(m.content, meta)  # before hashing and everything
            speaker = m.name or _labelled_speaker(content, m.role)
            occurred = m.timestamp or base_time or now
            if expiry is not None and expiry <= occurred:
                raise ValidationError(
                    "expires_at",
                    f"must be after the message's time {occurred.isoformat()}"
                    + (f" (messages[{i}])" if len(msgs) > 1 else "")
                    + f", got {expiry.isoformat()}",
                )
            # Keyed on the given name, not the label read from the text (which the
            # content holds anyway): a labelled message stored before labels were read
            # still matches when it is added again.
            src = given_source or default_source(m.role)
            hashed = message_hash(
                content, agent_id, session_id, kind_.value, m.name or m.role,
                session_only=session_only,
                source=src if src != default_source(m.role) else None,
            )  # fmt: skip
            records.append(
                MemoryRecord(
                    id=new_id(), user_id=user_id, agent_id=agent_id, session_id=session_id,
                    kind=kind_, content=content, role=m.role, speaker=speaker,
                    metadata=meta, created_at=now, updated_at=now,
                    importance=imp if imp is not None else 0.0,  # estimated below
                    occurred_at=occurred, source_ids=[m.id or new_id()], content_hash=hashed,
                    embedding_model=self.embedder.name, session_only=session_only,
                    pinned=pinned, expires_at=expiry, source=src, flags=detect(content),
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
                    value = self.importance.estimate(r.content).value
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

    def prepare(
        self,
        turns: Sequence[MemoryRecord],
        now: datetime,
        given: dict[str, list[ExtractedFact]] | None = None,
    ) -> list[Pending]:
        """:meth:`SemanticLayer.prepare` under :attr:`privacy`: the facts (given ones
        too) redacted, and those about nothing but a redacted value ("likes [CARD]")
        dropped."""
        cfg = self.privacy
        if cfg is not None and given:
            given = {rid: private_facts(facts, cfg) for rid, facts in given.items()}
        pending = self.semantic.prepare(turns, now, given)
        if cfg is None:
            return pending
        out: list[Pending] = []
        for p in pending:
            facts = private_facts(p.facts, cfg)
            if facts == p.facts:
                out.append(p)
            elif facts:
                out.append(self.semantic.draft(p.turn, facts, now))
        return out

    def insert(
        self,
        records: list[MemoryRecord],
        facts: dict[str, list[ExtractedFact]] | None = None,
    ) -> list[MemoryRecord]:
        """Extract facts and embed new records (outside the write lock), then insert all
        in one transaction. ``facts`` gives the facts of some records instead of running
        the extractor on them (learned feedback)."""
        stored = self._insert(records, facts, honour_deletions=False)
        return [r for r in stored if r is not None]

    def _insert(
        self,
        records: list[MemoryRecord],
        facts: dict[str, list[ExtractedFact]] | None,
        *,
        honour_deletions: bool,
    ) -> list[MemoryRecord | None]:
        """:meth:`insert`, one entry per record: the stored one, or ``None`` for a
        message skipped because its identity has a tombstone (``honour_deletions``)."""
        if not records:
            return []
        self.guard.require()
        user_id = records[0].user_id
        dead = (
            self.store.deleted_messages(None, user_id, map(_identity, records))
            if honour_deletions
            else set()
        )
        live = [r for r in records if _identity(r) not in dead]
        hashes = [r.content_hash for r in live]
        existing = self.store.find_by_hash(None, user_id, hashes)
        if existing and self.expire_due and self.expire_due(user_id, [*existing.values()]):
            existing = self.store.find_by_hash(None, user_id, hashes)
        fresh: dict[str, MemoryRecord] = {}
        for r in live:
            if r.content_hash not in existing and r.content_hash not in fresh:
                fresh[r.content_hash] = r
        new = list(fresh.values())
        now = self.clock()
        # The same words said again later are stored once, but they restate their facts
        # at the later time (which reopens a fact retracted in between).
        restated, given = restatements(live, existing, facts or {})
        pending = self.prepare([*new, *restated], now, given)
        failed = {p.turn.id for p in pending if p.failed}
        vec_of, terms, embedded = self.index(new, pending)
        new = [with_pending(r, embedding=not embedded, extraction=r.id in failed) for r in new]

        def write(c: Txn) -> dict[str, MemoryRecord]:
            stored: dict[str, MemoryRecord] = {}
            inserted: set[str] = set()
            todo = new
            if honour_deletions:
                # A deletion committed since the look-up above left its tombstones.
                late = self.store.deleted_messages(c, user_id, map(_identity, new))
                dead.update(late)
                todo = [r for r in new if _identity(r) not in late]
            done = self.store.insert_many(c, [(r, terms[r.id], vec_of[r.id]) for r in todo])
            for r, ok in zip(todo, done, strict=True):
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
        self.wake_queue()
        by_hash = {**existing, **stored}
        return [
            None
            if _identity(r) in dead or r.content_hash not in by_hash
            else self.store.as_stored(by_hash[r.content_hash])
            for r in records
        ]

    def index(
        self, records: list[MemoryRecord], pending: Sequence[Pending]
    ) -> tuple[dict[str, Any], dict[str, str], bool]:
        """Vectors and keyword terms, by record id, for ``records`` and the sentence
        records drafted in ``pending``: one embedding batch for all; a message's terms
        include its facts' sentences. The flag says whether the embedder answered: when
        it raised, every vector is empty (no chunks) and the drafts in ``pending`` are
        marked pending embedding (the keyword terms are there either way)."""
        drafts = [d for p in pending for d in p.drafts.values()]
        both = [*records, *drafts]
        # With the queue: stored pending, as when the embedder is down (quietly: no failure).
        defer = self.deferred is not None and bool(both)
        vectors = None if defer else embed_or_defer(self.embedder, both)
        embedded = vectors is not None
        if vectors is None:
            vectors = [np.empty((0, self.embedder.dim), dtype=np.float32)] * len(both)
            for p in pending:
                p.drafts = {
                    k: with_pending(d, embedding=True, extraction=False)
                    for k, d in p.drafts.items()
                }
        extra = {p.turn.id: p.keyword_text() for p in pending}
        return (
            {r.id: vec for r, vec in zip(both, vectors, strict=True)},
            {r.id: keyword_terms(r, extra.get(r.id, "")) for r in both},
            embedded,
        )

    def wake_queue(self) -> None:
        """Tell the background queue (if any) that records may wait for it."""
        if self.deferred is not None:
            self.deferred()

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
        facts are resolved as if said at the message's time. New content is stored even
        when the embedder or extractor cannot answer (marked pending, as :meth:`add`
        does), and what a slower reader derived from the old words meanwhile (a
        concurrent :meth:`extract_facts`, :meth:`reindex` or :meth:`maintain`) is
        discarded. New content and metadata are redacted as :meth:`add` redacts them (``Memory(privacy=...)``); the
        ``"_redacted"`` report keeps the part of what is not changed.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: bad values, nothing to change, the new content duplicates
                another memory in the same scope, or new content for the sentence record
                of a fact (state the change as a message, or delete the fact's record).
            EmbedderError: new content, and the embedder answered wrongly
                (:func:`~mnemolayer.embed.base.check_vectors`); nothing is changed. An
                embedder that could not answer (it raised anything else) leaves the new
                content stored with its embedding pending.
        """
        old = get_record(self.store, memory_id, user_id)
        if content is None and metadata is None and importance is None:
            raise ValidationError(None, "nothing to update: give content, metadata or importance")
        changes: dict[str, Any] = {"updated_at": self.clock()}
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
            keep = [f for f in old.flags if f == "candidate"]
            changes["flags"] = keep + detect(changes["content"])
            changes["content_hash"] = message_hash(
                changes["content"], old.agent_id, old.session_id, old.kind.value,
                old.speaker or old.role, session_only=old.session_only,
                source=old.source if old.source != default_source(old.role) else None,
            )  # fmt: skip
        if importance is not None:
            changes["importance"] = v.importance(importance)
        new = old.model_copy(update=changes)
        self.guard.require()
        if content is not None:
            fact = self.semantic.graph.fact_by_memory_id(old.user_id, old.id)
            if fact is not None:
                raise ValidationError(
                    "content",
                    f"memory {old.id} is the sentence of fact {fact.id} ({fact.predicate}); "
                    "add the change as a message (the fact is then superseded) or delete it",
                )
        now = changes["updated_at"]
        pending = self.prepare([new], now) if content is not None else []
        vec_of: dict[str, Any] = {}
        terms: dict[str, str] = {}
        if content is not None:  # the new words' enrichment replaces the old words'
            vec_of, terms, embedded = self.index([new], pending)
            new = with_pending(
                new, embedding=not embedded, extraction=any(p.failed for p in pending)
            )

        def write(c: Txn) -> None:
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
        self.wake_queue()  # new words, when embedding is left to the queue
        return self.store.as_stored(new)

    def delete(self, memory_id: str, *, user_id: str | None = None) -> None:
        """Delete one memory from the records and every index; a ``DELETE`` history event
        stays for audit (until :meth:`delete_all` for its user), and a tombstone of its
        message (a keyed hash of its caller message id, content and scope; no text), so
        that adding the same message again is skipped (:meth:`add`, ``skipped``).

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
        """
        old = get_record(self.store, memory_id, user_id)

        now = self.clock()

        def write(c: Txn) -> None:
            self.store.bury(c, [old], now)  # so that a replay of the message stays deleted
            self.store.delete_ids(c, [old.id])
            self.store.add_history(c, old.id, old.user_id, "DELETE", old, None, now)
            self.semantic.forget(c, old.user_id, [old.id], now)

        self.store.transact(write)
