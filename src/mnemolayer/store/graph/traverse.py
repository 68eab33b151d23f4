"""Walking the graph: the entities within a few hops of one, and the facts between."""

from __future__ import annotations

from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.models import Entity, Fact
from mnemolayer.store.graph.base import _ENTITY_COLUMNS, _FACT_COLUMNS, _FACT_FROM, _chunks, _marks
from mnemolayer.store.graph.entities import GraphEntities

__all__ = ["MAX_DEPTH", "GraphTraverse"]

#: The deepest traversal :meth:`GraphStore.neighbors` allows.
MAX_DEPTH = 5


class GraphTraverse(GraphEntities):
    """Neighbourhoods of entities."""

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
        if self.store.multi_arm_recursion():
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
