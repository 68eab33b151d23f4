"""The embedded store: one SQLite file (WAL), FTS5 keyword index, vectors as float32 blobs.

Connection handling (opening, checks, migrations, transactions, retries) lives in
``connection.py``; this module holds what is stored and how it is read.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.models import HistoryEvent, MemoryKind, MemoryRecord, new_id
from mnemolayer.store.sqlite.engine import SQLiteConnection, from_iso, iso
from mnemolayer.text.terms import tag_terms, user_term_tag

__all__ = ["AccessState", "RankSignals", "SQLiteStore", "iso", "parse_db_url"]


_COLUMNS = (
    "id, user_id, agent_id, session_id, kind, content, role, speaker, metadata, importance, "
    "created_at, updated_at, occurred_at, valid_from, valid_to, expires_at, access_count, "
    "last_accessed_at, superseded_by, source_ids, entities, content_hash, embedding_model, "
    "session_only, pinned, archived_at, merged_into, consolidated_into"
)
_TIME_FIELDS = (
    "created_at",
    "updated_at",
    "occurred_at",
    "valid_from",
    "valid_to",
    "expires_at",
    "last_accessed_at",
    "archived_at",
)


_COLUMN_NAMES = [n.strip() for n in _COLUMNS.split(",")]


class AccessState(NamedTuple):
    """A record's reinforcement fields, as :meth:`SQLiteStore.record_access` reads them."""

    id: str
    importance: float
    access_count: int
    last_accessed_at: datetime | None


class RankSignals(NamedTuple):
    """The fields ranking needs (relevance rerank and retention), without building a
    whole record."""

    importance: float
    occurred_at: datetime  # event time, else creation time
    access_count: int
    kind: MemoryKind
    last_accessed_at: datetime | None
    pinned: bool
    outcomes: int  # procedural: metadata["outcome_count"] when a positive integer, else 1


def parse_db_url(path: str | os.PathLike[str]) -> str:
    """Turn a path or ``sqlite:///path`` URL into a filesystem path (or ``":memory:"``).

    Raises:
        ValidationError: empty, or a URL of another scheme (``postgres://…``), which this
            store cannot open.
    """
    text = os.fspath(path)
    if not text.strip():
        raise ValidationError("db", "must not be empty")
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///") :]
    elif text.startswith("sqlite://"):
        text = text[len("sqlite://") :]
    if not text.strip():
        raise ValidationError("db", "the URL names no file (use sqlite:///path or :memory:)")
    elif re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
        scheme = text.split("://", 1)[0]
        raise ValidationError(
            "db",
            f"unsupported URL scheme {scheme!r}: use a file path, sqlite:///path or "
            "postgresql://user@host/dbname",
        )
    return text


