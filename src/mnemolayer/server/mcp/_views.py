"""What the MCP tools return: compact, typed views of mnemolayer's objects.

Each tool's return type becomes its ``outputSchema``; the SDK sends the value both as
``structuredContent`` and as JSON text. Views leave out the bookkeeping an assistant has
no use for (content hashes, embedding model, access counters), which keeps tool results
short in the model's context; facts, history events, strategies, insights and
explanations (``explain_memory`` returns the library's
:class:`~mnemolayer.lifecycle.explanation.Explanation`) are passed through whole.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer.context.assemble import Context
from mnemolayer.layers.procedural.strategies import Insight, StrategyStats
from mnemolayer.models import Fact, HistoryEvent, Hit, MemoryRecord

__all__ = [
    "ContextView",
    "Deleted",
    "FactsView",
    "HistoryView",
    "HitView",
    "MemoryList",
    "MemoryView",
    "SearchResults",
    "StrategiesView",
]


class _View(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryView(_View):
    """One memory."""

    id: str
    user_id: str
    kind: str
    content: str
    speaker: str | None = None
    occurred_at: datetime | None = Field(None, description="When it happened (UTC).")
    created_at: datetime = Field(description="When it was stored (UTC).")
    agent_id: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    importance: float
    superseded_by: str | None = Field(
        None, description="Set when a newer memory replaced this one (no longer true)."
    )
    pinned: bool = Field(False, description="Pinned memories never fade, expire or get forgotten.")
    expires_at: datetime | None = Field(
        None, description="When it expires (UTC), when it was given an expiry."
    )
    session_only: bool = Field(
        False, description="A temporary memory of its session, deleted when the session ends."
    )
    source: str = Field(
        "user",
        description="Where it came from: user, assistant (trusted), tool, web, import, agent.",
    )
    flags: list[str] = Field(
        default_factory=list,
        description="Instruction-like text found in it at write (instruction, roleplay, "
        "hidden_text), or candidate (an untrusted fact kept beside a current one).",
    )

    @classmethod
    def of(cls, record: MemoryRecord) -> MemoryView:
        return cls(
            id=record.id,
            user_id=record.user_id,
            kind=record.kind.value,
            content=record.content,
            speaker=record.speaker,
            occurred_at=record.occurred_at,
            created_at=record.created_at,
            agent_id=record.agent_id,
            session_id=record.session_id,
            metadata=record.metadata,
            importance=record.importance,
            superseded_by=record.superseded_by,
            pinned=record.pinned,
            expires_at=record.expires_at,
            session_only=record.session_only,
            source=record.source,
            flags=list(record.flags),
        )


class MemoryList(_View):
    """Memories, and for a listing the cursor of the next page."""

    memories: list[MemoryView]
    next_cursor: str | None = Field(
        None, description="Pass as `cursor` to get the next page; null on the last page."
    )


class HitView(MemoryView):
    """A search hit: the memory with its score and the score's breakdown."""

    score: float = Field(description="Final score in [0, 1], higher is better.")
    scores: dict[str, float] = Field(
        description="Breakdown: vector, keyword, relevance, importance, recency, access, "
        "final, ...; a signal that did not find the memory is absent."
    )
    explanation: dict[str, Any] | None = Field(
        None,
        description="With explain: why it ranks where it does (rank, relevance, "
        "retention, retention_factor, final, summary); else null.",
    )

    @classmethod
    def of_hit(cls, hit: Hit) -> HitView:
        return cls(
            **MemoryView.of(hit.memory).model_dump(),
            score=hit.score,
            scores=dict(hit.scores),
            explanation=hit.explanation,
        )


class SearchResults(_View):
    """Search hits, best first."""

    hits: list[HitView]


class Deleted(_View):
    """The memory that was deleted."""

    deleted: str = Field(description="Id of the deleted memory.")


class ContextView(_View):
    """A token-budgeted context, ready to read or paste into a prompt."""

    text: str = Field(description="The context: profile, facts, episodes, strategies.")
    tokens: int = Field(description="Tokens `text` costs (never more than budget_tokens).")
    budget_tokens: int
    format: Literal["markdown", "json"]
    dropped: dict[str, int] = Field(
        default_factory=dict, description="Items left out for lack of budget, per section."
    )

    @classmethod
    def of(cls, ctx: Context) -> ContextView:
        return cls(
            text=ctx.text,
            tokens=ctx.tokens,
            budget_tokens=ctx.budget_tokens,
            format=ctx.format,
            dropped=dict(ctx.dropped),
        )


class FactsView(_View):
    """What is known about a subject: its profile and the matching facts."""

    profile: dict[str, Any] = Field(
        description="What is currently known about the subject (default: the user), "
        "grouped into identity, relationships, preferences, plans and events."
    )
    facts: list[Fact]


class StrategiesView(_View):
    """Strategies for a task, or (without a task) the insights over all outcomes."""

    strategies: list[StrategyStats] | None = Field(
        None, description="With a task: strategies tried on similar tasks, best first."
    )
    insights: list[Insight] | None = Field(
        None, description="Without a task: reliable strategies and recurring failures."
    )


class HistoryView(_View):
    """The audit trail of one memory, oldest first."""

    events: list[HistoryEvent]
