"""Records (``memories``): inserting them with their index entries and ADD events,
editing them, and reading them back by id, rowid, content hash or condition."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from mnemolayer.models import TRUSTED_SOURCES, MemoryKind, MemoryRecord
from mnemolayer.query import Scope
from mnemolayer.store.history import HistorySQL
from mnemolayer.store.index import IndexSQL
from mnemolayer.store.rows import COLUMNS, RankSignals, from_iso, iso
from mnemolayer.store.where import active_where, scope_where, user_by_rowid

if TYPE_CHECKING:
    from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.store.txn import Txn

#: A stored kind's enum member (a dict look-up, cheaper than calling the enum per row).
_KINDS: dict[str, MemoryKind] = {k.value: k for k in MemoryKind}

__all__ = ["RecordsSQL"]


class RecordsSQL(HistorySQL, IndexSQL):
    """Writes and reads of records."""

    # -- writes --------------------------------------------------------------------------

    def insert(
        self,
        c: Txn,
        record: MemoryRecord,
        terms: str,
        vectors: np.ndarray,
        *,
        history: bool = True,
    ) -> MemoryRecord | None:
        """Insert one record with its keyword terms, vectors and (unless ``history`` is
        false, as on import) an ADD history event, inside ``c``'s transaction.

        Returns ``None`` when a record with the same user and content hash exists."""
        rowid = self._insert_row(c, record)
        if rowid is None:
            return None
        self._index_terms(
            c, rowid, record.user_id, self._terms(record.user_id, terms), replace=False
        )
        self._put_vectors(c, rowid, record.user_id, vectors)
        if history:
            self.add_history(c, record.id, record.user_id, "ADD", None, record, record.created_at)
        return record

    def insert_many(
        self, c: Txn, items: Sequence[tuple[MemoryRecord, str, np.ndarray]]
    ) -> list[bool]:
        """:meth:`insert` for each ``(record, terms, vectors)`` (with its ADD history
        event), in order, inside ``c``'s transaction; for each, whether it was inserted
        (``False``: the user already has a record with that content hash).

        A hook with a default: one :meth:`insert` after the other (an engine with
        round trips to a server batches them)."""
        return [self.insert(c, r, t, v) is not None for r, t, v in items]

    def update_record(self, c: Txn, r: MemoryRecord) -> None:
        """Write a record's editable fields (content, metadata, importance, hash, model,
        pending enrichment) and count one more revision of it: what was derived from its
        text before, but not written yet, is then discarded
        (:mod:`~mnemolayer.store.pending`)."""
        c.execute(
            "UPDATE memories SET content = ?, metadata = ?, importance = ?, updated_at = ?, "
            "content_hash = ?, embedding_model = ?, pending_embedding = ?, "
            "pending_extraction = ?, flags = ?, revision = revision + 1 WHERE id = ?",
            (
                self._enc(r.user_id, "memories.content", r.id, r.content),
                self._enc(r.user_id, "memories.metadata", r.id,
                          json.dumps(r.metadata, ensure_ascii=False, allow_nan=False)),
                r.importance, iso(r.updated_at), self._hash(r.user_id, r.content_hash),
                r.embedding_model, int("embedding" in r.pending),
                int("extraction" in r.pending), json.dumps(r.flags), r.id,
            ),
        )  # fmt: skip

    def set_validity(
        self,
        c: Txn,
        memory_id: str,
        *,
        valid_from: datetime | None,
        valid_to: datetime | None,
        superseded_by: str | None,
        at: datetime,
    ) -> MemoryRecord | None:
        """Set a record's validity (a fact's sentence record following its fact):
        ``valid_from``, ``valid_to`` and ``superseded_by``; bumps the user's generation
        when that changes whether the record is current. Returns the record as it was
        before, or ``None`` if it does not exist."""
        row = c.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            return None
        old = self.row_record(row)
        if (old.valid_from, old.valid_to, old.superseded_by) == (
            valid_from,
            valid_to,
            superseded_by,
        ):
            return old
        c.execute(
            "UPDATE memories SET valid_from = ?, valid_to = ?, superseded_by = ?, updated_at = ? "
            "WHERE id = ?",
            (iso(valid_from), iso(valid_to), superseded_by, iso(at), memory_id),
        )
        if (old.superseded_by is None) != (superseded_by is None):
            self.bump_generation(c, old.user_id)
        return old

    # -- reads ---------------------------------------------------------------------------

    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord | None:
        """The record ``memory_id`` (of ``user_id`` when given: then the look-up is by
        the distribution column too, one shard on a sharded PostgreSQL), or ``None``."""
        mine, params = user_by_rowid(user_id)
        rows = self.read(f"SELECT {COLUMNS} FROM memories WHERE {mine}id = ?", (*params, memory_id))
        return self.row_record(rows[0]) if rows else None

    def get_many_by_rowid(
        self, rowids: Sequence[int], *, user_id: str | None = None
    ) -> dict[int, MemoryRecord]:
        """Records by rowid (the key of the keyword and vector indexes); only
        ``user_id``'s when given (one shard on a sharded PostgreSQL)."""
        out: dict[int, MemoryRecord] = {}
        ids = list(rowids)
        mine, params = user_by_rowid(user_id)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.read(
                f"SELECT rowid, {COLUMNS} FROM memories "
                f"WHERE {mine}rowid IN ({','.join('?' * len(part))})",
                [*params, *part],
            )
            for row in rows:
                out[row[0]] = self.row_record(row[1:])
        return out

    def rank_signals(
        self, rowids: Sequence[int], *, user_id: str | None = None
    ) -> dict[int, RankSignals]:
        """Importance, event time and access count by rowid (records that still exist;
        only ``user_id``'s when given)."""
        return {rid: sig for rid, (_, sig) in self._rank_rows(rowids, user_id).items()}

    def _rank_rows(
        self, rowids: Sequence[int], user_id: str | None
    ) -> dict[int, tuple[str, RankSignals]]:
        """:meth:`rank_signals` with each record's id: ``{rowid: (id, signals)}``."""
        out: dict[int, tuple[str, RankSignals]] = {}
        ids = list(rowids)
        mine, params = user_by_rowid(user_id)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            if self._sql_reads_outcomes():
                rows = self.read(
                    "SELECT rowid, importance, COALESCE(occurred_at, created_at), access_count, "
                    "kind, last_accessed_at, pinned, CASE WHEN kind = 'procedural' AND "
                    "json_type(metadata, '$.outcome_count') = 'integer' "
                    "THEN json_extract(metadata, '$.outcome_count') END, id "
                    f"FROM memories WHERE {mine}rowid IN ({','.join('?' * len(part))})",
                    [*params, *part],
                )
            else:
                rows = [
                    (
                        *r[:7],
                        self._outcomes(r[7], r[8], r[9]) if r[4] == "procedural" else None,
                        r[8],
                    )
                    for r in self.read(
                        "SELECT rowid, importance, COALESCE(occurred_at, created_at), "
                        "access_count, kind, last_accessed_at, pinned, user_id, id, "
                        "CASE WHEN kind = 'procedural' THEN metadata END "
                        f"FROM memories WHERE {mine}rowid IN ({','.join('?' * len(part))})",
                        [*params, *part],
                    )
                ]
            for rid, imp, when, count, kind, accessed, pinned, outcomes, mid in rows:
                out[rid] = mid, RankSignals(
                    imp, datetime.fromisoformat(when), count, _KINDS[kind],
                    from_iso(accessed), bool(pinned),
                    outcomes if outcomes is not None and outcomes > 0 else 1,
                )  # fmt: skip
        return out

    def find_by_hash(
        self, c: Txn | None, user_id: str, hashes: Sequence[str]
    ) -> dict[str, MemoryRecord]:
        """Records of ``user_id`` by content hash, inside transaction ``c`` or (``None``) as
        a plain read that takes no write lock."""
        out: dict[str, MemoryRecord] = {}
        for start in range(0, len(hashes), 500):
            given = list(hashes[start : start + 500])
            # Encrypted: the stored keys are keyed hashes; results keep the caller's keys.
            stored = {self._hash(user_id, h, create=False): h for h in given}
            part = list(stored)
            sql = (
                f"SELECT {COLUMNS} FROM memories WHERE user_id = ? "
                f"AND content_hash IN ({','.join('?' * len(part))})"
            )
            rows = self._rows(c, sql, [user_id, *part])
            for row in rows:
                rec = self.row_record(row)
                out[stored.get(rec.content_hash, rec.content_hash)] = rec
        return out

    def select(
        self, where: str, params: Sequence[Any], *, order: str = "id", limit: int | None = None
    ) -> list[MemoryRecord]:
        sql = f"SELECT {COLUMNS} FROM memories WHERE {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [self.row_record(r) for r in self.read(sql, params)]

    def records_page(
        self, scope: Scope | None, *, after: str | None = None, limit: int
    ) -> list[MemoryRecord]:
        """Up to ``limit`` records in id order, with ids after ``after`` (``None``: from
        the first): those of ``scope`` (its metadata filter compiled by
        :meth:`compile_filter`), or every user's when ``scope`` is ``None``."""
        if scope is None:
            where, params = "1", []
        else:
            cond, cparams = scope_where(scope, "", self.compile_filter)
            where, params = f"user_id = ? AND {cond}", [scope.user_id, *cparams]
        if after is not None:
            where += " AND id > ?"
            params.append(after)
        return self.select(where, params, limit=limit)

    def records_by_id(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The stored records among ``ids``, in id order (ids not stored are absent)."""
        items = list(ids)
        out: list[MemoryRecord] = []
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            out += self.select(f"id IN ({','.join('?' * len(part))})", part)
        return sorted(out, key=lambda r: r.id)

    def current_records_page(
        self, user_id: str, *, after: str | None = None, limit: int
    ) -> list[MemoryRecord]:
        """Up to ``limit`` of a user's current records in id order, after id ``after``:
        not superseded, archived, merged or session-only (expiry is not considered)."""
        return self.select(
            "user_id = ? AND id > ? AND superseded_by IS NULL AND archived_at IS NULL "
            "AND merged_into IS NULL AND session_only = 0",
            [user_id, after or ""],
            limit=limit,
        )

    def active_records(
        self,
        scope: Scope,
        *,
        now: datetime,
        lifecycle: LifecycleConfig | None,
        include_history: bool = False,
    ) -> list[MemoryRecord]:
        """The records of ``scope`` that are active at ``now`` (not expired, archived or
        merged; superseded ones only with ``include_history``;
        :func:`~mnemolayer.store.where.active_where` with ``lifecycle``'s default TTLs),
        in id order."""
        cond, params = scope_where(scope, "", self.compile_filter)
        act, act_params = active_where(now, include_history=include_history, lifecycle=lifecycle)
        return self.select(
            f"user_id = ? AND {cond} AND {act}", [scope.user_id, *params, *act_params]
        )

    def session_turns(
        self, user_id: str, session_id: str, *, now: datetime, lifecycle: LifecycleConfig | None
    ) -> list[MemoryRecord]:
        """A session's episodic records of every agent, session-only ones left out, that
        are alive at ``now`` (not expired, archived or merged; superseded ones kept), in
        the order they happened (``occurred_at``, else ``created_at``; then id)."""
        alive, params = active_where(now, include_history=True, lifecycle=lifecycle)
        return self.select(
            f"user_id = ? AND session_id = ? AND kind = ? AND session_only = 0 AND {alive}",
            [user_id, session_id, MemoryKind.EPISODIC.value, *params],
            order="COALESCE(occurred_at, created_at), id",
        )

    def select_rows(self, where: str, params: Sequence[Any]) -> list[tuple[int, MemoryRecord]]:
        """``(rowid, record)`` of the matching records, oldest insert first."""
        rows = self.read(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE {where} ORDER BY rowid", params
        )
        return [(int(r[0]), self.row_record(r[1:])) for r in rows]

    def rowids(self, where: str, params: Sequence[Any]) -> set[int]:
        return {r[0] for r in self.read(f"SELECT rowid FROM memories WHERE {where}", params)}

    def ids_where(self, where: str, params: Sequence[Any]) -> set[str]:
        """Ids of the records matching ``where``."""
        return {r[0] for r in self.read(f"SELECT id FROM memories WHERE {where}", params)}

    def untrusted_ids(self, user_id: str, ids: Sequence[str]) -> set[str]:
        """Which of the user's records ``ids`` come from an untrusted source (any but
        :data:`~mnemolayer.models.TRUSTED_SOURCES`)."""
        trusted = sorted(TRUSTED_SOURCES)
        found: set[str] = set()
        items = list(dict.fromkeys(ids))
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            found |= self.ids_where(
                f"user_id = ? AND id IN ({','.join('?' * len(part))}) "
                f"AND source NOT IN ({','.join('?' * len(trusted))})",
                [user_id, *part, *trusted],
            )
        return found

    def ids(self) -> list[str]:
        """Every record id, oldest insert first."""
        return [r[0] for r in self.read("SELECT id FROM memories ORDER BY rowid")]

    def existing_ids(self, c: Txn, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored records (inside ``c``'s transaction)."""
        found: set[str] = set()
        items = list(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            found.update(
                r[0]
                for r in c.execute(
                    f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(part))})", part
                )
            )
        return found

    def citing(self, c: Txn | None, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """A user's semantic records whose provenance (``source_ids``) names any of
        ``ids``: facts' sentence records and consolidations."""
        out: dict[str, MemoryRecord] = {}
        items = list(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            sql = (
                f"SELECT {COLUMNS} FROM memories WHERE user_id = ? AND kind = 'semantic' "
                "AND EXISTS (SELECT 1 FROM json_each(source_ids) j "
                f"WHERE j.value IN ({','.join('?' * len(part))}))"
            )
            rows = self._rows(c, sql, [user_id, *part])
            for row in rows:
                rec = self.row_record(row)
                out[rec.id] = rec
        return list(out.values())

    def counts(self, user_id: str | None) -> dict[str, Any]:
        where, params = ("user_id = ?", (user_id,)) if user_id is not None else ("1", ())
        by_kind = dict(
            self.read(
                f"SELECT kind, COUNT(*) FROM memories WHERE {where} GROUP BY kind ORDER BY kind",
                params,
            )
        )
        users = self.read(f"SELECT COUNT(DISTINCT user_id) FROM memories WHERE {where}", params)[0][
            0
        ]
        vectors = self.read(f"SELECT COUNT(*) FROM vectors WHERE {where}", params)[0][0]
        history = self.read(f"SELECT COUNT(*) FROM history WHERE {where}", params)[0][0]
        return {
            "memories": sum(by_kind.values()),
            "by_kind": by_kind,
            "users": users,
            "vectors": vectors,
            "history_events": history,
        }
