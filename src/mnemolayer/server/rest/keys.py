"""API keys: created once, stored hashed, bound to a tenant (and optionally to users).

A key reads ``msk_<id>_<secret>``: ``<id>`` is 16 hex digits that name the key in lists
and logs; ``<secret>`` is 32 random bytes (URL-safe base64). Only the SHA-256 of the
whole key is stored, so the key file leaks no usable key; a lookup finds the row by id
and compares hashes with :func:`hmac.compare_digest`. A random 256-bit secret needs no
slow hash: there is nothing to guess.

The file is SQLite in WAL mode, so ``mnemolayer keys create``/``revoke`` in another
process take effect in a running server at the next request.
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
_SCHEMA = """
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
"""


class ApiKey(BaseModel):
    """What is known about a key (never the key itself).

    Attributes:
        id: the key's public id (the ``<id>`` in ``msk_<id>_<secret>``).
        tenant: the tenant whose store it reaches.
        users: the user ids it may touch; empty for every user of the tenant.
        admin: whether it may use the ``/v1/admin`` routes.
        name: a label for people.
        created_at, last_used_at, revoked_at: UTC times (``None`` when not yet).
        revoked: whether it was revoked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    tenant: str
    users: list[str]
    admin: bool
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
            configure_wal(self._conn)  # automatic checkpoints off, ours after writes
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open key store {self.path}: {exc}") from exc
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
        tenant: str,
        *,
        users: Sequence[str] = (),
        admin: bool = False,
        name: str | None = None,
    ) -> tuple[str, ApiKey]:
        """Make a key for ``tenant``.

        Args:
            tenant: the tenant (see :func:`~mnemolayer.server.rest.settings.check_tenant`).
            users: bind the key to these user ids (empty: every user of the tenant).
            admin: allow the admin routes.
            name: a label (at most 256 characters).

        Returns:
            ``(key, info)``: the key, shown this once, and what is stored about it.

        Raises:
            ValidationError: bad tenant, user ids or name.
        """
        check_tenant(tenant)
        bound = sorted({v.scope_id(u, f"users[{i}]", required=True) for i, u in enumerate(users)})
        if name is not None:
            v.scope_id(name, "name")
        if not isinstance(admin, bool):
            raise ValidationError("admin", f"must be true or false, got {admin!r}")
        key_id = secrets.token_hex(_ID_HEX // 2)
        token = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
        now = datetime.now(UTC)
        self._run(
            "INSERT INTO api_keys (id, hash, tenant, users, admin, name, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key_id, _hash(token), tenant, json.dumps(bound), int(admin), name, _iso(now)),
        )
        return token, ApiKey(
            id=key_id, tenant=tenant, users=bound, admin=admin, name=name, created_at=now
        )

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of ``tenant`` when given), revoked ones included, oldest first."""
        where, params = ("WHERE tenant = ?", [check_tenant(tenant)]) if tenant else ("", [])
        rows = self._run(
            "SELECT id, tenant, users, admin, name, created_at, last_used_at, revoked_at "
            f"FROM api_keys {where} ORDER BY created_at, id",
            params,
        )
        return [_row(r) for r in rows]

    def get(self, key_id: str) -> ApiKey:
        """One key's record.

        Raises:
            NotFoundError: no key with that id.
        """
        rows = self._run(
            "SELECT id, tenant, users, admin, name, created_at, last_used_at, revoked_at "
            "FROM api_keys WHERE id = ?",
            (key_id,),
        )
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
        rows = self._run(
            "SELECT hash, id, tenant, users, admin, name, created_at, last_used_at, revoked_at "
            "FROM api_keys WHERE id = ?",
            (key_id,),
        )
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


def _row(r: Sequence[object]) -> ApiKey:
    return ApiKey(
        id=str(r[0]),
        tenant=str(r[1]),
        users=json.loads(str(r[2])),
        admin=bool(r[3]),
        name=None if r[4] is None else str(r[4]),
        created_at=datetime.fromisoformat(str(r[5])),
        last_used_at=_parse(None if r[6] is None else str(r[6])),
        revoked_at=_parse(None if r[7] is None else str(r[7])),
    )
