"""API keys: created once, stored hashed, each of one of three kinds.

* A **tenant key** reaches the store of its tenant, for every user or (bound) for some.
* A **tenant-admin key** (``admin``) is a tenant key that also manages the keys of its
  own tenant: it mints, lists and revokes them, and no other tenant's.
* An **operator key** (``operator``) belongs to the server's operator, not to a tenant:
  it manages tenants and every key (a key for a new tenant makes the tenant) and sees
  every tenant's stats, but reaches no tenant's memories.

Who may do what over HTTP is decided in :mod:`mnemolayer.server.rest.routes.admin`;
this module only stores keys.

A key reads ``msk_<id>_<secret>``: ``<id>`` is 16 hex digits that name the key in lists
and logs; ``<secret>`` is 32 random bytes (URL-safe base64). Only the SHA-256 of the
whole key is stored, so the key file leaks no usable key; a lookup finds the row by id
and compares hashes with :func:`hmac.compare_digest`. A random 256-bit secret needs no
slow hash: there is nothing to guess.

The file is SQLite in WAL mode, so ``mnemolayer keys create``/``revoke`` in another
process take effect in a running server at the next request. Its schema version is the
file's ``PRAGMA user_version``; :data:`_MIGRATIONS` brings an older file up to date when
it is opened (a file made before versions were kept reads 0 and has the first schema).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, computed_field

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, StoreError, ValidationError
from mnemolayer.server.rest.settings import check_tenant
from mnemolayer.sqlitefile import WalCheckpointer, configure_wal

__all__ = ["KEY_PREFIX", "ApiKey", "KeyStore"]

KEY_PREFIX = "msk"
_ID_HEX = 16
#: ``last_used_at`` is written at most this often per key (a write per request would
#: serialise every request on the key file).
_TOUCH_EVERY = timedelta(seconds=60)
_COLUMNS = "id, tenant, users, admin, operator, name, created_at, last_used_at, revoked_at"
#: The schema, one entry per version: the statements that bring version ``n`` to
#: ``n + 1``, run in one transaction with the new ``user_version``. Only ever append.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: the first schema (``IF NOT EXISTS``: files made before versions were kept have it).
    (
        """
        CREATE TABLE IF NOT EXISTS api_keys (
            id TEXT PRIMARY KEY,
            hash TEXT NOT NULL,
            tenant TEXT NOT NULL,
            users TEXT NOT NULL,
            admin INTEGER NOT NULL,
            name TEXT,
            created_at TEXT NOT NULL,
            last_used_at TEXT,
            revoked_at TEXT
        )
        """,
    ),
    # 2: operator keys, which belong to no tenant. SQLite cannot drop a NOT NULL, so the
    # table is rebuilt; every existing key keeps its tenant, and an admin key stays the
    # admin of its own tenant only.
    (
        """
        CREATE TABLE api_keys_v2 (
            id TEXT PRIMARY KEY,
            hash TEXT NOT NULL,
            tenant TEXT,
            users TEXT NOT NULL,
            admin INTEGER NOT NULL,
            operator INTEGER NOT NULL DEFAULT 0,
            name TEXT,
            created_at TEXT NOT NULL,
            last_used_at TEXT,
            revoked_at TEXT,
            CHECK ((operator = 1) = (tenant IS NULL)),
            CHECK (operator = 0 OR (admin = 1 AND users = '[]'))
        )
        """,
        "INSERT INTO api_keys_v2 (id, hash, tenant, users, admin, name, created_at, "
        "last_used_at, revoked_at) SELECT id, hash, tenant, users, admin, name, created_at, "
        "last_used_at, revoked_at FROM api_keys",
        "DROP TABLE api_keys",
        "ALTER TABLE api_keys_v2 RENAME TO api_keys",
    ),
)
#: The schema version this code writes and reads.
SCHEMA_VERSION = len(_MIGRATIONS)


class ApiKey(BaseModel):
    """What is known about a key (never the key itself).

    Attributes:
        id: the key's public id (the ``<id>`` in ``msk_<id>_<secret>``).
        tenant: the tenant whose store it reaches; ``None`` for an operator key.
        users: the user ids it may touch; empty for every user of the tenant.
        admin: whether it may use the ``/v1/admin`` routes: a tenant admin (on its own
            tenant's keys) or an operator.
        operator: whether it is the server operator's key (every tenant and key, no
            tenant's memories).
        name: a label for people.
        created_at, last_used_at, revoked_at: UTC times (``None`` when not yet).
        revoked: whether it was revoked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    tenant: str | None
    users: list[str]
    admin: bool
    operator: bool = False
    name: str | None = None
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def revoked(self) -> bool:
        """Whether the key was revoked (it then fails every request)."""
        return self.revoked_at is not None


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(UTC).isoformat(timespec="microseconds")


def _parse(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def split_key(token: str) -> str | None:
    """The id of a well-formed key, else ``None``."""
    prefix, _, rest = token.partition("_")
    key_id, _, secret = rest.partition("_")
    if prefix != KEY_PREFIX or len(key_id) != _ID_HEX or len(secret) < 32:
        return None
    if any(c not in "0123456789abcdef" for c in key_id):
        return None
    return key_id


class KeyStore:
    """The API keys of one server, in a SQLite file (created if missing).

    Safe for several threads (one connection behind a lock) and processes (WAL).

    Raises:
        StoreError: the file cannot be opened.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._checkpointer = WalCheckpointer(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open key store {self.path}: {_why(exc)}") from exc
        try:
            configure_wal(self._conn)  # automatic checkpoints off, ours after writes
            _migrate(self._conn, self.path)
        except BaseException as exc:
            self._conn.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open key store {self.path}: {exc}") from exc
            raise
        self._touched: dict[str, datetime] = {}

    def _run(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                rows = self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"key store {self.path}: {exc}") from exc
            self._checkpointer.after_commit(self._conn)
            return rows

    def create(
        self,
        tenant: str | None,
        *,
        users: Sequence[str] = (),
        admin: bool = False,
        operator: bool = False,
        name: str | None = None,
    ) -> tuple[str, ApiKey]:
        """Make a key: of ``tenant`` (an admin of it with ``admin``), or with ``operator``
        the server operator's key (then ``tenant`` is ``None``).

        Args:
            tenant: the tenant (see :func:`~mnemolayer.server.rest.settings.check_tenant`);
                ``None`` for an operator key.
            users: bind the key to these user ids (empty: every user of the tenant); not
                for admin or operator keys, which act on the whole tenant or server.
            admin: a tenant admin: it also manages its tenant's keys.
            operator: the operator's key: every tenant and key, no tenant's memories.
            name: a label (at most 256 characters).

        Returns:
            ``(key, info)``: the key, shown this once, and what is stored about it.

        Raises:
            ValidationError: bad tenant, user ids or name; a tenant given with
                ``operator`` or missing without it; users bound to an admin or
                operator key.
        """
        for flag, value in (("admin", admin), ("operator", operator)):
            if not isinstance(value, bool):
                raise ValidationError(flag, f"must be true or false, got {value!r}")
        if operator:
            if tenant is not None:
                raise ValidationError("tenant", "an operator key belongs to no tenant")
        elif tenant is None:
            raise ValidationError("tenant", "required (or make an operator key)")
        else:
            check_tenant(tenant)
        bound = sorted({v.scope_id(u, f"users[{i}]", required=True) for i, u in enumerate(users)})
        if bound and (admin or operator):
            raise ValidationError(
                "users", "an admin or operator key manages a whole tenant or server; bind none"
            )
        if name is not None:
            v.scope_id(name, "name")
        key_id = secrets.token_hex(_ID_HEX // 2)
        token = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
        now = datetime.now(UTC)
        admin = admin or operator
        self._run(
            "INSERT INTO api_keys (id, hash, tenant, users, admin, operator, name, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key_id,
                _hash(token),
                tenant,
                json.dumps(bound),
                int(admin),
                int(operator),
                name,
                _iso(now),
            ),
        )
        info = ApiKey(
            id=key_id,
            tenant=tenant,
            users=bound,
            admin=admin,
            operator=operator,
            name=name,
            created_at=now,
        )
        return token, info

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key, operator keys included (of ``tenant`` only when given), revoked ones
        included, oldest first."""
        where, params = ("WHERE tenant = ?", [check_tenant(tenant)]) if tenant else ("", [])
        rows = self._run(f"SELECT {_COLUMNS} FROM api_keys {where} ORDER BY created_at, id", params)
        return [_row(r) for r in rows]

    def get(self, key_id: str) -> ApiKey:
        """One key's record.

        Raises:
            NotFoundError: no key with that id.
        """
        rows = self._run(f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
        if not rows:
            raise NotFoundError(f"key_id: no key {key_id!r}")
        return _row(rows[0])

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key (for good; revoking it again changes nothing).

        Raises:
            NotFoundError: no key with that id.
        """
        self.get(key_id)
        self._run(
            "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (_iso(datetime.now(UTC)), key_id),
        )
        return self.get(key_id)

    def verify(self, token: str) -> ApiKey | None:
        """The key's record when ``token`` is a valid, unrevoked key, else ``None``.

        Records the use in ``last_used_at`` (at most once a minute per key).
        """
        key_id = split_key(token)
        if key_id is None:
            return None
        rows = self._run(f"SELECT hash, {_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
        if not rows or not hmac.compare_digest(str(rows[0][0]), _hash(token)):
            return None
        key = _row(rows[0][1:])
        if key.revoked:
            return None
        now = datetime.now(UTC)
        last = self._touched.get(key.id) or key.last_used_at
        if last is None or now - last >= _TOUCH_EVERY:
            self._touched[key.id] = now
            # Bookkeeping only: a busy key file must not fail the request.
            with contextlib.suppress(StoreError):
                self._run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (_iso(now), key.id))
        return key

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the file's schema to :data:`SCHEMA_VERSION`, in one transaction (taken with
    the write lock, so two processes opening an old file migrate it once).

    Raises:
        StoreError: the file was written by a newer mnemolayer.
        sqlite3.Error: as SQLite raises it (the caller maps it).
    """
    if _version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = _version(conn)
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"key store {path} has schema version {found}; this mnemolayer reads "
                f"{SCHEMA_VERSION} (upgrade mnemolayer)"
            )
        for number in range(found, SCHEMA_VERSION):
            for statement in _MIGRATIONS[number]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _why(exc: BaseException) -> str:
    """An error's reason without Python's ``[Errno N]`` prefix."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _row(r: Sequence[object]) -> ApiKey:
    return ApiKey(
        id=str(r[0]),
        tenant=None if r[1] is None else str(r[1]),
        users=json.loads(str(r[2])),
        admin=bool(r[3]),
        operator=bool(r[4]),
        name=None if r[5] is None else str(r[5]),
        created_at=datetime.fromisoformat(str(r[6])),
        last_used_at=_parse(None if r[7] is None else str(r[7])),
        revoked_at=_parse(None if r[8] is None else str(r[8])),
    )
