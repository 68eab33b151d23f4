"""The SQLite connection under the embedded store: opening, health checks, migrations,
transactions, retries and error mapping.

Safe for several threads (one connection behind a lock) and several processes on one
file (WAL, checkpointed as store/wal.py explains; writes take the write lock up front with ``BEGIN IMMEDIATE`` and retry with
backoff while another process holds it, so "database is locked" never reaches callers
unless the lock is held past ``busy_timeout_s``).
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from mnemolayer.errors import StoreBusyError, StoreCorruptError, StoreError
from mnemolayer.store.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION
from mnemolayer.store.sqlite.wal import WalCheckpointer, configure_wal, truncate_log

__all__ = ["SQLiteConnection", "from_iso", "iso", "retry_locked"]

T = TypeVar("T")
_SQLITE_HEADER = b"SQLite format 3\x00"
_QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024
_CORRUPT_MARKERS = ("malformed", "not a database", "corrupt", "disk i/o error")


def iso(dt: datetime | None) -> str | None:
    """Store times as fixed-width UTC ISO-8601 so text order is time order."""
    if dt is None:
        return None
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def from_iso(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def retry_locked(fn: Callable[[], T], timeout_s: float) -> T:
    """Run ``fn``, retrying with jittered exponential backoff (5 ms doubling to 250 ms)
    while SQLite says the database is locked or busy, for at most ``timeout_s`` seconds.

    Raises:
        sqlite3.OperationalError: not a lock error, or still locked after ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            msg = str(exc).lower()
            if ("locked" not in msg and "busy" not in msg) or time.monotonic() > deadline:
                raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.25)


