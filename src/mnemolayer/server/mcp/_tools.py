"""The MCP tools: one async method per tool over one shared :class:`~mnemolayer.Memory`.

A method's docstring is the tool's description and its annotated parameters are the
tool's input schema, so both are written for the assistant that reads them. Every call
runs the synchronous ``Memory`` method in a worker thread (``anyio.to_thread``), so a
slow embedding or SQLite write never stalls the event loop that serves other requests;
``Memory`` is thread-safe. A mnemolayer error becomes a :class:`ToolError`, which the SDK
returns as an ``isError`` result carrying the message (it names the bad field), so the
server keeps serving.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mnemolayer.context.assemble import SectionName
from mnemolayer.errors import MnemolayerError, ValidationError
from mnemolayer.lifecycle.explanation import Explanation
from mnemolayer.memory import Memory
from mnemolayer.server.mcp._views import (
    ContextView,
    Deleted,
    FactsView,
    HistoryView,
    HitView,
    MemoryList,
    MemoryView,
    SearchResults,
    StrategiesView,
)

__all__ = ["MemoryTools", "UserScope"]

R = TypeVar("R")

#: The values of :class:`mnemolayer.models.MemoryKind` (a test keeps them in step).
Kind = Literal["episodic", "semantic", "preference", "procedural", "summary"]

UserId = Annotated[
    str | None,
    Field(
        description="The user whose memories to use. Omit it to use the server's "
        "configured user; a server started with --user accepts only that user."
    ),
]
AgentId = Annotated[str | None, Field(description="Narrow to one agent's memories.")]
SessionId = Annotated[str | None, Field(description="Narrow to one conversation session.")]
MemoryId = Annotated[str, Field(description="A memory's id, as returned by another tool.")]
Kinds = Annotated[list[Kind] | None, Field(description="Only these kinds of memory; default all.")]
Filters = Annotated[
    dict[str, Any] | None,
    Field(
        description='Metadata filter: {"source": "chat"} (equals), {"age": {"gte": 30}}, '
        '{"tags": {"contains": "food"}}, {"or": [{...}, {...}]}, {"not": {...}}. '
        "Operators: eq ne gt gte lt lte in nin contains."
    ),
]


@dataclass(frozen=True)
class UserScope:
    """Whose memories the tools may touch.

    Attributes:
        user: the server's user, used when a call names none (``None``: every call must
            name one).
        pinned: the server acts for ``user`` only: a call naming another user fails.
    """

    user: str | None = None
    pinned: bool = False

    def __post_init__(self) -> None:
        if self.pinned and self.user is None:
            raise ValidationError("user", "a pinned server needs a user")

    def resolve(self, user_id: str | None) -> str:
        """The user a call acts for.

        Raises:
            ValidationError: (``user_id``) the server is pinned to another user, or no
                user was given and the server has none.
        """
        if self.pinned and user_id is not None and user_id != self.user:
            raise ValidationError(
                "user_id",
                f"this server is pinned to user {self.user!r} and cannot act for {user_id!r}",
            )
        chosen = user_id if user_id is not None else self.user
        if chosen is None:
            raise ValidationError(
                "user_id",
                "required: this server has no default user (start it with --user or "
                "MNEMOLAYER_USER)",
            )
        return chosen


async def _call(fn: Callable[..., R], /, **kwargs: Any) -> R:
    """``fn(**kwargs)`` in a worker thread; mnemolayer errors become tool errors."""
    try:
        return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs))
    except MnemolayerError as exc:
        raise ToolError(str(exc)) from exc


class MemoryTools:
    """The tools, bound to one store and one :class:`UserScope`."""

    def __init__(self, mem: Memory, scope: UserScope) -> None:
        self.mem = mem
        self.scope = scope

    def _user(self, user_id: str | None) -> str:
        try:
            return self.scope.resolve(user_id)
        except ValidationError as exc:
            raise ToolError(str(exc)) from exc

    async def add_memory(
        self,
        content: Annotated[str, Field(description="The text to remember, verbatim.")],
        user_id: UserId = None,
        role: Annotated[
            Literal["user", "assistant", "system"],
            Field(description="Who said it. Facts are extracted from user messages only."),
        ] = "user",
        agent_id: AgentId = None,
        session_id: SessionId = None,
        timestamp: Annotated[
            str | None,
            Field(
                description="When it happened, ISO 8601 (e.g. 2024-05-08T14:00:00Z); default now."
            ),
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="Extra JSON data to keep with it.")
        ] = None,
        importance: Annotated[
            float | None, Field(description="How much it matters, 0 to 1 (default 0.5).")
        ] = None,
    ) -> MemoryList:
        """Remember something about the user: a fact, preference, plan, event or decision
        they shared, in their words. Facts stated in user messages (where they live, who
        their sister is, what they like) are also extracted into the user's knowledge
        graph (see get_facts). Adding the same text again in the same scope returns the
        existing memory instead of a duplicate. Returns the stored memory with its id."""
        records = await _call(
            self.mem.add,
            messages={"role": role, "content": content},
            user_id=self._user(user_id),
            agent_id=agent_id,
            session_id=session_id,
            timestamp=timestamp,
            metadata=metadata,
            importance=importance,
        )
        return MemoryList(memories=[MemoryView.of(r) for r in records])

    async def search_memory(
        self,
        query: Annotated[str, Field(description="What to recall, in natural language.")],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many hits.")] = 10,
        mode: Annotated[
            Literal["hybrid", "vector", "keyword"],
            Field(description="hybrid (meaning and words, default), vector or keyword."),
        ] = "hybrid",
        threshold: Annotated[
            float | None, Field(ge=0, le=1, description="Keep hits scoring at least this.")
        ] = None,
        kinds: Kinds = None,
        filters: Filters = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        include_history: Annotated[
            bool, Field(description="Also return memories that are no longer true.")
        ] = False,
        explain: Annotated[
            bool,
            Field(
                description="Attach to each hit why it ranks where it does: relevance, "
                "retention and how they make the final score, with a one-line summary."
            ),
        ] = False,
    ) -> SearchResults:
        """Recall the user's memories most relevant to a query, best first, each with its
        score (0 to 1) and the score's breakdown (vector similarity, keyword match,
        relevance, recency, ...). Use it before answering anything that may depend on
        what the user said earlier. Only current memories unless include_history; with
        explain, each hit also says why it ranks where it does."""
        hits = await _call(
            self.mem.search,
            query=query,
            user_id=self._user(user_id),
            agent_id=agent_id,
            session_id=session_id,
            limit=limit,
            filters=filters,
            threshold=threshold,
            kinds=kinds,
            mode=mode,
            include_history=include_history,
            explain=explain,
        )
        return SearchResults(hits=[HitView.of_hit(h) for h in hits])

    async def get_context(
        self,
        query: Annotated[str, Field(description="The user's message or the task at hand.")],
        user_id: UserId = None,
        budget_tokens: Annotated[
            int, Field(ge=1, le=1_000_000, description="Most tokens the context may cost.")
        ] = 1500,
        session_id: SessionId = None,
        format: Annotated[
            Literal["markdown", "json"], Field(description="Form of the text.")
        ] = "markdown",
        sections: Annotated[
            list[SectionName] | None,
            Field(description="Which sections to include, default all."),
        ] = None,
    ) -> ContextView:
        """Everything worth knowing about the user for a query, packed under a token
        budget: their profile, relevant facts, recalled conversations and strategies that
        worked, most useful first, each dated. One call instead of several searches when
        preparing an answer."""
        ctx = await _call(
            self.mem.context,
            query=query,
            user_id=self._user(user_id),
            session_id=session_id,
            budget_tokens=budget_tokens,
            format=format,
            sections=sections,
        )
        return ContextView.of(ctx)

    async def list_memories(
        self,
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Page size.")] = 20,
        cursor: Annotated[
            str | None, Field(description="next_cursor of the previous page.")
        ] = None,
        kinds: Kinds = None,
        filters: Filters = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryList:
        """List the user's memories, oldest first, one page at a time. To read on, call
        again with cursor set to the returned next_cursor (null on the last page)."""
        page = await _call(
            self.mem.list,
            user_id=self._user(user_id),
            agent_id=agent_id,
            session_id=session_id,
            kinds=kinds,
            filters=filters,
            limit=limit,
            cursor=cursor,
        )
        return MemoryList(
            memories=[MemoryView.of(r) for r in page.items], next_cursor=page.next_cursor
        )

    async def delete_memory(self, memory_id: MemoryId, user_id: UserId = None) -> Deleted:
        """Delete one of the user's memories for good (when they ask to forget something,
        or it is wrong). The facts only it stated are retracted; an audit event stays
        (see get_history). Fails when the user has no memory with that id."""
        await _call(self.mem.delete, memory_id=memory_id, user_id=self._user(user_id))
        return Deleted(deleted=memory_id)

    async def get_facts(
        self,
        user_id: UserId = None,
        subject: Annotated[
            str | None,
            Field(description='A person or thing by name; "user" is the user; default all.'),
        ] = None,
        predicate: Annotated[
            str | None,
            Field(
                description="Only this relation: name, age, lives_in, job, works_at, "
                "spouse, sister, friend, has_pet, likes, dislikes, prefers, allergic_to, "
                "diet, hobby, visited, plans, goal, ..."
            ),
        ] = None,
        as_of: Annotated[
            str | None,
            Field(description="What was true at this time (ISO 8601); default now."),
        ] = None,
        include_history: Annotated[
            bool, Field(description="Also facts that stopped being true.")
        ] = False,
    ) -> FactsView:
        """The user's knowledge graph: subject-predicate-object facts learned from what
        they said (each with when it became true and, once replaced, when it stopped), and
        the profile of the subject (default the user): name, relationships, preferences,
        plans and events."""
        uid = self._user(user_id)
        facts = await _call(
            self.mem.facts,
            user_id=uid,
            subject=subject,
            predicate=predicate,
            as_of=as_of,
            include_history=include_history,
        )
        who = {} if subject is None else {"subject": subject}
        profile = await _call(self.mem.profile, user_id=uid, **who)
        return FactsView(profile=profile, facts=facts)

    async def record_outcome(
        self,
        task: Annotated[str, Field(description="What was attempted.")],
        strategy: Annotated[str, Field(description="How it was attempted.")],
        success: Annotated[bool, Field(description="Whether it worked.")],
        detail: Annotated[
            str | None, Field(description="A note: the error, what went right.")
        ] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        outcome_id: Annotated[
            str | None,
            Field(description="Idempotency key: recording the same id again is a no-op."),
        ] = None,
    ) -> MemoryView:
        """Record that a strategy succeeded or failed at a task, so that next time the
        strategies that worked come first (see get_strategies). Call it after finishing
        a task for the user, whether it went well or not."""
        record = await _call(
            self.mem.record_outcome,
            user_id=self._user(user_id),
            task=task,
            strategy=strategy,
            success=success,
            detail=detail,
            agent_id=agent_id,
            session_id=session_id,
            outcome_id=outcome_id,
        )
        return MemoryView.of(record)

    async def get_strategies(
        self,
        task: Annotated[
            str | None,
            Field(description="The task at hand; omit it for insights over all outcomes."),
        ] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 10,
    ) -> StrategiesView:
        """What worked before. With a task: the strategies recorded on similar tasks with
        their successes, failures and success rate, best first. Without: the insights,
        strategies that keep working and ones that keep failing."""
        uid = self._user(user_id)
        if task is None:
            insights = await _call(self.mem.reflect, user_id=uid, agent_id=agent_id)
            return StrategiesView(insights=insights)
        found = await _call(
            self.mem.strategies, task=task, user_id=uid, agent_id=agent_id, limit=limit
        )
        return StrategiesView(strategies=found)

    async def get_history(self, memory_id: MemoryId, user_id: UserId = None) -> HistoryView:
        """The audit trail of one of the user's memories, oldest first: when it was added,
        updated, replaced by a newer fact, retracted or deleted, with the content before
        and after. Works for deleted memories too."""
        events = await _call(self.mem.history, memory_id=memory_id, user_id=self._user(user_id))
        return HistoryView(events=events)

    async def explain_memory(
        self,
        memory_id: MemoryId,
        user_id: UserId = None,
        query: Annotated[
            str | None,
            Field(
                description="Also say where the memory ranks for this query, or why "
                "search leaves it out."
            ),
        ] = None,
    ) -> Explanation:
        """Why one of the user's memories is recalled the way it is, or why it is not:
        its retention (how much of it is still remembered; it fades with age unless
        pinned, important or recalled often), its importance and why, when it expires,
        and whether it is pinned, archived, superseded by a newer fact, merged into a
        duplicate or consolidated. With a query, also its rank for that query or why
        search leaves it out. `summary` says it all in one line per point. Use it when
        the user asks why you remember, or forgot, something."""
        return await _call(
            self.mem.explain, memory_id=memory_id, user_id=self._user(user_id), query=query
        )

    async def pin_memory(
        self,
        memory_id: MemoryId,
        pinned: Annotated[
            bool,
            Field(description="true (default) pins the memory; false unpins it."),
        ] = True,
        user_id: UserId = None,
    ) -> MemoryView:
        """Pin one of the user's memories so that it is kept for good: a pinned memory
        never fades, never expires and is never forgotten or archived by maintenance
        (pinning an archived memory brings it back). Use it when the user asks you to
        always remember something. With pinned=false, unpin it: it fades again like any
        other memory. Pinning a pinned memory changes nothing. Returns the memory."""
        call = self.mem.pin if pinned else self.mem.unpin
        record = await _call(call, memory_id=memory_id, user_id=self._user(user_id))
        return MemoryView.of(record)

    #: Every tool, and whether it only reads.
    TOOLS: tuple[tuple[str, bool], ...] = (
        ("add_memory", False),
        ("search_memory", True),
        ("get_context", True),
        ("list_memories", True),
        ("delete_memory", False),
        ("get_facts", True),
        ("record_outcome", False),
        ("get_strategies", True),
        ("get_history", True),
        ("explain_memory", True),
        ("pin_memory", False),
    )

    #: Tools that, called again with the same arguments, change nothing more.
    IDEMPOTENT = frozenset({"delete_memory", "pin_memory"})
