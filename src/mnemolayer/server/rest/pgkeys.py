"""API keys in the tenants' PostgreSQL database, so that every replica of a server reads
the same keys: :class:`PostgresKeyStore`, the :class:`~mnemolayer.server.rest.keys.KeyStore`
of ``mnemolayer serve --database``.

The keys are the same (``msk_<id>_<secret>``, only the SHA-256 kept, compared with
:func:`hmac.compare_digest`) and so are the rules; only where the rows live differs: the
``api_keys`` table (:mod:`mnemolayer.store.postgres.migrations`, migration 12), shared by
every tenant and without a row-level policy, since a request's key is looked up before
its tenant is known. A key created or revoked by ``mnemolayer keys`` or by any replica
takes effect on every replica at its next request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mnemolayer.server.rest.keys import KeyStore
from mnemolayer.store.postgres.database import PostgresDatabase
from mnemolayer.store.postgres.translate import translate

__all__ = ["PostgresKeyStore"]


class PostgresKeyStore(KeyStore):
    """The API keys of a server in a PostgreSQL database (its schema migrated).

    Args:
        database: the database, usually the pool the tenants' stores share (left open
            by :meth:`close` unless ``owned``).
        owned: close ``database`` with this store (the ``keys`` commands open their own).

    Raises:
        StoreError: the database fails (on any call).
    """

    def __init__(self, database: PostgresDatabase, *, owned: bool = False) -> None:
        database.migrate()
        self.path = database.path  # type: ignore[assignment]  # named in messages only
        self._database = database
        self._owned = owned
        self._touched: dict[str, datetime] = {}

    def _run(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        # The key store's statements are plain SQL of both engines: placeholders differ.
        return self._database.shared(translate(sql), params)

    def close(self) -> None:
        """Close the database when this store opened it."""
        if self._owned:
            self._database.close()
