"""Deleting records with everything that indexes them (keyword entries, vectors), and
the counts verified deletion (:mod:`mnemolayer.privacy.erasure`) takes before, during and
after a deletion: rows of a scope per table, what is left of deleted records in the
indexes, who still cites them.

What erasure needs beyond this (the tables with a ``user_id`` column, the terms only a
user's records hold, secure deletion) differs in kind between the engines and is a hook
of :class:`~mnemolayer.store.core.StoreCore`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mnemolayer.query import Scope
from mnemolayer.store.index import IndexSQL
from mnemolayer.store.txn import Txn
from mnemolayer.store.where import scope_where, user_by_rowid

__all__ = ["EraseSQL"]

_CHUNK = 500


class EraseSQL(IndexSQL):
    """Deletes of records, and the counts that verify them.

    A ``scope`` here is :class:`~mnemolayer.query.Scope` (its metadata filter compiled by
    :meth:`~mnemolayer.store.core.StoreCore.compile_filter`); ``c`` is a transaction
    (:meth:`transact`), or ``None`` for a plain read where the argument allows it.
    """

    def delete_where(self, c: Txn, where: str, params: Sequence[Any]) -> list[tuple[int, str, str]]:
        """Delete matching records from records, keyword index and vectors; returns
        ``(rowid, id, user_id)`` of what was removed."""
        gone = c.execute(
            f"SELECT rowid, id, user_id FROM memories WHERE {where}", params
        ).fetchall()
        by_user: dict[str, list[int]] = {}
        for rowid, _, user_id in gone:
            by_user.setdefault(user_id, []).append(rowid)
        # By user and rowid: one shard per statement on a store sharded by user.
        for user_id, rowids in by_user.items():
            for start in range(0, len(rowids), 500):
                part = rowids[start : start + 500]
                marks = ",".join("?" * len(part))
                self._unindex_terms(c, user_id, part)
                mine, user = user_by_rowid(user_id)
                for sql in (
                    f"DELETE FROM vectors WHERE {mine}memory_rowid IN ({marks})",
                    f"DELETE FROM memories WHERE {mine}rowid IN ({marks})",
                ):
                    c.execute(sql, [*user, *part])
            self.bump_generation(c, user_id)
        return gone

    # -- deleting a scope ----------------------------------------------------------------

    def _scope(self, scope: Scope) -> tuple[str, list[Any], bool]:
        """``user_id = ? AND <scope>``, its parameters, and whether the scope is the
        whole user (no narrower condition)."""
        where, params = scope_where(scope, "", self.compile_filter)
        return f"user_id = ? AND {where}", [scope.user_id, *params], where == "1"

    def scope_rowids(self, c: Txn | None, scope: Scope) -> set[int]:
        """Rowids of the records in ``scope`` (the keys of their keyword and vector rows)."""
        where, params, _whole = self._scope(scope)
        return {
            int(r[0]) for r in self._rows(c, f"SELECT rowid FROM memories WHERE {where}", params)
        }

    def user_memory_ids(self, c: Txn | None, user_id: str) -> set[str]:
        """Ids of a user's records, and of every record the user's history names (records
        gone already included)."""
        rows = self._rows(
            c,
            "SELECT id FROM memories WHERE user_id = ? UNION "
            "SELECT memory_id FROM history WHERE user_id = ?",
            (user_id, user_id),
        )
        return {str(r[0]) for r in rows}

    def delete_scope(self, c: Txn, scope: Scope) -> list[tuple[int, str, str]]:
        """Delete the records of ``scope`` with their keyword rows and vectors
        (:meth:`delete_where`): ``(rowid, id, user_id)`` of each."""
        where, params, _whole = self._scope(scope)
        return self.delete_where(c, where, params)

    def delete_ids(
        self, c: Txn, ids: Sequence[str], *, user_id: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Delete records ``ids`` (only ``user_id``'s when given) with their keyword rows
        and vectors: ``(rowid, id, user_id)`` of each deleted."""
        items = list(ids)
        gone: list[tuple[int, str, str]] = []
        for start in range(0, len(items), _CHUNK):
            part = items[start : start + _CHUNK]
            where = f"id IN ({','.join('?' * len(part))})"
            params: list[Any] = list(part)
            if user_id is not None:
                where, params = f"user_id = ? AND {where}", [user_id, *part]
            gone += self.delete_where(c, where, params)
        return gone

    def delete_session_only(self, c: Txn, scope: Scope) -> list[tuple[int, str, str]]:
        """Delete the session-only records of ``scope`` (a session, of one agent or all)
        with their index rows: ``(rowid, id, user_id)`` of each deleted."""
        where, params, _whole = self._scope(scope)
        return self.delete_where(c, f"{where} AND session_only = 1", params)

    def delete_user_rows(self, c: Txn, user_id: str, tables: Iterable[str]) -> None:
        """Delete the user's rows from each of ``tables`` (tables with a ``user_id``
        column, :meth:`~mnemolayer.store.core.StoreCore.user_tables`)."""
        for table in tables:
            c.execute(f"DELETE FROM {_ident(table)} WHERE user_id = ?", (user_id,))

    # -- counting what a scope holds ------------------------------------------------------

    def user_row_counts(self, c: Txn | None, user_id: str, tables: Iterable[str]) -> dict[str, int]:
        """Rows of ``user_id`` in each of ``tables``: ``{table: rows}``."""
        return {
            table: int(
                self._rows(
                    c, f"SELECT count(*) FROM {_ident(table)} WHERE user_id = ?", (user_id,)
                )[0][0]
            )
            for table in tables
        }

    def scope_counts(self, c: Txn | None, scope: Scope, tables: Iterable[str]) -> dict[str, int]:
        """What ``scope`` holds: for a whole user (no narrower condition) the user's rows
        per table of ``tables``, for a narrower scope its ``memories``; then, for either,
        ``keyword_index``: keyword rows of the scope's records, and ``vectors``: their
        vector rows (for a whole user the ``vectors`` table's count, which is the same
        rows)."""
        where, params, whole = self._scope(scope)
        if whole:
            counts = self.user_row_counts(c, scope.user_id, tables)
        else:
            counts = {
                "memories": self._count(c, f"SELECT count(*) FROM memories WHERE {where}", params)
            }
        mine = f"(SELECT rowid FROM memories WHERE {where})"
        counts["keyword_index"] = self._count(
            c, f"SELECT count(*) FROM memories_fts WHERE rowid IN {mine}", params
        )
        vectors = self._count(
            c, f"SELECT count(*) FROM vectors WHERE memory_rowid IN {mine}", params
        )
        counts["vectors"] = counts.get("vectors", vectors) if whole else vectors
        return counts

    def index_leftovers(self, rowids: Iterable[int]) -> dict[str, int]:
        """What the indexes still hold of deleted records ``rowids``, and of records that
        are gone at all: ``keyword_index`` and ``vectors_of_deleted`` (rows of
        ``rowids``), ``keyword_index_orphans`` and ``vector_orphans`` (rows whose record
        no longer exists)."""
        ids = sorted(set(rowids))
        return {
            "keyword_index": self._count_in("SELECT count(*) FROM memories_fts WHERE rowid", ids),
            "keyword_index_orphans": self._count(
                None,
                "SELECT count(*) FROM memories_fts WHERE rowid NOT IN (SELECT rowid FROM memories)",
                (),
            ),
            "vectors_of_deleted": self._count_in(
                "SELECT count(*) FROM vectors WHERE memory_rowid", ids
            ),
            "vector_orphans": self._count(
                None,
                "SELECT count(*) FROM vectors WHERE memory_rowid NOT IN (SELECT rowid FROM memories)",
                (),
            ),
        }

    def citations_left(self, memory_ids: Iterable[str]) -> dict[str, int]:
        """What still names deleted records ``memory_ids``, under any user:
        ``history_of_deleted`` (history events) and ``facts_citing_deleted`` (facts
        citing one as a source, or whose sentence record it is)."""
        ids = sorted(set(memory_ids))
        return {
            "history_of_deleted": self._count_in(
                "SELECT count(*) FROM history WHERE memory_id", ids
            ),
            "facts_citing_deleted": self._count_in(
                "SELECT count(*) FROM fact_sources WHERE source_id", ids
            )
            + self._count_in("SELECT count(*) FROM facts WHERE memory_id", ids),
        }

    # -- forgetting one record (privacy/forget.py) -----------------------------------------

    def rowids_of(self, c: Txn | None, ids: Sequence[str]) -> set[int]:
        """Rowids of records ``ids`` (the keys of their keyword and vector rows)."""
        out: set[int] = set()
        for start in range(0, len(ids), _CHUNK):
            part = list(ids[start : start + _CHUNK])
            sql = f"SELECT rowid FROM memories WHERE id IN ({','.join('?' * len(part))})"
            out |= {int(r[0]) for r in self._rows(c, sql, part)}
        return out

    def count_ids(self, ids: Sequence[str]) -> int:
        """How many of records ``ids`` exist."""
        return self._count_in("SELECT count(*) FROM memories WHERE id", list(ids))

    def fact_count(self, c: Txn | None, user_id: str) -> int:
        """The user's facts (current and past)."""
        return self._count(c, "SELECT count(*) FROM facts WHERE user_id = ?", (user_id,))

    def _count(self, c: Txn | None, sql: str, params: Sequence[Any]) -> int:
        return int(self._rows(c, sql, params)[0][0])

    def _count_in(self, head: str, values: Sequence[Any]) -> int:
        """``head IN (values)`` counted in chunks (``head`` ends with the column)."""
        total = 0
        for start in range(0, len(values), _CHUNK):
            part = list(values[start : start + _CHUNK])
            total += self._count(None, f"{head} IN ({','.join('?' * len(part))})", part)
        return total


def _ident(name: str) -> str:
    """A table name as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
