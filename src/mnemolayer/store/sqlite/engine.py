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
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mnemolayer.errors import StoreBusyError, StoreCorruptError, StoreError
from mnemolayer.sqlitefile import WalCheckpointer, configure_wal, retry_locked, truncate_log
from mnemolayer.store.engine import Engine
from mnemolayer.store.migrate import check_current, upgrade
from mnemolayer.store.rows import from_iso, iso
from mnemolayer.store.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = ["SQLiteConnection", "from_iso", "iso", "retry_locked"]

T = TypeVar("T")
_QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024
_CORRUPT_MARKERS = ("malformed", "not a database", "corrupt", "disk i/o error")
#: SQLite's result codes for a write that found no room: SQLITE_FULL (the disk is full),
#: and the I/O errors of writing or growing a file, which is what a write refused with
#: EFBIG (a file-size limit) or EDQUOT (a quota) becomes. They mean nothing was written:
#: SQLite rolls the transaction back and the file stays as it was, so never "corrupt".
_NO_ROOM = frozenset(
    {"SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE"}
)


class SQLiteConnection(Engine):
    """One SQLite file, opened, checked and migrated: the engine of :class:`SQLiteStore`.

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
        self._doc_counts: dict[str, int] = {}
        self._doc_counts_token: tuple[int, int] | None = None
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
            # Never open the file itself: closing any descriptor of it drops every POSIX
            # lock this process holds on it, those of its other SQLite connections
            # included, and another process may then take the log away from under them
            # (https://sqlite.org/howtocorrupt.html, section 2.2). SQLite reads the header:
            # a file that is not a database fails the first statement, mapped in _guard.
            if not os.access(p, os.R_OK):
                raise StoreError(f"cannot read database {self.path}: Permission denied")
        else:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file where a directory should be, no permission
                found = next((a for a in p.parents if a.exists()), None)
                why = f"{found} is a file" if found and not found.is_dir() else exc.strerror
                raise StoreError(
                    f"cannot create the directory of database {self.path}: {why}"
                ) from exc

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
            why = "not an SQLite file" if "not a database" in msg else str(exc)
            raise StoreCorruptError(self.path, why) from exc
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
            check_current(current, SCHEMA_VERSION, self.path)
            return

        def run() -> None:
            with self.write() as c:
                upgrade(c, MIGRATIONS, path=self.path)

        self._guard(run)

    # -- transactions and error mapping ------------------------------------------------

    def _guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` mapping sqlite3 errors to mnemolayer errors (at the boundary)."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            raise self._mapped(exc) from exc

    def _mapped(self, exc: sqlite3.DatabaseError) -> StoreError:
        msg = str(exc).lower()
        code = getattr(exc, "sqlite_errorname", None)
        if code in _NO_ROOM:
            # SQLITE_FULL is ENOSPC; the I/O errors of a write cover EFBIG and EDQUOT, but
            # also a device that fails or refuses writes (EIO, EPERM): say all of it.
            why = (
                "the disk is full"
                if code == "SQLITE_FULL"
                else "the disk is full, a file-size limit or quota was reached, or the "
                "device refused the write"
            )
            return StoreError(
                f"cannot write to database {self.path}: {why}; the transaction was rolled "
                f"back ({exc})"
            )
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg):
            return StoreBusyError(f"database {self.path} is locked: {exc}")
        if "readonly" in msg or "read-only" in msg:
            why = (
                "it was opened read-only"
                if self.read_only
                else "the file or its directory is not writable; SQLite in WAL mode needs both"
            )
            return StoreError(f"database {self.path} is read-only ({why})")
        if any(m in msg for m in _CORRUPT_MARKERS):
            return StoreCorruptError(self.path, str(exc))
        return StoreError(f"database error on {self.path}: {exc}")

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
