"""Routes over one user's memories: add, search, list, get, update, delete, history,
delete all, export, import, stats.

Every handler is a plain ``def``: FastAPI runs it in a worker thread, so SQLite and the
embedder never block the event loop.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from mnemolayer.errors import ValidationError
from mnemolayer.models import MemoryKind, MemoryPage, MemoryRecord
from mnemolayer.privacy.forget import ForgetReceipt
from mnemolayer.server.ops import OPS
from mnemolayer.server.rest.deps import User
from mnemolayer.server.rest.errors import ERROR_RESPONSES
from mnemolayer.server.rest.schemas import (
    AddBody,
    CountResponse,
    DeletionResponse,
    ExportResponse,
    HistoryResponse,
    ImportBody,
    MemoriesResponse,
    SearchBody,
    SearchResponse,
    StatsResponse,
    UpdateBody,
)

router = APIRouter(prefix="/v1/users/{user_id}", tags=["memories"], responses=ERROR_RESPONSES)

MemoryId = Annotated[str, Path(pattern=r"^[0-9A-Za-z_\-:.]{1,128}$", description="A memory id.")]
_LIST = OPS["list"]
_DELETE_ALL = OPS["delete_all"]


@router.post("/memories", status_code=201, response_model=MemoriesResponse)
def add_memories(body: AddBody, ctx: User) -> MemoriesResponse:
    """Store a text or a list of messages (``Memory.add``); idempotent per content and
    scope. ``pinned`` pins the new records, ``expires_at`` sets when they expire, and
    ``session_only`` (with ``session_id``) makes them temporary memories of the session,
    deleted when it ends. A message whose memory was deleted before (same ``id``,
    content and session) stays deleted: it is listed in ``skipped``, not stored."""
    if (body.content is None) == (body.messages is None):
        raise ValidationError("messages", "give either content (one text) or messages (a list)")
    messages: Any = (
        body.content
        if body.content is not None
        else [m.model_dump(exclude_none=True) for m in body.messages or []]
    )
    records = ctx.mem.add(messages, user_id=ctx.user_id, **OPS["add"].kwargs(body))
    return MemoriesResponse(items=records, skipped=records.skipped)


@router.post("/search", response_model=SearchResponse)
def search_memories(body: SearchBody, ctx: User) -> SearchResponse:
    """Hybrid recall (``Memory.search``): hits best first, with the score breakdown; with
    ``explain``, each hit's ``explanation`` says why it ranks where it does."""
    hits = ctx.mem.search(user_id=ctx.user_id, **OPS["search"].kwargs(body))
    return SearchResponse(hits=hits)


