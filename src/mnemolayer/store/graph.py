"""The knowledge graph of semantic memory, stored in the SQLite file next to the records.

Four tables (schema migration 3), every row keyed by ``user_id`` first:

- ``entities``: one row per person, place, organisation, pet or thing a user's memory
  knows, unique by normalised name (:func:`normalize_name`) within the user.
- ``entity_aliases``: other names that resolve to an entity ("Lena" for the user after
  "my name is Lena"); an alias belongs to at most one entity of a user.
- ``facts``: subject–predicate–object triples with bi-temporal validity: ``valid_from`` /
  ``valid_to`` (when it held in the world) and ``created_at`` / ``expired_at`` (when the
  store recorded it and when it stopped being current). ``object_id`` is set when the
  object is itself an entity; those facts are the edges that :meth:`GraphStore.neighbors`
  walks.
- ``fact_sources`` mirrors each fact's ``source_ids`` as ``(user_id, source_id, fact_id,
  stated_at)`` rows, so "which facts came from these memories" is an index lookup rather
  than a scan of every fact's JSON, and each source keeps the time it said the fact held
  from (which places facts that arrive out of order).

Facts are never rewritten to say something else: conflict resolution
(:mod:`mnemolayer.lifecycle.conflicts`) only moves the ends of validity intervals (or cuts
one in two) and links the fact that replaced them. They are deleted only when every memory they were extracted from is
deleted (:meth:`GraphStore.remove_sources`) or the whole user is (:meth:`delete_user`).

Reads go through the store's read path (a shared lock, retried while another process
writes); writes take the connection ``c`` of an open ``store.transact(fn)`` transaction,
so records and facts change together or not at all. Times are stored as fixed-width UTC
ISO-8601 strings (see :func:`mnemolayer.store.sqlite.engine.iso`), so text order is time
order.
"""

from __future__ import annotations

import json
import math
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import SELF
from mnemolayer.models import Entity, Fact, new_id, to_utc
from mnemolayer.store.sqlite.engine import from_iso, iso
from mnemolayer.store.sqlite.store import SQLiteStore

__all__ = ["MAX_DEPTH", "GraphStore", "SourceRemoval", "normalize_name"]

#: The deepest traversal :meth:`GraphStore.neighbors` allows.
MAX_DEPTH = 5

# Entity types that carry no information; a specific type given later replaces them.
_GENERIC_TYPES = frozenset({"", "thing", "unknown"})
# Punctuation that is part of a name when it ends one ("C#", "AT&T", "100%", "@home").
_KEEP_PUNCT = frozenset("#%&@*")
_CHUNK = 400  # ids per IN (...) list, well under SQLite's parameter limit
# SQLite 3.34 (2020) allows several recursive SELECTs in one CTE (see neighbors).
_MULTI_ARM_CTE = sqlite3.sqlite_version_info >= (3, 34, 0)

_FACT_COLUMNS = (
    "f.id, f.user_id, e.name, f.subject_id, f.predicate, f.object, f.object_id, "
    "f.object_type, f.date, f.valid_from, f.valid_to, f.created_at, f.expired_at, "
    "f.superseded_by, f.confidence, f.source_ids, f.speaker, f.memory_id"
)
_FACT_FROM = "facts f JOIN entities e ON e.id = f.subject_id"
_FACT_ORDER = "f.valid_from, f.created_at, f.rowid"
_ENTITY_COLUMNS = "id, user_id, name, type, created_at, updated_at"


