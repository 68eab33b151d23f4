"""Routes over working memory: the token-budgeted window of one session.

A window is named by ``(user_id, session_id, agent_id)``; ``agent_id`` is a query
parameter on every route. Requests on one window run one at a time (a window is not
safe for concurrent use). A window keeps the budget and encoding it was saved with
unless a turn's ``budget_tokens`` changes it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from mnemolayer import _validate as v
from mnemolayer.layers.working.window import WorkingMemory, WorkingMessage
from mnemolayer.server.ops import OPS, EndSessionParams
from mnemolayer.server.rest.deps import TenantUser, User
from mnemolayer.server.rest.errors import ERROR_RESPONSES
from mnemolayer.server.rest.schemas import (
    ChatMessage,
    SessionEndResponse,
    SessionInfoOut,
    SessionsResponse,
    TurnRequest,
    TurnResponse,
    WindowMessage,
    WindowResponse,
)

router = APIRouter(
    prefix="/v1/users/{user_id}/sessions/{session_id}",
    tags=["working memory"],
    responses=ERROR_RESPONSES,
)

#: Routes over all of a user's sessions (``/v1/users/{user_id}/sessions``).
user_router = APIRouter(
    prefix="/v1/users/{user_id}/sessions", tags=["working memory"], responses=ERROR_RESPONSES
)

SessionId = Annotated[str, Path(min_length=1, max_length=256, description="The session.")]
Agent = Annotated[str | None, Query(min_length=1, max_length=256)]
MessageId = Annotated[
    str, Path(pattern=r"^[0-9A-Za-z_\-:.]{1,128}$", description="A window message id.")
]
_END = OPS["end_session"]
SummaryTokens = Annotated[int, Query(ge=16, le=100_000, description=_END.doc("summary_tokens"))]
Encoding = Annotated[
    str | None, Query(min_length=1, max_length=200, description=_END.doc("encoding"))
]
_DEFAULT_BUDGET = 4000


def _open(
    ctx: TenantUser, session_id: str, agent_id: str | None, budget: int | None = None
) -> WorkingMemory:
    """The window, with its saved budget and encoding unless ``budget`` is given."""
    user_id = v.scope_id(ctx.user_id, "user_id", required=True)
    session_id = v.scope_id(session_id, "session_id", required=True)
    agent_id = v.scope_id(agent_id, "agent_id")
    saved = ctx.mem.sessions.load(user_id, session_id, agent_id)
    return ctx.mem.working(
        session_id=session_id,
        user_id=user_id,
        agent_id=agent_id,
        budget_tokens=budget or (saved.budget_tokens if saved else _DEFAULT_BUDGET),
        counter=saved.encoding if saved else None,
    )


def _message(m: WorkingMessage) -> WindowMessage:
    return WindowMessage(
        id=m.id,
        role=m.role,
        content=m.content,
        created_at=m.created_at,
        pinned=m.pinned,
        truncated=m.truncated,
        archived_id=m.archived_id,
    )


def _window(wm: WorkingMemory) -> WindowResponse:
    return WindowResponse(
        user_id=wm.user_id,
        session_id=wm.session_id,
        agent_id=wm.agent_id,
        budget_tokens=wm.budget_tokens,
        encoding=wm.counter.name,
        tokens=wm.tokens,
        summary=wm.summary,
        summary_rounds=wm.summary_rounds,
        evicted_count=wm.evicted_count,
        window=[_message(m) for m in wm.window()],
        messages=[ChatMessage(**m) for m in wm.messages()],
    )


@router.get("/window", response_model=WindowResponse)
def get_window(ctx: User, session_id: SessionId, agent_id: Agent = None) -> WindowResponse:
    """The session's window (empty when nothing was added yet); ``messages`` is what the
    next model call should see."""
    with ctx.window_lock(session_id, agent_id):
        return _window(_open(ctx, session_id, agent_id))


@router.post("/window/messages", status_code=201, response_model=TurnResponse)
def add_turn(
    ctx: User, session_id: SessionId, body: TurnRequest, agent_id: Agent = None
) -> TurnResponse:
    """Append a turn; older turns are compacted into episodic memory and the running
    summary when the window overflows its budget."""
    with ctx.window_lock(session_id, agent_id):
        wm = _open(ctx, session_id, agent_id, body.budget_tokens)
        msg = wm.add(body.role, body.content, pin=body.pin, timestamp=body.timestamp)
        return TurnResponse(message=_message(msg), window=_window(wm))


@router.put("/window/messages/{message_id}/pin", response_model=TurnResponse)
def pin_turn(
    ctx: User, session_id: SessionId, message_id: MessageId, agent_id: Agent = None
) -> TurnResponse:
    """Keep a message in the window through every compaction."""
    with ctx.window_lock(session_id, agent_id):
        wm = _open(ctx, session_id, agent_id)
        msg = wm.pin(message_id)
        return TurnResponse(message=_message(msg), window=_window(wm))


@router.delete("/window/messages/{message_id}/pin", response_model=TurnResponse)
def unpin_turn(
    ctx: User, session_id: SessionId, message_id: MessageId, agent_id: Agent = None
) -> TurnResponse:
    """Let a pinned message be compacted like any other turn."""
    with ctx.window_lock(session_id, agent_id):
        wm = _open(ctx, session_id, agent_id)
        msg = wm.unpin(message_id)
        return TurnResponse(message=_message(msg), window=_window(wm))


@router.delete("/window", status_code=204, response_class=Response)
def clear_window(ctx: User, session_id: SessionId, agent_id: Agent = None) -> Response:
    """Archive every turn still in the window to episodic memory and forget the window."""
    with ctx.window_lock(session_id, agent_id):
        _open(ctx, session_id, agent_id).clear()
    return Response(status_code=204)


@user_router.get("", response_model=SessionsResponse)
def list_sessions(ctx: User) -> SessionsResponse:
    """The user's saved working-memory windows, most recently saved first."""
    user_id = v.scope_id(ctx.user_id, "user_id", required=True)
    infos = ctx.mem.list_sessions(user_id)
    return SessionsResponse(items=[SessionInfoOut(**vars(i)) for i in infos])


@router.post("/end", response_model=SessionEndResponse)
def end_session(
    ctx: User,
    session_id: SessionId,
    agent_id: Agent = None,
    summary_tokens: SummaryTokens = 300,
    encoding: Encoding = None,
    body: EndSessionParams | None = None,
) -> SessionEndResponse:
    """End the session: archive the window's pending turns, store one session summary in
    episodic memory, delete the session's session-only memories and close the window.
    Ending an ended (or unknown) session changes nothing and reports zeros.

    The options come as query parameters or as a JSON body (``agent_id``,
    ``summary_tokens``, ``encoding``; unknown fields are refused); a field the body
    sets wins over the query parameter."""
    if body is not None:
        given = body.model_fields_set
        agent_id = body.agent_id if "agent_id" in given else agent_id
        summary_tokens = body.summary_tokens if "summary_tokens" in given else summary_tokens
        encoding = body.encoding if "encoding" in given else encoding
    with ctx.window_lock(session_id, agent_id):
        end = ctx.mem.end_session(
            session_id,
            ctx.user_id,
            agent_id=agent_id,
            summary_tokens=summary_tokens,
            counter=encoding,
        )
    return SessionEndResponse(
        session_id=end.session_id, user_id=end.user_id, agent_id=end.agent_id,
        summary=end.summary, archived=end.archived, cleared=end.cleared,
        window_closed=end.window_closed, turns=end.turns,
    )  # fmt: skip
