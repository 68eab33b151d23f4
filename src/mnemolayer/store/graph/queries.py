"""Fact reads: current facts and timelines for conflict resolution, a user's facts as of
a time, facts by the memories they came from, and what retrieval and mining need."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemolayer.models import Fact, to_utc
from mnemolayer.store.graph.base import (
    _CHUNK,
    _FACT_COLUMNS,
    _FACT_ORDER,
    _chunks,
    _marks,
    normalize_name,
)
from mnemolayer.store.graph.entities import GraphEntities
from mnemolayer.store.rows import from_iso, iso
from mnemolayer.store.txn import Txn

__all__ = ["GraphQueries"]


class GraphQueries(GraphEntities):
    """Reads of facts."""

    def current_facts(
        self,
        c_or_none: Txn | None,
        user_id: str,
        *,
        subject_id: str | None = None,
        predicate: str | None = None,
        object_norm: str | None = None,
    ) -> list[Fact]:
        """The user's current facts (``valid_to`` unset), optionally of one subject
        entity, one predicate, and one object (compared by :func:`normalize_name`), in
        valid-time order."""
        where = ["f.user_id = ?", "f.valid_to IS NULL"]
        params: list[Any] = [user_id]
        if subject_id is not None:
            where.append("f.subject_id = ?")
            params.append(subject_id)
        if predicate is not None:
            where.append("f.predicate = ?")
            params.append(predicate)
        if object_norm is not None:
            where.append("f.object_norm = ?")
            params.append(self._key(user_id, normalize_name(object_norm)))
        return self._select_facts(c_or_none, " AND ".join(where), params)

    def subject_facts(
        self,
        c_or_none: Txn | None,
        user_id: str,
        subject_id: str,
        predicates: Sequence[str],
        *,
        object_norm: str | None = None,
        object_id: str | None = None,
    ) -> list[Fact]:
        """Every fact, current or closed, of one subject with one of ``predicates`` (and,
        when given, whose object has normalised form ``object_norm`` or is entity
        ``object_id``), in valid-time order: the timeline conflict resolution works on."""
        where = f"f.user_id = ? AND f.subject_id = ? AND f.predicate IN ({_marks(len(predicates))})"
        params: list[Any] = [user_id, subject_id, *predicates]
        if object_norm is not None or object_id is not None:
            where += " AND (f.object_norm = ? OR (f.object_id IS NOT NULL AND f.object_id = ?))"
            params += [self._key(user_id, normalize_name(object_norm or "")), object_id]
        return self._select_facts(c_or_none, where, params)

    def facts(
        self,
        user_id: str,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        as_of: datetime | None = None,
        include_history: bool = False,
    ) -> list[Fact]:
        """A user's facts, ordered by ``valid_from`` then ``created_at``.

        Args:
            subject: only facts about this entity (a name or alias; ``"user"`` for the
                user); an unknown name gives ``[]``.
            predicate: only this predicate.
            as_of: the facts that held at that moment (valid time):
                ``valid_from <= as_of < valid_to`` (an open ``valid_to`` never ends). A
                naive datetime is taken as UTC.
            include_history: closed facts too. With ``as_of``: every fact that had
                started by ``as_of``, ended or not.

        Default (neither): the current facts only.

        Raises:
            ValidationError: ``as_of`` is not a time (names ``as_of``).
        """
        where = ["f.user_id = ?"]
        params: list[Any] = [user_id]
        if subject is not None:
            entity = self.entity(user_id, subject)
            if entity is None:
                return []
            where.append("f.subject_id = ?")
            params.append(entity.id)
        if predicate is not None:
            where.append("f.predicate = ?")
            params.append(predicate)
        if as_of is not None:
            moment = iso(to_utc(as_of, "as_of"))
            where.append("f.valid_from <= ?")
            params.append(moment)
            if not include_history:
                where.append("(f.valid_to IS NULL OR f.valid_to > ?)")
                params.append(moment)
        elif not include_history:
            where.append("f.valid_to IS NULL")
        return self._select_facts(None, " AND ".join(where), params)

    def facts_for_memories(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, list[Fact]]:
        """The facts extracted from each of ``memory_ids`` (ids in their ``source_ids``),
        current and closed (check :attr:`Fact.current`), in valid-time order; ids that
        gave no fact are absent."""
        out: dict[str, list[Fact]] = {}
        ids = list(dict.fromkeys(memory_ids))
        for part in _chunks(ids):
            rows = self.store.read(
                f"SELECT s.source_id, {_FACT_COLUMNS} FROM fact_sources s "
                "JOIN facts f ON f.id = s.fact_id JOIN entities e ON e.id = f.subject_id "
                f"WHERE s.user_id = ? AND s.source_id IN ({_marks(len(part))}) "
                f"ORDER BY {_FACT_ORDER}",
                [user_id, *part],
            )
            for row in rows:
                out.setdefault(row[0], []).append(self._fact(row[1:]))
        return out

    def fact_by_memory_id(self, user_id: str, memory_id: str) -> Fact | None:
        """The fact whose sentence record is ``memory_id`` (see :meth:`set_memory_id`)."""
        return self.facts_by_memory_ids(user_id, [memory_id]).get(memory_id)

    def facts_by_memory_ids(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, Fact]:
        """``{memory_id: fact}`` for the semantic records among ``memory_ids`` that carry
        a fact."""
        out: dict[str, Fact] = {}
        ids = list(dict.fromkeys(memory_ids))
        for part in _chunks(ids):
            for fact in self._select_facts(
                None, f"f.user_id = ? AND f.memory_id IN ({_marks(len(part))})", [user_id, *part]
            ):
                if fact.memory_id is not None:
                    out[fact.memory_id] = fact
        return out

    def export_facts(self, user_id: str | None) -> list[Fact]:
        """Every fact, closed ones included, of one user or of every user."""
        where, params = ("f.user_id = ?", [user_id]) if user_id is not None else ("1", [])
        return self._select_facts(None, where, params)

    def stated_times(self, user_id: str | None) -> dict[str, dict[str, datetime]]:
        """When each source stated each fact, of one user or of every user (``None``):
        ``{fact_id: {source_id: stated_at}}`` (aware UTC; sources without a time are
        absent)."""
        where, params = ("user_id = ?", [user_id]) if user_id is not None else ("1", [])
        out: dict[str, dict[str, datetime]] = {}
        for fact_id, source, at in self._rows(
            None, f"SELECT fact_id, source_id, stated_at FROM fact_sources WHERE {where}", params
        ):
            when = from_iso(at)
            if when is not None:
                out.setdefault(str(fact_id), {})[str(source)] = when
        return out

    def current_fact_rowids(self, user_id: str, entity_ids: Sequence[str], limit: int) -> list[int]:
        """Store rowids of the sentence records of the current facts about (or pointing
        at) ``entity_ids``, newest first, at most ``limit``."""
        if not entity_ids:
            return []
        part = list(dict.fromkeys(entity_ids))[: _CHUNK // 2]
        marks = _marks(len(part))
        rows = self.store.read(
            "SELECT m.rowid FROM facts f JOIN memories m ON m.user_id = f.user_id "
            "AND m.id = f.memory_id "
            f"WHERE f.user_id = ? AND f.valid_to IS NULL AND (f.subject_id IN ({marks}) "
            f"OR f.object_id IN ({marks})) ORDER BY f.valid_from DESC, f.rowid DESC LIMIT ?",
            [user_id, *part, *part, limit],
        )
        return [int(r[0]) for r in rows]

    def fact_topics(self, user_id: str, entity_ids: Sequence[str]) -> list[tuple[str, str, int]]:
        """``(entity id, predicate, sentence record rowid)`` of every fact, current or
        not, whose subject or object is one of ``entity_ids`` (entity-centred expansion,
        :mod:`mnemolayer.retrieval.expand`)."""
        out: list[tuple[str, str, int]] = []
        for part in _chunks(list(dict.fromkeys(entity_ids))[: _CHUNK // 2]):
            marks = _marks(len(part))
            rows = self.store.read(
                "SELECT f.subject_id, f.object_id, f.predicate, m.rowid FROM facts f "
                "JOIN memories m ON m.user_id = f.user_id AND m.id = f.memory_id "
                "WHERE f.user_id = ? AND "
                f"(f.subject_id IN ({marks}) OR f.object_id IN ({marks}))",
                [user_id, *part, *part],
            )
            wanted = set(part)
            for subject, obj, predicate, rowid in rows:
                for entity in (subject, obj):
                    if entity in wanted:
                        out.append((str(entity), str(predicate), int(rowid)))
        return out

    def unmined_messages(self, user_id: str | None) -> list[tuple[str, str]]:
        """``(user_id, memory id)`` of the episodic user messages no fact cites yet, in
        conversation time order per user (what :meth:`Memory.extract_facts` mines)."""
        where, params = ("m.user_id = ?", [user_id]) if user_id is not None else ("1", [])
        rows = self.store.read(
            "SELECT m.user_id, m.id FROM memories m WHERE "
            f"{where} AND m.kind = 'episodic' AND m.role = 'user' AND NOT EXISTS "
            "(SELECT 1 FROM fact_sources s WHERE s.user_id = m.user_id AND s.source_id = m.id) "
            "ORDER BY m.user_id, m.occurred_at, m.rowid",
            params,
        )
        return [(str(u), str(i)) for u, i in rows]
