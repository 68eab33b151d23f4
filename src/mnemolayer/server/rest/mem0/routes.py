"""The Mem0-compatible routes, under ``/mem0``: the paths, methods and bodies that
mem0ai's ``MemoryClient`` (2.2) uses, so that ``MemoryClient(api_key=KEY,
host="http://HOST:PORT/mem0")`` works against this server with a tenant's API key.

Every handler is a plain ``def`` (run in a worker thread, as the other routes are).
Errors carry Mem0's ``detail`` string besides mnemolayer's ``error`` object.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Depends, Path, Query, Request

from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord, to_utc
from mnemolayer.privacy.mem0 import MEM0_KEY, expiration_time
from mnemolayer.server.rest.deps import Principal, principal_of_token, state_of
from mnemolayer.server.rest.errors import DETAIL_ERROR_RESPONSES, ApiError
from mnemolayer.server.rest.mem0.shapes import (
    Mem0AddBody,
    Mem0Done,
    Mem0Event,
    Mem0GetAllBody,
    Mem0Memory,
    Mem0Page,
    Mem0Ping,
    Mem0Results,
    Mem0Scope,
    Mem0SearchBody,
    Mem0UpdateBody,
    event_of,
    item_of,
    refuse_extra,
    scope_of,
)
from mnemolayer.server.rest.settings import DEFAULT_TENANT

__all__ = ["PREFIX", "router"]

#: Where the routes are mounted: the ``host`` to give ``MemoryClient`` ends in it.
PREFIX = "/mem0"


class Mem0Caller:
    """A request's caller and its tenant's store."""

    def __init__(self, principal: Principal, mem: Memory) -> None:
        self.principal = principal
        self.mem = mem

    def scoped(self, scope: Mem0Scope) -> Mem0Scope:
        self.principal.allow_user(scope.user_id)
        return scope

    def record(self, memory_id: str) -> MemoryRecord:
        """The tenant's memory ``memory_id``, if the key may touch its user.

        Raises:
            NotFoundError: no such memory. ApiError: 403, a key bound to other users.
        """
        rec = self.mem.get(memory_id)
        self.principal.allow_user(rec.user_id)
        return rec


def _token(request: Request) -> str | None:
    """Mem0's ``Authorization: Token <key>``; ``Bearer <key>`` and ``X-API-Key`` too."""
    sent = request.headers.get("authorization", "").strip()
    scheme, _, key = sent.partition(" ")
    if scheme.lower() in ("token", "bearer") and key.strip():
        return key.strip()
    if sent:
        raise ApiError(
            401, "unauthorized", "the Authorization header must read 'Token <key>'", "authorization"
        )
    return request.headers.get("x-api-key") or None


async def mem0_caller(request: Request) -> Mem0Caller:
    """The caller (401 without a valid key; 403 for an operator key) and its store."""
    state = state_of(request)
    if not state.settings.auth:
        who = Principal(DEFAULT_TENANT, None, False, None)
    else:
        token = _token(request)
        if token is None:
            raise ApiError(
                401, "unauthorized",
                "an API key is required: send 'Authorization: Token <key>'", "authorization",
            )  # fmt: skip
        who = await principal_of_token(state, token)
    tenant = who.own_tenant()
    mem = state.pool.opened(tenant)
    if mem is None:
        mem = await anyio.to_thread.run_sync(state.pool.get, tenant)
    return Mem0Caller(who, mem)


Caller = Annotated[Mem0Caller, Depends(mem0_caller)]
MemoryId = Annotated[str, Path(pattern=r"^[0-9A-Za-z_\-:.]{1,128}$", description="A memory id.")]

router = APIRouter(prefix=PREFIX, tags=["mem0"], responses=DETAIL_ERROR_RESPONSES)


@router.get("/v1/ping/", response_model=Mem0Ping)
def mem0_ping(caller: Caller) -> Mem0Ping:
    """What ``MemoryClient()`` calls first: 200 for a valid key (401 otherwise, which
    the client raises as ``ValueError``). ``org_id`` and ``project_id`` (which the
    client requires) are both the key's tenant."""
    tenant = caller.principal.own_tenant()
    return Mem0Ping(status="ok", org_id=tenant, project_id=tenant)


@router.post("/v3/memories/add/", response_model=Mem0Results)
def mem0_add(caller: Caller, body: Mem0AddBody) -> dict[str, Any]:
    """``MemoryClient.add``: each message stored verbatim (``Memory.add``, idempotent),
    then the server's extractor draws facts from it. Answers ``{"results": [...]}`` at
    once (Mem0's platform queues the work and answers an ``event_id``); with ``infer``
    (the default) the facts drawn are listed after the messages, each ``event: ADD``."""
    refuse_extra(body)
    scope = caller.scoped(
        scope_of(body.filters, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id)
    )
    if scope.filters is not None:
        raise ValidationError("filters", "an add takes entity ids only (user_id, agent_id, run_id)")
    expires = expiration_time(body.expiration_date, "expiration_date")
    records = caller.mem.add(
        [m.model_dump(exclude_none=True) for m in body.messages],
        user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id,
        metadata=body.metadata, timestamp=to_utc(body.timestamp, "timestamp"), expires_at=expires,
    )  # fmt: skip
    found = list(records)
    if body.infer:
        ids = {r.id for r in records}
        for fact in caller.mem.facts(user_id=scope.user_id):
            if fact.memory_id and ids.intersection(fact.source_ids):
                found.append(caller.mem.get(fact.memory_id, user_id=scope.user_id))
    return {"results": [{**item_of(r), "event": "ADD"} for r in found]}


