"""Routes about the caller and the server: who am I, tenant stats, and the admin routes
(every tenant's stats; creating, listing and revoking keys).

Who may manage what (:mod:`mnemolayer.server.rest.keys` describes the three kinds of key):

* the **operator** key: every tenant's stats; any key of any tenant (a key for a tenant
  with no store yet makes that tenant), operator keys included;
* a **tenant-admin** key: the keys of its own tenant only. A key of another tenant, or
  an operator key, is an unknown key to it (404, as another tenant's memory ids are);
  naming another tenant, or asking for an operator key, is 403;
* any other key: none of the admin routes (403).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from mnemolayer.errors import MnemolayerError, NotFoundError
from mnemolayer.memory import Memory
from mnemolayer.server.rest.deps import Admin, Caller, Operator, Principal, TenantWide, state_of
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
    """The caller's tenant (``null``: the operator's key), the users its key may touch
    (``null``: all), and whether it is an admin or the operator's key."""
    return WhoAmI(
        tenant=who.tenant,
        users=sorted(who.users) if who.users is not None else None,
        admin=who.admin,
        operator=who.operator,
        key_id=who.key.id if who.key is not None else None,
        auth=state_of(request).settings.auth,
    )


def _stats(tenant: str, mem: Memory) -> StatsResponse:
    stats: dict[str, Any] = mem.stats()
    stats.pop("path", None)  # the server's file layout is not the caller's business
    return StatsResponse(tenant=tenant, **stats)


@router.get("/stats", response_model=StatsResponse, tags=["server"])
def tenant_stats(request: Request, tenant: TenantWide) -> StatsResponse:
    """Counts of the caller's whole tenant store, its size, schema and embedding model
    (keys bound to users and the operator's key get 403)."""
    return _stats(tenant, state_of(request).pool.get(tenant))


@router.get("/admin/tenants", response_model=TenantsResponse, tags=["admin"])
def all_tenants(request: Request, who: Operator) -> TenantsResponse:
    """Stats of every tenant with a store (the operator's key only); a store that cannot
    be opened (another embedding model, a damaged file) is listed under ``unavailable``."""
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


def _managed(who: Principal, tenant: str | None) -> str | None:
    """The tenant whose keys ``who`` acts on: ``tenant``, or the caller's own when not
    given (``None`` for an operator: every tenant).

    Raises:
        ApiError: 403 naming ``tenant`` when a tenant admin names another tenant.
    """
    if who.operator:
        return tenant
    if tenant is not None and tenant != who.tenant:
        raise ApiError(
            403,
            "forbidden",
            "a tenant admin key manages the keys of its own tenant only",
            "tenant",
        )
    return who.tenant


@router.post("/admin/keys", status_code=201, response_model=KeyCreated, tags=["admin"])
def create_key(request: Request, who: Admin, body: KeyCreateRequest) -> KeyCreated:
    """Make an API key; the key is in this response and nowhere else. A tenant admin
    makes keys of its own tenant (the default ``tenant``); the operator makes keys of
    any tenant, new ones included, and operator keys."""
    if body.operator and not who.operator:
        raise ApiError(403, "forbidden", "only an operator key can make operator keys", "operator")
    # An operator key with a tenant is refused by the key store (422 naming it).
    tenant = body.tenant if body.operator else _managed(who, body.tenant)
    token, info = _keys(request).create(
        tenant, users=body.users, admin=body.admin, operator=body.operator, name=body.name
    )
    return KeyCreated(key=token, info=info)


@router.get("/admin/keys", response_model=KeysResponse, tags=["admin"])
def list_keys(
    request: Request,
    who: Admin,
    tenant: Annotated[str | None, Query(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")] = None,
) -> KeysResponse:
    """Keys, revoked ones included, never the keys themselves: a tenant admin's own
    tenant's; the operator's: every key, or one tenant's with ``tenant``."""
    scope = _managed(who, check_tenant(tenant) if tenant else None)
    return KeysResponse(keys=_keys(request).list(scope))


@router.delete("/admin/keys/{key_id}", response_model=ApiKey, tags=["admin"])
def revoke_key(
    request: Request,
    who: Admin,
    key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$", description="The key's id.")],
) -> ApiKey:
    """Revoke a key; it fails from the next request on. To a tenant admin, a key of
    another tenant (or the operator's) is unknown: 404."""
    keys = _keys(request)
    if not who.operator and keys.get(key_id).tenant != who.tenant:
        raise NotFoundError(f"key_id: no key {key_id!r}")
    return keys.revoke(key_id)
