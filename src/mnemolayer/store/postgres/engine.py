"""The PostgreSQL connection under the server store: one tenant's transactions on a
psycopg 3 pool (:mod:`mnemolayer.store.postgres.database`), the writer lock, retries,
migrations and error mapping.

Transactions keep the embedded store's semantics: one write transaction at a time per
tenant of the database (a transaction-level advisory lock, as SQLite's ``BEGIN
IMMEDIATE``), and a read issued by a thread inside a write transaction sees that
transaction's writes (it runs on the same connection). Every other read takes any pooled
connection, so reads of many threads and processes run in parallel. Every transaction,
a write names the store's tenant for itself alone
(``set_config('mnemolayer.tenant', tenant, true)``), which row-level security enforces.
A read (autocommit: one statement, one transaction) runs on a pooled connection whose
session already names the store's tenant: the tenant a connection's session was given
is recorded on the connection, and a store that takes a connection last set for another
tenant (or whose last statement failed) sets its own first, in the same round trip.
Setting the tenant per connection rather than per read halves the statements a read
sends (docs/multi-tenant.md, "Cost").
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from mnemolayer import _validate as v
from mnemolayer._extras import install_hint
from mnemolayer.errors import StoreBusyError, StoreError
from mnemolayer.store.engine import Engine
from mnemolayer.store.migrate import check_current
from mnemolayer.store.postgres.database import (
    NO_SCHEMA,
    PostgresDatabase,
    one_line,
    writer_lock_key,
)
from mnemolayer.store.postgres.migrations import SCHEMA_VERSION, TENANT_SETTING
from mnemolayer.store.postgres.translate import translate
from mnemolayer.store.postgres.url import redact_url, split_options

__all__ = ["PostgresConnection", "has_schema"]


def has_schema(url: str) -> bool:
    """Whether the database at ``url`` holds a mnemolayer schema; reads only (no table,
    extension or connection pool is made), so a read can refuse a database never written.

    Raises:
        StoreError: psycopg is missing, or the server cannot be reached.
        ValidationError: a malformed URL.
    """
    shown = redact_url(url)
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - the postgres extra is missing
        raise StoreError(f"the PostgreSQL store needs psycopg: {install_hint('postgres')}") from exc
    try:
        conninfo, _ = split_options(url)
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
    except psycopg.Error as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {shown}: {exc}") from exc
    return bool(row and row[0])


T = TypeVar("T")
#: How long a caller waits for a pooled connection before checking that the server still
#: answers (a server that is down gives a StoreError then, not a wait of busy_timeout_s).
_PROBE_AFTER_S = 0.5
#: Names the transaction's tenant, for this transaction only (``is_local``).
_SET_TENANT = f"SELECT set_config('{TENANT_SETTING}', %s, true)"
#: Names the session's tenant: what reads on this connection run as until it is set again.
_SET_SESSION_TENANT = f"SELECT set_config('{TENANT_SETTING}', %s, false)"
#: The attribute of a pooled psycopg connection that records the tenant its session was
#: given (absent: none, or unknown after an error).
_SESSION_TENANT = "_mnemolayer_session_tenant"


def _forget_session_tenant(raw: Any) -> None:
    """Forget which tenant ``raw``'s session names (after an error it is not known)."""
    with contextlib.suppress(AttributeError):
        delattr(raw, _SESSION_TENANT)


def _dropped(raw: Any) -> bool:
    """Whether an idle pooled connection was closed by the server (a restart, a terminated
    backend). The server says so on the socket (a FATAL message, then end of file), and an
    idle connection's socket is otherwise never readable: one ``select`` of no wait, no
    round trip."""
    if raw.closed or raw.broken:
        return True
    try:
        readable, _, _ = select.select([raw.pgconn.socket], [], [], 0)
    except Exception:  # no socket any more
        return True
    return bool(readable)


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


