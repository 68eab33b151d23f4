"""Request and response bodies of the REST API (typed, so ``/openapi.json`` is exact).

Requests reject unknown fields (a typo is a 422 naming it, not a silently ignored
option), and body numbers, booleans and times are strict: ``"threshold": false``,
``"limit": "5"`` or ``"timestamp": 3`` is a 422, as the schema says, not a silent
conversion. The request bodies of ``Memory`` calls are the params models of
:mod:`mnemolayer.server.ops` (``SearchBody`` is ``SearchParams``...), where each
operation is defined once for REST, MCP and the command line. Responses reuse the library's own models (:class:`~mnemolayer.MemoryRecord`,
:class:`~mnemolayer.Hit`, :class:`~mnemolayer.context.assemble.Context`...) wherever one exists.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, computed_field

from mnemolayer.layers.episodic.added import SkippedMessage
from mnemolayer.layers.procedural.strategies import Insight, Outcome, StrategyStats
from mnemolayer.lifecycle.maintain import MaintenanceReport
from mnemolayer.models import Entity, Fact, HistoryEvent, Hit, MemoryRecord
from mnemolayer.privacy.erasure import DeletionReceipt
from mnemolayer.server import ops
from mnemolayer.server.ops import Id, RecentTurn, Timestamp
from mnemolayer.server.rest.keys import ApiKey

__all__ = [
    "AddBody",
    "ApiKey",
    "ContextBody",
    "CountResponse",
    "DeletionResponse",
    "EntitiesResponse",
    "ExportResponse",
    "FactOut",
    "FactsResponse",
    "FeedbackBody",
    "HistoryResponse",
    "ImportBody",
    "InsightsResponse",
    "KeyCreateRequest",
    "KeyCreated",
    "KeysResponse",
    "MaintainBody",
    "MaintenanceResponse",
    "MemoriesResponse",
    "MessageIn",
    "NeighborsResponse",
    "OutcomeBody",
    "OutcomesResponse",
    "ProfileResponse",
    "RecentTurn",
    "SearchBody",
    "SearchResponse",
    "SessionEndResponse",
    "SessionInfoOut",
    "SessionsResponse",
    "StatsResponse",
    "StrategiesResponse",
    "TenantError",
    "TenantsResponse",
    "Timestamp",
    "TurnRequest",
    "TurnResponse",
    "UpdateBody",
    "WhoAmI",
    "WindowMessage",
    "WindowResponse",
]

Role = Literal["user", "assistant", "system", "tool"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- memories -----------------------------------------------------------------------------


class MessageIn(_In):
    """One conversation message (``Memory.add``'s message dict)."""

    role: Role = "user"
    content: str
    name: Id | None = Field(None, description="Who said it; defaults to the role.")
    timestamp: Timestamp | None = Field(None, description="When it was said (naive → UTC).")
    id: Id | None = Field(None, description="Your message id, kept as provenance.")
    metadata: dict[str, Any] | None = None


class AddBody(ops.AddParams):
    """Store one text (``content``) or a list of messages (``messages``): give one of them
    (``Memory.add``)."""

    content: str | None = Field(None, description="One user message as plain text.")
    messages: list[MessageIn] | None = Field(None, min_length=1, max_length=10_000)


class MemoriesResponse(_Out):
    """The stored records, in message order (an existing record for repeated content);
    ``skipped``: the messages not stored because they were deleted before (same ``id``,
    content and session), each with its position in ``messages``."""

    items: list[MemoryRecord]
    skipped: list[SkippedMessage] = Field(
        default_factory=list,
        description="Messages not stored: their memory was deleted, and a replay stays deleted.",
    )


class SearchBody(ops.SearchParams):
    """Hybrid recall within one user's memories (``Memory.search``)."""


class SearchResponse(_Out):
    """Hits, best first, each with its score breakdown."""

    hits: list[Hit]


class UpdateBody(ops.UpdateParams):
    """What to change: content (re-indexed), metadata (replaced whole), importance."""


class HistoryResponse(_Out):
    """A memory's audit trail, oldest first."""

    events: list[HistoryEvent]


class CountResponse(_Out):
    """How many memories a call removed or imported."""

    count: int


class DeletionResponse(DeletionReceipt):
    """The receipt of a deletion (``Memory.delete_all``, :class:`mnemolayer.DeletionReceipt`)
    with ``count`` and ``deleted`` (both the memories removed) kept for older clients."""

    count: int
    deleted: int


class ExportResponse(_Out):
    """Export rows (``Memory.export``): a header, then memory, entity, fact and history rows."""

    rows: list[dict[str, Any]]


class ImportBody(ops.ImportRowsParams):
    """Rows from ``GET /export`` (or ``mnemolayer export``); every row of one user."""


class StatsResponse(_Out):
    """Counts of one user (``/v1/users/{user_id}/stats``) or of a whole tenant's store
    (``/v1/stats``, which adds the store's size, schema version and embedding model)."""

    tenant: str
    memories: int
    by_kind: dict[str, int]
    users: int
    vectors: int
    history_events: int
    entities: int
    aliases: int
    facts: int
    current_facts: int
    #: Records waiting for enrichment a failing model could not do at write, by kind
    #: (``embedding``, ``extraction``); maintenance completes them.
    pending: dict[str, int]
    bytes: int | None = None
    schema_version: int | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None


# -- lifecycle ------------------------------------------------------------------------------


class MaintainBody(ops.MaintainParams):
    """One maintenance pass over the user's memories (``Memory.maintain``)."""


class MaintenanceResponse(MaintenanceReport):
    """What the pass did (or would do): the library's ``MaintenanceReport`` (one entry in
    ``users``), with ``totals`` (each count summed) and ``changes`` (0: nothing to do)
    as in its ``to_json()``."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def totals(self) -> dict[str, int]:
        return super().totals

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changes(self) -> int:
        return super().changes

    @classmethod
    def of(cls, report: MaintenanceReport) -> MaintenanceResponse:
        return cls.model_validate(report.model_dump())


# -- semantic memory ----------------------------------------------------------------------


class FactOut(Fact):
    """A fact, with ``current`` (whether it holds now)."""

    # Named apart from ``Fact.current`` (a property); serialised as ``current``.
    is_current: bool = Field(alias="current", description="Whether it holds now.")

    @classmethod
    def of(cls, fact: Fact) -> FactOut:
        return cls(**fact.model_dump(), current=fact.current)


class FactsResponse(_Out):
    facts: list[FactOut]


class EntitiesResponse(_Out):
    entities: list[Entity]


class Neighbor(_Out):
    entity: Entity
    hops: int


class NeighborsResponse(_Out):
    """An entity, the entities within ``depth`` hops, and the facts linking them."""

    entity: Entity
    neighbors: list[Neighbor]
    facts: list[FactOut]


class ProfileResponse(_Out):
    """What is currently known about a person (``Memory.profile``)."""

    subject: str
    name: str | None
    aliases: list[str]
    identity: dict[str, Any]
    relationships: dict[str, Any]
    preferences: dict[str, Any]
    plans: dict[str, Any]
    events: dict[str, Any]
    updated_at: datetime | None


class FeedbackBody(ops.FeedbackParams):
    """How the user reacted to something the agent did (``Memory.learn_from_feedback``)."""


# -- context and procedural memory ----------------------------------------------------------


class ContextBody(ops.ContextParams):
    """A token-budgeted context for ``query`` (``Memory.context``)."""


class OutcomeBody(ops.OutcomeParams):
    """That a strategy succeeded or failed at a task (``Memory.record_outcome``)."""


class OutcomesResponse(_Out):
    outcomes: list[Outcome]


class StrategiesResponse(_Out):
    strategies: list[StrategyStats]


class InsightsResponse(_Out):
    insights: list[Insight]


# -- working memory -------------------------------------------------------------------------


class WindowMessage(_Out):
    """A message held in a working-memory window."""

    id: str
    role: str
    content: str
    created_at: datetime
    pinned: bool
    truncated: bool
    archived_id: str | None = None


class ChatMessage(_Out):
    role: str
    content: str


class WindowResponse(_Out):
    """A session's working-memory window; ``messages`` is what the next model call sees."""

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    encoding: str
    tokens: int
    summary: str
    summary_rounds: int
    evicted_count: int
    window: list[WindowMessage]
    messages: list[ChatMessage]


class SessionInfoOut(_Out):
    """One saved working-memory window of a user."""

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    messages: int
    evicted_count: int
    summary_rounds: int
    updated_at: datetime | None


class SessionsResponse(_Out):
    """A user's saved windows, most recently saved first."""

    items: list[SessionInfoOut]


class SessionEndResponse(_Out):
    """What ending a session did: the summary stored in episodic memory (``None`` when
    there was nothing new to summarise), turns archived now, session-only memories
    deleted, whether a window was closed, and how many turns the summary covers."""

    session_id: str
    user_id: str
    agent_id: str | None
    summary: MemoryRecord | None
    archived: int
    cleared: int
    window_closed: bool
    turns: int


class TurnRequest(_In):
    """One turn appended to a window (compacting older turns when it overflows)."""

    role: Role
    content: str
    pin: StrictBool = False
    timestamp: Timestamp | None = None
    budget_tokens: StrictInt | None = Field(
        None, ge=64, le=10_000_000, description="The window's budget; default: as saved, or 4000."
    )


class TurnResponse(_Out):
    message: WindowMessage
    window: WindowResponse


# -- keys and admin -------------------------------------------------------------------------


class WhoAmI(_Out):
    """The caller: its tenant (``null`` for the operator's key), the users it may touch
    (``null``: all), whether it may use the admin routes, whether it is the operator."""

    tenant: str | None
    users: list[str] | None
    admin: bool
    operator: bool
    key_id: str | None
    auth: bool


class KeyCreateRequest(_In):
    """A key to make: of ``tenant`` (default: the caller's own), a tenant admin with
    ``admin``, or an operator key (no tenant) with ``operator``."""

    tenant: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$",
        description="The key's tenant; default the caller's. Another tenant, or a new one: "
        "operator keys only.",
    )
    users: list[Id] = Field(
        default_factory=list, description="Bind the key to these users (not admin keys)."
    )
    admin: StrictBool = Field(False, description="A tenant admin: manages its tenant's keys.")
    operator: StrictBool = Field(
        False, description="The operator's key (every tenant and key); operator keys only."
    )
    name: Id | None = None


class KeyCreated(_Out):
    """A new key: ``key`` is shown this once."""

    key: str
    info: ApiKey


class KeysResponse(_Out):
    keys: list[ApiKey]


class TenantError(_Out):
    """A tenant whose store could not be opened, and why (``type`` as in error bodies)."""

    tenant: str
    type: str
    message: str


class TenantsResponse(_Out):
    """Stats of every tenant; tenants whose store cannot be opened are listed apart."""

    tenants: list[StatsResponse]
    unavailable: list[TenantError]
