"""Reading records back: one by id, a page of a scope, the audit trail, store counts, and
hybrid search over a user's memories."""

from __future__ import annotations

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError
from mnemolayer.models import MemoryRecord
from mnemolayer.store.sqlite.store import SQLiteStore

__all__ = ["get_record"]


def get_record(store: SQLiteStore, memory_id: str, user_id: str | None = None) -> MemoryRecord:
    """One memory by id (the body of :meth:`mnemolayer.Memory.get`).

    Raises:
        NotFoundError: no such memory, or it belongs to another user than ``user_id``.
    """
    memory_id = v.memory_id(memory_id)
    rec = store.get(memory_id)
    if rec is None or (user_id is not None and rec.user_id != user_id):
        raise NotFoundError(f"memory_id: no memory {memory_id!r}")
    return rec
