"""The shared SQL of both stores, as one abstract base.

:class:`SQLStore` is every statement the SQLite and PostgreSQL stores share, written once
in the SQLite dialect (PostgreSQL translates it, :mod:`mnemolayer.store.postgres.translate`),
assembled from its parts:

- :mod:`~mnemolayer.store.core`: the engine, the field cipher, the row layout, and the
  hooks (the list is there);
- :mod:`~mnemolayer.store.records`: inserting, editing and reading records;
- :mod:`~mnemolayer.store.history`: the audit history;
- :mod:`~mnemolayer.store.index`: keyword terms, vectors and generations;
- :mod:`~mnemolayer.store.states`: access counts, pins, archive and maintenance writes;
- :mod:`~mnemolayer.store.pending`: enrichment still to do, and the conditional writes
  of what is derived from a record's text (checked against its content revision);
- :mod:`~mnemolayer.store.erase`: deleting records with their index entries;
- :mod:`~mnemolayer.store.tombstones`: what deleted messages leave, so replays stay deleted;
- :mod:`~mnemolayer.store.statements`: named statements the services above the store
  call (lifecycle passes, recall candidates, metadata values).

Its two implementations are siblings: :class:`~mnemolayer.store.sqlite.store.SQLiteStore`
and :class:`~mnemolayer.store.postgres.store.PostgresStore`; each pairs its engine's
connection with the hooks.
"""

from __future__ import annotations

from mnemolayer.store.pending import PendingSQL
from mnemolayer.store.statements import Statements
from mnemolayer.store.states import StatesSQL
from mnemolayer.store.tombstones import TombstoneSQL

__all__ = ["SQLStore"]


class SQLStore(Statements, StatesSQL, PendingSQL, TombstoneSQL):
    """Records, keyword index, vectors and history in one SQL database (abstract: an
    engine implements the hooks of :class:`~mnemolayer.store.core.StoreCore`).

    Write methods take ``c``, the connection of a transaction opened with
    :meth:`transact`; they never commit. Read methods run on their own.
    """
