"""Enrichment still to do, and the revision of each record's content.

``memories.pending_embedding`` and ``pending_extraction`` mark a record stored while its
embedder or extractor failed (:attr:`~mnemolayer.models.MemoryRecord.pending`);
``memories.revision`` counts the edits of its content (:meth:`RecordsSQL.update_record
<mnemolayer.store.records.RecordsSQL.update_record>` adds one). What is derived from a
record's text outside the write transaction (vectors, facts, keyword terms: the slow
model calls run before it opens) is written by the conditional statements here, which
take effect only while the record is still at the revision it was read at: a result
computed from words that were edited meanwhile is discarded, in the same transaction
that would have written it, on either engine and whichever process edited it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from mnemolayer.models import PENDING_KINDS, MemoryRecord, PendingKind
from mnemolayer.store.records import RecordsSQL
from mnemolayer.store.rows import COLUMNS, iso
from mnemolayer.store.txn import Txn

__all__ = ["PendingSQL"]

#: The column of each kind of pending enrichment.
_FLAG: dict[str, str] = {kind: f"pending_{kind}" for kind in PENDING_KINDS}
#: Records waiting for anything: the condition of the partial index ``memories_pending``.
_PENDING = "(pending_embedding = 1 OR pending_extraction = 1)"


def _flag(kind: PendingKind) -> str:
    """The column of ``kind`` (one of a fixed set: never caller text in SQL)."""
    try:
        return _FLAG[kind]
    except KeyError:
        raise ValueError(
            f"unknown pending kind {kind!r}; expected one of {PENDING_KINDS}"
        ) from None


class PendingSQL(RecordsSQL):
    """Reads and conditional writes of pending enrichment and content revisions."""

    # -- reads ---------------------------------------------------------------------------

    def records_with_revision(self, ids: Sequence[str]) -> list[tuple[MemoryRecord, int]]:
        """The stored records among ``ids``, each with the revision of its content read
        in the same statement (so the text is the one of that revision), in id order."""
        items = list(ids)
        out: list[tuple[MemoryRecord, int]] = []
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            rows = self.read(
                f"SELECT revision, {COLUMNS} FROM memories "
                f"WHERE id IN ({','.join('?' * len(part))})",
                part,
            )
            out += [(self.row_record(r[1:]), int(r[0])) for r in rows]
        return sorted(out, key=lambda x: x[0].id)

    def pending_records(
        self, user_id: str, kind: PendingKind, *, after: str | None = None, limit: int = 64
    ) -> list[tuple[MemoryRecord, int]]:
        """Up to ``limit`` of a user's records that wait for ``kind``, in id order after
        id ``after`` (``None``: from the first), each with its content revision: what a
        completion claims (:meth:`claim`, :meth:`write_vectors`)."""
        # The OR term as the partial index memories_pending states it: SQLite uses a
        # partial index only for a query that repeats its condition.
        rows = self.read(
            f"SELECT revision, {COLUMNS} FROM memories WHERE user_id = ? AND {_PENDING} "
            f"AND {_flag(kind)} = 1 AND id > ? ORDER BY id LIMIT ?",
            (user_id, after or "", int(limit)),
        )
        return [(self.row_record(r[1:]), int(r[0])) for r in rows]

    def pending_embeddings(self, limit: int = 64) -> list[tuple[MemoryRecord, int]]:
        """Up to ``limit`` records of any user that wait for their embedding, oldest id
        first, each with its content revision: what the background embedding queue
        claims next (:mod:`mnemolayer.layers.episodic.queue`). A record completed or
        edited since is written by nobody (:meth:`write_vectors`)."""
        rows = self.read(
            f"SELECT revision, {COLUMNS} FROM memories WHERE {_PENDING} "
            "AND pending_embedding = 1 ORDER BY id LIMIT ?",
            (int(limit),),
        )
        return [(self.row_record(r[1:]), int(r[0])) for r in rows]

    def pending_counts(self, user_id: str | None = None) -> dict[str, int]:
        """How many records (of ``user_id``, else of the store) wait for each kind of
        enrichment: ``{"embedding": n, "extraction": m}``."""
        where, params = ("user_id = ? AND ", [user_id]) if user_id is not None else ("", [])
        row = self.read(
            f"SELECT {', '.join(f'COALESCE(SUM({_FLAG[k]}), 0)' for k in PENDING_KINDS)} "
            f"FROM memories WHERE {where}{_PENDING}",
            params,
        )[0]
        return {k: int(n) for k, n in zip(PENDING_KINDS, row, strict=True)}

    # -- conditional writes (inside a transaction) ---------------------------------------

    def claim(
        self,
        c: Txn,
        memory_id: str,
        kind: PendingKind,
        revision: int,
        *,
        at: datetime | None = None,
        pending_only: bool = True,
    ) -> bool:
        """Mark ``kind`` done for a record whose content is still at ``revision`` (and,
        with ``pending_only``, that still waits for it), inside ``c``'s transaction; its
        ``updated_at`` becomes ``at`` (``None``: unchanged). The caller writes what it derived only when this
        returns ``True``: a record edited, deleted or completed by another writer since
        it was read is left alone, so completion is idempotent."""
        cond = f" AND {_flag(kind)} = 1" if pending_only else ""
        cur = c.execute(
            f"UPDATE memories SET {_flag(kind)} = 0, updated_at = COALESCE(?, updated_at) "
            f"WHERE id = ? AND revision = ?{cond}",
            (iso(at), memory_id, int(revision)),
        )
        return int(cur.rowcount) == 1

    def mark_pending(self, c: Txn, memory_id: str, kind: PendingKind, revision: int) -> bool:
        """Mark a record whose content is still at ``revision`` as waiting for ``kind``
        (its enrichment failed); ``False`` when it was edited or deleted meanwhile."""
        cur = c.execute(
            f"UPDATE memories SET {_flag(kind)} = 1 WHERE id = ? AND revision = ?",
            (memory_id, int(revision)),
        )
        return int(cur.rowcount) == 1

    def write_vectors(
        self,
        c: Txn,
        memory_id: str,
        revision: int,
        vectors: np.ndarray,
        *,
        model: str,
        at: datetime | None = None,
        pending_only: bool = False,
    ) -> bool:
        """Replace a record's vectors with ``vectors`` (made by ``model`` from its text at
        ``revision``) and clear its pending embedding, if its content is still at that
        revision (and, with ``pending_only``, its embedding still pending); ``at``
        (``None``: unchanged) becomes its ``updated_at``. Replaced, never added to:
        writing the same vectors twice leaves one set.

        Returns:
            Whether they were written (``False``: edited, deleted or, with
            ``pending_only``, embedded by another writer meanwhile).
        """
        cond = " AND pending_embedding = 1" if pending_only else ""
        cur = c.execute(
            "UPDATE memories SET embedding_model = ?, pending_embedding = 0, "
            f"updated_at = COALESCE(?, updated_at) WHERE id = ? AND revision = ?{cond}",
            (model, iso(at), memory_id, int(revision)),
        )
        if int(cur.rowcount) != 1:
            return False
        rowid, user_id = c.execute(
            "SELECT rowid, user_id FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        self._drop_vectors(c, int(rowid), str(user_id))
        self._put_vectors(c, int(rowid), str(user_id), vectors)
        return True
