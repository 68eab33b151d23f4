"""Deleting records with everything that indexes them (keyword entries, vectors).

What erasure needs beyond this (:mod:`mnemolayer.privacy.erasure`: the tables with a
``user_id`` column, the terms only a user's records hold, secure deletion) differs in
kind between the engines and is a hook of :class:`~mnemolayer.store.core.StoreCore`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemolayer.store.index import IndexSQL
from mnemolayer.store.txn import Txn

__all__ = ["EraseSQL"]


class EraseSQL(IndexSQL):
    """Deletes of records."""

    def delete_where(self, c: Txn, where: str, params: Sequence[Any]) -> list[tuple[int, str, str]]:
        """Delete matching records from records, keyword index and vectors; returns
        ``(rowid, id, user_id)`` of what was removed."""
        gone = c.execute(
            f"SELECT rowid, id, user_id FROM memories WHERE {where}", params
        ).fetchall()
        for start in range(0, len(gone), 500):
            part = [g[0] for g in gone[start : start + 500]]
            marks = ",".join("?" * len(part))
            c.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", part)
            c.execute(f"DELETE FROM vectors WHERE memory_rowid IN ({marks})", part)
            c.execute(f"DELETE FROM memories WHERE rowid IN ({marks})", part)
        for user_id in {g[2] for g in gone}:
            self.bump_generation(c, user_id)
        return gone
