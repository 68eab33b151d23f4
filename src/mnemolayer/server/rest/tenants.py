"""The tenants' stores: opened on first use, cached, closed together at shutdown.

Three layouts (:class:`~mnemolayer.server.rest.settings.ServerSettings`): one store
(``db``), a file per tenant (``data_dir``), or every tenant in one PostgreSQL database
(``database``), where each tenant's store is a view with caches of its own over one
shared connection pool (:class:`~mnemolayer.store.postgres.database.PostgresDatabase`)
and row-level security keeps the tenants apart.

What a :class:`Memory` keeps in the process is a cache checked against the database on
every use (the user's generation, bumped in every write transaction, for vectors, the
ANN index and fact links; the tenant's index version for keyword statistics), so a write
acknowledged by one replica is seen by a search on another at once; the one exception is
the batched access log (recall counts waiting to be written), which a replica that dies
loses (a memory fades a little sooner; no record is lost).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemolayer.crypto import env_requests_encryption
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import StoreError
from mnemolayer.extract.base import Extractor
from mnemolayer.memory import Memory
from mnemolayer.protocols import Reranker
from mnemolayer.registry import get_embedder, get_extractor, get_reranker
from mnemolayer.server.rest.settings import DEFAULT_TENANT, ServerSettings, check_tenant
from mnemolayer.store.postgres.database import PostgresDatabase
from mnemolayer.store.postgres.store import PostgresStore
from mnemolayer.store.redis_sessions import RedisSessionStore

__all__ = ["TenantPool"]

#: Working-memory windows are not safe for concurrent use; requests on one window are
#: serialised by one of this many locks per tenant (chosen by the window's scope) in the
#: process, and across processes by the window's shared lock where its store has one.
_WINDOW_LOCKS = 64


class TenantPool:
    """One :class:`Memory` per tenant, all sharing one embedder, one extractor, the
    optional reranker and, on PostgreSQL, one connection pool.

    Args:
        settings: where the stores live and which models they use.
        embedder: the shared embedder (default: ``settings.embedder``, made here).

    Raises:
        StoreError: (``settings.database``) the database cannot be opened or migrated,
            or the server's role skips row-level security (a superuser or ``BYPASSRLS``:
            the message names the role); (``settings.sessions``) Redis cannot be reached.

    Thread-safe: stores open under a lock, and :class:`Memory` is thread-safe itself.
    """

    def __init__(self, settings: ServerSettings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.database: PostgresDatabase | None = None
        self._sessions: RedisSessionStore | None = None
        self._stores: dict[str, Memory] = {}
        self._locks: dict[str, list[threading.Lock]] = {}
        self._lock = threading.Lock()
        self._closed = False
        try:
            if settings.database is not None:
                self.database = _open_database(settings.database)
            if settings.sessions is not None:
                self._sessions = RedisSessionStore(settings.sessions)
            self.embedder = (
                embedder
                if embedder is not None
                else get_embedder(settings.embedder, threads=settings.embed_threads)
            )
            self.extractor: Extractor | None = get_extractor(settings.extractor)
            self.reranker: Reranker | None = get_reranker(settings.reranker)
        except BaseException:
            self._close_shared()
            raise

    def opened(self, tenant: str) -> Memory | None:
        """The store of ``tenant`` if it is open already, else ``None`` (never blocks)."""
        return self._stores.get(tenant)

    def get(self, tenant: str) -> Memory:
        """The store of ``tenant``, opened (and created) on first use.

        Raises:
            ValidationError: a bad tenant name.
            StoreCorruptError, EmbeddingModelMismatchError: as :class:`Memory` raises them.
        """
        mem = self._stores.get(tenant)
        if mem is not None:
            return mem
        check_tenant(tenant)
        with self._lock:
            if self._closed:
                raise RuntimeError("the tenant pool is closed")
            mem = self._stores.get(tenant)
            if mem is None:
                mem = self._open(tenant)
                self._locks[tenant] = [threading.Lock() for _ in range(_WINDOW_LOCKS)]
                self._stores[tenant] = mem
        return mem

    def _open(self, tenant: str) -> Memory:
        where: str | PostgresStore
        if self.database is not None:
            assert self.settings.database is not None
            where = PostgresStore(self.settings.database, database=self.database, tenant=tenant)
        else:
            where = self.settings.tenant_path(tenant)
            if self.settings.data_dir is not None:
                Path(where).parent.mkdir(parents=True, exist_ok=True)
        try:
            return Memory(
                where,
                embedder=self.embedder,
                extractor=self.extractor,
                reranker=self.reranker,
                privacy=self.settings.privacy,
                embed_queue=self.settings.embed_queue,
                sessions=self._sessions_of(tenant),
                # Encrypted at rest when MNEMOLAYER_MASTER_KEY[_FILE] is set (SQLite only).
                encryption=True if env_requests_encryption() and self.database is None else None,
            )
        except BaseException:
            if not isinstance(where, str):  # a store opened here, not a path
                where.close()
            raise

    def _sessions_of(self, tenant: str) -> RedisSessionStore | None:
        """The tenant's windows in the shared Redis: under a prefix of the tenant's own
        (two tenants may hold the same user ids) on the one client; a single store's
        under the URL's prefix, as ``Memory(sessions=URL)`` keeps them."""
        base = self._sessions
        if base is None or not self.settings.multi_tenant:
            return base
        return RedisSessionStore(
            base.client, prefix=f"{base.prefix}:tenant:{tenant}", ttl_seconds=base.ttl_seconds
        )

    def open_stores(self) -> list[Memory]:
        """The stores open now (never opens one): what ``/metrics`` reads."""
        return list(self._stores.values())

    @contextlib.contextmanager
    def window_lock(
        self, tenant: str, user_id: str, session_id: str, agent_id: str | None
    ) -> Iterator[None]:
        """Hold the lock of one working-memory window of ``tenant`` while the block runs:
        a lock of this process, then the window's lock shared by every replica when its
        windows are shared (a Redis lock with windows in Redis, a PostgreSQL advisory
        lock with windows in the database); SQLite files are one host's, and their
        windows are locked in the process only.

        Raises:
            StoreBusyError: another replica held the window's lock too long.
        """
        mem = self.get(tenant)
        local = self._locks[tenant][hash((user_id, session_id, agent_id)) % _WINDOW_LOCKS]
        # The session store's lock if it has one (Redis), else the store's (PostgreSQL).
        shared: Any = getattr(mem.sessions, "window_lock", None) or getattr(
            mem.store, "window_lock", None
        )
        with local, shared(user_id, session_id, agent_id) if shared else contextlib.nullcontext():
            yield

    def names(self) -> list[str]:
        """Every tenant with a store (in the database, on disk, or open), sorted."""
        found = set(self._stores)
        if self.database is not None:
            found.update(self.database.tenants())
        elif self.settings.data_dir is None:
            found.add(DEFAULT_TENANT)
        else:
            root = self.settings.data_dir / "tenants"
            if root.is_dir():
                for child in root.iterdir():
                    try:
                        name = check_tenant(child.name)
                    except ValueError:
                        continue
                    if (child / "memory.db").is_file():
                        found.add(name)
        return sorted(found)

    def close(self) -> None:
        """Close every store, then the shared pool and Redis client; later :meth:`get`
        calls fail."""
        with self._lock:
            self._closed = True
            stores, self._stores = list(self._stores.values()), {}
        try:
            for mem in stores:
                mem.close()
            closer = getattr(self.reranker, "close", None)
            if callable(closer):
                closer()
        finally:
            self._close_shared()

    def _close_shared(self) -> None:
        if self._sessions is not None:
            self._sessions.close()
        if self.database is not None:
            self.database.close()


def _open_database(url: str) -> PostgresDatabase:
    """The tenants' database, migrated, after checking that its role is held to
    row-level security (else every tenant could read every other's rows).

    Raises:
        StoreError: as :class:`PostgresDatabase` raises it, or the role bypasses RLS.
    """
    database = PostgresDatabase(url)
    try:
        why = database.row_security_bypass()
        if why is not None:
            raise StoreError(
                f"refusing to serve tenants from {database.path}: {why}, so row-level "
                "security would not keep the tenants apart; connect as a role with "
                "NOSUPERUSER NOBYPASSRLS (docs/multi-tenant.md)"
            )
        database.migrate()
    except BaseException:
        database.close()
        raise
    return database
