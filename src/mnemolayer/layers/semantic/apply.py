"""Semantic memory inside the write path: extract → resolve → store facts and their records.

Every user message is run through the configured :class:`~.types.Extractor` before it is
stored (outside the write lock, like embedding). Inside the same transaction as the
message itself, :func:`~.resolve.resolve` turns the extracted triples into graph facts
(closing the ones they supersede), and each new fact also becomes a ``semantic``
:class:`~mnemolayer.models.MemoryRecord` whose text ("Lena lives in Porto") is embedded and
keyword-indexed. That record is what search ranks; its ``source_ids`` point at the
message, so a fact is also an extra retrieval key for the turn it came from (fact-
augmented keys, Wu et al., "LongMemEval", arXiv:2410.10813, §5).

When a fact is closed its record gets ``superseded_by`` (the newer fact's record, or the
retracting message) and ``valid_to``, and a ``SUPERSEDE`` / ``RETRACT`` history event;
nothing is deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolayer.protocols import Txn

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from mnemolayer.extract import predicates
from mnemolayer.extract.base import SELF, ExtractedFact, Extractor
from mnemolayer.extract.rules.extractor import detect_language
from mnemolayer.lifecycle.conflicts import resolve
from mnemolayer.models import Fact, MemoryKind, MemoryRecord, content_hash, new_id, normalize_text
from mnemolayer.store.base import SQLStore
from mnemolayer.store.graph import GraphStore
from mnemolayer.text.speakers import strip_speaker

__all__ = ["Pending", "SemanticLayer", "fact_text"]

log = logging.getLogger(__name__)

#: Roles whose messages are mined for facts: what the user (or a named human speaker)
#: says. Assistant, system and tool messages are not statements about the user.
EXTRACT_ROLES = frozenset({"user"})
#: Roles mined only for what a *named* speaker says of themself: an assistant message
#: with a ``name`` is a participant speaking (the other person of a two-person chat
#: passed as role/name dicts, or an agent with a name); its first-person facts are the
#: speaker's, and what it says of the user or of others is not taken as stated.
SELF_ONLY_ROLES = frozenset({"assistant"})

_IMPORTANCE = {"identity": 0.7, "relationship": 0.7, "preference": 0.65, "plan": 0.6}


def _subject_label(subject: str, lang: str) -> str:
    if subject == SELF:
        return "用户" if lang == "zh" else "The user"
    return subject


def fact_text(subject: str, predicate: str, obj: str, when: datetime | None, lang: str) -> str:
    """A fact as one sentence in the message's language, with its date when it has one:
    ``"Caroline attended LGBTQ support group (7 May 2023)"``."""
    text = predicates.render(_subject_label(subject, lang), predicate, obj, lang=lang)
    if when is not None:
        if lang == "zh":
            text += f"（{when.year}年{when.month}月{when.day}日）"
        else:
            text += f" ({when.day} {when.strftime('%B %Y')})"
    return text


def _key(predicate: str, obj: str) -> tuple[str, str]:
    return predicate, normalize_text(obj).casefold()


@dataclass
class Pending:
    """One message's extraction, prepared outside the write lock. ``failed``: the
    extractor raised on it (no facts; the write path marks its extraction pending)."""

    turn: MemoryRecord
    facts: list[ExtractedFact]
    drafts: dict[tuple[str, str], MemoryRecord] = field(default_factory=dict)
    failed: bool = False

    def keyword_text(self) -> str:
        """The facts' sentences, added to the message's keyword index (resolved names and
        absolute dates become searchable words)."""
        return " ".join(d.content for d in self.drafts.values())


class SemanticLayer:
    """Facts for one store. ``extractor=None`` disables extraction (facts can still be
    read, and :meth:`Memory.learn_from_feedback` still records them)."""

    def __init__(self, store: SQLStore, extractor: Extractor | None) -> None:
        self.store = store
        self.graph = GraphStore(store)
        self.extractor = extractor

    # -- write path ----------------------------------------------------------------------

    def prepare(
        self,
        turns: Sequence[MemoryRecord],
        now: datetime,
        given: dict[str, list[ExtractedFact]] | None = None,
    ) -> list[Pending]:
        """Extract facts from the messages worth mining and draft a semantic record for
        each stated (non-negated) fact; ``given`` maps record ids to facts known already
        (no extraction for those). A message the extractor raises on gets a
        :class:`Pending` with ``failed`` set. Pure: touches no storage."""
        out: list[Pending] = []
        for turn in turns:
            if given and turn.id in given:
                if given[turn.id]:
                    out.append(self.draft(turn, given[turn.id], now))
                continue
            if self.extractor is None:
                continue
            self_only = turn.role in SELF_ONLY_ROLES and bool(turn.speaker)
            if turn.kind != MemoryKind.EPISODIC or not (turn.role in EXTRACT_ROLES or self_only):
                continue
            try:
                extraction = self.extractor.extract(
                    strip_speaker(turn.content, turn.speaker),
                    speaker=turn.speaker,
                    timestamp=turn.occurred_at,
                )
            except Exception:  # an extractor's failure must not lose the message
                log.warning(
                    "extractor %r failed; storing the message with its extraction pending",
                    getattr(self.extractor, "name", self.extractor),
                    exc_info=True,
                )
                out.append(Pending(turn=turn, facts=[], failed=True))
                continue
            facts = [
                f
                for f in extraction.facts
                if f.predicate in predicates.PREDICATES
                and (not self_only or f.subject == turn.speaker)
            ]
            if facts:
                out.append(self.draft(turn, facts, now))
        return out

    def draft(self, turn: MemoryRecord, facts: list[ExtractedFact], now: datetime) -> Pending:
        """A :class:`Pending` with one draft semantic record per stated fact of ``turn``."""
        pending = Pending(turn=turn, facts=facts)
        lang = detect_language(turn.content)
        for f in facts:
            if f.negated or _key(f.predicate, f.object) in pending.drafts:
                continue
            when = (
                datetime(f.date.year, f.date.month, f.date.day, tzinfo=turn.occurred_at.tzinfo)
                if f.date is not None and turn.occurred_at is not None
                else None
            )
            rid = new_id()
            content = fact_text(f.subject, f.predicate, f.object, when, lang)
            category = predicates.PREDICATES[f.predicate].category
            pending.drafts[_key(f.predicate, f.object)] = MemoryRecord(
                id=rid, user_id=turn.user_id, agent_id=turn.agent_id, kind=MemoryKind.SEMANTIC,
                content=content,
                speaker=turn.speaker, importance=_IMPORTANCE.get(category, 0.5),
                created_at=now, updated_at=now, occurred_at=when or turn.occurred_at,
                valid_from=when or turn.occurred_at, source_ids=[turn.id],
                entities=[_subject_label(f.subject, lang), f.object],
                # Keyed by its own id: the same sentence may be stated, retracted and
                # stated again, and each statement is its own fact.
                content_hash=content_hash(content, turn.agent_id, None, "semantic", rid),
                embedding_model=turn.embedding_model, source=turn.source,
            )  # fmt: skip
        return pending

    def apply(
        self,
        c: Txn,
        pending: Sequence[Pending],
        inserted: set[str],
        vectors: dict[str, np.ndarray],
        terms: dict[str, str],
        now: datetime,
    ) -> list[Fact]:
        """Resolve and store the facts of the messages that were actually inserted (ids
        in ``inserted``), inside ``c``'s transaction. Returns the facts added."""
        added_all: list[Fact] = []
        for p in pending:
            if p.failed or p.turn.id not in inserted:
                continue  # a concurrent writer stored the same message: its facts are there
            result = resolve(
                self.graph, c, p.turn.user_id, p.facts, source_id=p.turn.id,
                speaker=p.turn.speaker, observed_at=p.turn.occurred_at or now, now=now,
                trusted=p.turn.trusted,
            )  # fmt: skip
            candidates = {f.id for f in result.candidates}
            records: dict[str, MemoryRecord] = {}  # fact id → its new sentence record
            for fact in result.added:
                draft = p.drafts.get(_key(fact.predicate, fact.object))
                if draft is None:
                    continue
                rec = draft.model_copy(update={"valid_from": fact.valid_from})
                if fact.id in candidates:  # an untrusted contradiction (conflicts, rule 9)
                    rec = rec.model_copy(update={"flags": [*rec.flags, "candidate"]})
                if self.store.insert(c, rec, terms[rec.id], vectors[rec.id]) is not None:
                    self.graph.set_memory_id(c, fact.id, rec.id)
                    records[fact.id] = rec
                    # A late-arriving old fact is already closed: its record says so.
                    self.sync_record(
                        c, fact.model_copy(update={"memory_id": rec.id}), retracted_by=None, now=now
                    )
                added_all.append(fact)
            for old, newer_fact in result.closed:
                before = self.sync_record(c, old, retracted_by=p.turn.id, now=now)
                if before is not None and before.superseded_by is None:  # it was current
                    after = records.get(newer_fact.id) if newer_fact is not None else None
                    self.store.add_history(
                        c, before.id, before.user_id,
                        "SUPERSEDE" if newer_fact is not None else "RETRACT",
                        before, after or p.turn, now,
                    )  # fmt: skip
            for fact in result.reinforced:
                if fact.memory_id is not None:
                    self.store.add_source(c, fact.memory_id, p.turn.id)
                    self.sync_record(c, fact, retracted_by=None, now=now)
            for _earlier, fact in result.split:
                self.sync_record(c, fact, retracted_by=None, now=now)
        return added_all

    def sync_record(
        self, c: Txn, fact: Fact, *, retracted_by: str | None, now: datetime
    ) -> MemoryRecord | None:
        """Make a fact's sentence record carry the fact's validity: ``valid_from``,
        ``valid_to`` and ``superseded_by`` (the superseding fact's record; for a closed
        fact with no successor, ``retracted_by``, the retracting message). Returns the
        record as it was before, or ``None`` when the fact has no record."""
        if fact.memory_id is None:
            return None
        superseded_by: str | None = None
        if fact.valid_to is not None:
            newer = self.graph.fact(c, fact.superseded_by) if fact.superseded_by else None
            superseded_by = (newer.memory_id if newer is not None else None) or retracted_by
            superseded_by = superseded_by or fact.superseded_by or "retracted"
        return self.store.set_validity(
            c, fact.memory_id, valid_from=fact.valid_from, valid_to=fact.valid_to,
            superseded_by=superseded_by, at=now,
        )  # fmt: skip

    def forget(self, c: Txn, user_id: str, memory_ids: Sequence[str], now: datetime) -> list[str]:
        """After ``memory_ids`` were deleted (inside ``c``'s transaction): drop them from
        facts' provenance, delete facts left without any source together with their
        records, and delete the facts whose own records were deleted.

        Returns:
            Ids of the semantic records deleted here (each gets a ``DELETE`` event).
        """
        if not memory_ids:
            return []
        gone = set(memory_ids)
        own = self.graph.delete_facts_by_memory(c, user_id, list(gone))
        removal = self.graph.remove_sources_detailed(c, user_id, list(gone))
        for fact in removal.relinked:  # facts a deleted fact had closed: reopened/relinked
            self.sync_record(c, fact, retracted_by=None, now=now)
        records = [
            f.memory_id for f in [*own, *removal.deleted] if f.memory_id and f.memory_id not in gone
        ]
        if records:
            self.store.delete_ids(c, records, user_id=user_id)
            for rid in records:
                self.store.add_history(c, rid, user_id, "DELETE", None, None, now)
        return records
