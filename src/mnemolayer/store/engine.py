"""What a database engine gives the store: one read, one write transaction, closing.

:class:`Engine` is the connection half of a store. Its two implementations are
:class:`~mnemolayer.store.sqlite.engine.SQLiteConnection` (one file, WAL) and
:class:`~mnemolayer.store.postgres.engine.PostgresConnection` (a pool); both take
statements in the SQLite dialect (PostgreSQL translates them,
:mod:`mnemolayer.store.postgres.translate`) and map their driver's errors to mnemolayer's
at this boundary. The shared SQL (:class:`~mnemolayer.store.base.SQLStore`) stands on it,
and so does anything else that keeps tables in the store's database (the SQLite session
store, the keyring's ``meta`` rows).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mnemolayer.store.txn import Txn

__all__ = ["Engine"]

T = TypeVar("T")


class Engine(abc.ABC):
    """A connection (or pool) to one database, opened, checked and migrated.

    Attributes:
        path: where the database is, for messages (a PostgreSQL URL without its password).
        read_only: opened for reading only; writes raise :class:`StoreError`.
        busy_timeout_s: how long a write waits for another writer before
            :class:`StoreBusyError`.
    """

    path: str
    read_only: bool
    busy_timeout_s: float

    @abc.abstractmethod
    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read query (SQLite dialect, ``?`` placeholders) and return all rows."""

    @abc.abstractmethod
    def write(self) -> contextlib.AbstractContextManager[Txn]:
        """One write transaction: committed on success, rolled back on error. The
        connection it gives runs SQLite-dialect statements (``execute``,
        ``executemany``), as ``Txn`` does."""

    def transact(self, fn: Callable[[Txn], T]) -> T:
        """Run ``fn(conn)`` in one write transaction (:meth:`write`); errors mapped
        (:meth:`_guard`), lock conflicts retried from the start (:meth:`_retry`), with
        the :meth:`_before_write`, :meth:`_after_commit` and :meth:`_after_rollback`
        hooks around each attempt."""

        def once() -> T:
            token = None
            try:
                with self.write() as c:
                    token = self._before_write(c)
                    out = fn(c)
            except BaseException:
                self._after_rollback(token)
                raise
            self._after_commit(token)
            return out

        return self._guard(lambda: self._retry(once))

    @abc.abstractmethod
    def _guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` mapping the driver's errors to mnemolayer's."""

    @abc.abstractmethod
    def _retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn``, again from the start on a lock conflict the engine retries."""

    def _before_write(self, c: Txn) -> object:
        """Called first inside each :meth:`transact` transaction; what it returns is
        passed to :meth:`_after_commit` once that transaction committed (the store
        writes the accesses waiting in its log here: :mod:`mnemolayer.store.states`)."""
        return None

    def _after_commit(self, token: object) -> None:  # noqa: B027 (a hook: nothing by default)
        """Called after a :meth:`transact` transaction committed, with what
        :meth:`_before_write` returned in it."""

    def _after_rollback(self, token: object) -> None:  # noqa: B027 (a hook: nothing by default)
        """Called when a :meth:`transact` transaction failed and was rolled back, with
        what :meth:`_before_write` returned in it (``None`` if it was not reached)."""

    @abc.abstractmethod
    def truncate_log(self) -> bool:
        """Make sure no old page version stays in a write-ahead log the engine keeps
        beside the data; ``True`` when none is left."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection (or the pool)."""

    def _rows(self, c: Txn | None, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` inside ``c``'s transaction, or by a plain :meth:`read`."""
        return c.execute(sql, params).fetchall() if c else self.read(sql, params)

    def schema_version(self) -> int:
        return int(self.read("SELECT MAX(version) FROM schema_version")[0][0])

    # -- meta ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self.read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def init_meta(self, defaults: dict[str, str]) -> dict[str, str]:
        """Set each key that is not set yet, in one transaction; return the stored values."""

        def run(c: Txn) -> dict[str, str]:
            c.executemany(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO NOTHING", defaults.items()
            )
            marks = ",".join("?" * len(defaults))
            rows = c.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", list(defaults))
            return dict(rows.fetchall())

        if self.read_only:
            stored = {k: self.get_meta(k) for k in defaults}
            return {k: (val if val is not None else defaults[k]) for k, val in stored.items()}
        return self.transact(run)

    def set_meta(self, key: str, value: str) -> None:
        self.transact(
            lambda c: c.execute(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )
        )