def _filters(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError("filters", f"not valid JSON ({exc.msg})") from exc
    if not isinstance(value, dict):
        raise ValidationError("filters", "must be a JSON object")
    return value


@router.get("/memories", response_model=MemoryPage)
def list_memories(
    ctx: User,
    agent_id: Annotated[
        str | None, Query(min_length=1, max_length=256, description=_LIST.doc("agent_id"))
    ] = None,
    session_id: Annotated[
        str | None, Query(min_length=1, max_length=256, description=_LIST.doc("session_id"))
    ] = None,
    kind: Annotated[
        list[MemoryKind] | None,
        Query(description=_LIST.doc("kinds") + " Repeatable: kind=episodic&kind=semantic."),
    ] = None,
    filters: Annotated[str | None, Query(description=_LIST.doc("filters") + " As JSON.")] = None,
    limit: Annotated[int, Query(ge=0, le=1000, description=_LIST.doc("limit"))] = 100,
    cursor: Annotated[str | None, Query(description=_LIST.doc("cursor"), max_length=128)] = None,
) -> MemoryPage:
    """A user's memories, oldest first, a page at a time (``Memory.list``)."""
    return ctx.mem.list(
        user_id=ctx.user_id,
        agent_id=agent_id,
        session_id=session_id,
        kinds=[k.value for k in kind] if kind else None,
        filters=_filters(filters),
        limit=limit,
        cursor=cursor,
    )


@router.delete("/memories", response_model=DeletionResponse)
def delete_all_memories(
    ctx: User,
    agent_id: Annotated[
        str | None, Query(min_length=1, max_length=256, description=_DELETE_ALL.doc("agent_id"))
    ] = None,
    session_id: Annotated[
        str | None,
        Query(min_length=1, max_length=256, description=_DELETE_ALL.doc("session_id")),
    ] = None,
) -> DeletionResponse:
    """Delete every memory of the user, or of one agent or session (``Memory.delete_all``),
    and return the deletion receipt: counts removed per table and index, what a re-check
    after the commit found left (``remaining``, all 0) and ``verified``.

    With neither ``agent_id`` nor ``session_id``, the user's history, knowledge graph and
    working-memory windows go too. ``count`` and ``deleted`` are the memories removed.
    """
    receipt = ctx.mem.delete_all(user_id=ctx.user_id, agent_id=agent_id, session_id=session_id)
    return DeletionResponse(
        count=receipt.memories, deleted=receipt.memories, **receipt.model_dump()
    )


@router.get("/memories/{memory_id}", response_model=MemoryRecord)
def get_memory(ctx: User, memory_id: MemoryId) -> MemoryRecord:
    """One memory by id (404 when the user has no such memory)."""
    return ctx.mem.get(memory_id, user_id=ctx.user_id)


@router.patch("/memories/{memory_id}", response_model=MemoryRecord)
def update_memory(ctx: User, memory_id: MemoryId, body: UpdateBody) -> MemoryRecord:
    """Change content, metadata or importance (``Memory.update``); history keeps the old."""
    return ctx.mem.update(memory_id, user_id=ctx.user_id, **OPS["update"].kwargs(body))


@router.delete("/memories/{memory_id}", status_code=204, response_class=Response)
def delete_memory(ctx: User, memory_id: MemoryId) -> Response:
    """Delete one memory (``Memory.delete``); its history keeps a ``DELETE`` event."""
    ctx.mem.delete(memory_id, user_id=ctx.user_id)
    return Response(status_code=204)


@router.post("/memories/{memory_id}/forget", response_model=ForgetReceipt)
def forget_memory(ctx: User, memory_id: MemoryId) -> ForgetReceipt:
    """Erase one memory's text everywhere (``Memory.forget``): the record, its keyword
    and vector rows, its history contents, facts only it stated, its embedding-cache
    entries and the write-ahead log. Returns the receipt (``removed`` per table,
    ``remaining`` all 0, ``verified``); 404 when the user has no such memory."""
    return ctx.mem.forget(memory_id, user_id=ctx.user_id)


@router.get("/memories/{memory_id}/history", response_model=HistoryResponse)
def memory_history(ctx: User, memory_id: MemoryId) -> HistoryResponse:
    """The audit trail of one memory, deleted ones too (``Memory.history``)."""
    return HistoryResponse(events=ctx.mem.history(memory_id, user_id=ctx.user_id))


@router.get("/export", response_model=ExportResponse)
def export_user(ctx: User) -> ExportResponse:
    """Every memory, entity, fact and history event of the user (``Memory.export``)."""
    return ExportResponse(rows=list(ctx.mem.export(user_id=ctx.user_id)))


@router.post("/import", response_model=CountResponse)
def import_user(ctx: User, body: ImportBody) -> CountResponse:
    """Import export rows into this user (``Memory.import_rows``); rows of another user
    are refused (422 naming ``rows[i].user_id``). Importing twice changes nothing."""
    for i, row in enumerate(body.rows):
        if row.get("type") != "header" and row.get("user_id") != ctx.user_id:
            raise ValidationError(
                f"rows[{i}].user_id", "every row must belong to the user in the path"
            )
    return CountResponse(count=ctx.mem.import_rows(body.rows))


@router.get("/stats", response_model=StatsResponse)
def user_stats(ctx: User) -> StatsResponse:
    """Counts of the user's memories (by kind), vectors, history and knowledge graph."""
    stats = ctx.mem.stats(user_id=ctx.user_id)
    return StatsResponse(tenant=ctx.tenant, **_counts(stats))


def _counts(stats: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "memories", "by_kind", "users", "vectors", "history_events",
        "entities", "aliases", "facts", "current_facts", "pending",
    )  # fmt: skip
    return {k: stats[k] for k in keys}
