"""What recall reads besides vectors (:mod:`mnemolayer.retrieval.search`): which records a
search may return, keyword matches in scope, and which hits a consolidation in scope
stands for; as store methods.

A mixin of the SQL store (:class:`~mnemolayer.store.sqlite.store.SQLiteStore`, and so of
the PostgreSQL store, which translates the same statements and has its own
``keyword_matches``); it uses only the store's own reads (:class:`_Store`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from mnemolayer.query import Filter, Scope
from mnemolayer.store.where import active_where, expired_where, scope_where, user_by_rowid

if TYPE_CHECKING:
    from mnemolayer.lifecycle.config import LifecycleConfig

__all__ = ["RecallStatements"]


class _Store(Protocol):
    """What :class:`RecallStatements` uses of the store it is mixed into."""

    def rowids(self, where: str, params: Sequence[Any]) -> set[int]: ...

    def compile_filter(self, f: Filter, prefix: str = "") -> tuple[str, list[Any]]: ...
    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]: ...


class RecallStatements:
    """Recall's reads (mixed into the SQL store). Each takes the search's scope and
    what "active" means for it: at ``now``, with superseded records when
    ``include_history``, with ``lifecycle``'s default TTLs (:func:`active_where`)."""

    def recall_allowed(
        self: _Store,
        scope: Scope,
        *,
        now: datetime,
        include_history: bool,
        lifecycle: LifecycleConfig,
    ) -> tuple[bool, set[int]] | None:
        """Which rowids vector search may return: ``(True, ids)`` only these,
        ``(False, ids)`` all of the user's but these, ``None`` all of the user's."""
        where, params = scope_where(scope, "", self.compile_filter)
        act, act_params = active_where(now, include_history=include_history, lifecycle=lifecycle)
        if where == "1":
            # Fast path: only inactive records need excluding; without default TTLs those
            # are in the partial index of inactive records.
            maybe = (
                "expires_at IS NOT NULL OR superseded_by IS NOT NULL "
                "OR archived_at IS NOT NULL OR merged_into IS NOT NULL"
            )
            if lifecycle.ttl_days:
                maybe += f" OR kind IN ({','.join('?' * len(lifecycle.ttl_days))})"
            inactive = self.rowids(
                f"user_id = ? AND ({maybe}) AND NOT ({act})",
                [scope.user_id, *(k.value for k in lifecycle.ttl_days), *act_params],
            )
            return (False, inactive) if inactive else None
        ids = self.rowids(
            f"user_id = ? AND {where} AND {act}", [scope.user_id, *params, *act_params]
        )
        return True, ids

    def expired_records(
        self: _Store, user_id: str, *, now: datetime, lifecycle: LifecycleConfig
    ) -> dict[int, str]:
        """The user's records past their effective expiry at ``now`` (own ``expires_at``,
        else the kind's ``lifecycle.ttl_days``; pinned ones never expire), whether or not
        maintenance has deleted them yet: ``{rowid: id}``."""
        expired, params = expired_where(now, lifecycle)
        rows = self.read(
            f"SELECT rowid, id FROM memories WHERE user_id = ? AND pinned = 0 AND {expired}",
            [user_id, *params],
        )
        return {int(r): str(i) for r, i in rows}

    def keyword_candidates(
        self: _Store,
        scope: Scope,
        match: str,
        limit: int,
        *,
        now: datetime,
        include_history: bool,
        lifecycle: LifecycleConfig,
    ) -> list[tuple[int, str]]:
        """The best ``limit`` of the active records in ``scope`` matching the FTS5
        expression ``match``, best first: ``[(rowid, indexed terms)]``
        (``keyword_matches``)."""
        where, params = scope_where(scope, "m.", self.compile_filter)
        act, act_params = active_where(
            now, "m.", include_history=include_history, lifecycle=lifecycle
        )
        return self.keyword_matches(
            scope.user_id, match, f"{where} AND {act}", [*params, *act_params], limit
        )

    def consolidated_in_scope(
        self: _Store,
        rowids: Sequence[int],
        scope: Scope,
        *,
        now: datetime,
        include_history: bool,
        lifecycle: LifecycleConfig,
    ) -> set[int]:
        """Which of ``rowids`` are consolidated into a semantic record that is in
        ``scope`` and active."""
        where, params = scope_where(scope, "t.", self.compile_filter)
        act, act_params = active_where(
            now, "t.", include_history=include_history, lifecycle=lifecycle
        )
        target = (
            "EXISTS (SELECT 1 FROM memories t WHERE t.user_id = memories.user_id "
            f"AND t.id = memories.consolidated_into AND {where} AND {act})"
        )
        out: set[int] = set()
        mine, user = user_by_rowid(scope.user_id)
        for start in range(0, len(rowids), 500):
            part = list(rowids[start : start + 500])
            out |= self.rowids(
                f"{mine}rowid IN ({','.join('?' * len(part))}) "
                f"AND consolidated_into IS NOT NULL AND {target}",
                [*user, *part, *params, *act_params],
            )
        return out