def _strip_char(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") and ch not in _KEEP_PUNCT


def normalize_name(text: str) -> str:
    """The key two names must share to be the same entity (or two objects the same value).

    NFKC (full-width and compatibility forms fold: ``"Ｌｅｎａ"`` → ``"Lena"``), then
    case-folding (``"STRASSE"`` and ``"Straße"`` meet), whitespace runs collapsed to one
    space, and punctuation stripped from both ends (quotes, brackets, ``。``, ``,``…, but
    not ``#%&@*``, which end names such as ``"C#"``). Returns ``""`` for text with nothing
    else in it. Idempotent: ``normalize_name(normalize_name(x)) == normalize_name(x)``.
    """
    # NFKC again after folding: folding can leave text that NFKC recomposes ("ǰ").
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = " ".join(folded.split())
    start, end = 0, len(text)
    while start < end and (_strip_char(text[start]) or text[start].isspace()):
        start += 1
    while end > start and (_strip_char(text[end - 1]) or text[end - 1].isspace()):
        end -= 1
    return text[start:end]


_SELF_NORM = normalize_name(SELF)


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def _marks(n: int) -> str:
    return ",".join("?" * n)


@dataclass(slots=True)
class SourceRemoval:
    """What :meth:`GraphStore.delete_facts` (and so
    :meth:`GraphStore.remove_sources_detailed`) changed.

    Attributes:
        deleted: the facts deleted, as they were.
        relinked: facts that a deleted fact had closed, after taking over its end of
            validity and successor (a fact whose replacement was deleted is current
            again when that replacement was current).
        entities_removed: entities deleted because no fact mentions them any more.
    """

    deleted: list[Fact] = field(default_factory=list)
    relinked: list[Fact] = field(default_factory=list)
    entities_removed: int = 0


class GraphStore:
    """Entities, aliases and bi-temporal facts of every user, in a :class:`SQLiteStore`.

    Args:
        store: an open store (its schema includes migration 3).

    Write methods take ``c``, the connection of a transaction opened with
    ``store.transact(fn)``; they never commit. Read methods use the store's read path.
    Methods taking ``c_or_None`` read inside the transaction when given one (to see its
    uncommitted writes), else through the read path.
    """

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    # -- encryption (an encrypted store: mnemolayer.crypto) -----------------------------
    # Names, aliases, fact objects and speakers are sealed with the user's data key;
    # the normalised forms that rows are looked up by (entities.norm, entity_aliases.norm,
    # facts.object_norm) are keyed hashes, so equality look-ups still work in SQL.

    def _key(self, user_id: str, norm: str, *, create: bool = False) -> str:
        """A normalised name as stored: as is, or its keyed hash in an encrypted store
        (``create``: for a write, which may make the user's data key)."""
        crypto = self.store.crypto
        if crypto is None:
            return norm
        return crypto.keyed_hash(user_id, "graph.norm", norm, create=create)

    def _seal(self, user_id: str, field: str, row_id: str, text: str | None) -> str | None:
        crypto = self.store.crypto
        if crypto is None or text is None:
            return text
        return crypto.encrypt(user_id, field, row_id, text)

    def _open(self, user_id: str, field: str, row_id: str, value: str | None) -> str | None:
        crypto = self.store.crypto
        if crypto is None or value is None:
            return value
        return crypto.decrypt(user_id, field, row_id, value)

    # -- plumbing --------------------------------------------------------------------

    def _rows(
        self, c: sqlite3.Connection | None, sql: str, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        if c is not None:
            return c.execute(sql, params).fetchall()
        return self.store.read(sql, params)

    def _fact(self, row: Sequence[Any]) -> Fact:
        if self.store.crypto is not None:
            u = row[1]
            row = (
                *row[:2], self._open(u, "entities.name", row[3], row[2]), *row[3:5],
                self._open(u, "facts.object", row[0], row[5]), *row[6:16],
                self._open(u, "facts.speaker", row[0], row[16]), row[17],
            )  # fmt: skip
        return Fact.model_construct(
            id=row[0], user_id=row[1], subject=row[2], subject_id=row[3], predicate=row[4],
            object=row[5], object_id=row[6], object_type=row[7],
            date=date.fromisoformat(row[8]) if row[8] else None,
            valid_from=datetime.fromisoformat(row[9]), valid_to=from_iso(row[10]),
            created_at=datetime.fromisoformat(row[11]), expired_at=from_iso(row[12]),
            superseded_by=row[13], confidence=float(row[14]),
            source_ids=json.loads(row[15]), speaker=row[16], memory_id=row[17],
        )  # fmt: skip

    def _select_facts(
        self,
        c: sqlite3.Connection | None,
        where: str,
        params: Sequence[Any],
        *,
        order: str = _FACT_ORDER,
    ) -> list[Fact]:
        sql = f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {where} ORDER BY {order}"
        return [self._fact(r) for r in self._rows(c, sql, params)]

    def _entities_from_rows(
        self, c: sqlite3.Connection | None, rows: Sequence[Sequence[Any]]
    ) -> list[Entity]:
        if not rows:
            return []
        user_id = rows[0][1]
        ids = [r[0] for r in rows]
        aliases: dict[str, list[str]] = {}
        for part in _chunks(ids):
            for entity_id, alias, norm in self._rows(
                c,
                f"SELECT entity_id, alias, norm FROM entity_aliases WHERE user_id = ? "
                f"AND entity_id IN ({_marks(len(part))}) ORDER BY alias",
                [user_id, *part],
            ):
                text = self._open(user_id, "entity_aliases.alias", norm, alias)
                aliases.setdefault(entity_id, []).append(text or "")
        if self.store.crypto is not None:  # sealed aliases sort at random: sort the text
            for names in aliases.values():
                names.sort()
        return [
            Entity.model_construct(
                id=r[0],
                user_id=r[1],
                name=self._open(r[1], "entities.name", r[0], r[2]) or "",
                type=r[3],
                aliases=aliases.get(r[0], []),
                created_at=datetime.fromisoformat(r[4]),
                updated_at=datetime.fromisoformat(r[5]),
            )
            for r in rows
        ]

    def _find_entity(self, c: sqlite3.Connection | None, user_id: str, norm: str) -> Entity | None:
        """By normalised name, then by alias; the user's own entity only by name."""
        rows = self._rows(
            c, f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? AND norm = ?",
            (user_id, self._key(user_id, norm)),
        )  # fmt: skip
        if not rows and norm != _SELF_NORM:
            rows = self._rows(
                c,
                f"SELECT {', '.join('e.' + n.strip() for n in _ENTITY_COLUMNS.split(','))} "
                "FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                "WHERE a.user_id = ? AND a.norm = ?",
                (user_id, self._key(user_id, norm)),
            )
        found = self._entities_from_rows(c, rows)
        return found[0] if found else None

    # -- entities --------------------------------------------------------------------

    def resolve_entity(
        self,
        c: sqlite3.Connection | None,
        user_id: str,
        name: str,
        *,
        type: str | None = None,
        create: bool = True,
        now: datetime,
    ) -> Entity | None:
        """The user's entity called ``name`` (by normalised name, then alias), created
        when missing and ``create`` is true.

        :data:`~mnemolayer.extract.base.SELF` (``"user"``) is the user's own entity,
        named ``"user"`` with type ``"person"``; it is found by name only, never through
        another entity's alias. An existing entity of a generic type (``"thing"``) takes
        the more specific ``type`` given; a specific type is never overwritten.

        Args:
            c: the open transaction; may be ``None`` when ``create`` is false.
            type: the entity's type when known (``"person"``, ``"place"``…); a new
                entity without one is a ``"thing"``.
            now: the transaction time (``created_at`` / ``updated_at``).

        Returns:
            The entity, or ``None`` when it does not exist and ``create`` is false.

        Raises:
            ValidationError: ``name`` is empty once normalised (names ``name``), or
                ``create`` is true without a transaction.
        """
        norm = normalize_name(name)
        if not norm:
            raise ValidationError("name", "must contain a name (it is empty once normalised)")
        found = self._find_entity(c, user_id, norm)
        wanted = (type or "").strip()
        if found is not None:
            if c is not None and wanted and found.type in _GENERIC_TYPES and norm != _SELF_NORM:
                c.execute(
                    "UPDATE entities SET type = ?, updated_at = ? WHERE id = ?",
                    (wanted, iso(now), found.id),
                )
                found = found.model_copy(update={"type": wanted, "updated_at": now})
            return found
        if not create:
            return None
        if c is None:
            raise ValidationError("c", "creating an entity needs an open write transaction")
        is_self = norm == _SELF_NORM
        entity = Entity(
            id=new_id(),
            user_id=user_id,
            name=SELF if is_self else " ".join(name.split()),
            type="person" if is_self else (wanted or "thing"),
            aliases=[],
            created_at=now,
            updated_at=now,
        )
        c.execute(
            "INSERT INTO entities (id, user_id, name, norm, type, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entity.id, user_id, self._seal(user_id, "entities.name", entity.id, entity.name),
             self._key(user_id, norm, create=True), entity.type, iso(now), iso(now)),
        )  # fmt: skip
        return entity

    def create_entity(
        self, c: sqlite3.Connection, user_id: str, name: str, *, type: str, now: datetime
    ) -> Entity | None:
        """A new entity called ``name`` even when ``name`` is another entity's alias (a
        namesake); from then on the name resolves to it (names win over aliases).

        Returns ``None`` when an entity already has that name itself.
        """
        norm = normalize_name(name)
        if not norm or norm == _SELF_NORM:
            return None
        if c.execute(
            "SELECT 1 FROM entities WHERE user_id = ? AND norm = ?",
            (user_id, self._key(user_id, norm)),
        ).fetchone():
            return None
        entity = Entity(
            id=new_id(), user_id=user_id, name=" ".join(name.split()), type=type or "thing",
            aliases=[], created_at=now, updated_at=now,
        )  # fmt: skip
        c.execute(
            "INSERT INTO entities (id, user_id, name, norm, type, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entity.id, user_id, self._seal(user_id, "entities.name", entity.id, entity.name),
             self._key(user_id, norm, create=True), entity.type, iso(now), iso(now)),
        )  # fmt: skip
        return entity

    def add_alias(
        self, c: sqlite3.Connection, user_id: str, entity_id: str, alias: str, now: datetime
    ) -> bool:
        """Make ``alias`` another name of entity ``entity_id``.

        An alias is never taken from its owner: when the normalised alias already is the
        name or an alias of *another* entity of the user, nothing changes and the two
        entities stay apart (merging them is a decision this layer does not make). The
        user's own name ``"user"`` is never an alias.

        Returns:
            ``True`` when the alias was added; ``False`` when it was empty, already this
            entity's name or alias, reserved, or owned by another entity.
        """
        norm = normalize_name(alias)
        if not norm or norm == _SELF_NORM:
            return False
        key = self._key(user_id, norm, create=True)
        if c.execute(
            "SELECT 1 FROM entities WHERE user_id = ? AND norm = ?", (user_id, key)
        ).fetchone():
            return False  # this entity's own name, or another entity's
        cur = c.execute(
            "INSERT INTO entity_aliases (user_id, norm, entity_id, alias, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, norm) DO NOTHING",
            (user_id, key, entity_id,
             self._seal(user_id, "entity_aliases.alias", key, " ".join(alias.split())),
             iso(now)),
        )  # fmt: skip
        if cur.rowcount == 0:
            return False
        c.execute("UPDATE entities SET updated_at = ? WHERE id = ?", (iso(now), entity_id))
        return True

    def entities(self, user_id: str) -> list[Entity]:
        """Every entity of ``user_id`` with its aliases, oldest first."""
        rows = self.store.read(
            f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? ORDER BY rowid",
            (user_id,),
        )
        return self._entities_from_rows(None, rows)

    def entity_by_id(
        self, c_or_none: sqlite3.Connection | None, user_id: str, entity_id: str
    ) -> Entity | None:
        """The entity with id ``entity_id`` of ``user_id``, or ``None``."""
        rows = self._rows(
            c_or_none,
            f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? AND id = ?",
            (user_id, entity_id),
        )
        found = self._entities_from_rows(c_or_none, rows)
        return found[0] if found else None

    def entity(self, user_id: str, name: str) -> Entity | None:
        """The entity called ``name`` (normalised name or alias), or ``None``."""
        norm = normalize_name(name)
        return self._find_entity(None, user_id, norm) if norm else None

    # -- fact writes -----------------------------------------------------------------

    def insert_fact(
        self,
        c: sqlite3.Connection,
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
        c: sqlite3.Connection,
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

    def set_valid_from(self, c: sqlite3.Connection, fact_id: str, valid_from: datetime) -> None:
        """Move the start of a fact's validity (a late message shows it held earlier)."""
        c.execute("UPDATE facts SET valid_from = ? WHERE id = ?", (iso(valid_from), fact_id))

    def reinforce(
        self,
        c: sqlite3.Connection,
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
        self, c_or_none: sqlite3.Connection | None, user_id: str, fact_id: str
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
        c: sqlite3.Connection,
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

    def set_memory_id(self, c: sqlite3.Connection, fact_id: str, memory_id: str | None) -> None:
        """Link a fact to the semantic memory record that carries its sentence."""
        c.execute("UPDATE facts SET memory_id = ? WHERE id = ?", (memory_id, fact_id))

    # -- fact reads ------------------------------------------------------------------

    def fact(self, c_or_none: sqlite3.Connection | None, fact_id: str) -> Fact | None:
        """The fact with id ``fact_id``, or ``None``."""
        found = self._select_facts(c_or_none, "f.id = ?", (fact_id,))
        return found[0] if found else None

    get_fact = fact

    def current_facts(
        self,
        c_or_none: sqlite3.Connection | None,
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
        c_or_none: sqlite3.Connection | None,
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

    def neighbors(
        self, user_id: str, name: str, *, depth: int = 1, include_history: bool = False
    ) -> tuple[list[tuple[Entity, int]], list[Fact]]:
        """The entities within ``depth`` hops of entity ``name``, and the facts between.

        A hop is a fact whose object is an entity, followed either way (``user -sister->
        Maria`` links Maria to the user and the user to Maria). The walk is one recursive
        SQL query that looks edges up by index from both ends at each hop (on SQLite
        before 3.34, which allows a single recursive step, it gathers the user's edges
        once and expands over them).

        Args:
            name: the starting entity (name or alias).
            depth: hops, 1 to :data:`MAX_DEPTH`.
            include_history: walk closed facts too (by default current facts only).

        Returns:
            ``(reached, facts)``: each reached entity (the start excluded) with its
            fewest hops from the start, nearest first; and the facts that leave an entity
            less than ``depth`` hops away (the edges walked), in valid-time order. An
            unknown ``name`` gives ``([], [])``.

        Raises:
            ValidationError: ``depth`` is not an integer from 1 to 5 (names ``depth``).
        """
        if isinstance(depth, bool) or not isinstance(depth, int):
            raise ValidationError("depth", f"must be an integer, got {type(depth).__name__}")
        if not 1 <= depth <= MAX_DEPTH:
            raise ValidationError("depth", f"must be from 1 to {MAX_DEPTH}, got {depth}")
        start = self.entity(user_id, name)
        if start is None:
            return [], []
        current = "" if include_history else "AND f.valid_to IS NULL"
        if _MULTI_ARM_CTE and self.store.dialect == "sqlite":
            # Each hop looks edges up by index from both ends, so the cost follows the
            # neighbourhood, not the size of the user's graph. ("+" keeps SQLite from
            # walking the partial object index for the subject side.)
            sql = f"""
            WITH RECURSIVE reach(id, hop) AS (
                SELECT ?, 0
                UNION
                SELECT f.object_id, r.hop + 1 FROM reach r JOIN facts f
                  ON f.user_id = ? AND f.subject_id = r.id
                WHERE r.hop < ? AND +f.object_id IS NOT NULL {current}
                UNION
                SELECT f.subject_id, r.hop + 1 FROM reach r JOIN facts f
                  ON f.user_id = ? AND f.object_id = r.id
                WHERE r.hop < ? {current}
            )
            SELECT id, MIN(hop) AS hop FROM reach GROUP BY id HAVING MIN(hop) > 0
            ORDER BY hop, id
            """
            params: tuple[Any, ...] = (start.id, user_id, depth, user_id, depth)
        else:
            # SQLite before 3.34 allows one recursive SELECT: gather the user's edges in
            # both directions once, then expand over them.
            sql = f"""
            WITH RECURSIVE edges(a, b) AS (
                SELECT subject_id, object_id FROM facts f
                WHERE f.user_id = ? AND f.object_id IS NOT NULL {current}
                UNION ALL
                SELECT object_id, subject_id FROM facts f
                WHERE f.user_id = ? AND f.object_id IS NOT NULL {current}
            ),
            reach(id, hop) AS (
                SELECT CAST(? AS TEXT), 0
                UNION
                SELECT e.b, r.hop + 1 FROM reach r JOIN edges e ON e.a = r.id
                WHERE r.hop < ?
            )
            SELECT id, MIN(hop) AS hop FROM reach GROUP BY id HAVING MIN(hop) > 0
            ORDER BY hop, id
            """
            params = (user_id, user_id, start.id, depth)
        rows = self.store.read(sql, params)
        hops = {str(r[0]): int(r[1]) for r in rows}
        ids = list(hops)
        entity_rows: list[tuple[Any, ...]] = []
        for part in _chunks(ids):
            entity_rows += self.store.read(
                f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id IN ({_marks(len(part))})", part
            )
        by_id = {e.id: e for e in self._entities_from_rows(None, entity_rows)}
        reached = [(by_id[i], hops[i]) for i in ids if i in by_id]

        inner = [start.id, *(i for i in ids if hops[i] < depth)]
        edges: dict[str, Fact] = {}
        for part in _chunks(inner):
            marks = _marks(len(part))
            # One query per end, each on its own index ("+": see the walk above); the
            # second skips edges the first already returned.
            for where, args in (
                (
                    f"f.user_id = ? AND f.subject_id IN ({marks}) AND +f.object_id IS NOT NULL",
                    [user_id, *part],
                ),
                (
                    f"f.user_id = ? AND f.object_id IN ({marks}) AND f.subject_id NOT IN ({marks})",
                    [user_id, *part, *part],
                ),
            ):
                for row in self.store.read(
                    f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {where} {current}", args
                ):
                    if row[0] not in edges:  # across chunks an edge can come twice
                        edges[row[0]] = self._fact(row)
        ordered = sorted(edges.values(), key=lambda f: (f.valid_from, f.created_at, f.id))
        return reached, ordered

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

    # -- deletion --------------------------------------------------------------------

    def remove_sources(
        self, c: sqlite3.Connection, user_id: str, memory_ids: Sequence[str]
    ) -> list[Fact]:
        """Forget that ``memory_ids`` stated anything (they are being deleted).

        See :meth:`remove_sources_detailed`; returns only the deleted facts (whose
        semantic records the caller deletes).
        """
        return self.remove_sources_detailed(c, user_id, memory_ids).deleted

    def remove_sources_detailed(
        self, c: sqlite3.Connection, user_id: str, memory_ids: Sequence[str]
    ) -> SourceRemoval:
        """Drop ``memory_ids`` from the provenance of the user's facts.

        A fact with other sources left keeps them and stays as it is; a fact left without
        any source is deleted as :meth:`delete_facts` describes.

        Returns:
            What changed (:class:`SourceRemoval`).
        """
        ids = list(dict.fromkeys(memory_ids))
        removed = set(ids)
        orphans: list[str] = []
        fact_ids: list[str] = []
        for part in _chunks(ids):
            fact_ids += [
                r[0]
                for r in c.execute(
                    f"SELECT fact_id FROM fact_sources WHERE user_id = ? "
                    f"AND source_id IN ({_marks(len(part))})",
                    [user_id, *part],
                )
            ]
            c.execute(
                f"DELETE FROM fact_sources WHERE user_id = ? AND source_id IN ({_marks(len(part))})",
                [user_id, *part],
            )
        for fact_id in dict.fromkeys(fact_ids):
            row = c.execute(
                "SELECT source_ids FROM facts WHERE id = ? AND user_id = ?", (fact_id, user_id)
            ).fetchone()
            if row is None:
                continue
            left = [s for s in json.loads(row[0]) if s not in removed]
            if left:
                c.execute(
                    "UPDATE facts SET source_ids = ? WHERE id = ?",
                    (json.dumps(left, ensure_ascii=False), fact_id),
                )
            else:
                orphans.append(fact_id)
        return self.delete_facts(c, user_id, orphans)

    def delete_facts_by_memory(
        self, c: sqlite3.Connection, user_id: str, memory_ids: Sequence[str]
    ) -> list[Fact]:
        """Delete the facts whose sentence records (``memory_id``) are among
        ``memory_ids`` (those records are being deleted), as :meth:`delete_facts`
        describes. Returns the deleted facts."""
        fact_ids: list[str] = []
        for part in _chunks(list(dict.fromkeys(memory_ids))):
            fact_ids += [
                r[0]
                for r in c.execute(
                    f"SELECT id FROM facts WHERE user_id = ? AND memory_id IN ({_marks(len(part))})",
                    [user_id, *part],
                )
            ]
        return self.delete_facts(c, user_id, fact_ids).deleted

    def delete_facts(
        self, c: sqlite3.Connection, user_id: str, fact_ids: Sequence[str]
    ) -> SourceRemoval:
        """Delete facts of ``user_id`` and repair what pointed at them.

        - A fact that a deleted fact had closed takes over the deleted fact's end of
          validity and successor, so the timeline keeps no hole: deleting the only
          statement "I moved to Porto" makes "lives in Lisbon" current again, and in
          Lisbon → Porto → Madrid deleting Porto links Lisbon to Madrid.
        - Deleting a ``name`` fact removes the alias it gave, unless another ``name``
          fact of the same subject still states it.
        - Entities that no fact mentions any more are deleted with their aliases (the
          name of someone the user only mentioned in deleted messages does not linger).

        Ids that do not exist (or belong to another user) are skipped.

        Returns:
            What changed (:class:`SourceRemoval`).
        """
        result = SourceRemoval()
        relinked: dict[str, Fact] = {}
        touched_entities: dict[str, None] = {}
        for fact_id in dict.fromkeys(fact_ids):
            # Read inside the loop: an earlier deletion may have relinked this fact.
            found = self._select_facts(c, "f.id = ? AND f.user_id = ?", (fact_id, user_id))
            if not found:
                continue
            fact = found[0]
            c.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            c.execute(
                "DELETE FROM fact_sources WHERE user_id = ? AND fact_id = ?", (user_id, fact_id)
            )
            result.deleted.append(fact)
            touched_entities[fact.subject_id] = None
            if fact.object_id:
                touched_entities[fact.object_id] = None
            reopened = fact.valid_to is None
            for prior in self._select_facts(
                c, "f.user_id = ? AND f.superseded_by = ?", (user_id, fact_id)
            ):
                expired_at = None if reopened else prior.expired_at
                c.execute(
                    "UPDATE facts SET valid_to = ?, superseded_by = ?, expired_at = ? WHERE id = ?",
                    (iso(fact.valid_to), fact.superseded_by, iso(expired_at), prior.id),
                )
                relinked[prior.id] = prior.model_copy(
                    update={
                        "valid_to": fact.valid_to,
                        "superseded_by": fact.superseded_by,
                        "expired_at": expired_at,
                    }
                )
            if fact.predicate == "name":
                norm = self._key(user_id, normalize_name(fact.object))
                still = c.execute(
                    "SELECT 1 FROM facts WHERE user_id = ? AND subject_id = ? "
                    "AND predicate = 'name' AND object_norm = ?",
                    (user_id, fact.subject_id, norm),
                ).fetchone()
                if not still:
                    c.execute(
                        "DELETE FROM entity_aliases WHERE user_id = ? AND norm = ? AND entity_id = ?",
                        (user_id, norm, fact.subject_id),
                    )
        deleted_ids = {f.id for f in result.deleted}
        result.relinked = [f for i, f in relinked.items() if i not in deleted_ids]
        for entity_id in touched_entities:
            used = c.execute(
                "SELECT EXISTS (SELECT 1 FROM facts WHERE user_id = ? AND subject_id = ?) "
                "OR EXISTS (SELECT 1 FROM facts WHERE user_id = ? AND object_id = ?)",
                (user_id, entity_id, user_id, entity_id),
            ).fetchone()[0]
            if not used:
                c.execute(
                    "DELETE FROM entity_aliases WHERE user_id = ? AND entity_id = ?",
                    (user_id, entity_id),
                )
                result.entities_removed += c.execute(
                    "DELETE FROM entities WHERE id = ?", (entity_id,)
                ).rowcount
        return result

    def delete_user(self, c: sqlite3.Connection, user_id: str) -> dict[str, int]:
        """Delete every entity, alias and fact of ``user_id``.

        Returns:
            ``{"entities": n, "aliases": n, "facts": n}``, the rows removed.
        """
        c.execute("DELETE FROM fact_sources WHERE user_id = ?", (user_id,))
        facts = c.execute("DELETE FROM facts WHERE user_id = ?", (user_id,)).rowcount
        aliases = c.execute("DELETE FROM entity_aliases WHERE user_id = ?", (user_id,)).rowcount
        entities = c.execute("DELETE FROM entities WHERE user_id = ?", (user_id,)).rowcount
        return {"entities": entities, "aliases": aliases, "facts": facts}

    def counts(self, user_id: str | None = None) -> dict[str, int]:
        """Rows of one user (or of all users): ``{"entities", "aliases", "facts",
        "current_facts"}``."""
        where, params = ("user_id = ?", (user_id,)) if user_id is not None else ("1", ())
        one = self.store.read(
            f"SELECT (SELECT COUNT(*) FROM entities WHERE {where}), "
            f"(SELECT COUNT(*) FROM entity_aliases WHERE {where}), "
            f"(SELECT COUNT(*) FROM facts WHERE {where}), "
            f"(SELECT COUNT(*) FROM facts WHERE {where} AND valid_to IS NULL)",
            [*params, *params, *params, *params],
        )[0]
        return {
            "entities": int(one[0]),
            "aliases": int(one[1]),
            "facts": int(one[2]),
            "current_facts": int(one[3]),
        }

    # -- export / import -----------------------------------------------------------------

    def export_entities(self, user_id: str | None) -> list[Entity]:
        """Every entity (with aliases) of one user, or of every user, oldest first."""
        users = (
            [user_id]
            if user_id is not None
            else [
                r[0]
                for r in self.store.read("SELECT DISTINCT user_id FROM entities ORDER BY user_id")
            ]
        )
        return [e for u in users for e in self.entities(u)]

    def export_facts(self, user_id: str | None) -> list[Fact]:
        """Every fact, closed ones included, of one user or of every user."""
        where, params = ("f.user_id = ?", [user_id]) if user_id is not None else ("1", [])
        return self._select_facts(None, where, params)

    def import_entity(self, c: sqlite3.Connection, entity: Entity) -> bool:
        """Insert an exported entity with its id, name, type, times and aliases.

        Returns ``False`` (nothing written) when its id exists, or when the user already
        has an entity of that normalised name (aliases another entity owns are skipped).
        """
        norm = normalize_name(entity.name)
        if not norm:
            raise ValidationError("name", "must contain a name (it is empty once normalised)")
        if c.execute("SELECT 1 FROM entities WHERE id = ?", (entity.id,)).fetchone():
            return False
        cur = c.execute(
            "INSERT INTO entities (id, user_id, name, norm, type, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (entity.id, entity.user_id,
             self._seal(entity.user_id, "entities.name", entity.id, entity.name),
             self._key(entity.user_id, norm, create=True), entity.type,
             iso(entity.created_at), iso(entity.updated_at)),
        )  # fmt: skip
        if cur.rowcount == 0:
            return False
        for alias in entity.aliases:
            self.add_alias(c, entity.user_id, entity.id, alias, entity.updated_at)
        return True

    def import_fact(self, c: sqlite3.Connection, fact: Fact) -> bool:
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

    # -- retrieval -------------------------------------------------------------------

    def entity_names(self, user_id: str) -> list[tuple[str, str]]:
        """``(normalised name or alias, entity id)`` for every entity of a user except
        the user's own (``"user"`` is not a name people write in questions)."""
        if self.store.crypto is not None:
            # The stored norms are keyed hashes: normalise the decrypted names instead.
            out = [
                (normalize_name(self._open(user_id, "entities.name", i, n) or ""), str(i))
                for n, i in self.store.read(
                    "SELECT name, id FROM entities WHERE user_id = ? AND norm != ?",
                    (user_id, self._key(user_id, _SELF_NORM)),
                )
            ]
            out += [
                (normalize_name(self._open(user_id, "entity_aliases.alias", k, a) or ""), str(i))
                for a, k, i in self.store.read(
                    "SELECT alias, norm, entity_id FROM entity_aliases WHERE user_id = ?",
                    (user_id,),
                )
            ]
            return out
        rows = self.store.read(
            "SELECT norm, id FROM entities WHERE user_id = ? AND norm != ? "
            "UNION ALL SELECT norm, entity_id FROM entity_aliases WHERE user_id = ?",
            (user_id, _SELF_NORM, user_id),
        )
        return [(str(n), str(i)) for n, i in rows]

    def current_fact_rowids(self, user_id: str, entity_ids: Sequence[str], limit: int) -> list[int]:
        """Store rowids of the sentence records of the current facts about (or pointing
        at) ``entity_ids``, newest first, at most ``limit``."""
        if not entity_ids:
            return []
        part = list(dict.fromkeys(entity_ids))[: _CHUNK // 2]
        marks = _marks(len(part))
        rows = self.store.read(
            "SELECT m.rowid FROM facts f JOIN memories m ON m.id = f.memory_id "
            f"WHERE f.user_id = ? AND f.valid_to IS NULL AND (f.subject_id IN ({marks}) "
            f"OR f.object_id IN ({marks})) ORDER BY f.valid_from DESC, f.rowid DESC LIMIT ?",
            [user_id, *part, *part, limit],
        )
        return [int(r[0]) for r in rows]

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
