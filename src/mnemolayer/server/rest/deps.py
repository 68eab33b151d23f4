"""Request dependencies: who is calling (the API key), which store, which user."""

from __future__ import annotations

import contextlib
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
    "Operator",
    "Principal",
    "ServerState",
    "TenantUser",
    "TenantWide",
    "User",
    "principal_of_token",
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
    """The caller: the tenant its key reaches (``None``: an operator key, which reaches
    none), the users it may touch (``None``: all of the tenant's), whether it may use the
    admin routes (a tenant admin or the operator), whether it is the operator, and the
    key (``None`` when auth is off)."""

    tenant: str | None
    users: frozenset[str] | None
    admin: bool
    key: ApiKey | None
    operator: bool = False

    def own_tenant(self) -> str:
        """The tenant whose store the caller reaches.

        Raises:
            ApiError: 403 for an operator key, which manages tenants but reaches no
                tenant's memories.
        """
        if self.tenant is None:
            raise ApiError(
                403,
                "forbidden",
                "an operator key manages tenants and keys and reaches no tenant's "
                "memories; use a key of the tenant",
            )
        return self.tenant

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
        sent = request.headers.get("authorization", "").strip()
        message = (
            "the Authorization header must read 'Bearer <key>' (got another scheme or a "
            "bare key); or send 'X-API-Key: <key>'"
            if sent
            else "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
        )
        raise ApiError(401, "unauthorized", message, "authorization")
    return await principal_of_token(state, token)


async def principal_of_token(state: ServerState, token: str) -> Principal:
    """The caller holding ``token`` (a key read from whichever header a route takes).

    Raises:
        ApiError: 401 for an unknown or revoked key.
    """
    assert state.keys is not None
    key = await anyio.to_thread.run_sync(state.keys.verify, token.strip())
    if key is None:
        raise ApiError(401, "unauthorized", "invalid or revoked API key", "authorization")
    return Principal(key.tenant, frozenset(key.users) or None, key.admin, key, key.operator)


Caller = Annotated[Principal, Depends(get_principal)]


@dataclass(frozen=True)
class TenantUser:
    """A request on one user of the caller's tenant: the store and the user id (named
    apart from the MCP server's :class:`mnemolayer.server.mcp.UserScope`, which says whose
    memories an MCP server may touch)."""

    principal: Principal
    tenant: str
    mem: Memory
    pool: TenantPool
    user_id: str

    def window_lock(
        self, session_id: str, agent_id: str | None
    ) -> contextlib.AbstractContextManager[None]:
        """The lock of one of the user's windows (:meth:`TenantPool.window_lock`)."""
        return self.pool.window_lock(self.tenant, self.user_id, session_id, agent_id)


async def tenant_user(
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
) -> TenantUser:
    """The caller's store and ``user_id``, after checking the key may touch that user.

    Raises:
        ApiError: 403 when the key is bound to other users, or is an operator key.
    """
    tenant = who.own_tenant()
    who.allow_user(user_id)
    pool = state_of(request).pool
    # An open store is a dict lookup; opening one (once per tenant) is file work.
    mem = pool.opened(tenant)
    if mem is None:
        mem = await anyio.to_thread.run_sync(pool.get, tenant)
    return TenantUser(who, tenant, mem, pool, user_id)


User = Annotated[TenantUser, Depends(tenant_user)]


async def tenant_wide(who: Caller) -> str:
    """The tenant of a caller whose key reaches every user of it.

    Raises:
        ApiError: 403 for a key bound to users, or an operator key.
    """
    tenant = who.own_tenant()
    if who.users is not None:
        raise ApiError(
            403, "forbidden", "this API key is bound to users; this route is tenant-wide"
        )
    return tenant


async def admin_only(who: Caller) -> Principal:
    """A caller with an admin key: a tenant admin (its own tenant's keys) or the operator.

    An admin key bound to users (which ``keys create`` no longer makes) is refused: it
    could otherwise mint a key for every user of its tenant.

    Raises:
        ApiError: 403 for any other key (and when auth is off).
    """
    if not who.admin or who.users is not None:
        raise ApiError(403, "forbidden", "this route needs an admin API key")
    return who


async def operator_only(who: Caller) -> Principal:
    """A caller with the server operator's key.

    Raises:
        ApiError: 403 for any other key, tenant admins' included (and when auth is off).
    """
    if not who.operator:
        raise ApiError(403, "forbidden", "this route needs an operator API key")
    return who


TenantWide = Annotated[str, Depends(tenant_wide)]
Admin = Annotated[Principal, Depends(admin_only)]
Operator = Annotated[Principal, Depends(operator_only)]
