"""Forgetting: dropping deleted memories from facts' provenance, deleting facts with
the repairs that keep the timeline whole, deleting a whole user, and row counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from mnemolayer.models import Fact
from mnemolayer.store.graph.base import GraphBase, _chunks, _marks, normalize_name
from mnemolayer.store.rows import iso
from mnemolayer.store.txn import Txn

__all__ = ["GraphForget", "SourceRemoval"]


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


class GraphForget(GraphBase):
    """Deletes of facts and entities."""

    def remove_sources(self, c: Txn, user_id: str, memory_ids: Sequence[str]) -> list[Fact]:
        """Forget that ``memory_ids`` stated anything (they are being deleted).

        See :meth:`remove_sources_detailed`; returns only the deleted facts (whose
        semantic records the caller deletes).
        """
        return self.remove_sources_detailed(c, user_id, memory_ids).deleted

    def remove_sources_detailed(
        self, c: Txn, user_id: str, memory_ids: Sequence[str]
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

    def delete_facts_by_memory(self, c: Txn, user_id: str, memory_ids: Sequence[str]) -> list[Fact]:
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

    def delete_facts(self, c: Txn, user_id: str, fact_ids: Sequence[str]) -> SourceRemoval:
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
            c.execute("DELETE FROM facts WHERE user_id = ? AND id = ?", (user_id, fact_id))
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
                    "UPDATE facts SET valid_to = ?, superseded_by = ?, expired_at = ? "
                    "WHERE user_id = ? AND id = ?",
                    (iso(fact.valid_to), fact.superseded_by, iso(expired_at), user_id, prior.id),
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
                    "DELETE FROM entities WHERE user_id = ? AND id = ?", (user_id, entity_id)
                ).rowcount
        return result

    def delete_user(self, c: Txn, user_id: str) -> dict[str, int]:
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
