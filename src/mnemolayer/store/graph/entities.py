"""Entities and their aliases: resolving a name to the user's entity (creating it),
namesakes, aliases that are never stolen, export and import."""

from __future__ import annotations

from datetime import datetime

from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import SELF
from mnemolayer.models import Entity, new_id
from mnemolayer.store.graph.base import (
    _ENTITY_COLUMNS,
    _GENERIC_TYPES,
    _SELF_NORM,
    GraphBase,
    normalize_name,
)
from mnemolayer.store.rows import iso
from mnemolayer.store.txn import Txn

__all__ = ["GraphEntities"]


class GraphEntities(GraphBase):
    """Entities of every user, with their aliases."""

    def resolve_entity(
        self,
        c: Txn | None,
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
        self, c: Txn, user_id: str, name: str, *, type: str, now: datetime
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

    def add_alias(self, c: Txn, user_id: str, entity_id: str, alias: str, now: datetime) -> bool:
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
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",  # its only key: (user_id, norm)
            (user_id, key, entity_id,
             self._seal(user_id, "entity_aliases.alias", key, " ".join(alias.split())),
             iso(now)),
        )  # fmt: skip
        if cur.rowcount == 0:
            return False
        c.execute(
            "UPDATE entities SET updated_at = ? WHERE user_id = ? AND id = ?",
            (iso(now), user_id, entity_id),
        )
        return True

    def entities(self, user_id: str) -> list[Entity]:
        """Every entity of ``user_id`` with its aliases, oldest first."""
        rows = self.store.read(
            f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? ORDER BY rowid",
            (user_id,),
        )
        return self._entities_from_rows(None, rows)

    def entity_by_id(self, c_or_none: Txn | None, user_id: str, entity_id: str) -> Entity | None:
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

    def import_entity(self, c: Txn, entity: Entity) -> bool:
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
