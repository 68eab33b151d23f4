"""The write transaction a store hands to ``store.transact(fn)``, as code above the store
sees it.

On SQLite it is the ``sqlite3.Connection`` itself; on PostgreSQL a wrapper that takes the
same SQLite-dialect statements and translates them
(:class:`mnemolayer.store.postgres.store._Conn`). Code outside ``store/`` only passes it
on to store methods, so it names neither: it annotates :class:`Txn`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, cast

__all__ = ["Cursor", "Txn", "sqlite_typed"]


class Cursor(Protocol):
    """The result of :meth:`Txn.execute`: rows, and how many rows a write changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Txn(Protocol):
    """One write transaction: statements in the SQLite dialect with ``?`` parameters."""

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


def sqlite_typed(c: Txn) -> sqlite3.Connection:
    """``c`` as the store's older methods still annotate their transaction
    (``sqlite3.Connection``), for passing it on to them: on PostgreSQL it is the
    translating wrapper, which offers the calls they make. Goes once those signatures
    take :class:`Txn` (the store classes are being split, issue 14)."""
    return cast(sqlite3.Connection, c)
