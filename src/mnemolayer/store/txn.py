"""The write transaction a store hands to ``store.transact(fn)``: :class:`Txn` and its
:class:`Cursor`, the protocols of :mod:`mnemolayer.protocols`, named here for the store's
own modules.

On SQLite it is the ``Txn`` itself; on PostgreSQL a wrapper that takes the
same SQLite-dialect statements and translates them
(:class:`mnemolayer.store.postgres.engine._Conn`). The store's methods and the code above
them annotate :class:`Txn`, so neither names an engine's connection type.
"""

from __future__ import annotations

from mnemolayer.protocols import Cursor, Txn

__all__ = ["Cursor", "Txn"]
