"""The tenants' stores: opened on first use, cached, closed together at shutdown."""

from __future__ import annotations

import threading
from pathlib import Path

from mnemolayer.crypto import env_requests_encryption
from mnemolayer.embed.base import Embedder
from mnemolayer.extract.base import Extractor
from mnemolayer.memory import Memory
from mnemolayer.protocols import Reranker
from mnemolayer.registry import get_embedder, get_extractor, get_reranker
from mnemolayer.server.rest.settings import DEFAULT_TENANT, ServerSettings, check_tenant

__all__ = ["TenantPool"]

#: Working-memory windows are not safe for concurrent use; requests on one window are
#: serialised by one of this many locks per tenant (chosen by the window's scope).
_WINDOW_LOCKS = 64


class TenantPool:
    """One :class:`Memory` per tenant, all sharing one embedder, one extractor and the
    optional reranker.

    Args:
        settings: where the stores live and which models they use.
        embedder: the shared embedder (default: ``settings.embedder``, made here).

    Thread-safe: stores open under a lock, and :class:`Memory` is thread-safe itself.
    """

    def __init__(self, settings: ServerSettings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.embedder = (
            embedder
            if embedder is not None
            else get_embedder(settings.embedder, threads=settings.embed_threads)
        )
        self.extractor: Extractor | None = get_extractor(settings.extractor)
        self.reranker: Reranker | None = get_reranker(settings.reranker)
        self._stores: dict[str, Memory] = {}
        self._locks: dict[str, list[threading.Lock]] = {}
        self._lock = threading.Lock()
        self._closed = False

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
        path = self.settings.tenant_path(tenant)
        with self._lock:
            if self._closed:
                raise RuntimeError("the tenant pool is closed")
            mem = self._stores.get(tenant)
            if mem is None:
                if self.settings.data_dir is not None:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                mem = Memory(
                    path,
                    embedder=self.embedder,
                    extractor=self.extractor,
                    reranker=self.reranker,
                    privacy=self.settings.privacy,
                    embed_queue=self.settings.embed_queue,
                    # Encrypted at rest when MNEMOLAYER_MASTER_KEY[_FILE] is set.
                    encryption=True if env_requests_encryption() else None,
                )
                self._locks[tenant] = [threading.Lock() for _ in range(_WINDOW_LOCKS)]
                self._stores[tenant] = mem
        return mem

    def open_stores(self) -> list[Memory]:
        """The stores open now (never opens one): what ``/metrics`` reads."""
        return list(self._stores.values())

    def window_lock(self, tenant: str, *scope: str | None) -> threading.Lock:
        """The lock serialising requests on one working-memory window of ``tenant``."""
        self.get(tenant)
        return self._locks[tenant][hash(scope) % _WINDOW_LOCKS]

    def names(self) -> list[str]:
        """Every tenant with a store on disk (or open), sorted."""
        found = set(self._stores)
        if self.settings.data_dir is None:
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
        """Close every store; later :meth:`get` calls fail."""
        with self._lock:
            self._closed = True
            stores, self._stores = list(self._stores.values()), {}
        for mem in stores:
            mem.close()
        closer = getattr(self.reranker, "close", None)
        if callable(closer):
            closer()
