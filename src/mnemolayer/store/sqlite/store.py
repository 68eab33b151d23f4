"""The embedded store: one SQLite file (WAL), FTS5 keyword index, vectors as float32 blobs.

:class:`SQLiteStore` is the SQLite sibling of the shared SQL
(:class:`~mnemolayer.store.base.SQLStore`): the connection (opening, checks, migrations,
transactions, retries) is :class:`~mnemolayer.store.sqlite.engine.SQLiteConnection`, the
keyword index :class:`~mnemolayer.store.sqlite.keyword.FTS5Index`; this module holds the
other hooks (encryption, vectors, identity, access counting, change detection, filters,
erasure).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.models import MemoryRecord
from mnemolayer.query import Filter, filter_from_json, matches
from mnemolayer.store.base import SQLStore
from mnemolayer.store.rows import COLUMN_NAMES, COLUMNS, AccessState, RankSignals, iso
from mnemolayer.store.sqlite.engine import SQLiteConnection
from mnemolayer.store.sqlite.filters import compile_sqlite, compile_udf
from mnemolayer.store.sqlite.keyword import FTS5Index
from mnemolayer.store.txn import Txn

__all__ = ["AccessState", "RankSignals", "SQLiteStore", "iso", "parse_db_url"]

# SQLite 3.34 (2020) allows several recursive SELECTs in one CTE (GraphStore.neighbors).
_MULTI_ARM_CTE = sqlite3.sqlite_version_info >= (3, 34, 0)
_UPDATE_FROM = sqlite3.sqlite_version_info >= (3, 33, 0)


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


class SQLiteStore(SQLiteConnection, FTS5Index, SQLStore):
    """Records, keyword index, vectors and history in one SQLite file.

    Args:
        path: file path or ``":memory:"``.
        busy_timeout_s: how long a write waits for another process's lock before
            :class:`StoreBusyError`.
        read_only: open without writing anything; ``None`` decides from the permissions.

    Raises:
        StoreCorruptError: the file exists but is not a healthy SQLite database; it is left
            untouched.

    Attributes:
        crypto: the field cipher when the store is encrypted (:meth:`use_encryption`),
            else ``None``. Encrypted: ``memories.content``, ``metadata``, ``speaker``,
            ``entities``; history contents and metadata; the keyword index holds blind
            terms and ``content_hash`` is a keyed hash (:mod:`mnemolayer.crypto.cipher`).
    """

    #: ``UPDATE ... FROM`` came with SQLite 3.33 (access counts: one statement per 200).
    update_from_values = _UPDATE_FROM

    # -- encryption ----------------------------------------------------------------------

    def use_encryption(self, cipher: FieldCipher, keyring_id: str) -> None:
        """Encrypt from now on with ``cipher``; a new (empty) store is marked encrypted
        and paired with keyring ``keyring_id`` in ``meta``.

        Raises:
            StoreError: the store is plain and holds data (migrating a plain store is not
                supported), or it is paired with another keyring.
        """

        def mark(c: Txn) -> str | None:
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
        assert self.crypto is not None
        plain = self.crypto.decrypt(user_id, "memories.metadata", memory_id, metadata)
        return int(matches(filter_from_json(spec), json.loads(plain)))

    def compile_filter(self, f: Filter, prefix: str = "") -> tuple[str, list[Any]]:
        """SQLite's JSON functions over plain metadata; sealed metadata is opened by a
        Python function inside SQL (``ms_filter``, registered by :meth:`use_encryption`)."""
        if self.crypto is not None:
            return compile_udf(f, prefix)
        return compile_sqlite(f, column=f"{prefix}metadata")

    def _sql_reads_outcomes(self) -> bool:
        return self.crypto is None

    # -- records: identity and JSON ------------------------------------------------------

    def _insert_row(self, c: Txn, record: MemoryRecord) -> int | None:
        # Here the transaction is the sqlite3.Connection itself (SQLiteEngine.write), whose
        # cursors have lastrowid; Txn leaves it out because PostgreSQL's cursors have none
        # (that store asks for RETURNING rowid instead).
        cur = cast(
            sqlite3.Cursor,
            c.execute(
                f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * len(COLUMN_NAMES))}) "
                "ON CONFLICT(user_id, content_hash) DO NOTHING",
                self.record_row(record),
            ),
        )
        if cur.rowcount == 0:
            return None
        return cur.lastrowid

    def add_source(self, c: Txn, memory_id: str, source_id: str) -> None:
        """Append ``source_id`` to a record's provenance (once)."""
        c.execute(
            "UPDATE memories SET source_ids = json_insert(source_ids, '$[#]', ?) "
            "WHERE id = ? AND NOT EXISTS (SELECT 1 FROM json_each(source_ids) WHERE value = ?)",
            (source_id, memory_id, source_id),
        )

    def multi_arm_recursion(self) -> bool:
        return _MULTI_ARM_CTE

    # -- vectors: float32 blobs ----------------------------------------------------------

    def _put_vectors(self, c: Txn, rowid: int | None, user_id: str, vectors: np.ndarray) -> None:
        c.executemany(
            "INSERT INTO vectors (memory_rowid, chunk, user_id, vector) VALUES (?, ?, ?, ?)",
            [
                (rowid, i, user_id, np.asarray(v, dtype=np.float32).tobytes())
                for i, v in enumerate(vectors)
            ],
        )
        self.bump_generation(c, user_id)

    def _drop_vectors(self, c: Txn, rowid: int, user_id: str) -> None:
        c.execute("DELETE FROM vectors WHERE memory_rowid = ?", (rowid,))

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

    def record_vectors(self, c: Txn, memory_id: str) -> np.ndarray:
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

    # -- change detection and access counting -------------------------------------------

    def change_token(self) -> tuple[int, int]:
        """Changes when the indexed data changes: by another connection (SQLite's
        ``data_version``) or by this one (keyword index writes; access counts don't count)."""
        with self._lock:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            return self._token_seen((int(version), self._index_writes))

    def _write_briefly(self, wait_s: float, fn: Callable[[Txn], None]) -> bool:
        """``BEGIN IMMEDIATE`` with the busy timeout lowered to ``wait_s`` for this one
        try; SQLite errors give ``False`` (any other error of ``fn`` is raised)."""
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
                    fn(c)
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

    def file_size(self) -> int:
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    # -- erasure -------------------------------------------------------------------------

    def user_tables(self, c: Txn | None = None) -> list[str]:
        """Every table of the file with a ``user_id`` column (from ``sqlite_master``, so
        a table a later migration adds is covered), sorted."""
        names = [
            str(r[0])
            for r in self._rows(
                c, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", ()
            )
        ]
        return [
            name
            for name in names
            if any(
                col[1] == "user_id"
                for col in self._rows(c, f"PRAGMA table_info({_ident(name)})", ())
            )
        ]

    @contextlib.contextmanager
    def secure_delete(self) -> Iterator[None]:
        """``PRAGMA secure_delete`` on for the deleting transaction: freed pages are
        zeroed, so deleted text does not linger in the file's free space. The setting
        is put back afterwards."""
        previous = int(self.read("PRAGMA secure_delete")[0][0])
        try:
            self.read("PRAGMA secure_delete = ON")
            yield
        finally:
            self.read(f"PRAGMA secure_delete = {previous}")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
