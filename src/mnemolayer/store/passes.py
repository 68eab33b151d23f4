"""What the maintenance passes read and delete (:mod:`mnemolayer.lifecycle.maintain` and
its steps: merge, consolidation, purge), as store methods.

A mixin of the SQL store (:class:`~mnemolayer.store.sqlite.store.SQLiteStore`, and so of
the PostgreSQL store, which translates the same statements); it uses only the store's own
reads and deletes (:class:`_Store`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from mnemolayer.models import MemoryRecord
from mnemolayer.store.sqlite.engine import iso
from mnemolayer.store.txn import Txn
from mnemolayer.store.where import expired_where, purge_archived_where, purge_due_where

if TYPE_CHECKING:
    from mnemolayer.lifecycle.config import LifecycleConfig

__all__ = ["LifecycleStatements"]

#: A record that may still be linked to a consolidation: active, current, permanent,
#: unpinned, not consolidated yet and not semantic itself (consolidation's ``_linkable``).
_OPEN = (
    "consolidated_into IS NULL AND merged_into IS NULL AND archived_at IS NULL "
    "AND superseded_by IS NULL AND pinned = 0 AND session_only = 0 AND kind != 'semantic'"
)


class _Store(Protocol):
    """What :class:`LifecycleStatements` uses of the store it is mixed into."""

    def select(
        self, where: str, params: Sequence[Any], *, order: str = "id", limit: int | None = None
    ) -> list[MemoryRecord]: ...

    def select_rows(self, where: str, params: Sequence[Any]) -> list[tuple[int, MemoryRecord]]: ...

    def ids_where(self, where: str, params: Sequence[Any]) -> set[str]: ...

    def existing_ids(self, c: Txn, ids: Sequence[str]) -> set[str]: ...

    def delete_where(
        self, c: Txn, where: str, params: Sequence[Any]
    ) -> list[tuple[int, str, str]]: ...


def _parts(ids: Iterable[str], size: int = 500) -> Iterable[list[str]]:
    """``ids`` without repeats, in slices of at most ``size`` (SQL parameter limits)."""
    items = list(dict.fromkeys(ids))
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(part: Sequence[Any]) -> str:
    return ",".join("?" * len(part))


class LifecycleStatements:
    """Reads and deletes of the maintenance passes (mixed into the SQL store)."""

    # -- reads -----------------------------------------------------------------------

    def user_records(self: _Store, user_id: str, ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The records of ``user_id`` among ``ids``, by id (ids of other users or of no
        record are left out)."""
        out: dict[str, MemoryRecord] = {}
        for part in _parts(ids):
            where = f"user_id = ? AND id IN ({_marks(part)})"
            out.update({r.id: r for r in self.select(where, [user_id, *part])})
        return out

    def consolidation_open_ids(self: _Store, user_id: str, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` are records of ``user_id`` that could still be linked to a
        consolidation (:data:`_OPEN`; a cheap pre-filter)."""
        out: set[str] = set()
        for part in _parts(ids):
            where = f"user_id = ? AND id IN ({_marks(part)}) AND {_OPEN}"
            out |= self.ids_where(where, [user_id, *part])
        return out

    def merged_awaiting_consolidation(
        self: _Store, user_id: str, min_importance: float
    ) -> list[MemoryRecord]:
        """The user's records merged into a survivor that may still need consolidating,
        oldest insert first: the survivor is active, current and not semantic, and either
        not consolidated yet (unpinned, permanent, importance ≥ ``min_importance``) or
        consolidated into a record whose provenance lacks the merged record."""
        rows = self.select_rows(
            "user_id = ? AND merged_into IS NOT NULL AND EXISTS (SELECT 1 FROM memories s "
            "WHERE s.id = memories.merged_into AND s.archived_at IS NULL "
            "AND s.merged_into IS NULL AND s.superseded_by IS NULL AND s.kind != 'semantic' "
            "AND ((s.consolidated_into IS NULL AND s.pinned = 0 AND s.session_only = 0 "
            "AND s.importance >= ?) OR (s.consolidated_into IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM memories t, json_each(t.source_ids) j "
            "WHERE t.id = s.consolidated_into AND j.value = memories.id))))",
            [user_id, min_importance],
        )
        return [r for _rowid, r in rows]

    def merge_pool(self: _Store, user_id: str, now: datetime) -> list[tuple[int, MemoryRecord]]:
        """``(rowid, record)`` of the user's records that may merge at ``now``: not
        archived, merged, superseded, session-only or expired by their own
        ``expires_at``; oldest insert first."""
        return self.select_rows(
            "user_id = ? AND archived_at IS NULL AND merged_into IS NULL "
            "AND superseded_by IS NULL AND session_only = 0 "
            "AND (expires_at IS NULL OR expires_at > ?)",
            [user_id, iso(now)],
        )

    def merged_before(self: _Store, user_id: str, before: datetime) -> list[MemoryRecord]:
        """The user's unpinned records merged (``updated_at``) at or before ``before``."""
        return self.select(
            "user_id = ? AND pinned = 0 AND merged_into IS NOT NULL AND updated_at <= ?",
            [user_id, iso(before)],
        )

    def archived_before(self: _Store, user_id: str, before: datetime) -> list[MemoryRecord]:
        """The user's unpinned, unmerged records archived at or before ``before``."""
        sql, params = purge_archived_where(before)
        return self.select(f"user_id = ? AND {sql}", [user_id, *params])

    def merged_into_any(self: _Store, user_id: str, targets: Sequence[str]) -> list[MemoryRecord]:
        """The user's records merged into any of ``targets``."""
        out: list[MemoryRecord] = []
        for start in range(0, len(targets), 500):
            part = list(targets[start : start + 500])
            out += self.select(f"user_id = ? AND merged_into IN ({_marks(part)})", [user_id, *part])
        return out

    def present_ids(self: _Store, c: Txn | None, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored records: inside transaction ``c``, or (``None``)
        by a plain read."""
        if not ids:
            return set()
        if c is not None:
            return self.existing_ids(c, ids)
        return self.ids_where(f"id IN ({_marks(ids)})", list(ids))

    # -- deletes ---------------------------------------------------------------------

    def expired_ids(
        self: _Store, user_id: str, now: datetime, lifecycle: LifecycleConfig
    ) -> list[str]:
        """Ids of the user's unpinned records past their effective expiry at ``now``
        (exactly what recall leaves out as expired, :func:`~mnemolayer.store.where.expired_where`
        with ``lifecycle``'s default TTLs), in id order."""
        expired, params = expired_where(now, lifecycle)
        where = f"user_id = ? AND pinned = 0 AND {expired}"
        return sorted(self.ids_where(where, [user_id, *params]))

    def delete_expired(
        self: _Store,
        c: Txn,
        user_id: str,
        ids: Sequence[str],
        now: datetime,
        lifecycle: LifecycleConfig,
    ) -> list[str]:
        """Delete those of the user's records ``ids`` that are still unpinned and expired
        at ``now`` (re-checked inside ``c``), with their index rows; the ids deleted."""
        expired, params = expired_where(now, lifecycle)
        gone: list[str] = []
        for part in _parts(ids):
            where = f"user_id = ? AND pinned = 0 AND {expired} AND id IN ({_marks(part)})"
            gone += [g[1] for g in self.delete_where(c, where, [user_id, *params, *part])]
        return gone

    def forget_candidates(
        self: _Store, user_id: str, *, below_importance: float, happened_before: datetime
    ) -> list[MemoryRecord]:
        """The user's records decay may forget: unpinned, not archived or merged, of
        importance below ``below_importance``, that happened (``occurred_at``, else
        ``created_at``) at or before ``happened_before``; in id order."""
        return self.select(
            "user_id = ? AND pinned = 0 AND archived_at IS NULL AND merged_into IS NULL "
            "AND importance < ? AND COALESCE(occurred_at, created_at) <= ?",
            [user_id, below_importance, iso(happened_before)],
        )

    def delete_unchanged(
        self: _Store, c: Txn, user_id: str, records: Sequence[MemoryRecord]
    ) -> list[str]:
        """Delete those of ``records`` (the user's) that are still as read: not pinned,
        archived or merged, and with the same access count and importance (not recalled
        since); with their index rows. The ids deleted."""
        gone: list[str] = []
        for start in range(0, len(records), 100):
            part = records[start : start + 100]
            same = " OR ".join(["(id = ? AND access_count = ? AND importance = ?)"] * len(part))
            where = (
                "user_id = ? AND pinned = 0 AND archived_at IS NULL AND merged_into IS NULL "
                f"AND ({same})"
            )
            params = [user_id, *(x for r in part for x in (r.id, r.access_count, r.importance))]
            gone += [g[1] for g in self.delete_where(c, where, params)]
        return gone

    def delete_purge_due(
        self: _Store,
        c: Txn,
        user_id: str,
        ids: Sequence[str],
        *,
        merged: bool,
        merged_before: datetime | None,
        archived_before: datetime | None,
    ) -> list[str]:
        """Delete those of the user's records ``ids`` still due for purging, re-checked
        inside ``c`` (:func:`~mnemolayer.store.where.purge_due_where`), with their index
        rows; the ids deleted."""
        gone: list[str] = []
        for part in _parts(ids):
            due, params = purge_due_where(
                part, merged=merged, merged_before=merged_before, archived_before=archived_before
            )
            gone += [
                g[1] for g in self.delete_where(c, f"user_id = ? AND ({due})", [user_id, *params])
            ]
        return gone

    def delete_user_ids(self: _Store, c: Txn, user_id: str, ids: Sequence[str]) -> None:
        """Delete the user's records ``ids`` (records, keyword index and vectors) inside
        ``c``."""
        self.delete_where(c, f"user_id = ? AND id IN ({_marks(ids)})", [user_id, *ids])
