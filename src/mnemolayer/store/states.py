"""Lifecycle state of records: access reinforcement, pinning and archiving, and the
conditional writes of maintenance (:mod:`mnemolayer.lifecycle.maintain`): archiving,
merging, consolidating, and releasing links to deleted records."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from mnemolayer.models import MemoryRecord
from mnemolayer.store.access import AccessFlusher, AccessLog, AccessUpdateFn, reinforced_state
from mnemolayer.store.records import RecordsSQL
from mnemolayer.store.rows import COLUMNS, TIME_FIELDS, AccessState, RankSignals, from_iso, iso
from mnemolayer.store.txn import Txn

__all__ = ["AccessLog", "StatesSQL"]

_FLUSHER_LOCK = threading.Lock()


class StatesSQL(RecordsSQL):
    """Access counts, pins, archive, merges and consolidations of records."""

    #: Whether a due flush of access counts runs in a thread of the store's own, so that
    #: the search that finds it due does not wait for it: where a flush writes on a
    #: connection of its own beside the searches' (PostgreSQL's pool: most of a flush
    #: is waiting for the server). Off for SQLite, whose one connection a flush would
    #: hold while the next search waits.
    background_access_flush: ClassVar[bool] = False
    #: Whether the engine has ``UPDATE ... FROM`` (SQLite 3.33+, PostgreSQL): access
    #: counts are then written in one statement per 200 records, else one per record.
    update_from_values: ClassVar[bool] = True

    # -- access reinforcement, pinning and archiving -------------------------------------

    def record_access(
        self,
        ids: Sequence[str],
        update: Callable[[AccessState], Mapping[str, Any]],
        *,
        user_id: str | None = None,
        wait_s: float = 0.1,
        flush_size: int = 1,
        flush_after_s: float = 0.0,
    ) -> bool:
        """Reinforce records that recall returned, best-effort and batched: each
        record's :class:`AccessState` is read and ``update(state)`` gives its new
        ``access_count``, ``last_accessed_at`` and ``importance``, once per access.

        Accesses are kept in this process (:class:`AccessLog`) and written together in
        one short transaction when ``flush_size`` records are waiting or the oldest
        waited ``flush_after_s`` seconds, and ride along with the next write
        transaction of this store before that (:meth:`_before_write`); :meth:`flush_access`
        writes them at once (reads of access state, maintenance and closing call it).
        A search is therefore not a write transaction. ``flush_size=1`` writes every
        call's accesses at once, as a per-search write. ``user_id``: whose records
        ``ids`` are, so that their write filters by user too (one shard when sharded).

        Unlike :meth:`transact`, a flush tries once and waits at most ``wait_s`` seconds
        for another writer's lock: a search must never stall or fail because its access
        could not be counted; what could not be written waits for the next flush. What
        waits in the log when the process dies is lost (a memory fades a little sooner).

        Returns:
            Whether the accesses were counted (``False``: read-only store or no ids).
        """
        if not ids or self.read_only:
            return False
        log = self.access_log
        log.add(ids, update, user_id)
        if log.due(flush_size, flush_after_s):
            if self.background_access_flush:
                self._access_flusher(wait_s).request()
            else:
                self.flush_access(wait_s=wait_s)
        return True

    def _access_flusher(self, wait_s: float) -> AccessFlusher:
        flusher: AccessFlusher | None = self.__dict__.get("_flusher")
        if flusher is None:
            with _FLUSHER_LOCK:
                flusher = self.__dict__.get("_flusher")
                if flusher is None:
                    flusher = AccessFlusher(lambda: self.flush_access(wait_s=wait_s))
                    self.__dict__["_flusher"] = flusher
        return flusher

    def stop_access_flusher(self) -> None:
        """End the background flush thread, if one was started (its flush in progress
        finishes first); what still waits is written by :meth:`flush_access`."""
        flusher: AccessFlusher | None = self.__dict__.pop("_flusher", None)
        if flusher is not None:
            flusher.stop()

    def rank_signals(
        self, rowids: Sequence[int], *, user_id: str | None = None
    ) -> dict[int, RankSignals]:
        """:meth:`RecordsSQL.rank_signals`, with the accesses still waiting in
        :attr:`access_log` applied, so that ranking sees what it would see had every
        search written its accesses at once (batching changes when they are written,
        never what recall ranks on)."""
        log = self.__dict__.get("_access_log")
        if not log:
            return super().rank_signals(rowids, user_id=user_id)
        rows = self._rank_rows(rowids, user_id)
        waiting = log.snapshot()
        out: dict[int, RankSignals] = {}
        for rid, (mid, sig) in rows.items():
            if mid in waiting:
                state = log.reinforced(
                    AccessState(mid, sig.importance, sig.access_count, sig.last_accessed_at),
                    waiting[mid],
                )
                sig = sig._replace(
                    importance=state.importance,
                    access_count=state.access_count,
                    last_accessed_at=state.last_accessed_at,
                )
            out[rid] = sig
        return out

    def with_waiting_access(self, records: dict[int, MemoryRecord]) -> dict[int, MemoryRecord]:
        """``records`` (by rowid) with the accesses still waiting in :attr:`access_log`
        applied to copies (``access_count``, ``last_accessed_at``, ``importance``), as
        :meth:`rank_signals` applies them: what a search returns and explains agrees
        with what it ranked on. The records are not written back."""
        log = self.__dict__.get("_access_log")
        if not log:
            return records
        waiting = log.snapshot()
        out = dict(records)
        for rid, rec in records.items():
            if rec.id not in waiting:
                continue
            state = log.reinforced(
                AccessState(rec.id, rec.importance, rec.access_count, rec.last_accessed_at),
                waiting[rec.id],
            )
            out[rid] = rec.model_copy(
                update={
                    "importance": state.importance,
                    "access_count": state.access_count,
                    "last_accessed_at": state.last_accessed_at,
                }
            )
        return out

    @property
    def access_log(self) -> AccessLog:
        """The accesses counted in this process and not yet written."""
        log: AccessLog | None = self.__dict__.get("_access_log")
        if log is None:
            log = self.__dict__.setdefault("_access_log", AccessLog())
        return log

    def flush_access(self, *, wait_s: float = 0.1) -> bool:
        """Write the accesses waiting in :attr:`access_log` in one short transaction,
        and wait (up to ``wait_s`` more) for those another thread of this process took
        to write before this call.

        Returns:
            ``True`` when every access counted before the call is committed; ``False``
            when the store was busy or failed for ``wait_s`` seconds (the accesses wait
            for the next flush).
        """
        log = self.access_log
        if self.read_only:
            return not log
        restored = log.restores
        token, batch = log.take()
        if batch:
            users = log.users(list(batch))
            try:
                written = self._write_briefly(wait_s, lambda c: self._apply_access(c, batch, users))
            except BaseException:
                log.restore(token)
                raise
            if not written:
                log.restore(token)
                return False
            log.done(token)
        # What another thread took before this call (a flush, a write transaction) is
        # written by it: wait for that too, so that a read after this sees every count.
        return log.settled(token, wait_s) and log.restores == restored

    def _before_write(self, c: Any) -> object:
        """At the start of each write transaction (the engine's ``transact``): the
        waiting accesses are taken and written in it, so that they cost no transaction
        of their own; they are forgotten once it commits, and wait again if it fails."""
        log = self.__dict__.get("_access_log")
        if not log:
            return None
        token, batch = log.take()
        try:
            self._apply_access(c, batch, log.users(list(batch)))
        except BaseException:
            log.restore(token)  # the transaction fails: the accesses wait again
            raise
        return token

    def _after_commit(self, token: object) -> None:
        if isinstance(token, int):
            self.access_log.done(token)

    def _after_rollback(self, token: object) -> None:
        if isinstance(token, int):
            self.access_log.restore(token)

    def _apply_access(
        self, c: Any, batch: Mapping[str, tuple[int, AccessUpdateFn]], users: Mapping[str, str]
    ) -> None:
        """Write ``batch`` (id → (accesses, update)) inside transaction ``c``: read each
        record's :class:`AccessState`, apply ``update`` once per access, write the result.
        The records of a known user (``users``: id → user) are read and written by user
        and id (one shard each on a store sharded by user), the others by id."""
        by_user: dict[str | None, list[str]] = {}
        for mid in batch:
            by_user.setdefault(users.get(mid), []).append(mid)
        for user_id, ids in by_user.items():
            mine, params = ("user_id = ? AND ", [user_id]) if user_id is not None else ("", [])
            changes: list[tuple[Any, ...]] = []  # (count, accessed, importance, id)
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                rows = c.execute(
                    "SELECT id, importance, access_count, last_accessed_at FROM memories "
                    f"WHERE {mine}id IN ({','.join('?' * len(part))})",
                    [*params, *part],
                ).fetchall()
                for mid, imp, count, accessed in rows:
                    state = reinforced_state(
                        AccessState(mid, imp, count, from_iso(accessed)), *batch[mid]
                    )
                    changes.append(
                        (state.access_count, iso(state.last_accessed_at), state.importance, mid)
                    )
            if not self.update_from_values:  # an SQLite before 3.33: one per record
                c.executemany(
                    "UPDATE memories SET access_count = ?, last_accessed_at = ?, importance = ? "
                    f"WHERE {mine}id = ?",
                    [(*change[:3], *params, change[3]) for change in changes],
                )
                continue
            # One statement per 200 records, not one per record: on PostgreSQL each
            # statement is a round trip and a plan.
            owner = "memories.user_id = ? AND " if user_id is not None else ""
            for start in range(0, len(changes), 200):
                rows_of = changes[start : start + 200]
                c.execute(
                    "UPDATE memories SET access_count = v.column1, last_accessed_at = v.column2, "
                    "importance = v.column3 "
                    f"FROM (VALUES {', '.join(['(?, ?, ?, ?)'] * len(rows_of))}) AS v "
                    f"WHERE {owner}memories.id = v.column4",
                    [*(x for change in rows_of for x in change), *params],
                )

    #: The columns :meth:`set_state` may change.
    STATE_FIELDS = frozenset({"pinned", "archived_at", "updated_at"})

    def set_state(self, c: Txn, memory_id: str, changes: Mapping[str, Any]) -> MemoryRecord | None:
        """Set lifecycle state columns of one record inside ``c``'s transaction:
        ``pinned`` (bool), ``archived_at`` (datetime or ``None``) and ``updated_at``.

        Returns:
            The record as it was before, or ``None`` when it does not exist.

        Raises:
            ValueError: a field outside :attr:`STATE_FIELDS` (a programming error).
        """
        unknown = set(changes) - self.STATE_FIELDS
        if unknown:
            raise ValueError(f"set_state cannot change {sorted(unknown)}")
        row = c.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            return None
        values = [
            int(val) if key == "pinned" else iso(val) if key in TIME_FIELDS else val
            for key, val in changes.items()
        ]
        if changes:
            c.execute(
                f"UPDATE memories SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?",
                [*values, memory_id],
            )
        return self.row_record(row)

    # -- lifecycle maintenance (lifecycle/maintain.py) ---------------------------------
    # Writes here are conditional on the state the caller planned from, so that two
    # maintenance runs, or a maintenance run and a writer, never change a record twice:
    # each returns whether it changed anything.

    def user_ids(self) -> list[str]:
        """Every user that has records, sorted."""
        return [r[0] for r in self.read("SELECT DISTINCT user_id FROM memories ORDER BY user_id")]

    def known_users(self) -> list[str]:
        """Every user the store has records or history of (deleted records' users whose
        history is kept included), sorted."""
        rows = self.read("SELECT user_id FROM memories UNION SELECT user_id FROM history")
        return sorted(str(r[0]) for r in rows)

    def top_rowid(self, at_most: int | None = None) -> tuple[int, str] | None:
        """``(rowid, id)`` of the newest record (of those with rowid ≤ ``at_most``), or
        ``None`` when there is none. While that row exists, SQLite gives every new record
        a larger rowid (a rowid is reused only after the largest one is deleted)."""
        bound, params = ("WHERE rowid <= ?", [at_most]) if at_most is not None else ("", [])
        rows = self.read(
            f"SELECT rowid, id FROM memories {bound} ORDER BY rowid DESC LIMIT 1", params
        )
        return (int(rows[0][0]), str(rows[0][1])) if rows else None

    def rowid_holds(self, rowid: int, memory_id: str) -> bool:
        """Whether the record at ``rowid`` still exists and is ``memory_id``."""
        return bool(
            self.read("SELECT 1 FROM memories WHERE rowid = ? AND id = ?", (rowid, memory_id))
        )

    def latest_update(self, user_id: str) -> str | None:
        """The latest ``updated_at`` of a user's records, as stored (ISO-8601 text)."""
        rows = self.read("SELECT MAX(updated_at) FROM memories WHERE user_id = ?", (user_id,))
        return rows[0][0] if rows else None

    def archive_unchanged(self, c: Txn, r: MemoryRecord, at: datetime) -> bool:
        """Archive ``r`` if it is still as it was read: active, not pinned, and with the
        same reinforcement fields (a recall in between may have saved it)."""
        cur = c.execute(
            "UPDATE memories SET archived_at = ?, updated_at = ? WHERE id = ? "
            "AND archived_at IS NULL AND merged_into IS NULL AND pinned = 0 "
            "AND access_count = ? AND importance = ? AND last_accessed_at IS ?",
            (iso(at), iso(at), r.id, r.access_count, r.importance, iso(r.last_accessed_at)),
        )
        return cur.rowcount > 0

    def mark_merged(self, c: Txn, merged_id: str, survivor_id: str, at: datetime) -> bool:
        """Merge record ``merged_id`` into ``survivor_id`` if both are still active and
        current and the merged one is not pinned; records merged into it before follow it
        to the survivor."""
        alive = "archived_at IS NULL AND merged_into IS NULL AND superseded_by IS NULL"
        if not c.execute(
            f"SELECT 1 FROM memories WHERE id = ? AND {alive}", (survivor_id,)
        ).fetchone():
            return False
        cur = c.execute(
            f"UPDATE memories SET merged_into = ?, updated_at = ? WHERE id = ? AND {alive} "
            "AND pinned = 0",
            (survivor_id, iso(at), merged_id),
        )
        if cur.rowcount == 0:
            return False
        c.execute(
            "UPDATE memories SET merged_into = ? WHERE merged_into = ?", (survivor_id, merged_id)
        )
        return True

    def absorb(
        self,
        c: Txn,
        survivor_id: str,
        source_ids: Sequence[str],
        *,
        importance: float,
        restated_at: datetime | None,
    ) -> None:
        """What a survivor takes from a record merged into it: its provenance (appended
        once each), the higher importance, and the restatement as an access (the count
        grows by one and the last access moves to ``restated_at`` when that is later)."""
        for source in source_ids:
            self.add_source(c, survivor_id, source)
        c.execute(
            "UPDATE memories SET importance = MAX(importance, ?), access_count = access_count + 1, "
            "last_accessed_at = CASE WHEN CAST(? AS TEXT) IS NOT NULL AND (last_accessed_at IS NULL "
            "OR last_accessed_at < ?) THEN ? ELSE last_accessed_at END WHERE id = ?",
            (importance, iso(restated_at), iso(restated_at), iso(restated_at), survivor_id),
        )

    def mark_consolidated(self, c: Txn, memory_id: str, into: str) -> bool:
        """Link record ``memory_id`` to the semantic record ``into`` that consolidates it,
        if it is active, not pinned and not consolidated yet."""
        cur = c.execute(
            "UPDATE memories SET consolidated_into = ? WHERE id = ? AND consolidated_into IS NULL "
            "AND merged_into IS NULL AND archived_at IS NULL AND pinned = 0",
            (into, memory_id),
        )
        return cur.rowcount > 0

    def release_links(
        self, c: Txn, user_id: str, gone: Sequence[str], at: datetime
    ) -> tuple[list[str], list[str]]:
        """After records ``gone`` were deleted: records merged into one of them return to
        recall, records consolidated into one of them are no longer downweighted.

        Returns:
            ``(unmerged ids, unconsolidated ids)``.
        """
        unmerged: list[str] = []
        unconsolidated: list[str] = []
        items = list(gone)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            marks = ",".join("?" * len(part))
            for column, out in (("merged_into", unmerged), ("consolidated_into", unconsolidated)):
                where = f"user_id = ? AND {column} IN ({marks})"
                out += [
                    r[0]
                    for r in c.execute(f"SELECT id FROM memories WHERE {where}", [user_id, *part])
                ]
                c.execute(
                    f"UPDATE memories SET {column} = NULL, updated_at = ? WHERE {where}",
                    [iso(at), user_id, *part],
                )
        return unmerged, unconsolidated

    def is_active(self, c: Txn, memory_id: str, *, unconsolidated: bool = False) -> bool:
        """Whether a record exists and is in recall as current knowledge (not archived,
        merged or superseded), and with ``unconsolidated`` not consolidated yet."""
        extra = " AND consolidated_into IS NULL" if unconsolidated else ""
        row = c.execute(
            "SELECT 1 FROM memories WHERE id = ? AND archived_at IS NULL AND merged_into IS NULL "
            f"AND superseded_by IS NULL{extra}",
            (memory_id,),
        ).fetchone()
        return row is not None

    def active_ids(self, user_id: str, now: datetime) -> set[str]:
        """Ids of a user's records that recall may return at ``now`` (not expired,
        archived, merged or superseded)."""
        rows = self.read(
            "SELECT id FROM memories WHERE user_id = ? AND archived_at IS NULL "
            "AND merged_into IS NULL AND superseded_by IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (user_id, iso(now)),
        )
        return {r[0] for r in rows}

    def dangling_targets(self, user_id: str) -> list[str]:
        """Ids that a user's records name in ``merged_into`` or ``consolidated_into`` but
        that no longer exist (deleted outside maintenance)."""
        rows = self.read(
            "SELECT DISTINCT t FROM (SELECT merged_into AS t FROM memories WHERE user_id = ? "
            "AND merged_into IS NOT NULL UNION SELECT consolidated_into FROM memories "
            "WHERE user_id = ? AND consolidated_into IS NOT NULL) "
            "WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = t)",
            (user_id, user_id),
        )
        return [r[0] for r in rows]
