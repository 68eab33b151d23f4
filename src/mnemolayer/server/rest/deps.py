"""Request dependencies: who is calling (the API key), which store, which user."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Annotated

import anyio.to_thread
from fastapi import Depends, Path, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from mnemolayer.memory import Memory
from mnemolayer.server.rest.errors import ApiError
from mnemolayer.server.rest.keys import ApiKey, KeyStore
from mnemolayer.server.rest.scheduler import MaintenanceScheduler
from mnemolayer.server.rest.settings import DEFAULT_TENANT, ServerSettings
from mnemolayer.server.rest.tenants import TenantPool

__all__ = [
    "Admin",
    "Caller",
    "Principal",
    "ServerState",
    "TenantWide",
    "User",
    "UserScope",
    "state_of",
]


@dataclass
class ServerState:
    """What a running server holds: its settings, key store, tenants' stores and, with
    ``maintain_every_s``, the maintenance scheduler."""

    settings: ServerSettings
    pool: TenantPool
    keys: KeyStore | None
    scheduler: MaintenanceScheduler | None = None


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.mnemolayer  # set by the lifespan
    return state


@dataclass(frozen=True)
class Principal:
    """The caller: the tenant its key reaches, the users it may touch (``None``: all of the
    tenant's), whether it is an admin key, and the key (``None`` when auth is off)."""

    tenant: str
    users: frozenset[str] | None
    admin: bool
    key: ApiKey | None

    def allow_user(self, user_id: str) -> None:
        """Raises: ApiError 403 naming ``user_id`` when the key is bound to other users."""
        if self.users is not None and user_id not in self.users:
            raise ApiError(403, "forbidden", "this API key may not access that user", "user_id")


_bearer = HTTPBearer(
    auto_error=False, description="`Authorization: Bearer <key>` (from `mnemolayer keys create`)"
)
_header = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="The API key in an `X-API-Key` header"
)


async def get_principal(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    header: Annotated[str | None, Depends(_header)],
) -> Principal:
    """The caller of a request (the key lookup, a SQLite read, runs in a worker thread).

    Raises:
        ApiError: 401 for a missing, malformed, unknown or revoked key.
    """
    state = state_of(request)
    if not state.settings.auth:
        return Principal(DEFAULT_TENANT, None, False, None)
    assert state.keys is not None
    token = bearer.credentials if bearer is not None else header
    if not token:
        raise ApiError(
            401,
            "unauthorized",
            "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
            "authorization",
        )
    key = await anyio.to_thread.run_sync(state.keys.verify, token.strip())
    if key is None:
        raise ApiError(401, "unauthorized", "invalid or revoked API key", "authorization")
    return Principal(key.tenant, frozenset(key.users) or None, key.admin, key)


Caller = Annotated[Principal, Depends(get_principal)]


@dataclass(frozen=True)
class UserScope:
    """A request on one user of the caller's tenant: the store and the user id."""

    principal: Principal
    mem: Memory
    pool: TenantPool
    user_id: str

    def window_lock(self, session_id: str, agent_id: str | None) -> threading.Lock:
        return self.pool.window_lock(self.principal.tenant, self.user_id, session_id, agent_id)


async def user_scope(
    request: Request,
    who: Caller,
    user_id: Annotated[
        str,
        Path(
            min_length=1,
            max_length=256,
            description="The user whose memories these are (the scope of every call).",
        ),
    ],
) -> UserScope:
    """The caller's store and ``user_id``, after checking the key may touch that user.

    Raises:
        ApiError: 403 when the key is bound to other users.
    """
    who.allow_user(user_id)
    pool = state_of(request).pool
    # An open store is a dict lookup; opening one (once per tenant) is file work.
    mem = pool.opened(who.tenant)
    if mem is None:
        mem = await anyio.to_thread.run_sync(pool.get, who.tenant)
    return UserScope(who, mem, pool, user_id)


User = Annotated[UserScope, Depends(user_scope)]


async def tenant_wide(who: Caller) -> Principal:
    """A caller whose key reaches every user of its tenant.

    Raises:
        ApiError: 403 for a key bound to users.
    """
    if who.users is not None:
        raise ApiError(
            403, "forbidden", "this API key is bound to users; this route is tenant-wide"
        )
    return who


async def admin_only(who: Caller) -> Principal:
    """A caller with an admin key.

    Raises:
        ApiError: 403 for any other key (and when auth is off).
    """
    if not who.admin:
        raise ApiError(403, "forbidden", "this route needs an admin API key")
    return who


TenantWide = Annotated[Principal, Depends(tenant_wide)]
Admin = Annotated[Principal, Depends(admin_only)]