@router.post("/v3/memories/search/", response_model=Mem0Results)
def mem0_search(caller: Caller, body: Mem0SearchBody) -> dict[str, Any]:
    """``MemoryClient.search``: hybrid recall (``Memory.search``) in the user (and agent
    and run) of ``filters``, best first, each with its ``score`` in [0, 1]."""
    refuse_extra(body)
    scope = caller.scoped(scope_of(body.filters))
    hits = caller.mem.search(
        body.query, user_id=scope.user_id, agent_id=scope.agent_id,
        session_id=scope.session_id, filters=scope.filters, limit=body.top_k,
        threshold=body.threshold, include_history=body.latest_only is False,
    )  # fmt: skip
    return {"results": [item_of(h.memory, h.score) for h in hits]}


@router.post("/v3/memories/", response_model=Mem0Page)
def mem0_get_all(
    caller: Caller,
    body: Mem0GetAllBody,
    page: Annotated[int, Query(ge=1, le=100_000, description="1 for the first page.")] = 1,
    page_size: Annotated[int, Query(ge=1, le=1000, description="Memories per page.")] = 100,
) -> dict[str, Any]:
    """``MemoryClient.get_all``: the memories in the scope of ``filters``, oldest id
    first, a page at a time, as ``{"count", "next", "previous", "results"}``."""
    refuse_extra(body)
    scope = caller.scoped(scope_of(body.filters))
    start = _day(body.start_date, "start_date")
    end = _day(body.end_date, "end_date")
    records: list[MemoryRecord] = []
    cursor: str | None = None
    while True:
        chunk = caller.mem.list(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id,
            filters=scope.filters, limit=1000, cursor=cursor,
        )  # fmt: skip
        records += [
            r for r in chunk
            if (start is None or r.created_at >= start) and (end is None or r.created_at <= end)
        ]  # fmt: skip
        cursor = chunk.next_cursor
        if cursor is None:
            break
    first = (page - 1) * page_size
    here = f"{PREFIX}/v3/memories/?page_size={page_size}&page="
    return {
        "count": len(records),
        "next": f"{here}{page + 1}" if first + page_size < len(records) else None,
        "previous": f"{here}{page - 1}" if page > 1 else None,
        "results": [item_of(r) for r in records[first : first + page_size]],
    }


def _day(value: str | None, field: str) -> datetime | None:
    return to_utc(value, field) if value else None


@router.get("/v1/memories/{memory_id}/", response_model=Mem0Memory)
def mem0_get(caller: Caller, memory_id: MemoryId) -> dict[str, Any]:
    """``MemoryClient.get``: one memory of the tenant by id (404 when there is none)."""
    return item_of(caller.record(memory_id))


@router.put("/v1/memories/{memory_id}/", response_model=Mem0Memory)
def mem0_update(caller: Caller, memory_id: MemoryId, body: Mem0UpdateBody) -> dict[str, Any]:
    """``MemoryClient.update``: new ``text`` (re-indexed, facts re-mined) and ``metadata``
    merged into the old (``Memory.update``; history keeps the old). Answers the memory
    with ``message``."""
    refuse_extra(body)
    if "expiration_date" in body.model_fields_set:
        raise ValidationError("expiration_date", "not supported: an update keeps the expiry")
    old = caller.record(memory_id)
    metadata = None
    if body.metadata is not None:
        if MEM0_KEY in body.metadata:
            raise ValidationError(f"metadata.{MEM0_KEY}", "is reserved for Mem0's fields")
        metadata = {**old.metadata, **body.metadata}
    rec = caller.mem.update(memory_id, content=body.text, metadata=metadata, user_id=old.user_id)
    return {**item_of(rec), "message": "Memory updated successfully!"}


@router.delete("/v1/memories/{memory_id}/", response_model=Mem0Done)
def mem0_delete(
    caller: Caller,
    memory_id: MemoryId,
    delete_linked: Annotated[
        bool | None, Query(description="Not supported: 422 when true.")
    ] = None,
) -> Mem0Done:
    """``MemoryClient.delete``: delete one memory (``Memory.delete``; its history keeps
    a ``DELETE`` event)."""
    if delete_linked:
        raise ValidationError(
            "delete_linked", "not supported: superseded facts are kept as history"
        )
    old = caller.record(memory_id)
    caller.mem.delete(memory_id, user_id=old.user_id)
    return Mem0Done(message="Memory deleted successfully!")


@router.get("/v1/memories/{memory_id}/history/", response_model=list[Mem0Event])
def mem0_history(caller: Caller, memory_id: MemoryId) -> list[dict[str, Any]]:
    """``MemoryClient.history``: the memory's events, oldest first, deleted memories'
    too (``Memory.history``): ``ADD``, ``UPDATE``, ``DELETE`` and mnemolayer's own
    (``PIN``, ``SUPERSEDE``, ...)."""
    events = caller.mem.history(memory_id)
    caller.principal.allow_user(events[0].user_id)
    if any(e.user_id != events[0].user_id for e in events):
        raise NotFoundError(f"memory_id: no memory {memory_id!r}")
    return [event_of(e) for e in events]
