"""Routes over the memory lifecycle of one user: explain a memory, pin and unpin it,
archive and restore it, and run a maintenance pass (expiry, merging, consolidation,
forgetting) over the user's memories.

Each is one :class:`~mnemolayer.Memory` call (``explain``, ``pin``, ``unpin``,
``archive``, ``restore``, ``maintain``); a memory of another user, or of another tenant,
is a 404 like any unknown id. Plain ``def`` handlers: FastAPI runs them in a worker
thread.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from mnemolayer.lifecycle.explanation import Explanation
from mnemolayer.models import MemoryRecord
from mnemolayer.server.rest.deps import User
from mnemolayer.server.rest.errors import ERROR_RESPONSES
from mnemolayer.server.rest.routes.memories import MemoryId
from mnemolayer.server.rest.schemas import MaintainRequest, MaintenanceResponse

router = APIRouter(prefix="/v1/users/{user_id}", tags=["lifecycle"], responses=ERROR_RESPONSES)

ExplainQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=2000,
        description="Also rank the memory for this query and say where it lands, or why "
        "search leaves it out.",
    ),
]


@router.get("/memories/{memory_id}/explain", response_model=Explanation)
def explain_memory(ctx: User, memory_id: MemoryId, query: ExplainQuery = None) -> Explanation:
    """Why a memory ranks where it does, or why recall leaves it out (``Memory.explain``):
    retention and its parts, importance and why, expiry, and whether it is pinned,
    archived, superseded, merged or consolidated; with ``query``, its rank for it.
    Explaining counts no access."""
    return ctx.mem.explain(memory_id, user_id=ctx.user_id, query=query)


@router.put("/memories/{memory_id}/pin", response_model=MemoryRecord)
def pin_memory(ctx: User, memory_id: MemoryId) -> MemoryRecord:
    """Pin a memory (``Memory.pin``): it never decays, expires or gets forgotten by
    maintenance; an archived one is restored too. Pinning a pinned memory changes
    nothing."""
    return ctx.mem.pin(memory_id, user_id=ctx.user_id)


@router.delete("/memories/{memory_id}/pin", response_model=MemoryRecord)
def unpin_memory(ctx: User, memory_id: MemoryId) -> MemoryRecord:
    """Unpin a memory (``Memory.unpin``): it decays again from its last access or
    occurrence."""
    return ctx.mem.unpin(memory_id, user_id=ctx.user_id)


@router.post("/memories/{memory_id}/archive", response_model=MemoryRecord)
def archive_memory(ctx: User, memory_id: MemoryId) -> MemoryRecord:
    """Archive a memory (``Memory.archive``): out of search and context, still listed,
    restorable. A pinned memory is refused (422 naming ``memory_id``: unpin it first)."""
    return ctx.mem.archive(memory_id, user_id=ctx.user_id)


@router.post("/memories/{memory_id}/restore", response_model=MemoryRecord)
def restore_memory(ctx: User, memory_id: MemoryId) -> MemoryRecord:
    """Bring an archived memory back into recall (``Memory.restore``); a memory that is
    not archived comes back unchanged."""
    return ctx.mem.restore(memory_id, user_id=ctx.user_id)


@router.post("/maintain", response_model=MaintenanceResponse)
def maintain_user(ctx: User, body: MaintainRequest | None = None) -> MaintenanceResponse:
    """One maintenance pass over the user's memories (``Memory.maintain``): delete the
    expired, merge near-duplicates, consolidate what was said in 3+ interactions, and
    archive faded memories that do not matter. Idempotent: a second pass right after
    reports zero ``changes``. With ``dry_run``, counts without writing."""
    req = body if body is not None else MaintainRequest()
    report = ctx.mem.maintain(user_id=ctx.user_id, now=req.now, dry_run=req.dry_run)
    return MaintenanceResponse.of(report)
