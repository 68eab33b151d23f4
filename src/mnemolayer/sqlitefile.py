"""The discipline of every SQLite file mnemolayer writes (the store, the keyring, the
embedding cache, the server's key store): write-ahead-log settings, checkpoints, and the
retry loop for a locked database. It sits below the store so that the files of their own
share it without reaching up into ``store/``.

Why not SQLite's automatic checkpoints: SQLite 3.7.0 to 3.51.2 have the *WAL-reset bug*
(https://sqlite.org/wal.html#walresetbug, fixed in 3.51.3): when one checkpoint finishes
the whole log, a second one starts at once, and a third connection commits (restarting
the log) while that second checkpoint runs, the second checkpoint records a wrong
backfill mark and readers then see a "database disk image is malformed" snapshot. The
automatic checkpoint is PASSIVE: it runs right after a commit *without* the write lock,
so with several connections writing one file it can overlap another connection's commit.
Debian 12's SQLite is 3.40.1. ``tests/contract/test_concurrency_bar.py`` (8 threads and 2
processes) lost acknowledged writes and read "malformed" snapshots in about one run in
twenty under load, first put down to this bug; the measured cause was another one (the
store read its file's header through a descriptor of its own, whose close dropped the
process's locks: see ``store/sqlite/engine.py``). With that fixed the test passed 160
runs of 160, four at a time, against 76 of 80 before. The FULL checkpoints stay: they
close the race above whoever hits it.

What we do instead: automatic checkpoints are off on every connection
(``wal_autocheckpoint = 0``); after a commit, when the log file has grown past
:data:`WAL_LIMIT_BYTES`, the connection that committed runs a ``FULL`` checkpoint. A
FULL checkpoint holds the write lock for its whole run, so no commit can restart the log
under it, and the race cannot happen, provided it gets the lock: a FULL checkpoint that
times out waiting for the write lock carries on as a PASSIVE one, so it is given
:data:`CHECKPOINT_BUSY_MS` to wait (write transactions here last milliseconds), and
no checkpoint runs from a path with a short busy timeout (access counting). ``journal_size_limit`` truncates the log back to the
limit when it restarts, so the file size tells whether a checkpoint is due (one ``stat``
per commit). A checkpoint that cannot finish (a reader still on an older snapshot) is
tried again at the next commit after :data:`RETRY_AFTER_S`.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "CHECKPOINT_BUSY_MS",
    "RETRY_AFTER_S",
    "WAL_LIMIT_BYTES",
    "WalCheckpointer",
    "configure_wal",
    "retry_locked",
    "truncate_log",
]

#: Log size (bytes) past which a commit runs a checkpoint; about SQLite's default of
#: 1,000 pages of 4 KiB.
WAL_LIMIT_BYTES = 4 * 1024 * 1024
#: Seconds to wait before trying again after a checkpoint that could not finish.
RETRY_AFTER_S = 1.0
#: Milliseconds a checkpoint may wait for the write lock (at least; a longer busy timeout
#: of the connection is kept).
CHECKPOINT_BUSY_MS = 10_000


T = TypeVar("T")


def configure_wal(conn: sqlite3.Connection, *, limit_bytes: int = WAL_LIMIT_BYTES) -> None:
    """Put ``conn``'s database in WAL mode with automatic checkpoints off (see the module
    docstring); pair it with a :class:`WalCheckpointer`.

    Raises:
        sqlite3.Error: as ``PRAGMA journal_mode`` raises it (a locked or read-only file);
            callers map it.
    """
    conn.execute("PRAGMA journal_mode = WAL").fetchone()
    conn.execute("PRAGMA wal_autocheckpoint = 0").fetchone()
    conn.execute(f"PRAGMA journal_size_limit = {int(limit_bytes)}").fetchone()


class WalCheckpointer:
    """Runs a FULL checkpoint after a commit once the log file of ``path`` has grown past
    ``limit_bytes``. One per connection; call :meth:`after_commit` with the connection's
    own lock held and no transaction open.

    Args:
        path: the database file (its log is ``path + "-wal"``); ``":memory:"`` never
            checkpoints.
        limit_bytes: log size that makes a checkpoint due.
    """

    def __init__(self, path: str | os.PathLike[str], *, limit_bytes: int = WAL_LIMIT_BYTES):
        self.wal_path = None if str(path) == ":memory:" else f"{os.fspath(path)}-wal"
        self.limit_bytes = limit_bytes
        self._next_try = 0.0
        #: Checkpoints run, and those that could not copy the whole log (for tests and stats).
        self.runs = 0
        self.incomplete = 0

    def due(self) -> bool:
        """Whether the log has grown past the limit (a missing log is not due)."""
        if self.wal_path is None or time.monotonic() < self._next_try:
            return False
        try:
            return os.stat(self.wal_path).st_size > self.limit_bytes
        except OSError:
            return False

    def after_commit(self, conn: sqlite3.Connection) -> None:
        """Checkpoint if due. Never raises: the commit before it already succeeded, and a
        checkpoint that fails (busy, I/O) is only tried again later."""
        if conn.in_transaction or not self.due():
            return
        self.runs += 1
        busy = 1
        with contextlib.suppress(sqlite3.Error):
            row = _checkpoint(conn, "FULL")
            busy = int(row[0]) if row else 1
        if busy:
            self.incomplete += 1
            self._next_try = time.monotonic() + RETRY_AFTER_S


def truncate_log(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> bool:
    """Copy the whole log into the database and truncate it to zero bytes
    (``wal_checkpoint(TRUNCATE)``, which holds the write lock and waits for readers), so
    that no old version of a page (the text of a deleted record, say) stays in the log.
    Call with the connection's lock held and no transaction open.

    Returns:
        Whether the checkpoint emptied the log (later writes of other connections may
        have added to it since); ``False`` when a reader kept an older snapshot past
        :data:`CHECKPOINT_BUSY_MS`, or the checkpoint failed.
    """
    if str(path) == ":memory:" or conn.in_transaction:
        return str(path) == ":memory:"
    try:
        row = _checkpoint(conn, "TRUNCATE")
    except sqlite3.Error:
        return False
    # busy 0: the checkpoint copied every frame and truncated the file before returning.
    # The log's size is not asked afterwards: another connection may already have
    # written new frames to it (its own writes, nothing of what was deleted, whose
    # freed cells were zeroed by secure_delete), which once made a complete deletion
    # report an unemptied log while another user kept writing.
    return row is not None and int(row[0]) == 0


def _checkpoint(conn: sqlite3.Connection, mode: str) -> tuple[int, int, int] | None:
    """``PRAGMA wal_checkpoint(mode)``'s row ``(busy, log frames, checkpointed)``, waiting
    at least :data:`CHECKPOINT_BUSY_MS` for the write lock: a FULL or TRUNCATE checkpoint
    that cannot get it in time goes on as a PASSIVE one, without the lock (the racy case).

    Raises:
        sqlite3.Error: as the pragma raises it.
    """
    normal = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    try:
        conn.execute(f"PRAGMA busy_timeout = {max(normal, CHECKPOINT_BUSY_MS)}")
        return conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {normal}")


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