class PostgresConnection(Engine):
    """One tenant's transactions on a pool of connections to one PostgreSQL database
    (with pgvector), migrated: the engine of
    :class:`~mnemolayer.store.postgres.store.PostgresStore`.

    Args:
        url: ``postgresql://…`` (see :mod:`mnemolayer.store.postgres.store`); the database
            must exist and the user may create tables and the ``vector`` extension (or it
            is there). Its ``tenant`` option names the tenant (default ``default``).
        busy_timeout_s: how long a write waits for another writer of the tenant before
            :class:`StoreBusyError`.
        read_only: open for reading only: every session is read-only on the server
            (``default_transaction_read_only``) and writes raise :class:`StoreError`
            saying so; the schema must be current.
        database: a pool shared with other tenants' stores (not closed by
            :meth:`close`); default: one of this store's own.
        tenant: the tenant, instead of the URL's ``tenant`` option.

    Raises:
        StoreError: the server cannot be reached, the login fails, pgvector is missing,
            the schema is newer than this mnemolayer, or ``read_only`` differs from the
            shared ``database``'s.
        ValidationError: a malformed ``pool_max``, ``hnsw`` or ``tenant`` (field ``db``).
    """

    def __init__(
        self,
        url: str,
        *,
        busy_timeout_s: float = 60.0,
        read_only: bool | None = None,
        database: PostgresDatabase | None = None,
        tenant: str | None = None,
    ) -> None:
        redact_url(url)  # a malformed URL: a ValidationError naming ``db``
        _, options = split_options(url)
        #: The tenant whose rows this store reads and writes (URL option ``tenant``).
        self.tenant = (
            v.tenant(tenant)
            if tenant is not None
            else v.tenant(options.get("tenant", "default"), "db")
        )
        self._owns_database = database is None
        if database is None:
            database = PostgresDatabase(url, read_only=bool(read_only))
        elif read_only is not None and bool(read_only) != database.read_only:
            raise StoreError(
                f"{database.path} was opened {'read-only' if database.read_only else 'for writing'}"
            )
        self._database = database
        self._psycopg = database._psycopg
        self._pool = database.pool
        self._conninfo = database.conninfo
        self.path = database.path
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self.read_only = database.read_only
        self._index_writes = 0
        self._doc_counts: dict[str, int] = {}
        self._doc_counts_token: tuple[int, int] | None = None
        self._local = threading.local()
        #: Whether vectors get pgvector HNSW indexes (URL option ``hnsw=on``).
        self.hnsw = database.hnsw
        self._lock_key = writer_lock_key(self.tenant)
        try:
            if self.read_only:
                self._check_version()
            else:
                self._migrate()
                database.register_tenant(self.tenant)
        except BaseException:
            if self._owns_database:
                database.close()
            raise

    @property
    def database(self) -> PostgresDatabase:
        """The database (and pool) this store stands on, perhaps shared with other
        tenants' stores."""
        return self._database

    # -- connection, transactions, errors --------------------------------------------

    @contextlib.contextmanager
    def _pooled(self, timeout: float | None = None) -> Iterator[Any]:
        """A live connection from the pool, given back afterwards.

        A connection the server dropped while it sat in the pool (PostgreSQL restarted) is
        discarded before use and the next one taken, so that the first calls after a
        restart do not fail on dead connections (the pool opens new ones). A caller that
        waits more than :data:`_PROBE_AFTER_S` checks that the server answers at all and
        gets :class:`StoreError` at once when it does not, rather than waiting for the
        pool's reconnection attempts until ``timeout`` (``busy_timeout_s``).
        """
        from psycopg_pool import PoolTimeout

        deadline = time.monotonic() + (self.busy_timeout_s if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            try:
                raw = self._pool.getconn(timeout=max(min(_PROBE_AFTER_S, left), 0.001))
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
                self._probe()
                continue
            if not _dropped(raw):
                break
            raw.close()
            self._pool.putconn(raw)  # a closed connection: the pool replaces it
        try:
            with raw:
                yield raw
        finally:
            self._pool.putconn(raw)

    def _probe(self) -> None:
        """Raise :class:`StoreError` when the server does not take a new connection."""
        psycopg = self._psycopg
        try:
            with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5):
                pass
        except psycopg.Error as exc:
            raise StoreError(f"cannot reach PostgreSQL at {self.path}: {one_line(exc)}") from exc

    def _rows_of(
        self, sql: str, params: Sequence[Any] = (), *, binary: bool = False
    ) -> list[tuple[Any, ...]]:
        """The rows of one query (psycopg's dialect) as this store's tenant: in this
        thread's write transaction when there is one (so that it sees its writes), else
        alone on a pooled connection (autocommit) whose session names the tenant, set
        first in the same round trip when the connection was last set for another."""
        current = getattr(self._local, "conn", None)
        if current is not None:
            with current.cursor(binary=binary) as cur:
                cur.execute(sql, params)
                return list(cur.fetchall())
        with self._pooled() as raw:
            cur = raw.cursor(binary=binary)
            if getattr(raw, _SESSION_TENANT, None) == self.tenant:
                try:
                    cur.execute(sql, params)
                    return list(cur.fetchall())
                except BaseException:
                    _forget_session_tenant(raw)
                    raise
            _forget_session_tenant(raw)
            with raw.pipeline() as pipe:
                raw.execute(_SET_SESSION_TENANT, (self.tenant,))
                cur.execute(sql, params)
                pipe.sync()
            setattr(raw, _SESSION_TENANT, self.tenant)
            return list(cur.fetchall())

    def _copy_out(self, sql: str, params: Sequence[Any] = ()) -> bytes:
        """What ``COPY (...) TO STDOUT`` statement ``sql`` (psycopg's dialect, bound on
        the client) writes, as bytes, as this store's tenant: in this thread's write
        transaction when there is one, else on a pooled connection whose session names
        the tenant (as :meth:`_rows_of`)."""

        def run(raw: Any) -> bytes:
            out = bytearray()
            with raw.cursor() as cur, cur.copy(sql, params) as copy:
                for part in copy:  # a row at a time, as libpq hands them over
                    out += part
            return bytes(out)

        current = getattr(self._local, "conn", None)
        if current is not None:
            return run(current)
        with self._pooled() as raw:
            if getattr(raw, _SESSION_TENANT, None) != self.tenant:
                _forget_session_tenant(raw)
                raw.execute(_SET_SESSION_TENANT, (self.tenant,))
                setattr(raw, _SESSION_TENANT, self.tenant)
            try:
                return run(raw)
            except BaseException:
                _forget_session_tenant(raw)
                raise

    @contextlib.contextmanager
    def _tenant_transaction(self, raw: Any) -> Iterator[Any]:
        """A transaction on ``raw`` with this store's tenant set for it alone."""
        with raw.transaction():
            raw.execute(_SET_TENANT, (self.tenant,))
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
        except psycopg.OperationalError as exc:
            if exc.sqlstate is None or exc.sqlstate.startswith("08") or exc.sqlstate == "57P01":
                raise StoreError(
                    f"lost the connection to PostgreSQL at {self.path}: {one_line(exc)}"
                ) from exc
            raise StoreError(f"database error on {self.path}: {exc}") from exc
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
            self._pooled() as raw,
            raw.pipeline() as pipe,
            raw.transaction(),
        ):
            raw.execute(
                f"SELECT set_config('lock_timeout', %s, true), "
                f"set_config('{TENANT_SETTING}', %s, true), pg_advisory_xact_lock(%s)",
                (str(int(self.busy_timeout_s * 1000)), self.tenant, self._lock_key),
            )
            self._local.conn = raw
            try:
                yield _Conn(raw, pipe)
            finally:
                self._local.conn = None

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read query and return all rows (inside this thread's write transaction
        when there is one, so that it sees its writes)."""

        return self._guard(lambda: self._rows_of(translate(sql), list(params)))

    def _check_version(self) -> None:
        """Read-only: the schema must be current (it cannot be upgraded)."""
        exists = self.read("SELECT to_regclass('schema_version') IS NOT NULL")[0][0]
        current = self.read("SELECT MAX(version) FROM schema_version")[0][0] if exists else None
        if current is None:
            raise StoreError(NO_SCHEMA.format(url=self.path))
        check_current(current, SCHEMA_VERSION, self.path)

    def _migrate(self) -> None:
        """The database's schema brought up to date (once per database object)."""
        self._guard(self._database.migrate)

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
            with self._pooled() as raw:
                raw.execute("VACUUM (ANALYZE)")

        self._guard(run)
        return time.perf_counter() - start

    def truncate_log(self) -> bool:
        """No-op: PostgreSQL recycles its write-ahead log itself. Always ``True``."""
        return True

    def close(self) -> None:
        """Close the pool, when this store opened it (a shared database stays open);
        the background flush of access counts ends first."""
        stop = getattr(self, "stop_access_flusher", None)
        if callable(stop):
            stop()
        if self._owns_database:
            self._database.close()
