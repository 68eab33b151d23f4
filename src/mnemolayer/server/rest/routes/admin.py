"""Routes about the caller and the server: who am I, tenant stats, and the admin routes
(every tenant's stats; creating, listing and revoking keys)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from mnemolayer.errors import MnemolayerError
from mnemolayer.memory import Memory
from mnemolayer.server.rest.deps import Admin, Caller, TenantWide, state_of
from mnemolayer.server.rest.errors import ERROR_RESPONSES, ApiError, describe
from mnemolayer.server.rest.keys import KeyStore
from mnemolayer.server.rest.schemas import (
    ApiKey,
    KeyCreated,
    KeyCreateRequest,
    KeysResponse,
    StatsResponse,
    TenantError,
    TenantsResponse,
    WhoAmI,
)
from mnemolayer.server.rest.settings import check_tenant

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)


@router.get("/whoami", response_model=WhoAmI, tags=["server"])
async def whoami(request: Request, who: Caller) -> WhoAmI:
    """The caller's tenant, the users its key may touch (``null``: all), and whether it
    is an admin key."""
    return WhoAmI(
        tenant=who.tenant,
        users=sorted(who.users) if who.users is not None else None,
        admin=who.admin,
        key_id=who.key.id if who.key is not None else None,
        auth=state_of(request).settings.auth,
    )


def _stats(tenant: str, mem: Memory) -> StatsResponse:
    stats: dict[str, Any] = mem.stats()
    stats.pop("path", None)  # the server's file layout is not the caller's business
    return StatsResponse(tenant=tenant, **stats)


@router.get("/stats", response_model=StatsResponse, tags=["server"])
def tenant_stats(request: Request, who: TenantWide) -> StatsResponse:
    """Counts of the caller's whole tenant store, its size, schema and embedding model
    (keys bound to users get 403)."""
    return _stats(who.tenant, state_of(request).pool.get(who.tenant))


@router.get("/admin/tenants", response_model=TenantsResponse, tags=["admin"])
def all_tenants(request: Request, who: Admin) -> TenantsResponse:
    """Stats of every tenant with a store (admin keys only); a store that cannot be
    opened (another embedding model, a damaged file) is listed under ``unavailable``."""
    pool = state_of(request).pool
    found: list[StatsResponse] = []
    unavailable: list[TenantError] = []
    for tenant in pool.names():
        try:
            found.append(_stats(tenant, pool.get(tenant)))
        except MnemolayerError as exc:  # one broken store must not hide the others
            info = describe(exc)
            unavailable.append(TenantError(tenant=tenant, type=info.type, message=info.message))
    return TenantsResponse(tenants=found, unavailable=unavailable)


def _keys(request: Request) -> KeyStore:
    keys = state_of(request).keys
    if keys is None:
        raise ApiError(403, "forbidden", "this server runs without keys")
    return keys


@router.post("/admin/keys", status_code=201, response_model=KeyCreated, tags=["admin"])
def create_key(request: Request, who: Admin, body: KeyCreateRequest) -> KeyCreated:
    """Make an API key (admin keys only); the key is in this response and nowhere else."""
    token, info = _keys(request).create(
        body.tenant, users=body.users, admin=body.admin, name=body.name
    )
    return KeyCreated(key=token, info=info)


@router.get("/admin/keys", response_model=KeysResponse, tags=["admin"])
def list_keys(
    request: Request,
    who: Admin,
    tenant: Annotated[str | None, Query(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")] = None,
) -> KeysResponse:
    """Every key (of one tenant), revoked ones included; never the keys themselves."""
    return KeysResponse(keys=_keys(request).list(check_tenant(tenant) if tenant else None))


@router.delete("/admin/keys/{key_id}", response_model=ApiKey, tags=["admin"])
def revoke_key(
    request: Request,
    who: Admin,
    key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$", description="The key's id.")],
) -> ApiKey:
    """Revoke a key; it fails from the next request on."""
    return _keys(request).revoke(key_id)
