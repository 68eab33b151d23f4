"""What search reads beside the records: each record's keyword terms and chunk vectors
(written through the engine's hooks), the per-user generation that tells caches a
user's index changed, and the links search follows (sessions, facts' sources)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mnemolayer.store.core import StoreCore
from mnemolayer.store.txn import Txn
from mnemolayer.store.where import user_by_rowid

__all__ = ["IndexSQL"]


class IndexSQL(StoreCore):
    """Keyword terms, vectors and generations of records."""

    def replace_index(self, c: Txn, memory_id: str, terms: str, vectors: np.ndarray) -> None:
        """Replace a record's keyword terms and vectors (after its content changed)."""
        rowid, user_id = c.execute(
            "SELECT rowid, user_id FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        self._index_terms(c, rowid, user_id, self._terms(user_id, terms), replace=True)
        self._drop_vectors(c, rowid, user_id)
        self._put_vectors(c, rowid, user_id, vectors)

    def replace_terms(self, c: Txn, memory_id: str, terms: str) -> None:
        """Replace a record's keyword terms only (its vectors stay)."""
        row = c.execute("SELECT user_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            return
        terms = self._terms(str(row[0]), terms)
        c.execute(
            "UPDATE memories_fts SET terms = ? WHERE rowid = "
            "(SELECT rowid FROM memories WHERE id = ?)",
            (terms, memory_id),
        )

    # -- generations ---------------------------------------------------------------------

    def generation(self, user_id: str) -> int:
        rows = self.read("SELECT generation FROM user_generation WHERE user_id = ?", (user_id,))
        return int(rows[0][0]) if rows else 0

    def bump_generation(self, c: Txn, user_id: str) -> None:
        """Mark a user's vectors and keyword entries as changed (see :meth:`generation`)."""
        self._index_writes += 1
        # A user's first row starts above every generation a deleted user ever reached
        # (:meth:`drop_generation`), so no cache can mistake new vectors for old ones.
        # An update, then an insert when there was no row (writers run one at a time):
        # the same as an upsert, and it runs where ON CONFLICT DO UPDATE cannot (a table
        # of PostgreSQL foreign partitions, mnemolayer.store.postgres.sharding).
        c.execute(
            "UPDATE user_generation SET generation = generation + 1 WHERE user_id = ?",
            (user_id,),
        )
        c.execute(
            "INSERT INTO user_generation SELECT ?, 1 + COALESCE((SELECT CAST(value AS "
            "INTEGER) FROM meta WHERE key = 'generation_floor'), 0) WHERE NOT EXISTS "
            "(SELECT 1 FROM user_generation WHERE user_id = ?)",
            (user_id, user_id),
        )
        self._index_changed(c)

    def drop_generation(self, c: Txn, user_id: str) -> int:
        """Remove a deleted user's generation row (it names the user); the store-wide
        ``generation_floor`` keeps the highest generation so removed, so the user's next
        row starts above it and other processes' vector caches still see a change.
        Returns the rows removed (0 or 1)."""
        row = c.execute(
            "SELECT generation FROM user_generation WHERE user_id = ?", (user_id,)
        ).fetchone()
        if row is None:
            return 0
        c.execute(
            "INSERT INTO meta VALUES ('generation_floor', ?) ON CONFLICT(key) DO UPDATE SET "
            "value = CAST(MAX(CAST(meta.value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)",
            (str(int(row[0])),),
        )
        return c.execute("DELETE FROM user_generation WHERE user_id = ?", (user_id,)).rowcount

    # -- links search follows ------------------------------------------------------------

    def session_order(self, user_id: str) -> list[int]:
        """A user's records that belong to a session, as rowids in conversation order
        (grouped by session, then by ``occurred_at``); ``-1`` separates sessions."""
        rows = self.read(
            "SELECT rowid, session_id FROM memories WHERE user_id = ? AND session_id IS NOT NULL "
            "ORDER BY session_id, occurred_at, rowid",
            (user_id,),
        )
        out: list[int] = []
        last: str | None = None
        for rowid, session in rows:
            if out and session != last:
                out.append(-1)
            out.append(int(rowid))
            last = session
        return out

    def kind_rowids(self, user_id: str) -> dict[str, list[int]]:
        """A user's records by kind: ``{kind: rowids, ascending}`` (every record,
        active or not; a record's kind never changes after it is written)."""
        out: dict[str, list[int]] = {}
        for rowid, kind in self.read(
            "SELECT rowid, kind FROM memories WHERE user_id = ? ORDER BY rowid", (user_id,)
        ):
            out.setdefault(str(kind), []).append(int(rowid))
        return out

    def fact_sentences(self, ids: Sequence[str]) -> dict[str, str]:
        """For records ``ids``: the sentences of the current facts derived from each
        (their semantic records' content), joined, for the keyword index."""
        out: dict[str, list[str]] = {}
        for start in range(0, len(ids), 400):
            part = list(ids[start : start + 400])
            rows = self.read(
                "SELECT j.value, f.content, f.user_id, f.id FROM memories f, "
                "json_each(f.source_ids) j WHERE f.kind = 'semantic' AND f.superseded_by IS NULL "
                f"AND j.value IN ({','.join('?' * len(part))}) ORDER BY f.rowid",
                part,
            )
            for source, content, uid, fid in rows:
                text = self._dec(uid, "memories.content", fid, content)
                out.setdefault(source, []).append(text or "")
        return {k: " ".join(v) for k, v in out.items()}

    def fact_links(self, user_id: str) -> list[tuple[int, int, bool]]:
        """Links from a user's semantic records to the records they were derived from:
        ``[(semantic rowid, source rowid, semantic record is current)]``."""
        rows = self.read(
            "SELECT f.rowid, s.rowid, f.superseded_by IS NULL FROM memories f, "
            "json_each(f.source_ids) j JOIN memories s ON s.id = j.value "
            "WHERE f.user_id = ? AND f.kind = 'semantic' AND s.user_id = f.user_id",
            (user_id,),
        )
        return [(int(a), int(b), bool(cur)) for a, b, cur in rows]

    def fact_versions(self, user_id: str) -> list[tuple[int, int | None, str | None, str | None]]:
        """A user's semantic records that take part in a supersession (superseded, or
        superseding one): ``[(rowid, rowid of the record that superseded it or None,
        valid_from, valid_to)]``, times as stored (UTC ISO-8601 text, or ``None``)."""
        rows = self.read(
            "SELECT f.rowid, n.rowid, f.valid_from, f.valid_to FROM memories f "
            "LEFT JOIN memories n ON n.id = f.superseded_by AND n.user_id = f.user_id "
            "WHERE f.user_id = ? AND f.kind = 'semantic' AND (f.superseded_by IS NOT NULL "
            "OR EXISTS (SELECT 1 FROM memories o WHERE o.user_id = f.user_id "
            "AND o.superseded_by = f.id))",
            (user_id,),
        )
        return [(int(a), None if b is None else int(b), vf, vt) for a, b, vf, vt in rows]

    def valid_froms(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The ``valid_from`` (UTC ISO text) of those of ``rowids`` that have one (fact
        records: when the fact began, the date extracted at write)."""
        out: dict[int, str] = {}
        mine, user = user_by_rowid(user_id)
        for start in range(0, len(rowids), 400):
            part = list(rowids[start : start + 400])
            rows = self.read(
                f"SELECT rowid, valid_from FROM memories WHERE {mine}"
                f"rowid IN ({','.join('?' * len(part))}) AND valid_from IS NOT NULL",
                [*user, *part],
            )
            out.update((int(r), str(v)) for r, v in rows)
        return out

    def rowids_between(self, user_id: str, start: str, end: str, limit: int) -> list[int]:
        """The latest ``limit`` rowids of ``user_id`` whose ``occurred_at`` is in
        ``[start, end)`` (UTC ISO text), latest first; active or not (callers check)."""
        rows = self.read(
            "SELECT rowid FROM memories WHERE user_id = ? AND occurred_at >= ? "
            "AND occurred_at < ? ORDER BY occurred_at DESC LIMIT ?",
            (user_id, start, end, limit),
        )
        return [int(r) for (r,) in rows]
