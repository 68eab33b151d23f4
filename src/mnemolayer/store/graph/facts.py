"""Fact writes: storing a fact with its provenance, closing, reinforcing and splitting
validity intervals (what conflict resolution does, :mod:`mnemolayer.lifecycle.conflicts`),
and importing exported facts."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime

from mnemolayer.errors import ValidationError
from mnemolayer.models import Fact
from mnemolayer.store.graph.base import normalize_name
from mnemolayer.store.graph.entities import GraphEntities
from mnemolayer.store.rows import iso
from mnemolayer.store.txn import Txn

__all__ = ["GraphFacts"]


class GraphFacts(GraphEntities):
    """Writes of bi-temporal facts."""

    def insert_fact(
        self,
        c: Txn,
        fact: Fact,
        *,
        stated_at: Mapping[str, datetime] | None = None,
    ) -> None:
        """Store ``fact`` as given (its ``subject`` name is not stored: ``subject_id``
        is the key) and index its provenance.

        ``stated_at`` gives, per source id, the time that source said the fact held
        from; sources not in it stated ``fact.valid_from``.

        Raises:
            ValidationError: the object is empty once normalised (``object``), the
                confidence is not a number in [0, 1] (``confidence``), or the validity
                interval ends before it starts (``valid_to``).
        """
        object_norm = normalize_name(fact.object)
        if not object_norm:
            raise ValidationError("object", "must not be empty")
        if not (math.isfinite(fact.confidence) and 0.0 <= fact.confidence <= 1.0):
            raise ValidationError("confidence", f"must be in [0, 1], got {fact.confidence}")
        if fact.valid_to is not None and fact.valid_to < fact.valid_from:
            raise ValidationError("valid_to", "must not be before valid_from")
        c.execute(
            "INSERT INTO facts (id, user_id, subject_id, predicate, object, object_norm, "
            "object_id, object_type, date, valid_from, valid_to, created_at, expired_at, "
            "superseded_by, confidence, source_ids, speaker, memory_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact.id, fact.user_id, fact.subject_id, fact.predicate,
                self._seal(fact.user_id, "facts.object", fact.id, fact.object),
                self._key(fact.user_id, object_norm, create=True), fact.object_id,
                fact.object_type,
                fact.date.isoformat() if fact.date else None, iso(fact.valid_from),
                iso(fact.valid_to), iso(fact.created_at), iso(fact.expired_at),
                fact.superseded_by, float(fact.confidence),
                json.dumps(list(dict.fromkeys(fact.source_ids)), ensure_ascii=False),
                self._seal(fact.user_id, "facts.speaker", fact.id, fact.speaker), fact.memory_id,
            ),
        )  # fmt: skip
        when = stated_at or {}
        c.executemany(
            "INSERT INTO fact_sources (user_id, source_id, fact_id, stated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [
                (fact.user_id, s, fact.id, iso(when.get(s, fact.valid_from)))
                for s in dict.fromkeys(fact.source_ids)
            ],
        )

    def close_fact(
        self,
        c: Txn,
        fact_id: str,
        *,
        valid_to: datetime,
        superseded_by: str | None,
        expired_at: datetime,
    ) -> None:
        """End a fact's validity at ``valid_to`` (valid time), recorded at ``expired_at``
        (transaction time), replaced by fact ``superseded_by`` (``None``: retracted).

        Also used to move the end of an already closed fact earlier when an older fact
        arrives late (the caller then passes the original ``expired_at``).

        Raises:
            ValidationError: ``valid_to`` is before the fact's ``valid_from``
                (``valid_to``).
        """
        row = c.execute("SELECT valid_from FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is not None and str(iso(valid_to)) < row[0]:
            raise ValidationError("valid_to", "must not be before the fact's valid_from")
        c.execute(
            "UPDATE facts SET valid_to = ?, superseded_by = ?, expired_at = ? WHERE id = ?",
            (iso(valid_to), superseded_by, iso(expired_at), fact_id),
        )

    def set_valid_from(self, c: Txn, fact_id: str, valid_from: datetime) -> None:
        """Move the start of a fact's validity (a late message shows it held earlier)."""
        c.execute("UPDATE facts SET valid_from = ? WHERE id = ?", (iso(valid_from), fact_id))

    def set_stated_at(self, c: Txn, fact: Fact, stated: Mapping[str, datetime]) -> None:
        """Record when each source of ``fact`` stated it (``{source_id: time}``, sources
        the fact does not cite are left alone): an import restores the provenance that
        :meth:`~mnemolayer.store.graph.queries.GraphQueries.stated_times` exported."""
        c.executemany(
            "UPDATE fact_sources SET stated_at = ? "
            "WHERE user_id = ? AND fact_id = ? AND source_id = ?",
            [(iso(at), fact.user_id, fact.id, source) for source, at in stated.items()],
        )

    def reinforce(
        self,
        c: Txn,
        fact_id: str,
        source_id: str,
        confidence: float,
        *,
        stated_at: datetime | None = None,
    ) -> Fact | None:
        """Record that memory ``source_id`` states fact ``fact_id`` again.

        The source is appended to ``source_ids`` once (a source already listed changes
        nothing); the confidence becomes the larger of the stored one and ``confidence``
        (repeating a statement does not make it more certain than its most certain
        wording, and the result stays independent of the order of arrival).
        ``stated_at`` is when the source said the fact held (default: its
        ``valid_from``); see :meth:`statements`.

        Returns:
            The fact as updated, or ``None`` if it does not exist.
        """
        fact = self.get_fact(c, fact_id)
        if fact is None:
            return None
        sources = fact.source_ids if source_id in fact.source_ids else [*fact.source_ids, source_id]
        conf = max(fact.confidence, min(max(float(confidence), 0.0), 1.0))
        if not math.isfinite(conf):
            conf = fact.confidence
        c.execute(
            "UPDATE facts SET source_ids = ?, confidence = ? WHERE id = ?",
            (json.dumps(sources, ensure_ascii=False), conf, fact_id),
        )
        c.execute(
            "INSERT INTO fact_sources (user_id, source_id, fact_id, stated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (fact.user_id, source_id, fact_id, iso(stated_at or fact.valid_from)),
        )
        return fact.model_copy(update={"source_ids": sources, "confidence": conf})

    def statements(
        self, c_or_none: Txn | None, user_id: str, fact_id: str
    ) -> list[tuple[str, datetime]]:
        """``(source id, time it said the fact held from)`` for each source of a fact,
        earliest first. A fact restated after a conflicting fact's time still held then
        (see :meth:`split_fact`)."""
        rows = self._rows(
            c_or_none,
            "SELECT source_id, stated_at FROM fact_sources WHERE user_id = ? AND fact_id = ? "
            "ORDER BY stated_at, source_id",
            (user_id, fact_id),
        )
        return [(str(r[0]), datetime.fromisoformat(r[1])) for r in rows]

    def split_fact(
        self,
        c: Txn,
        fact_id: str,
        *,
        at: datetime,
        early_id: str,
        superseded_by: str | None,
        expired_at: datetime,
    ) -> tuple[Fact | None, Fact] | None:
        """Cut a fact's interval at ``at`` when some of its sources state it for a later
        time: the fact was interrupted at ``at`` and stated again afterwards.

        The sources that stated it for ``at`` or before move to a new, closed fact
        ``early_id`` (same content, ``valid_from`` kept, ``valid_to`` = ``at``, replaced
        by ``superseded_by`` or, when ``None``, retracted, recorded as closed at
        ``expired_at``, no sentence record). The fact itself keeps its id, sentence
        record, end and successor, the later sources, and now starts at the first of
        their statements.

        Returns:
            ``(early part or None when no source stated it by then, the fact as
            updated)``; ``None`` (nothing changed) when no source states it after ``at``
            or the fact does not exist.
        """
        fact = self.fact(c, fact_id)
        if fact is None:
            return None
        said = self.statements(c, fact.user_id, fact_id)
        after = [(src, t) for src, t in said if t > at]
        before = [(src, t) for src, t in said if t <= at]
        if not after:
            return None
        early: Fact | None = None
        if before:
            early = fact.model_copy(
                update={
                    "id": early_id,
                    "valid_to": max(at, fact.valid_from),
                    "superseded_by": superseded_by,
                    "expired_at": expired_at,
                    "source_ids": [src for src, _ in before],
                    "memory_id": None,
                }
            )
            c.executemany(
                "DELETE FROM fact_sources WHERE user_id = ? AND source_id = ? AND fact_id = ?",
                [(fact.user_id, src, fact_id) for src, _ in before],
            )
            self.insert_fact(c, early, stated_at=dict(before))
        rest = fact.model_copy(
            update={"valid_from": after[0][1], "source_ids": [src for src, _ in after]}
        )
        c.execute(
            "UPDATE facts SET valid_from = ?, source_ids = ? WHERE id = ?",
            (iso(rest.valid_from), json.dumps(rest.source_ids, ensure_ascii=False), fact_id),
        )
        return early, rest

    def set_memory_id(self, c: Txn, fact_id: str, memory_id: str | None) -> None:
        """Link a fact to the semantic memory record that carries its sentence."""
        c.execute("UPDATE facts SET memory_id = ? WHERE id = ?", (memory_id, fact_id))

    def fact(self, c_or_none: Txn | None, fact_id: str) -> Fact | None:
        """The fact with id ``fact_id``, or ``None``."""
        found = self._select_facts(c_or_none, "f.id = ?", (fact_id,))
        return found[0] if found else None

    get_fact = fact

    def import_fact(self, c: Txn, fact: Fact) -> bool:
        """Insert an exported fact as it was (validity, provenance, links).

        Returns ``False`` when its id exists already.

        Raises:
            ValidationError: its subject (or object) entity is not the same user's
                (``subject_id`` / ``object_id``), or the values are invalid.
        """
        if c.execute("SELECT 1 FROM facts WHERE id = ?", (fact.id,)).fetchone():
            return False
        for column, entity_id in (("subject_id", fact.subject_id), ("object_id", fact.object_id)):
            if entity_id is None:
                continue
            owner = c.execute("SELECT user_id FROM entities WHERE id = ?", (entity_id,)).fetchone()
            if owner is None or owner[0] != fact.user_id:
                raise ValidationError(column, f"no entity {entity_id} of user {fact.user_id!r}")
        self.insert_fact(c, fact)
        return True