class SQLiteConnection:
    """One SQLite file, opened, checked and migrated; the base of :class:`SQLiteStore`.

    Args:
        path: file path or ``":memory:"``.
        busy_timeout_s: how long a write waits for another process's lock before
            :class:`StoreBusyError`.
        read_only: open without writing anything (a backup, a file or directory without
            write permission); ``None`` decides from the permissions. Writes then raise
            :class:`StoreError` saying the store is read-only.

    Raises:
        StoreCorruptError: the file exists but is not a healthy SQLite database; it is left
            untouched.
        StoreError: read-only and the file is missing or needs a schema upgrade.
    """

    def __init__(
        self, path: str, *, busy_timeout_s: float = 60.0, read_only: bool | None = None
    ) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.RLock()
        self._index_writes = 0
        self._checkpointer = WalCheckpointer(path)
        self.read_only = self._decide_read_only(read_only)
        self._check_file_header()
        try:
            target, uri = path, False
            if self.read_only:
                # immutable: no -wal/-shm files are made, so a read-only directory works.
                target, uri = f"{Path(path).resolve().as_uri()}?mode=ro&immutable=1", True
            self._conn = sqlite3.connect(
                target, timeout=5.0, isolation_level=None, check_same_thread=False, uri=uri
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {path}: {exc}") from exc
        try:
            self._guard(self._check_integrity)
            self._guard(self._configure)
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    # -- opening -----------------------------------------------------------------------

    def _decide_read_only(self, requested: bool | None) -> bool:
        if self.path == ":memory:":
            return False
        p = Path(self.path)
        if requested is None:
            directory = p.parent if str(p.parent) else Path(".")
            requested = p.exists() and not (os.access(p, os.W_OK) and os.access(directory, os.W_OK))
        if requested and not p.is_file():
            raise StoreError(f"cannot open {self.path} read-only: no such database file")
        return requested

    def _check_file_header(self) -> None:
        if self.path == ":memory:":
            return
        p = Path(self.path)
        if p.is_dir():
            raise StoreError(f"cannot open database {self.path}: it is a directory")
        if p.exists() and p.stat().st_size > 0:
            with p.open("rb") as fh:
                if fh.read(16) != _SQLITE_HEADER:
                    raise StoreCorruptError(self.path, "not an SQLite file")
        else:
            p.parent.mkdir(parents=True, exist_ok=True)

    def _check_integrity(self) -> None:
        if self.path == ":memory:" or not Path(self.path).exists():
            return
        if Path(self.path).stat().st_size > _QUICK_CHECK_MAX_BYTES:
            return
        try:
            rows = self._conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            msg = str(exc).lower()
            if any(m in msg for m in ("readonly", "read-only", "locked", "busy", "unable to open")):
                raise  # not damage: mapped by _guard
            raise StoreCorruptError(self.path, str(exc)) from exc
        if [r[0] for r in rows] != ["ok"]:
            raise StoreCorruptError(self.path, "; ".join(str(r[0]) for r in rows[:3]))

    def _configure(self) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(min(self.busy_timeout_s, 5.0) * 1000)}")
        if self.path != ":memory:" and not self.read_only:
            # Automatic checkpoints off, ours after commits: see store/wal.py.
            self._retry(lambda: configure_wal(c))
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")

    def _migrate(self) -> None:
        if self.read_only:
            current = self._guard(
                lambda: self._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
            )
            if current != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {current}, this mnemolayer needs "
                    f"{SCHEMA_VERSION}: open it once with write access to upgrade it"
                )
            return

        def run() -> None:
            with self.write() as c:
                c.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version "
                    "(version INTEGER NOT NULL, applied_at TEXT NOT NULL)"
                )
                row = c.execute("SELECT MAX(version) FROM schema_version").fetchone()
                current = row[0] or 0
                if current > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path} has schema version {current}, newer than this mnemolayer "
                        f"({SCHEMA_VERSION}); upgrade mnemolayer"
                    )
                now = iso(datetime.now(UTC))
                for version in range(current + 1, SCHEMA_VERSION + 1):
                    for stmt in MIGRATIONS[version - 1]:
                        c.execute(stmt)
                    c.execute("INSERT INTO schema_version VALUES (?, ?)", (version, now))

        self._guard(run)

    def schema_version(self) -> int:
        return int(self.read("SELECT MAX(version) FROM schema_version")[0][0])

    # -- transactions and error mapping ------------------------------------------------

    def _guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` mapping sqlite3 errors to mnemolayer errors (at the boundary)."""
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            msg = str(exc).lower()
            if "locked" in msg or "busy" in msg:
                raise StoreBusyError(f"database {self.path} is locked: {exc}") from exc
            if "readonly" in msg or "read-only" in msg:
                why = (
                    "it was opened read-only"
                    if self.read_only
                    else "the file or its directory is not writable; SQLite in WAL mode needs both"
                )
                raise StoreError(f"database {self.path} is read-only ({why})") from exc
            if any(m in msg for m in _CORRUPT_MARKERS):
                raise StoreCorruptError(self.path, str(exc)) from exc
            raise StoreError(f"database error on {self.path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            msg = str(exc).lower()
            if "readonly" in msg or "read-only" in msg:
                raise StoreError(f"database {self.path} is read-only: {exc}") from exc
            if any(m in msg for m in _CORRUPT_MARKERS):
                raise StoreCorruptError(self.path, str(exc)) from exc
            raise StoreError(f"database error on {self.path}: {exc}") from exc

    def _retry(self, fn: Callable[[], T]) -> T:
        """Retry ``fn`` while the database is locked by another connection."""
        return retry_locked(fn, self.busy_timeout_s)

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), committed on success, rolled back on error.

        Callers wrap the whole unit of work (including this context) in :meth:`transact`
        so that a lock held by another process is retried from the start.
        """
        with self._lock:
            self._retry(lambda: self._conn.execute("BEGIN IMMEDIATE"))
            try:
                yield self._conn
                self._retry(lambda: self._conn.execute("COMMIT"))
            except BaseException:
                # A failed COMMIT (disk full, I/O error, a deferred constraint) leaves the
                # transaction open: rolled back here, or this handle could never write
                # again and would hold the write lock against every other process.
                self._rollback()
                raise
            self._checkpointer.after_commit(self._conn)

    def _rollback(self) -> None:
        # SQLite rolls some failed statements back by itself; a second ROLLBACK would then
        # raise "no transaction is active" and hide the error that matters.
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def transact(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in one write transaction; errors mapped, locks retried."""

        def once() -> T:
            with self.write() as c:
                return fn(c)

        return self._guard(lambda: self._retry(once))

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read query and return all rows."""

        def run() -> list[tuple[Any, ...]]:
            with self._lock:
                return self._conn.execute(sql, params).fetchall()

        return self._guard(lambda: self._retry(run))

    def truncate_log(self) -> bool:
        """Empty the write-ahead log into the file (:func:`store.wal.truncate_log`): no old
        page version stays in it. ``True`` for a read-only or in-memory store (no log)."""
        if self.read_only:
            return True
        with self._lock:
            return truncate_log(self._conn, self.path)

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA optimize")
            self._conn.close()

    # -- meta ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self.read("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def init_meta(self, defaults: dict[str, str]) -> dict[str, str]:
        """Set each key that is not set yet, in one transaction; return the stored values."""

        def run(c: sqlite3.Connection) -> dict[str, str]:
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
