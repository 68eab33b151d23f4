"""Routes over what mnemolayer knows about a user: facts, entities, neighbours, profile,
feedback (semantic memory); context assembly; outcomes, strategies and insights
(procedural memory)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from mnemolayer.context.assemble import Context
from mnemolayer.models import MemoryRecord
from mnemolayer.server.ops import OPS
from mnemolayer.server.rest.deps import User
from mnemolayer.server.rest.errors import ERROR_RESPONSES
from mnemolayer.server.rest.schemas import (
    ContextBody,
    EntitiesResponse,
    FactOut,
    FactsResponse,
    FeedbackBody,
    InsightsResponse,
    Neighbor,
    NeighborsResponse,
    OutcomeBody,
    OutcomesResponse,
    ProfileResponse,
    StrategiesResponse,
    Timestamp,
)

router = APIRouter(prefix="/v1/users/{user_id}", responses=ERROR_RESPONSES)

_FACTS = OPS["facts"]
_NEIGHBORS = OPS["neighbors"]
_STRATEGIES = OPS["strategies"]
Agent = Annotated[
    str | None, Query(min_length=1, max_length=256, description=OPS["outcomes"].doc("agent_id"))
]


@router.get("/facts", response_model=FactsResponse, tags=["semantic"])
def list_facts(
    ctx: User,
    subject: Annotated[
        str | None, Query(max_length=2000, description=_FACTS.doc("subject"))
    ] = None,
    predicate: Annotated[
        str | None, Query(max_length=200, description=_FACTS.doc("predicate"))
    ] = None,
    as_of: Annotated[Timestamp | None, Query(description=_FACTS.doc("as_of"))] = None,
    include_history: Annotated[bool, Query(description=_FACTS.doc("include_history"))] = False,
    trusted_only: Annotated[bool, Query(description=_FACTS.doc("trusted_only"))] = False,
) -> FactsResponse:
    """Facts of the user's knowledge graph (``Memory.facts``): what is true now, or
    ``as_of`` a time, or every fact ever recorded with ``include_history``."""
    facts = ctx.mem.facts(
        user_id=ctx.user_id,
        subject=subject,
        predicate=predicate,
        as_of=as_of,
        include_history=include_history,
        trusted_only=trusted_only,
    )
    return FactsResponse(facts=[FactOut.of(f) for f in facts])


@router.get("/entities", response_model=EntitiesResponse, tags=["semantic"])
def list_entities(ctx: User) -> EntitiesResponse:
    """Every entity of the user's graph: people, places, organisations, pets, things."""
    return EntitiesResponse(entities=ctx.mem.entities(user_id=ctx.user_id))


@router.get("/entities/{name}/neighbors", response_model=NeighborsResponse, tags=["semantic"])
def entity_neighbors(
    ctx: User,
    name: Annotated[str, Path(min_length=1, max_length=2000, description="Entity name or alias.")],
    depth: Annotated[int, Query(ge=1, le=5, description=_NEIGHBORS.doc("depth"))] = 1,
    include_history: Annotated[bool, Query(description=_NEIGHBORS.doc("include_history"))] = False,
) -> NeighborsResponse:
    """Entities within ``depth`` hops of an entity and the facts linking them."""
    found = ctx.mem.neighbors(
        name, user_id=ctx.user_id, depth=depth, include_history=include_history
    )
    return NeighborsResponse(
        entity=found["entity"],
        neighbors=[Neighbor(entity=n["entity"], hops=n["hops"]) for n in found["neighbors"]],
        facts=[FactOut.of(f) for f in found["facts"]],
    )


@router.get("/profile", response_model=ProfileResponse, tags=["semantic"])
def user_profile(
    ctx: User,
    subject: Annotated[
        str, Query(min_length=1, max_length=2000, description=OPS["profile"].doc("subject"))
    ] = "user",
) -> ProfileResponse:
    """What is currently known about a person (``Memory.profile``), grouped."""
    return ProfileResponse.model_validate(ctx.mem.profile(user_id=ctx.user_id, subject=subject))


@router.post("/feedback", status_code=201, response_model=FactsResponse, tags=["semantic"])
def learn_from_feedback(ctx: User, body: FeedbackBody) -> FactsResponse:
    """Record a preference learned from the user's reaction (``Memory.learn_from_feedback``);
    returns the facts now current because of it."""
    facts = ctx.mem.learn_from_feedback(
        user_id=ctx.user_id, **OPS["learn_from_feedback"].kwargs(body)
    )
    return FactsResponse(facts=[FactOut.of(f) for f in facts])


@router.post("/context", response_model=Context, tags=["context"])
def build_context(ctx: User, body: ContextBody) -> Context:
    """A token-budgeted context for a query (``Memory.context``): profile, relevant facts
    and episodes, strategies and the recent turns, within ``budget_tokens``."""
    return ctx.mem.context(user_id=ctx.user_id, **OPS["context"].kwargs(body))


@router.post("/outcomes", status_code=201, response_model=MemoryRecord, tags=["procedural"])
def record_outcome(ctx: User, body: OutcomeBody) -> MemoryRecord:
    """Record that a strategy succeeded or failed at a task (``Memory.record_outcome``)."""
    return ctx.mem.record_outcome(user_id=ctx.user_id, **OPS["record_outcome"].kwargs(body))


@router.get("/outcomes", response_model=OutcomesResponse, tags=["procedural"])
def list_outcomes(ctx: User, agent_id: Agent = None) -> OutcomesResponse:
    """Every recorded outcome of the user (and agent), oldest first."""
    return OutcomesResponse(outcomes=ctx.mem.outcomes(user_id=ctx.user_id, agent_id=agent_id))


@router.get("/strategies", response_model=StrategiesResponse, tags=["procedural"])
def list_strategies(
    ctx: User,
    task: Annotated[str, Query(min_length=1, max_length=2000, description=_STRATEGIES.doc("task"))],
    agent_id: Agent = None,
    limit: Annotated[int, Query(ge=0, le=1000, description=_STRATEGIES.doc("limit"))] = 10,
) -> StrategiesResponse:
    """Strategies tried on tasks similar to ``task``, best track record first."""
    found = ctx.mem.strategies(task, user_id=ctx.user_id, agent_id=agent_id, limit=limit)
    return StrategiesResponse(strategies=found)


@router.get("/insights", response_model=InsightsResponse, tags=["procedural"])
def list_insights(ctx: User, agent_id: Agent = None) -> InsightsResponse:
    """What the user's outcomes teach (``Memory.reflect``): reliable strategies and
    recurring failures."""
    return InsightsResponse(insights=ctx.mem.reflect(user_id=ctx.user_id, agent_id=agent_id))
