"""Per-user chunk vectors in process memory, reloaded when the user's generation changes
(with what recall derives from them: session neighbours, fact links, entity names)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from mnemolayer.retrieval.ann import UserAnn
from mnemolayer.retrieval.conversation import ConversationIndex
from mnemolayer.store.base import SQLStore
from mnemolayer.store.graph import GraphStore

__all__ = ["UserVectors", "VectorCache"]


@dataclass
class UserVectors:
    """One user's vectors as :class:`VectorCache` holds them, with what recall derives
    from them."""

    generation: int
    rowids: np.ndarray  # (m,) one per chunk, sorted
    matrix: np.ndarray  # (m, dim)
    unique: np.ndarray  # (u,) distinct rowids
    starts: np.ndarray  # (u,) first chunk of each
    neighbours: dict[int, tuple[int, ...]]  # rowid → adjacent turns in its session
    # Fact keys: semantic record → the record it was derived from, as positions in
    # ``unique``; ``link_current`` says whether the fact is still current.
    link_fact: np.ndarray
    link_source: np.ndarray
    link_current: np.ndarray
    closed: frozenset[int]  # superseded semantic records
    entity_names: list[tuple[str, str]]  # (normalised name or alias, entity id)
    ann: UserAnn | None = None  # ANN index (retrieval.ann), handed on across reloads
    # Session structure for the conversation features, built on first use.
    conversation: ConversationIndex | None = None


class VectorCache:
    """Per-user chunk vectors in memory; reloaded when the user's generation changes.

    Never the source of truth: the store holds the vectors, this only avoids re-reading
    them for every query (a cheap generation check per search instead).
    """

    def __init__(self, store: SQLStore, dim: int, max_users: int = 64) -> None:
        self._store = store
        self._dim = dim
        self._max_users = max_users
        self._users: dict[str, UserVectors] = {}
        self._kinds: dict[str, tuple[int, dict[str, np.ndarray]]] = {}
        self._lock = threading.Lock()

    def get(self, user_id: str) -> UserVectors:
        gen = self._store.generation(user_id)
        with self._lock:
            cached = self._users.get(user_id)
            if cached is not None and cached.generation == gen:
                return cached
        rowids, matrix = self._store.load_vectors(user_id, self._dim)
        unique, starts = np.unique(rowids, return_index=True)
        order = self._store.session_order(user_id)
        neighbours: dict[int, tuple[int, ...]] = {}
        for i, rid in enumerate(order):
            if rid >= 0:
                around = (order[i - 1] if i else -1, order[i + 1] if i + 1 < len(order) else -1)
                neighbours[rid] = tuple(n for n in around if n >= 0)
        links = self._store.fact_links(user_id)
        pos = {int(r): i for i, r in enumerate(unique.tolist())}
        known = [(f, s, cur) for f, s, cur in links if f in pos and s in pos]
        link_fact = np.array([pos[f] for f, _, _ in known], dtype=np.int64)
        link_source = np.array([pos[s] for _, s, _ in known], dtype=np.int64)
        link_current = np.array([cur for _, _, cur in known], dtype=bool)
        closed = frozenset(f for f, _, cur in links if not cur)
        entry = UserVectors(
            gen,
            rowids,
            matrix,
            unique,
            starts,
            neighbours,
            link_fact,
            link_source,
            link_current,
            closed,
            GraphStore(self._store).entity_names(user_id),
        )
        if cached is not None:  # the index follows the changes (retrieval.ann)
            entry.ann = cached.ann
        with self._lock:
            if len(self._users) >= self._max_users and user_id not in self._users:
                # Oldest first, but users with an ANN index (costly to rebuild) last.
                first = next(iter(self._users))
                self._users.pop(next((u for u, e in self._users.items() if e.ann is None), first))
            self._users[user_id] = entry
        return entry

    def kind_rowids(self, user_id: str) -> dict[str, np.ndarray]:
        """Every record of ``user_id`` (with a vector or not) by kind, as
        ``{kind: rowids (k,) int64, ascending}``; read again when the user's generation
        changes (adding or deleting a record changes it, and a kind never changes), held
        for as many users as the vectors are. Vectors are not loaded for it."""
        gen = self._store.generation(user_id)
        with self._lock:
            cached = self._kinds.get(user_id)
            if cached is not None and cached[0] == gen:
                return cached[1]
        kinds = {
            kind: np.array(ids, dtype=np.int64)
            for kind, ids in self._store.kind_rowids(user_id).items()
        }
        with self._lock:
            if len(self._kinds) >= self._max_users and user_id not in self._kinds:
                self._kinds.pop(next(iter(self._kinds)))
            self._kinds[user_id] = (gen, kinds)
        return kinds
