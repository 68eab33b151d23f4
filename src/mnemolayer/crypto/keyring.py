"""The keyring: one random 256-bit data key per user, wrapped by the master key, kept in
a SQLite file of its own beside the store (``<db>.keys``).

Why a separate file: a copy of the data file (a backup, a leftover ``-wal``) then holds
no key at all, and destroying a user's data key makes every such copy of that user's
data unreadable ("crypto-shredding"), without finding and rewriting the copies.

Layout: ``data_keys(user_id, version, wrapped, created_at)``; ``wrapped`` is
``nonce (12 bytes) ‖ AES-256-GCM(master key, data key) ‖ tag`` with associated data
``user_id \\0 version``, so a wrapped key moved to another user's row fails to unwrap
(NIST SP 800-38D, GCM; key wrapping with an AEAD as in RFC 5649's use case). ``meta``
holds the keyring's id (the store records it too), the master key's check value and the
next key version. The file is opened with ``PRAGMA secure_delete = ON``: a deleted key's
bytes are overwritten with zeros in the page, and :meth:`KeyRing.destroy` then runs a
``TRUNCATE`` checkpoint so the write-ahead log holds no old copy either. Automatic
checkpoints are off (:mod:`mnemolayer.sqlitefile` explains why).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mnemolayer.crypto.keys import KEY_BYTES, key_check_value
from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.sqlitefile import WalCheckpointer, configure_wal, retry_locked

__all__ = ["KeyRing", "KeyUnavailableError"]

T = TypeVar("T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS data_keys (user_id TEXT PRIMARY KEY, version INTEGER NOT NULL, "
    "wrapped BLOB NOT NULL, created_at TEXT NOT NULL)",
)
_NONCE = 12


class KeyUnavailableError(StoreError):
    """A user's data key is not in the keyring (it was destroyed: crypto-shredded), so
    their encrypted data cannot be read."""


def _aad(user_id: str, version: int) -> bytes:
    return f"mnemolayer/data-key\x00{user_id}\x00{version}".encode()


class KeyRing:
    """Per-user data keys wrapped by a master key, in their own SQLite file.

    Safe for several threads (one connection behind a lock) and several processes
    (WAL; writes retried while another process holds the lock). Each process caches
    the data keys it has unwrapped: a key destroyed by another process stays usable in
    this one until :meth:`forget_cache` or a restart.

    Args:
        path: the keyring file, or ``":memory:"``.
        master_key: the 32-byte master key.
        read_only: open without writing (no data key can be created then).
        busy_timeout_s: how long a write waits for another process's lock.

    Raises:
        ValidationError: ``master_key`` is not 32 bytes, or it is not the key this
            keyring was made with (field ``"encryption"``: "wrong master key").
        StoreError: the file cannot be opened, is not a keyring, or is missing when
            ``read_only``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        master_key: bytes,
        *,
        read_only: bool = False,
        busy_timeout_s: float = 30.0,
    ) -> None:
        if not isinstance(master_key, bytes) or len(master_key) != KEY_BYTES:
            raise ValidationError("encryption", f"the master key must be {KEY_BYTES} bytes")
        self.path = os.fspath(path)
        self.read_only = read_only
        self.busy_timeout_s = busy_timeout_s
        self._master = AESGCM(master_key)
        self._check = key_check_value(master_key)
        self._lock = threading.RLock()
        self._cache: dict[str, bytes] = {}
        self._checkpointer = WalCheckpointer(self.path)
        memory = self.path == ":memory:"
        if not memory and read_only and not Path(self.path).is_file():
            raise StoreError(f"keyring {self.path} does not exist")
        try:
            if read_only and not memory:
                uri = f"{Path(self.path).resolve().as_uri()}?mode=ro"
                self._conn = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                if not memory:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(
                    self.path, timeout=5.0, isolation_level=None, check_same_thread=False
                )
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open keyring {self.path}: {exc}") from exc
        try:
            self._open()
        except BaseException:
            self._conn.close()
            raise

    # -- opening -----------------------------------------------------------------------

    def _open(self) -> None:
        c = self._conn
        try:
            c.execute(f"PRAGMA busy_timeout = {int(min(self.busy_timeout_s, 5.0) * 1000)}")
            c.execute("PRAGMA secure_delete = ON")
            if not self.read_only:
                if self.path != ":memory:":
                    self._retry(lambda: configure_wal(c))
                c.execute("PRAGMA synchronous = FULL")

                def init(c: sqlite3.Connection) -> None:
                    for stmt in _SCHEMA:
                        c.execute(stmt)
                    c.executemany(
                        "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
                        [
                            ("format", "mnemolayer-keyring/1"),
                            ("keyring_id", uuid.uuid4().hex),
                            ("key_check", self._check),
                            ("next_version", "1"),
                        ],
                    )

                # The check comes first: a wrong key must not write anything.
                if self._has_meta() and self._meta("key_check") != self._check:
                    raise ValidationError(
                        "encryption",
                        f"wrong master key: it does not open keyring {self.path}",
                    )
                self._write(init)
            fmt = self._meta("format")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a readable keyring: {exc}") from exc
        if fmt != "mnemolayer-keyring/1":
            raise StoreError(f"{self.path} is not a mnemolayer keyring")
        if self._meta("key_check") != self._check:
            raise ValidationError(
                "encryption", f"wrong master key: it does not open keyring {self.path}"
            )

    def _has_meta(self) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        return row is not None

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def keyring_id(self) -> str:
        """A random id made with the keyring; the store records it to pair the two files."""
        with self._lock:
            value = self._guard(lambda: self._meta("keyring_id"))
        assert value is not None
        return value

    # -- transactions ----------------------------------------------------------------

    def _retry(self, fn: Callable[[], T]) -> T:
        return retry_locked(fn, self.busy_timeout_s)

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except sqlite3.Error as exc:
            raise StoreError(f"keyring {self.path}: {exc}") from exc

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        c = self._conn
        self._retry(lambda: c.execute("BEGIN IMMEDIATE"))
        try:
            yield c
            self._retry(lambda: c.execute("COMMIT"))
        except BaseException:
            if c.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    c.execute("ROLLBACK")
            raise
        self._checkpointer.after_commit(c)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self.read_only:
            raise StoreError(f"keyring {self.path} is read-only")

        def once() -> T:
            with self._tx() as c:
                return fn(c)

        with self._lock:
            return self._retry(once)

    # -- keys ------------------------------------------------------------------------

    def _unwrap(self, user_id: str, version: int, wrapped: bytes) -> bytes:
        try:
            return self._master.decrypt(wrapped[:_NONCE], wrapped[_NONCE:], _aad(user_id, version))
        except InvalidTag:
            raise StoreError(
                f"keyring {self.path}: the data key of user {user_id!r} does not unwrap "
                "(tampered with, or wrapped by another master key)"
            ) from None

    def _wrap(self, master: AESGCM, user_id: str, version: int, key: bytes) -> bytes:
        nonce = secrets.token_bytes(_NONCE)
        return nonce + master.encrypt(nonce, key, _aad(user_id, version))

    def data_key(self, user_id: str, *, create: bool = True) -> bytes | None:
        """The user's 32-byte data key, made (and stored wrapped) on first use.

        Args:
            create: make one when the user has none; with ``False`` a missing key gives
                ``None``.

        Raises:
            StoreError: the keyring is read-only and has no key for the user (with
                ``create``), a wrapped key does not unwrap, or the file fails.
        """
        key = self._cache.get(user_id)
        if key is not None:
            return key
        with self._lock:
            key = self._cache.get(user_id)
            if key is not None:
                return key
            row = self._guard(
                lambda: self._conn.execute(
                    "SELECT version, wrapped FROM data_keys WHERE user_id = ?", (user_id,)
                ).fetchone()
            )
            if row is not None:
                key = self._unwrap(user_id, int(row[0]), bytes(row[1]))
            elif not create:
                return None
            else:
                if self.read_only:
                    raise StoreError(
                        f"keyring {self.path} is read-only and has no key for user {user_id!r}"
                    )
                key = self._guard(lambda: self._write(lambda c: self._create(c, user_id)))
            self._cache[user_id] = key
            return key

    def _create(self, c: sqlite3.Connection, user_id: str) -> bytes:
        row = c.execute(
            "SELECT version, wrapped FROM data_keys WHERE user_id = ?", (user_id,)
        ).fetchone()
        if row is not None:  # another process made it meanwhile
            return self._unwrap(user_id, int(row[0]), bytes(row[1]))
        version = int(c.execute("SELECT value FROM meta WHERE key = 'next_version'").fetchone()[0])
        c.execute("UPDATE meta SET value = ? WHERE key = 'next_version'", (str(version + 1),))
        key = secrets.token_bytes(KEY_BYTES)
        c.execute(
            "INSERT INTO data_keys VALUES (?, ?, ?, ?)",
            (
                user_id,
                version,
                self._wrap(self._master, user_id, version, key),
                datetime.now(UTC).isoformat(),
            ),
        )
        return key

    def has_key(self, user_id: str) -> bool:
        """Whether the keyring holds a data key for ``user_id``."""
        with self._lock:
            row = self._guard(
                lambda: self._conn.execute(
                    "SELECT 1 FROM data_keys WHERE user_id = ?", (user_id,)
                ).fetchone()
            )
        return row is not None

    def users(self) -> list[str]:
        """Every user with a data key, sorted."""
        with self._lock:
            rows = self._guard(
                lambda: self._conn.execute(
                    "SELECT user_id FROM data_keys ORDER BY user_id"
                ).fetchall()
            )
        return [str(r[0]) for r in rows]

    def destroy(self, user_id: str) -> int:
        """Destroy the user's data key (crypto-shredding): their data in any copy of the
        store (backups, old ``-wal`` files) can no longer be decrypted.

        The key row is deleted with ``secure_delete`` on (its bytes are zeroed in the
        page) and a ``TRUNCATE`` checkpoint copies the page into the file and empties the
        log, so neither file keeps the wrapped key. A reader of the keyring in another
        process can delay the truncation; it is retried for a few seconds.

        Returns:
            How many keys were destroyed (0 or 1).

        Raises:
            StoreError: read-only keyring or a file error.
        """

        def run(c: sqlite3.Connection) -> int:
            return c.execute("DELETE FROM data_keys WHERE user_id = ?", (user_id,)).rowcount

        with self._lock:
            removed = self._guard(lambda: self._write(run))
            self._cache.pop(user_id, None)
            self._truncate_log()
        return int(removed)

    def _truncate_log(self) -> bool:
        """Checkpoint the whole log into the file and truncate it to 0 bytes."""
        if self.path == ":memory:":
            return True
        deadline = time.monotonic() + 5.0
        while True:
            try:
                row = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if row is None or int(row[0]) == 0:
                    return True
            except sqlite3.OperationalError:
                pass
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def rotate(self, new_master_key: bytes) -> int:
        """Re-wrap every data key with ``new_master_key`` (the data itself is not
        re-encrypted: its data keys stay). From then on only the new key opens the
        keyring.

        Returns:
            How many data keys were re-wrapped.

        Raises:
            ValidationError: the new key is not 32 bytes (field ``"new_master_key"``).
            StoreError: read-only keyring, a key that does not unwrap, or a file error.
        """
        if not isinstance(new_master_key, bytes) or len(new_master_key) != KEY_BYTES:
            raise ValidationError("new_master_key", f"must be {KEY_BYTES} bytes")
        new = AESGCM(new_master_key)
        check = key_check_value(new_master_key)

        def run(c: sqlite3.Connection) -> int:
            rows = c.execute("SELECT user_id, version, wrapped FROM data_keys").fetchall()
            for user_id, version, wrapped in rows:
                key = self._unwrap(str(user_id), int(version), bytes(wrapped))
                c.execute(
                    "UPDATE data_keys SET wrapped = ? WHERE user_id = ?",
                    (self._wrap(new, str(user_id), int(version), key), user_id),
                )
            c.execute("UPDATE meta SET value = ? WHERE key = 'key_check'", (check,))
            return len(rows)

        with self._lock:
            count = self._guard(lambda: self._write(run))
            self._master, self._check = new, check
            self._truncate_log()
        return count

    def forget_cache(self) -> None:
        """Drop the unwrapped keys cached in this process (they are read again on use)."""
        with self._lock:
            self._cache.clear()

    def close(self) -> None:
        """Close the file (cached keys are dropped)."""
        with self._lock:
            self._cache.clear()
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()

    def __repr__(self) -> str:
        return f"KeyRing({self.path!r})"
