"""The audit history of records (``history``): one event per add, update, delete and
lifecycle change, with the contents before and after (sealed in an encrypted store).
Deleted memories keep their history until their user is deleted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mnemolayer.models import HistoryEvent, MemoryRecord, new_id
from mnemolayer.store.core import StoreCore
from mnemolayer.store.rows import from_iso, iso
from mnemolayer.store.txn import Txn

__all__ = ["HistorySQL"]

_EVENT_COLUMNS = (
    "id, memory_id, user_id, event, old_content, new_content, old_metadata, "
    "new_metadata, created_at"
)


class HistorySQL(StoreCore):
    """Writing and reading history events."""

    def add_history(
        self,
        c: Txn,
        memory_id: str,
        user_id: str,
        event: str,
        old: MemoryRecord | None,
        new: MemoryRecord | None,
        at: datetime,
    ) -> None:
        self.insert_history(
            c,
            HistoryEvent.model_construct(
                id=new_id(), memory_id=memory_id, user_id=user_id, event=event,
                old_content=old.content if old else None,
                new_content=new.content if new else None,
                old_metadata=old.metadata if old else None,
                new_metadata=new.metadata if new else None, created_at=at,
            ),
            conflict="",
        )  # fmt: skip

    def insert_history(
        self,
        c: Txn,
        e: HistoryEvent,
        *,
        conflict: str = " ON CONFLICT DO NOTHING",
    ) -> None:
        """Write one history event (encrypted fields sealed); an existing id is kept."""
        u, h = e.user_id, e.id
        old_m = (
            json.dumps(e.old_metadata, ensure_ascii=False) if e.old_metadata is not None else None
        )
        new_m = (
            json.dumps(e.new_metadata, ensure_ascii=False) if e.new_metadata is not None else None
        )
        c.execute(
            f"INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?){conflict}",
            (
                h, e.memory_id, u, e.event,
                self._enc(u, "history.old_content", h, e.old_content),
                self._enc(u, "history.new_content", h, e.new_content),
                self._enc(u, "history.old_metadata", h, old_m),
                self._enc(u, "history.new_metadata", h, new_m),
                iso(e.created_at),
            ),
        )  # fmt: skip

    def history(self, memory_id: str) -> list[HistoryEvent]:
        rows = self.read(
            f"SELECT {_EVENT_COLUMNS} FROM history WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        )
        return [self._history_event(r) for r in rows]

    def history_rows(self, user_id: str | None) -> list[HistoryEvent]:
        where, params = ("user_id = ?", (user_id,)) if user_id is not None else ("1", ())
        rows = self.read(
            f"SELECT {_EVENT_COLUMNS} FROM history WHERE {where} ORDER BY id",
            params,
        )
        return [self._history_event(r) for r in rows]

    def _history_event(self, r: Sequence[Any]) -> HistoryEvent:
        hid, uid = r[0], r[2]
        old_c, new_c, old_m, new_m = (
            self._dec(uid, f"history.{col}", hid, val)
            for col, val in zip(
                ("old_content", "new_content", "old_metadata", "new_metadata"), r[4:8], strict=True
            )
        )
        return HistoryEvent(
            id=hid, memory_id=r[1], user_id=uid, event=r[3], old_content=old_c,
            new_content=new_c, old_metadata=json.loads(old_m) if old_m else None,
            new_metadata=json.loads(new_m) if new_m else None, created_at=from_iso(r[8]),
        )  # fmt: skip

    def restored_at(self, ids: Sequence[str]) -> dict[str, datetime]:
        """For each of ``ids`` that was ever restored from the archive, the time of its
        latest ``RESTORE`` history event."""
        out: dict[str, datetime] = {}
        items = list(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            for mid, at in self.read(
                "SELECT memory_id, MAX(created_at) FROM history WHERE event = 'RESTORE' "
                f"AND memory_id IN ({','.join('?' * len(part))}) GROUP BY memory_id",
                part,
            ):
                out[str(mid)] = datetime.fromisoformat(at)
        return out

    def owners(self, ids: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
        """Who owns each id: ``(stored records, ids known only from history)`` as
        ``{id: user_id}`` (deleted memories keep their history until ``delete_all``)."""
        stored: dict[str, str] = {}
        past: dict[str, str] = {}
        items = list(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            marks = ",".join("?" * len(part))
            for mid, uid in self.read(
                f"SELECT id, user_id FROM memories WHERE id IN ({marks})", part
            ):
                stored[mid] = uid
            for mid, uid in self.read(
                f"SELECT DISTINCT memory_id, user_id FROM history WHERE memory_id IN ({marks})",
                part,
            ):
                past.setdefault(mid, uid)
        return stored, {k: val for k, val in past.items() if k not in stored}

    def delete_user_history(self, c: Txn, user_id: str) -> None:
        c.execute("DELETE FROM history WHERE user_id = ?", (user_id,))

    def delete_memory_history(self, c: Txn, memory_ids: Sequence[str]) -> int:
        """Delete every history event of records ``memory_ids`` (any user); the events
        removed."""
        removed = 0
        for start in range(0, len(memory_ids), 500):
            part = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            removed += c.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", part).rowcount
        return removed

    def history_contents(self, memory_ids: Sequence[str]) -> int:
        """History events of records ``memory_ids`` (any user) that still hold a content
        or metadata, before or after."""
        total = 0
        for start in range(0, len(memory_ids), 500):
            part = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            total += int(
                self.read(
                    f"SELECT count(*) FROM history WHERE memory_id IN ({marks}) AND ("
                    "old_content IS NOT NULL OR new_content IS NOT NULL "
                    "OR old_metadata IS NOT NULL OR new_metadata IS NOT NULL)",
                    part,
                )[0][0]
            )
        return total