class SQLiteStore(SQLiteConnection):
    """Records, keyword index, vectors and history in one SQLite file.

    Args:
        path: file path or ``":memory:"``.
        busy_timeout_s: how long a write waits for another process's lock before
            :class:`StoreBusyError`.

    Raises:
        StoreCorruptError: the file exists but is not a healthy SQLite database; it is left
            untouched.

    Attributes:
        crypto: the field cipher when the store is encrypted (:meth:`use_encryption`),
            else ``None``. Encrypted: ``memories.content``, ``metadata``, ``speaker``,
            ``entities``; history contents and metadata; the keyword index holds blind
            terms and ``content_hash`` is a keyed hash (:mod:`mnemolayer.crypto.cipher`).
    """

    crypto: FieldCipher | None = None
    #: The SQL dialect the store speaks (``"sqlite"``; ``"postgres"`` for the server store).
    dialect = "sqlite"

    # -- encryption ----------------------------------------------------------------------

    def encryption_mark(self) -> str | None:
        """The keyring id an encrypted store is paired with, or ``None`` for a plain store."""
        return self.get_meta("encryption_keyring")

    def is_empty(self) -> bool:
        """Whether nothing of any user is stored yet (records, history, windows, graph)."""
        rows = self.read(
            "SELECT EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM history) "
            "OR EXISTS (SELECT 1 FROM working_sessions) OR EXISTS (SELECT 1 FROM entities) "
            "OR EXISTS (SELECT 1 FROM facts)"
        )
        return not rows[0][0]

    def use_encryption(self, cipher: FieldCipher, keyring_id: str) -> None:
        """Encrypt from now on with ``cipher``; a new (empty) store is marked encrypted
        and paired with keyring ``keyring_id`` in ``meta``.

        Raises:
            StoreError: the store is plain and holds data (migrating a plain store is not
                supported), or it is paired with another keyring.
        """

        def mark(c: sqlite3.Connection) -> str | None:
            row = c.execute("SELECT value FROM meta WHERE key = 'encryption_keyring'").fetchone()
            if row is not None:
                return str(row[0])
            busy = c.execute(
                "SELECT EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM history) "
                "OR EXISTS (SELECT 1 FROM working_sessions) OR EXISTS (SELECT 1 FROM entities)"
            ).fetchone()[0]
            if busy:
                return None
            c.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("encryption", "aes-256-gcm/v1"), ("encryption_keyring", keyring_id)],
            )
            return keyring_id

        stored = self.encryption_mark() if self.read_only else self.transact(mark)
        if stored is None:
            raise StoreError(
                f"{self.path} is a plain (unencrypted) store with data in it; encryption "
                "cannot be turned on for it (migrating a plain store is not supported): open "
                "it without encryption, or export it and import into a new encrypted store"
            )
        if stored != keyring_id:
            raise StoreError(
                f"{self.path} is paired with another keyring than the one found beside it "
                "(keyring ids differ)"
            )
        self.crypto = cipher
        with self._lock:
            self._conn.create_function("ms_filter", 4, self._filter_udf, deterministic=True)

    def _filter_udf(self, user_id: str, memory_id: str, metadata: str, spec: str) -> int:
        from mnemolayer.query import filter_from_json, matches

        assert self.crypto is not None
        plain = self.crypto.decrypt(user_id, "memories.metadata", memory_id, metadata)
        return int(matches(filter_from_json(spec), json.loads(plain)))

    def _enc(self, user_id: str, field: str, row_id: str, text: str | None) -> str | None:
        if self.crypto is None or text is None:
            return text
        return self.crypto.encrypt(user_id, field, row_id, text)

    def _dec(self, user_id: str, field: str, row_id: str, value: str | None) -> str | None:
        if self.crypto is None or value is None:
            return value
        return self.crypto.decrypt(user_id, field, row_id, value)

    def _hash(self, user_id: str, content_hash: str, *, create: bool = True) -> str:
        if self.crypto is None:
            return content_hash
        return self.crypto.keyed_hash(user_id, "content_hash", content_hash, create=create)

    def _terms(self, user_id: str, terms: str) -> str:
        # Per-user terms: tagged by user in a plain store (textproc.user_term_tag),
        # blinded under the user's key in an encrypted one.
        if self.crypto is None:
            return tag_terms(user_term_tag(user_id), terms)
        return self.crypto.blind_terms(user_id, terms)

    def blind_query_terms(self, user_id: str, terms: Sequence[str]) -> list[str]:
        """Query terms as the keyword index holds them, per user: prefixed with the
        user's tag (:func:`~mnemolayer.text.terms.user_term_tag`) for a plain store, their
        blind forms for an encrypted one."""
        if self.crypto is None:
            tag = user_term_tag(user_id)
            return [tag + t for t in terms]
        return self.crypto.blind_query(user_id, list(terms))

    # -- records -------------------------------------------------------------------------

    def record_row(self, r: MemoryRecord) -> tuple[Any, ...]:
        """A record as the row of ``memories`` (encrypted fields sealed)."""
        u, i = r.user_id, r.id
        return (
            r.id, r.user_id, r.agent_id, r.session_id, r.kind.value,
            self._enc(u, "memories.content", i, r.content), r.role,
            self._enc(u, "memories.speaker", i, r.speaker),
            self._enc(u, "memories.metadata", i,
                      json.dumps(r.metadata, ensure_ascii=False, allow_nan=False)),
            r.importance, iso(r.created_at), iso(r.updated_at), iso(r.occurred_at),
            iso(r.valid_from), iso(r.valid_to), iso(r.expires_at), r.access_count,
            iso(r.last_accessed_at), r.superseded_by, json.dumps(r.source_ids, ensure_ascii=False),
            self._enc(u, "memories.entities", i, json.dumps(r.entities, ensure_ascii=False)),
            self._hash(u, r.content_hash), r.embedding_model,
            int(r.session_only), int(r.pinned), iso(r.archived_at), r.merged_into,
            r.consolidated_into,
        )  # fmt: skip

    def row_record(self, row: Sequence[Any]) -> MemoryRecord:
        """A ``memories`` row (in :data:`_COLUMNS` order) as a record (decrypted)."""
        data = dict(zip(_COLUMN_NAMES, row, strict=True))
        for key in _TIME_FIELDS:
            data[key] = from_iso(data[key])
        if self.crypto is not None:
            u, i = data["user_id"], data["id"]
            for col in ("content", "speaker", "metadata", "entities"):
                data[col] = self._dec(u, f"memories.{col}", i, data[col])
        data["metadata"] = json.loads(data["metadata"])
        data["source_ids"] = json.loads(data["source_ids"])
        data["entities"] = json.loads(data["entities"])
        data["kind"] = MemoryKind(data["kind"])
        data["session_only"] = bool(data["session_only"])
        data["pinned"] = bool(data["pinned"])
        return MemoryRecord.model_construct(**data)

    def insert(
        self,
        c: sqlite3.Connection,
        record: MemoryRecord,
        terms: str,
        vectors: np.ndarray,
        *,
        history: bool = True,
    ) -> MemoryRecord | None:
        """Insert one record with its keyword terms, vectors and (unless ``history`` is
        false, as on import) an ADD history event, inside ``c``'s transaction.

        Returns ``None`` when a record with the same user and content hash exists."""
        cur = c.execute(
            f"INSERT INTO memories ({_COLUMNS}) VALUES ({', '.join('?' * len(_COLUMN_NAMES))}) "
            "ON CONFLICT(user_id, content_hash) DO NOTHING",
            self.record_row(record),
        )
        if cur.rowcount == 0:
            return None
        rowid = cur.lastrowid
        c.execute(
            "INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)",
            (rowid, self._terms(record.user_id, terms)),
        )
        self._put_vectors(c, rowid, record.user_id, vectors)
        if history:
            self.add_history(c, record.id, record.user_id, "ADD", None, record, record.created_at)
        return record

    def insert_many(
        self, c: sqlite3.Connection, items: Sequence[tuple[MemoryRecord, str, np.ndarray]]
    ) -> list[bool]:
        """:meth:`insert` for each ``(record, terms, vectors)`` (with its ADD history
        event), in order, inside ``c``'s transaction; for each, whether it was inserted
        (``False``: the user already has a record with that content hash)."""
        return [self.insert(c, r, t, v) is not None for r, t, v in items]

    def as_stored(self, record: MemoryRecord) -> MemoryRecord:
        """``record`` as reads return it: on an encrypted store its dedup key is the keyed
        hash that is stored, never the plain SHA-256 of the text (which would let anyone
        holding the record confirm a guessed text)."""
        if self.crypto is None:
            return record
        return record.model_copy(
            update={"content_hash": self._hash(record.user_id, record.content_hash)}
        )

    def _put_vectors(
        self, c: sqlite3.Connection, rowid: int | None, user_id: str, vectors: np.ndarray
    ) -> None:
        c.executemany(
            "INSERT INTO vectors (memory_rowid, chunk, user_id, vector) VALUES (?, ?, ?, ?)",
            [
                (rowid, i, user_id, np.asarray(v, dtype=np.float32).tobytes())
                for i, v in enumerate(vectors)
            ],
        )
        self.bump_generation(c, user_id)

    def replace_index(
        self, c: sqlite3.Connection, memory_id: str, terms: str, vectors: np.ndarray
    ) -> None:
        """Replace a record's keyword terms and vectors (after its content changed)."""
        rowid, user_id = c.execute(
            "SELECT rowid, user_id FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        c.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
        c.execute(
            "INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)",
            (rowid, self._terms(user_id, terms)),
        )
        c.execute("DELETE FROM vectors WHERE memory_rowid = ?", (rowid,))
        self._put_vectors(c, rowid, user_id, vectors)

    def replace_terms(self, c: sqlite3.Connection, memory_id: str, terms: str) -> None:
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

    def update_record(self, c: sqlite3.Connection, r: MemoryRecord) -> None:
        """Write a record's editable fields (content, metadata, importance, hash, model)."""
        c.execute(
            "UPDATE memories SET content = ?, metadata = ?, importance = ?, updated_at = ?, "
            "content_hash = ?, embedding_model = ? WHERE id = ?",
            (
                self._enc(r.user_id, "memories.content", r.id, r.content),
                self._enc(r.user_id, "memories.metadata", r.id,
                          json.dumps(r.metadata, ensure_ascii=False, allow_nan=False)),
                r.importance, iso(r.updated_at), self._hash(r.user_id, r.content_hash),
                r.embedding_model, r.id,
            ),
        )  # fmt: skip

    def set_validity(
        self,
        c: sqlite3.Connection,
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
        row = c.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
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

    def add_source(self, c: sqlite3.Connection, memory_id: str, source_id: str) -> None:
        """Append ``source_id`` to a record's provenance (once)."""
        c.execute(
            "UPDATE memories SET source_ids = json_insert(source_ids, '$[#]', ?) "
            "WHERE id = ? AND NOT EXISTS (SELECT 1 FROM json_each(source_ids) WHERE value = ?)",
            (source_id, memory_id, source_id),
        )

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
            "WHERE f.user_id = ? AND f.kind = 'semantic' AND s.user_id = ?",
            (user_id, user_id),
        )
        return [(int(a), int(b), bool(cur)) for a, b, cur in rows]

    def ids(self) -> list[str]:
        """Every record id, oldest insert first."""
        return [r[0] for r in self.read("SELECT id FROM memories ORDER BY rowid")]

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

    def delete_user_history(self, c: sqlite3.Connection, user_id: str) -> None:
        c.execute("DELETE FROM history WHERE user_id = ?", (user_id,))

    def bump_generation(self, c: sqlite3.Connection, user_id: str) -> None:
        """Mark a user's vectors and keyword entries as changed (see :meth:`generation`)."""
        self._index_writes += 1
        # A user's first row starts above every generation a deleted user ever reached
        # (:meth:`drop_generation`), so no cache can mistake new vectors for old ones.
        c.execute(
            "INSERT INTO user_generation VALUES (?, 1 + COALESCE((SELECT CAST(value AS "
            "INTEGER) FROM meta WHERE key = 'generation_floor'), 0)) ON CONFLICT(user_id) "
            "DO UPDATE SET generation = user_generation.generation + 1",
            (user_id,),
        )

    def drop_generation(self, c: sqlite3.Connection, user_id: str) -> int:
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

    def add_history(
        self,
        c: sqlite3.Connection,
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

    def get(self, memory_id: str) -> MemoryRecord | None:
        rows = self.read(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        return self.row_record(rows[0]) if rows else None

    def get_many_by_rowid(self, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records by SQLite rowid (the key of the keyword and vector indexes)."""
        out: dict[int, MemoryRecord] = {}
        ids = list(rowids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.read(
                f"SELECT rowid, {_COLUMNS} FROM memories WHERE rowid IN ({','.join('?' * len(part))})",
                part,
            )
            for row in rows:
                out[row[0]] = self.row_record(row[1:])
        return out

    def rank_signals(self, rowids: Sequence[int]) -> dict[int, RankSignals]:
        """Importance, event time and access count by rowid (records that still exist)."""
        out: dict[int, RankSignals] = {}
        ids = list(rowids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            if self.crypto is None:
                rows = self.read(
                    "SELECT rowid, importance, COALESCE(occurred_at, created_at), access_count, "
                    "kind, last_accessed_at, pinned, CASE WHEN kind = 'procedural' AND "
                    "json_type(metadata, '$.outcome_count') = 'integer' "
                    "THEN json_extract(metadata, '$.outcome_count') END "
                    f"FROM memories WHERE rowid IN ({','.join('?' * len(part))})",
                    part,
                )
            else:
                rows = [
                    (*r[:7], self._outcomes(r[7], r[8], r[9]) if r[4] == "procedural" else None)
                    for r in self.read(
                        "SELECT rowid, importance, COALESCE(occurred_at, created_at), "
                        "access_count, kind, last_accessed_at, pinned, user_id, id, "
                        "CASE WHEN kind = 'procedural' THEN metadata END "
                        f"FROM memories WHERE rowid IN ({','.join('?' * len(part))})",
                        part,
                    )
                ]
            for rid, imp, when, count, kind, accessed, pinned, outcomes in rows:
                out[rid] = RankSignals(
                    imp, datetime.fromisoformat(when), count, MemoryKind(kind),
                    from_iso(accessed), bool(pinned),
                    outcomes if outcomes is not None and outcomes > 0 else 1,
                )  # fmt: skip
        return out

    def _outcomes(self, user_id: str, memory_id: str, metadata: str) -> int | None:
        """``metadata["outcome_count"]`` when an integer (not a bool), from sealed metadata."""
        value = json.loads(self._dec(user_id, "memories.metadata", memory_id, metadata) or "{}")
        count = value.get("outcome_count") if isinstance(value, dict) else None
        return count if isinstance(count, int) and not isinstance(count, bool) else None

    def find_by_hash(
        self, c: sqlite3.Connection | None, user_id: str, hashes: Sequence[str]
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
                f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? "
                f"AND content_hash IN ({','.join('?' * len(part))})"
            )
            rows = self._rows(c, sql, [user_id, *part])
            for row in rows:
                rec = self.row_record(row)
                out[stored.get(rec.content_hash, rec.content_hash)] = rec
        return out

    def _rows(
        self, c: sqlite3.Connection | None, sql: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` inside ``c``'s transaction, or by a plain :meth:`read`."""
        return c.execute(sql, params).fetchall() if c else self.read(sql, params)

    def select(
        self, where: str, params: Sequence[Any], *, order: str = "id", limit: int | None = None
    ) -> list[MemoryRecord]:
        sql = f"SELECT {_COLUMNS} FROM memories WHERE {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [self.row_record(r) for r in self.read(sql, params)]

    def rowids(self, where: str, params: Sequence[Any]) -> set[int]:
        return {r[0] for r in self.read(f"SELECT rowid FROM memories WHERE {where}", params)}

    def delete_where(
        self, c: sqlite3.Connection, where: str, params: Sequence[Any]
    ) -> list[tuple[int, str, str]]:
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

    def history(self, memory_id: str) -> list[HistoryEvent]:
        rows = self.read(
            "SELECT id, memory_id, user_id, event, old_content, new_content, old_metadata, "
            "new_metadata, created_at FROM history WHERE memory_id = ? ORDER BY id",
            (memory_id,),
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

    def history_rows(self, user_id: str | None) -> list[HistoryEvent]:
        where, params = ("user_id = ?", (user_id,)) if user_id is not None else ("1", ())
        rows = self.read(
            "SELECT id, memory_id, user_id, event, old_content, new_content, old_metadata, "
            f"new_metadata, created_at FROM history WHERE {where} ORDER BY id",
            params,
        )
        return [self._history_event(r) for r in rows]

    def insert_history(
        self,
        c: sqlite3.Connection,
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

    # -- search support ------------------------------------------------------------------

    def generation(self, user_id: str) -> int:
        rows = self.read("SELECT generation FROM user_generation WHERE user_id = ?", (user_id,))
        return int(rows[0][0]) if rows else 0

    def load_vectors(self, user_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All chunk vectors of a user: ``(rowids (m,) int64, matrix (m, dim) float32)``."""
        rows = self.read(
            "SELECT memory_rowid, vector FROM vectors WHERE user_id = ? ORDER BY memory_rowid, chunk",
            (user_id,),
        )
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((0, dim), dtype=np.float32)
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        if matrix.size != len(rows) * dim:
            raise StoreError(
                f"{self.path}: stored vectors do not have dimension {dim}; run `mnemolayer reindex`"
            )
        return rowids, matrix.reshape(len(rows), dim)

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

    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]:
        """Rows of a user matching an FTS5 expression, best first by FTS5's own BM25:
        ``[(rowid, indexed terms)]``; scores are computed by the caller.

        The index holds per-user terms, so the matches are (nearly always) the user's
        own. The best ``2 * limit`` of them are ranked in the index alone and checked
        against ``memories`` (user, ``where``) afterwards: when ``limit`` pass, or there
        are no more matches, these are the answer; otherwise (a narrow scope filtered
        most of them out) the ranking is redone joined with ``memories``. That joins
        ``2 * limit`` rows instead of every match (a big user's common word)."""
        n = max(int(limit), 0)
        head = [
            int(r[0])
            for r in self.read(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                f"ORDER BY bm25(memories_fts) LIMIT {2 * n}",
                [match],
            )
        ]
        if not head:
            return []
        # "+m.user_id": look the rows up by rowid; without ANALYZE statistics the planner
        # would rather scan the user's index (100k entries for a big user: 10 ms).
        ok = {
            int(r[0]): str(r[1])
            for r in self.read(
                "SELECT m.rowid, f.terms FROM memories m JOIN memories_fts f ON f.rowid = m.rowid "
                f"WHERE m.rowid IN ({','.join('?' * len(head))}) AND +m.user_id = ? AND {where}",
                [*head, user_id, *params],
            )
        }
        kept = [(r, ok[r]) for r in head if r in ok]
        if len(kept) >= n or len(head) < 2 * n:
            return kept[:n]
        rows = self.read(
            "SELECT m.rowid, memories_fts.terms FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND m.user_id = ? AND {where} "
            f"ORDER BY bm25(memories_fts) LIMIT {n}",
            [match, user_id, *params],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many records hold each term (from the FTS5 vocabulary): terms as
        :meth:`blind_query_terms` gives them are per user, so these are the user's."""
        if not terms:
            return {}
        rows = self.read(
            f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({','.join('?' * len(terms))})",
            list(terms),
        )
        return {str(t): int(d) for t, d in rows}

    def text_stats(self, user_id: str | None = None) -> tuple[int, float]:
        """``(records, mean indexed terms per record)`` for BM25: the records of
        ``user_id`` (of the store when ``None``) and the store's mean length.

        The mean comes from FTS5's own totals (rows and tokens, kept in the index's
        "averages" record, the figures its ``bm25()`` uses): one read, where summing the
        vocabulary scans every term (300 ms at 1M records). Falls back to that sum if the
        record cannot be read."""
        rows, tokens = -1, 0
        blob = self.read("SELECT block FROM memories_fts_data WHERE id = 1")
        if blob and isinstance(blob[0][0], bytes):
            data, at = blob[0][0], 0
            values: list[int] = []
            while at < len(data) and len(values) < 2:  # SQLite varints (1-9 bytes)
                value, used = 0, 0
                while used < 9 and at < len(data):
                    byte = data[at]
                    at, used = at + 1, used + 1
                    if used == 9:
                        value = (value << 8) | byte
                        break
                    value = (value << 7) | (byte & 0x7F)
                    if byte < 0x80:
                        break
                values.append(value)
            if len(values) == 2:
                rows, tokens = values
        if rows < 0:
            rows = int(self.read("SELECT COUNT(*) FROM memories_fts")[0][0])
            tokens = int(self.read("SELECT COALESCE(SUM(cnt), 0) FROM memories_fts_vocab")[0][0])
        mean = tokens / rows if rows > 0 else 0.0
        if user_id is None:
            return int(self.read("SELECT COUNT(*) FROM memories")[0][0]), mean
        n = self.read("SELECT COUNT(*) FROM memories WHERE user_id = ?", (user_id,))[0][0]
        return int(n), mean

    def change_token(self) -> tuple[int, int]:
        """Changes when the indexed data changes: by another connection (SQLite's
        ``data_version``) or by this one (keyword index writes; access counts don't count)."""
        with self._lock:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            return int(version), self._index_writes

    # -- lifecycle: access reinforcement, pinning and archiving ------------------------

    def record_access(
        self,
        ids: Sequence[str],
        update: Callable[[AccessState], Mapping[str, Any]],
        *,
        wait_s: float = 0.1,
    ) -> bool:
        """Reinforce records that recall returned, best-effort: in one short transaction,
        each record's :class:`AccessState` is read and ``update(state)`` gives its new
        ``access_count``, ``last_accessed_at`` and ``importance``.

        Unlike :meth:`transact`, this tries once and waits at most ``wait_s`` seconds for
        another writer's lock: a search must never stall or fail because its access could
        not be counted (a lost count only makes a memory fade a little sooner).

        Returns:
            Whether the counts were written (``False``: read-only store, no ids, or the
            store was busy or failed; nothing is raised).
        """
        if not ids or self.read_only:
            return False
        with self._lock:
            c = self._conn
            try:
                normal = int(c.execute("PRAGMA busy_timeout").fetchone()[0])
            except sqlite3.Error:
                return False
            try:
                c.execute(f"PRAGMA busy_timeout = {max(int(wait_s * 1000), 0)}")
                c.execute("BEGIN IMMEDIATE")
                try:
                    self._apply_access(c, ids, update)
                    c.execute("COMMIT")
                except BaseException:
                    c.execute("ROLLBACK")
                    raise
                # No checkpoint here: with this short busy timeout a FULL checkpoint could
                # miss the write lock and run unlocked (store/wal.py); the next write does it.
                return True
            except sqlite3.Error:
                return False
            finally:
                with contextlib.suppress(sqlite3.Error):
                    c.execute(f"PRAGMA busy_timeout = {normal}")

    @staticmethod
    def _apply_access(
        c: Any, ids: Sequence[str], update: Callable[[AccessState], Mapping[str, Any]]
    ) -> None:
        """The body of :meth:`record_access` inside its transaction ``c`` (shared with the
        PostgreSQL store): read each record's :class:`AccessState`, write ``update``'s."""
        rows = c.execute(
            "SELECT id, importance, access_count, last_accessed_at FROM memories "
            f"WHERE id IN ({','.join('?' * len(ids))})",
            list(ids),
        ).fetchall()
        changes = []
        for mid, imp, count, accessed in rows:
            new = update(AccessState(mid, imp, count, from_iso(accessed)))
            changes.append(
                (new["access_count"], iso(new["last_accessed_at"]), new["importance"], mid)
            )
        c.executemany(
            "UPDATE memories SET access_count = ?, last_accessed_at = ?, importance = ? "
            "WHERE id = ?",
            changes,
        )

    #: The columns :meth:`set_state` may change.
    STATE_FIELDS = frozenset({"pinned", "archived_at", "updated_at"})

    def set_state(
        self, c: sqlite3.Connection, memory_id: str, changes: Mapping[str, Any]
    ) -> MemoryRecord | None:
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
        row = c.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            return None
        values = [
            int(val) if key == "pinned" else iso(val) if key in _TIME_FIELDS else val
            for key, val in changes.items()
        ]
        if changes:
            c.execute(
                f"UPDATE memories SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?",
                [*values, memory_id],
            )
        return self.row_record(row)

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

    def file_size(self) -> int:
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    # -- lifecycle maintenance (lifecycle/maintain.py) ---------------------------------
    # Writes here are conditional on the state the caller planned from, so that two
    # maintenance runs, or a maintenance run and a writer, never change a record twice:
    # each returns whether it changed anything.

    def user_ids(self) -> list[str]:
        """Every user that has records, sorted."""
        return [r[0] for r in self.read("SELECT DISTINCT user_id FROM memories ORDER BY user_id")]

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

    def select_rows(self, where: str, params: Sequence[Any]) -> list[tuple[int, MemoryRecord]]:
        """``(rowid, record)`` of the matching records, oldest insert first."""
        rows = self.read(
            f"SELECT rowid, {_COLUMNS} FROM memories WHERE {where} ORDER BY rowid", params
        )
        return [(int(r[0]), self.row_record(r[1:])) for r in rows]

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

    def citing(
        self, c: sqlite3.Connection | None, user_id: str, ids: Sequence[str]
    ) -> list[MemoryRecord]:
        """A user's semantic records whose provenance (``source_ids``) names any of
        ``ids``: facts' sentence records and consolidations."""
        out: dict[str, MemoryRecord] = {}
        items = list(ids)
        for start in range(0, len(items), 500):
            part = items[start : start + 500]
            sql = (
                f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND kind = 'semantic' "
                "AND EXISTS (SELECT 1 FROM json_each(source_ids) j "
                f"WHERE j.value IN ({','.join('?' * len(part))}))"
            )
            rows = self._rows(c, sql, [user_id, *part])
            for row in rows:
                rec = self.row_record(row)
                out[rec.id] = rec
        return list(out.values())

    def existing_ids(self, c: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
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

    def record_vectors(self, c: sqlite3.Connection, memory_id: str) -> np.ndarray:
        """A record's chunk vectors, ``(chunks, dim)`` float32, read inside ``c``."""
        rows = c.execute(
            "SELECT v.vector FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid "
            "WHERE m.id = ? ORDER BY v.chunk",
            (memory_id,),
        ).fetchall()
        return (
            np.stack([np.frombuffer(r[0], dtype=np.float32) for r in rows])
            if rows
            else (np.empty((0, 0), dtype=np.float32))
        )

    def archive_unchanged(self, c: sqlite3.Connection, r: MemoryRecord, at: datetime) -> bool:
        """Archive ``r`` if it is still as it was read: active, not pinned, and with the
        same reinforcement fields (a recall in between may have saved it)."""
        cur = c.execute(
            "UPDATE memories SET archived_at = ?, updated_at = ? WHERE id = ? "
            "AND archived_at IS NULL AND merged_into IS NULL AND pinned = 0 "
            "AND access_count = ? AND importance = ? AND last_accessed_at IS ?",
            (iso(at), iso(at), r.id, r.access_count, r.importance, iso(r.last_accessed_at)),
        )
        return cur.rowcount > 0

    def mark_merged(
        self, c: sqlite3.Connection, merged_id: str, survivor_id: str, at: datetime
    ) -> bool:
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
        c: sqlite3.Connection,
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

    def mark_consolidated(self, c: sqlite3.Connection, memory_id: str, into: str) -> bool:
        """Link record ``memory_id`` to the semantic record ``into`` that consolidates it,
        if it is active, not pinned and not consolidated yet."""
        cur = c.execute(
            "UPDATE memories SET consolidated_into = ? WHERE id = ? AND consolidated_into IS NULL "
            "AND merged_into IS NULL AND archived_at IS NULL AND pinned = 0",
            (into, memory_id),
        )
        return cur.rowcount > 0

    def release_links(
        self, c: sqlite3.Connection, user_id: str, gone: Sequence[str], at: datetime
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

    def is_active(
        self, c: sqlite3.Connection, memory_id: str, *, unconsolidated: bool = False
    ) -> bool:
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

    def ids_where(self, where: str, params: Sequence[Any]) -> set[str]:
        """Ids of the records matching ``where``."""
        return {r[0] for r in self.read(f"SELECT id FROM memories WHERE {where}", params)}

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
