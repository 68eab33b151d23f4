"""The server store: PostgreSQL with pgvector, through psycopg 3 and a connection pool.

:class:`PostgresStore` is the sibling of :class:`~mnemolayer.store.sqlite.store.SQLiteStore`
under the shared SQL (:class:`~mnemolayer.store.base.SQLStore`: records, keyword index,
vectors, history, the knowledge graph of :class:`~mnemolayer.store.graph.GraphStore`,
working-memory windows, lifecycle passes), whose statements are written once and
translated (:func:`mnemolayer.store.postgres.translate.translate`). What cannot be shared
is a hook: the keyword index (:mod:`mnemolayer.store.postgres.keyword`, a ``tsvector``
with a GIN index instead of FTS5), and here vectors (pgvector), identity columns, batch
inserts, access counting, filters and erasure.

Transactions keep the embedded store's semantics (:mod:`mnemolayer.store.postgres.engine`):
one write transaction at a time per tenant of the database, and a thread's reads inside
its write transaction see its writes; every other read takes any pooled connection.

URL: ``postgresql://user:password@host:port/dbname`` (libpq's forms, ``postgres://`` too),
with mnemolayer's options in the query string: ``pool_max`` (connections per process,
default 10), ``hnsw`` (``on``: keep pgvector HNSW indexes for :meth:`PostgresStore.vector_search`;
default ``off``, see below) and ``tenant`` (whose rows the store holds, default
``default``; many tenants share one database, kept apart by row-level security:
:mod:`mnemolayer.store.postgres.database`).

Vector search: recall runs on each process's cache of a user's vectors (exact, and the
usearch HNSW index of :mod:`mnemolayer.retrieval.ann` for large users), as on SQLite, so a
search costs no vector round trip to the server. pgvector holds the vectors; its HNSW
index is opt-in because maintaining it cut add throughput about threefold here (3,830 to
1,248 records/s, 20,000 records of 384 dimensions) while recall did not use it.

Not supported on PostgreSQL (yet): encryption at rest (``Memory(encryption=...)``), whose
metadata filters need a Python function inside SQL; use the database's own disk
encryption. ``Memory`` refuses it with a :class:`ValidationError` naming ``encryption``
(and :meth:`PostgresStore.use_encryption` with a :class:`StoreError`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.errors import StoreError
from mnemolayer.models import MemoryRecord, new_id
from mnemolayer.query import Filter
from mnemolayer.store.base import SQLStore
from mnemolayer.store.postgres.database import PostgresDatabase
from mnemolayer.store.postgres.engine import PostgresConnection, _Conn, has_schema
from mnemolayer.store.postgres.filters import compile_postgres
from mnemolayer.store.postgres.keyword import TsvectorIndex, _lexeme
from mnemolayer.store.postgres.url import is_postgres_url, redact_url
from mnemolayer.store.rows import COLUMN_NAMES, COLUMNS, iso
from mnemolayer.store.txn import Txn

# _lexeme: privacy/erasure.py imports it from here.
__all__ = ["PostgresStore", "_lexeme", "has_schema", "is_postgres_url", "redact_url"]


#: One record with its keyword row, chunk vectors and ADD history event, as one statement;
#: nothing is written when its content hash already exists. ``ON CONFLICT DO NOTHING``
#: names no conflict target (the dedup key is the only one a new record can meet: its id
#: and rowid are new), so that it also runs on a table partitioned with foreign
#: partitions, which has no unique index to infer the target from (sharding.py).
_INSERT_CTE = (
    f"WITH m AS (INSERT INTO memories ({COLUMNS}) "
    f"VALUES ({', '.join(['%s'] * len(COLUMN_NAMES))}) "
    "ON CONFLICT DO NOTHING RETURNING user_id, rowid, id), "
    "f AS (INSERT INTO memories_fts (user_id, rowid, terms) SELECT user_id, rowid, %s FROM m), "
    "v AS (INSERT INTO vectors (memory_rowid, chunk, user_id, vector) "
    "SELECT m.rowid, x.n - 1, m.user_id, x.v FROM m, "
    "unnest(%b::vector[]) WITH ORDINALITY AS x (v, n)), "  # binary: no float text
    "h AS (INSERT INTO history SELECT %s, m.id, m.user_id, 'ADD', NULL, %s, NULL, %s, %s "
    "FROM m) SELECT rowid FROM m"
)


class PostgresStore(PostgresConnection, TsvectorIndex, SQLStore):
    """Records, keyword index, vectors, history, graph and windows in a PostgreSQL database.

    Args:
        url: ``postgresql://…`` (see the module docstring); the database must exist and
            the user may create tables and the ``vector`` extension (or it is there).
        busy_timeout_s: how long a write waits for another writer of the same tenant
            before :class:`StoreBusyError`.
        read_only: open for reading only: every session is read-only on the server
            (``default_transaction_read_only``) and writes raise :class:`StoreError`
            saying so; the schema must be current.
        database: the pool to use, shared with other tenants' stores
            (:class:`~mnemolayer.store.postgres.database.PostgresDatabase`; left open by
            :meth:`close`); default: a pool of this store's own, opened from ``url``.
        tenant: whose rows the store holds, instead of the URL's ``tenant`` option.

    Raises:
        StoreError: the server cannot be reached, the login fails, pgvector is missing,
            or the schema is newer than this mnemolayer.
        ValidationError: a malformed ``pool_max``, ``hnsw`` or ``tenant`` (field ``db``).
    """

    #: A due flush of access counts writes from a thread of its own, on a pooled
    #: connection (:attr:`~mnemolayer.store.states.StatesSQL.background_access_flush`).
    background_access_flush = True

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_s: float = 60.0,
        read_only: bool | None = None,
        database: PostgresDatabase | None = None,
        tenant: str | None = None,
    ) -> None:
        self._vector_dims: set[int] = set()
        super().__init__(
            url, busy_timeout_s=busy_timeout_s, read_only=read_only, database=database,
            tenant=tenant,
        )  # fmt: skip

    def _migrate(self) -> None:
        super()._migrate()
        if not self.hnsw:
            return
        with self._pooled() as raw:
            self._vector_dims = {
                int(r[0])
                for r in raw.execute(
                    "SELECT substring(indexname from 'vectors_hnsw_([0-9]+)') FROM pg_indexes "
                    "WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
                ).fetchall()
            }

    # -- working-memory windows: one request at a time, across processes ------------

    def window_lock(
        self, user_id: str, session_id: str, agent_id: str | None, *, wait_s: float = 30.0
    ) -> contextlib.AbstractContextManager[None]:
        """A lock of one working-memory window of this tenant, held across processes and
        hosts (a PostgreSQL advisory lock: :meth:`PostgresDatabase.advisory_lock`), so
        that two server replicas never load, change and save one window at once.

        Raises:
            StoreBusyError: another holder kept it ``wait_s`` seconds.
        """
        scope = json.dumps([self.tenant, user_id, agent_id, session_id])
        return self.database.advisory_lock(f"window:{scope}", wait_s=wait_s)

    # -- encryption: not on this backend ---------------------------------------------

    def use_encryption(self, cipher: FieldCipher, keyring_id: str) -> None:
        """Refused: see the module docstring.

        Raises:
            StoreError: always.
        """
        raise StoreError(
            "encryption at rest is available on the SQLite store only; on PostgreSQL use "
            "the server's disk or tablespace encryption"
        )

    def compile_filter(self, f: Filter, prefix: str = "") -> tuple[str, list[Any]]:
        """``jsonb`` operators over the metadata text (no encryption on this backend)."""
        return compile_postgres(f, column=f"{prefix}metadata")

    def _sql_reads_outcomes(self) -> bool:
        return False

    def multi_arm_recursion(self) -> bool:
        return False

    # -- records: identity, batches, JSON ------------------------------------------------

    def _insert_row(self, c: Any, record: MemoryRecord) -> int | None:
        row = c.execute(
            f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * len(COLUMN_NAMES))}) "
            "ON CONFLICT DO NOTHING RETURNING rowid",
            self.record_row(record),
        ).fetchone()
        return None if row is None else int(row[0])

    def insert_many(
        self, c: Any, items: Sequence[tuple[MemoryRecord, str, np.ndarray]]
    ) -> list[bool]:
        """:meth:`SQLStore.insert_many <mnemolayer.store.records.RecordsSQL.insert_many>`
        in one pipelined batch: each record is one
        statement (record, keyword row, vectors and ADD event in a data-modifying CTE),
        sent without waiting for the previous one, so a batch costs about one round trip
        instead of five per record. The user's generation is bumped once."""
        if not items:
            return []
        for _, _, vectors in items:
            if len(vectors):
                self._ensure_hnsw(c, int(np.asarray(vectors[0]).shape[0]))
                break
        rows = [
            (
                *self.record_row(r), self._terms(r.user_id, terms),
                [np.asarray(v, dtype=np.float32) for v in vectors],
                new_id(), r.content, json.dumps(r.metadata, ensure_ascii=False),
                iso(r.created_at),
            )
            for r, terms, vectors in items
        ]  # fmt: skip
        cur = c.raw.cursor()
        cur.executemany(_INSERT_CTE, rows, returning=True)
        done: list[bool] = []
        while True:
            done.append(cur.fetchone() is not None)
            if not cur.nextset():
                break
        for user_id in {r.user_id for (r, _, _), ok in zip(items, done, strict=True) if ok}:
            self.bump_generation(c, user_id)
        return done

    def add_source(self, c: Any, memory_id: str, source_id: str) -> None:
        c.execute(
            "UPDATE memories SET source_ids = (source_ids::jsonb || jsonb_build_array(?::text))"
            "::text WHERE id = ? AND NOT jsonb_exists(source_ids::jsonb, ?)",
            (source_id, memory_id, source_id),
        )

    # -- vectors: pgvector ---------------------------------------------------------------

    def _put_vectors(self, c: Any, rowid: int | None, user_id: str, vectors: np.ndarray) -> None:
        rows = [(rowid, i, user_id, np.asarray(v, dtype=np.float32)) for i, v in enumerate(vectors)]
        if rows:
            self._ensure_hnsw(c, int(rows[0][3].shape[0]))
        c.executemany(
            "INSERT INTO vectors (memory_rowid, chunk, user_id, vector) VALUES (?, ?, ?, ?)", rows
        )
        self.bump_generation(c, user_id)

    def _drop_vectors(self, c: Any, rowid: int, user_id: str) -> None:
        c.execute("DELETE FROM vectors WHERE user_id = ? AND memory_rowid = ?", (user_id, rowid))

    def _ensure_hnsw(self, c: Any, dim: int) -> None:
        """An HNSW index (cosine, pgvector) for vectors of ``dim`` dimensions, made with the
        first ones (pgvector indexes one dimension per index)."""
        if not self.hnsw or dim in self._vector_dims or not 0 < dim <= 2000:
            return
        c.execute(
            f"CREATE INDEX IF NOT EXISTS vectors_hnsw_{dim} ON vectors USING hnsw "
            f"((vector::vector({dim})) vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
            f"WHERE vector_dims(vector) = {dim}"
        )
        self._vector_dims.add(dim)

    def record_vectors(self, c: Any, memory_id: str) -> np.ndarray:
        rows = c.execute(
            "SELECT v.vector FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid "
            "AND m.user_id = v.user_id WHERE m.id = ? ORDER BY v.chunk",
            (memory_id,),
        ).fetchall()
        return (
            np.stack([_array(r[0]) for r in rows]) if rows else np.empty((0, 0), dtype=np.float32)
        )

    def load_vectors(self, user_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All chunk vectors of a user: ``(rowids (m,) int64, matrix (m, dim) float32)``.

        Read with ``COPY ... TO STDOUT (FORMAT BINARY)``: every row has the same size
        (rowid, chunk, pgvector's binary form: a 2-byte dimension, 2 unused bytes,
        big-endian float4s), so numpy reads them all in one step, sorted here by
        ``(rowid, chunk)``. One Python object per load, where a row per vector made
        several per vector (7.5 ms of CPU for 900 vectors at 1M memories, and the
        garbage collections those objects set off: 83 ms each in a 1M-memory process).

        Raises:
            StoreError: the stored vectors do not have dimension ``dim``.
        """
        if getattr(self._local, "conn", None) is not None:
            return self._vectors_in_transaction(user_id, dim)
        data = self._guard(
            lambda: self._copy_out(
                "COPY (SELECT memory_rowid, chunk, vector FROM vectors WHERE user_id = %s) "
                "TO STDOUT (FORMAT BINARY)",
                (user_id,),
            )
        )
        loaded = copied_vectors(data, dim)
        if loaded is None:
            raise StoreError(
                f"{self.path}: stored vectors do not have dimension {dim}; run `mnemolayer reindex`"
            )
        return loaded

    def _vectors_in_transaction(self, user_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`load_vectors` inside this thread's write transaction, which runs in
        pipeline mode, where psycopg refuses ``COPY``: a row per vector, read binary."""
        rows = self._guard(
            lambda: self._rows_of(
                "SELECT memory_rowid, vector FROM vectors WHERE user_id = %s "
                "ORDER BY memory_rowid, chunk",
                (user_id,),
                binary=True,
            )
        )
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((0, dim), dtype=np.float32)
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        try:
            matrix = np.stack([_array(r[1]) for r in rows])
        except ValueError:
            matrix = np.empty(0, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != dim:
            raise StoreError(
                f"{self.path}: stored vectors do not have dimension {dim}; run `mnemolayer reindex`"
            )
        return rowids, matrix

    def vector_search(
        self, user_id: str, query: np.ndarray, k: int, *, ef_search: int = 100
    ) -> list[tuple[int, float]]:
        """The ``k`` chunk vectors of ``user_id`` nearest to ``query`` by cosine, through
        pgvector's HNSW index (Malkov & Yashunin, 2018) with iterative scans so that the
        user filter still yields ``k`` rows: ``[(rowid, cosine similarity)]`` best first.

        Args:
            user_id: whose vectors.
            query: ``(dim,)`` float32, the query embedding.
            k: how many.
            ef_search: the HNSW candidate list size (recall against speed).
        """
        q = np.asarray(query, dtype=np.float32)
        dim = int(q.shape[0])

        def run() -> list[tuple[int, float]]:
            with self._pooled() as raw, self._tenant_transaction(raw):
                raw.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                raw.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = raw.execute(
                    f"SELECT memory_rowid, 1 - (vector::vector({dim}) <=> %s::vector({dim})) "
                    f"FROM vectors WHERE user_id = %s AND vector_dims(vector) = {dim} "
                    f"ORDER BY vector::vector({dim}) <=> %s::vector({dim}) LIMIT %s",
                    (q, user_id, q, int(k)),
                ).fetchall()
            return [(int(r), float(s)) for r, s in rows]

        return self._guard(run)

    # -- access counting -----------------------------------------------------------------

    def _write_briefly(self, wait_s: float, fn: Callable[[Any], None]) -> bool:
        """A pooled connection's transaction that gives up (and returns ``False``) when
        the writer lock is not free within ``wait_s`` seconds; any error gives ``False``.

        Its commit does not wait for the WAL to reach disk (``synchronous_commit = off``
        for this transaction alone): what it writes is access counting, which may be lost
        in a crash anyway (:meth:`~mnemolayer.store.states.StatesSQL.record_access`), and
        the flush of a search should not wait for an fsync. A crash loses at most the
        last few hundred milliseconds of such commits, never corrupts (PostgreSQL's
        asynchronous commit)."""
        try:
            with (
                self._pooled(timeout=max(wait_s, 0.05)) as raw,
                self._tenant_transaction(raw),
            ):
                got = raw.execute(
                    "SELECT pg_try_advisory_xact_lock(%s)", (self._lock_key,)
                ).fetchone()[0]
                if not got:
                    deadline = time.monotonic() + wait_s
                    while not got and time.monotonic() < deadline:
                        time.sleep(0.01)
                        got = raw.execute(
                            "SELECT pg_try_advisory_xact_lock(%s)", (self._lock_key,)
                        ).fetchone()[0]
                    if not got:
                        return False
                raw.execute("SET LOCAL synchronous_commit = off")
                fn(_Conn(raw))
            return True
        except Exception:
            return False

    def file_size(self) -> int:
        """Bytes the database takes on the server (``pg_database_size``)."""
        return int(self.read("SELECT pg_database_size(current_database())")[0][0])

    # -- erasure -------------------------------------------------------------------------

    def user_tables(self, c: Txn | None = None) -> list[str]:
        """Every table of the current schema with a ``user_id`` column, sorted."""
        return [
            str(r[0])
            for r in self._rows(
                c,
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
                "AND table_schema = current_schema() ORDER BY table_name",
                (),
            )
        ]


#: The start of PostgreSQL's binary COPY format (then flags and a header extension).
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def copied_vectors(data: bytes, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(rowids, matrix)`` from the binary COPY of ``(memory_rowid bigint, chunk
    integer, vector)`` rows, sorted by rowid then chunk; ``None`` when a vector does not
    have dimension ``dim`` (or the data is not such a COPY).

    Each row is a field count (int16, 3), then per field its length (int32) and value:
    8 bytes, 4 bytes, and ``4 + 4 * dim`` for the vector, all big-endian."""
    if not data.startswith(_COPY_SIGNATURE) or len(data) < 21 or data[-2:] != b"\xff\xff":
        return None
    start = 19 + int.from_bytes(data[15:19], "big")
    body = memoryview(data)[start:-2]
    row = np.dtype(
        [("fields", ">i2"), ("rowid_len", ">i4"), ("rowid", ">i8"), ("chunk_len", ">i4"),
         ("chunk", ">i4"), ("vector_len", ">i4"), ("dim", ">u2"), ("unused", ">u2"),
         ("vector", ">f4", (dim,))]
    )  # fmt: skip
    if len(body) % row.itemsize:
        return None
    rows = np.frombuffer(body, dtype=row)
    if not (
        bool((rows["fields"] == 3).all())
        and bool((rows["rowid_len"] == 8).all())
        and bool((rows["chunk_len"] == 4).all())
        and bool((rows["vector_len"] == 4 + 4 * dim).all())
        and bool((rows["dim"] == dim).all())
    ):
        return None
    ids = rows["rowid"].astype(np.int64)
    order = np.lexsort((rows["chunk"].astype(np.int64), ids))
    return ids[order], rows["vector"][order].astype(np.float32)


def _array(value: Any) -> np.ndarray:
    """A pgvector value (``Vector`` or array) as float32."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
