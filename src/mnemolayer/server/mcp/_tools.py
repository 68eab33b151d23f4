"""The MCP tools: one async method per tool over one shared :class:`~mnemolayer.AsyncMemory`.

A method's docstring is the tool's description, written for the assistant that reads
it. Its input schema is built from the operations table (:mod:`mnemolayer.server.ops`):
:func:`_tool` gives the method a signature made of the operation's params fields (the
same names, types, defaults and descriptions as the REST bodies, with this surface's
own bounds where it has them), ``user_id`` and the tool's own arguments; the SDK reads
that signature. The method passes the fields on with :meth:`~mnemolayer.server.ops.Op.kwargs`,
so a field added to the table reaches both the schema and the ``Memory`` call.

Every call runs the synchronous ``Memory`` method in a worker thread (``AsyncMemory``),
so a slow embedding or SQLite write never stalls the event loop that serves other
requests; ``Memory`` is thread-safe. A mnemolayer error becomes a :class:`ToolError`,
which the SDK returns as an ``isError`` result carrying the message (it names the bad
field), so the server keeps serving.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mnemolayer.aio import AsyncMemory
from mnemolayer.errors import MnemolayerError, ValidationError
from mnemolayer.lifecycle.explanation import Explanation
from mnemolayer.memory import Memory
from mnemolayer.privacy.forget import ForgetReceipt
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
from mnemolayer.server.ops import OPS, Kind, Op, parameter, parameters

__all__ = ["Kind", "MemoryTools", "UserScope"]

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

UserId = Annotated[
    str | None,
    Field(
        description="The user whose memories to use. Omit it to use the server's "
        "configured user; a server started with --user accepts only that user."
    ),
]
_MEMORY_ID = ("memory_id", str, Field(description="A memory's id, as returned by another tool."))


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


def _tool(
    op: Op,
    *also: Op,
    extra: Sequence[tuple[str, Any, Any]] = (),
    change: dict[str, Any] | None = None,
) -> Callable[[F], F]:
    """Give a tool method the signature the SDK turns into its input schema: the tool's
    ``extra`` arguments and ``op``'s params fields (``change`` replacing some), the
    required ones first, then ``user_id``, then the optional ones.

    ``extra`` is ``(name, annotation, Field(...))`` triples; ``change`` maps a field to a
    ``Field(...)`` or ``(annotation, Field(...))`` (see
    :func:`mnemolayer.server.ops.parameters`). ``also``: other operations the tool calls;
    each of their fields must be among the tool's arguments (checked at import).
    """
    params = [parameter(n, a, i) for n, a, i in extra] + parameters(op, change=change)
    names = {p.name for p in params}
    for other in also:
        missing = set(other.params.model_fields) - names
        if missing:
            raise TypeError(f"tool for {op.name} lacks {other.name}'s fields {sorted(missing)}")
    user = inspect.Parameter(
        "user_id", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=UserId
    )
    ordered = [p for p in params if p.default is p.empty]
    ordered += [user, *(p for p in params if p.default is not p.empty)]

    def apply(fn: F) -> F:
        this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        returns = typing.get_type_hints(fn)["return"]
        fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [this, *ordered], return_annotation=returns
        )
        return fn

    return apply


class MemoryTools:
    """The tools, bound to one store and one :class:`UserScope`."""

    def __init__(self, mem: Memory | AsyncMemory, scope: UserScope) -> None:
        self.mem = mem if isinstance(mem, AsyncMemory) else AsyncMemory.wrap(mem)
        self.scope = scope

    def _user(self, user_id: str | None) -> str:
        try:
            return self.scope.resolve(user_id)
        except ValidationError as exc:
            raise ToolError(str(exc)) from exc

    @staticmethod
    async def _run(call: Awaitable[R]) -> R:
        """The awaited call; mnemolayer errors become tool errors."""
        try:
            return await call
        except MnemolayerError as exc:
            raise ToolError(str(exc)) from exc

    @_tool(
        OPS["add"],
        extra=[
            ("content", str, Field(description="The text to remember, verbatim.")),
            (
                "role",
                Literal["user", "assistant", "system"],
                Field(
                    "user", description="Who said it. Facts are extracted from user messages only."
                ),
            ),
        ],
        # Unbounded here: the library's own message ("must be in [0, 1]") names the field.
        change={
            "importance": Field(
                None, description="How much it matters, 0 to 1; default estimated from the text."
            )
        },
    )
    async def add_memory(
        self, content: str, user_id: str | None = None, role: str = "user", **options: Any
    ) -> MemoryList:
        """Remember something about the user: a fact, preference, plan, event or decision
        they shared, in their words. Facts stated in user messages (where they live, who
        their sister is, what they like) are also extracted into the user's knowledge
        graph (see get_facts). Adding the same text again in the same scope returns the
        existing memory instead of a duplicate. pinned=true keeps it for good; expires_at
        makes it expire; session_only (with session_id) makes it last only until the
        session ends. Returns the stored memory with its id."""
        records = await self._run(
            self.mem.add(
                {"role": role, "content": content},
                user_id=self._user(user_id),
                **OPS["add"].kwargs(options),
            )
        )
        return MemoryList(memories=[MemoryView.of(r) for r in records])

    @_tool(
        OPS["search"],
        change={
            "limit": Field(10, ge=1, le=100, description="At most this many hits."),
            "threshold": Field(None, ge=0, le=1, description="Keep hits scoring at least this."),
        },
    )
    async def search_memory(self, user_id: str | None = None, **options: Any) -> SearchResults:
        """Recall the user's memories most relevant to a query, best first, each with its
        score (0 to 1) and the score's breakdown (vector similarity, keyword match,
        relevance, recency, ...). Use it before answering anything that may depend on
        what the user said earlier. Only current memories unless include_history; with
        explain, each hit also says why it ranks where it does."""
        hits = await self._run(
            self.mem.search(user_id=self._user(user_id), **OPS["search"].kwargs(options))
        )
        return SearchResults(hits=[HitView.of_hit(h) for h in hits])

    @_tool(OPS["context"])
    async def get_context(self, user_id: str | None = None, **options: Any) -> ContextView:
        """Everything worth knowing about the user for a query, packed under a token
        budget: their profile, relevant facts, recalled conversations and strategies that
        worked, most useful first, each dated. One call instead of several searches when
        preparing an answer; pass the latest turns as recent to include them too."""
        ctx = await self._run(
            self.mem.context(user_id=self._user(user_id), **OPS["context"].kwargs(options))
        )
        return ContextView.of(ctx)

    @_tool(OPS["list"], change={"limit": Field(20, ge=1, le=100, description="Page size.")})
    async def list_memories(self, user_id: str | None = None, **options: Any) -> MemoryList:
        """List the user's memories, oldest first, one page at a time. To read on, call
        again with cursor set to the returned next_cursor (null on the last page)."""
        page = await self._run(
            self.mem.list(user_id=self._user(user_id), **OPS["list"].kwargs(options))
        )
        return MemoryList(
            memories=[MemoryView.of(r) for r in page.items], next_cursor=page.next_cursor
        )

    @_tool(OPS["delete"], extra=[_MEMORY_ID])
    async def delete_memory(self, memory_id: str, user_id: str | None = None) -> Deleted:
        """Delete one of the user's memories for good (when they ask to forget something,
        or it is wrong). The facts only it stated are retracted; an audit event stays
        (see get_history). Fails when the user has no memory with that id."""
        await self._run(self.mem.delete(memory_id, user_id=self._user(user_id)))
        return Deleted(deleted=memory_id)

    @_tool(OPS["forget"], extra=[_MEMORY_ID])
    async def forget_memory(self, memory_id: str, user_id: str | None = None) -> ForgetReceipt:
        """Erase one of the user's memories and every trace of its text (when they ask to
        forget a secret such as a passport number): unlike delete_memory, no audit event
        keeps the old text. Returns a receipt whose verified is true when nothing of it is
        left. Fails when the user has no memory with that id."""
        return await self._run(self.mem.forget(memory_id, user_id=self._user(user_id)))

    @_tool(OPS["facts"], OPS["profile"])
    async def get_facts(self, user_id: str | None = None, **options: Any) -> FactsView:
        """The user's knowledge graph: subject-predicate-object facts learned from what
        they said (each with when it became true and, once replaced, when it stopped), and
        the profile of the subject (default the user): name, relationships, preferences,
        plans and events."""
        uid = self._user(user_id)
        facts = await self._run(self.mem.facts(user_id=uid, **OPS["facts"].kwargs(options)))
        subject = options.get("subject")
        who = {} if subject is None else {"subject": subject}
        profile = await self._run(self.mem.profile(user_id=uid, **who))
        return FactsView(profile=profile, facts=facts)

    @_tool(OPS["record_outcome"])
    async def record_outcome(self, user_id: str | None = None, **options: Any) -> MemoryView:
        """Record that a strategy succeeded or failed at a task, so that next time the
        strategies that worked come first (see get_strategies). Call it after finishing
        a task for the user, whether it went well or not."""
        record = await self._run(
            self.mem.record_outcome(
                user_id=self._user(user_id), **OPS["record_outcome"].kwargs(options)
            )
        )
        return MemoryView.of(record)

    @_tool(
        OPS["strategies"],
        OPS["reflect"],
        change={
            "task": (
                str | None,
                Field(
                    None, description="The task at hand; omit it for insights over all outcomes."
                ),
            ),
            "limit": Field(10, ge=1, le=100, description="At most this many."),
        },
    )
    async def get_strategies(self, user_id: str | None = None, **options: Any) -> StrategiesView:
        """What worked before. With a task: the strategies recorded on similar tasks with
        their successes, failures and success rate, best first. Without: the insights,
        strategies that keep working and ones that keep failing."""
        uid = self._user(user_id)
        if options.get("task") is None:
            insights = await self._run(
                self.mem.reflect(user_id=uid, **OPS["reflect"].kwargs(options))
            )
            return StrategiesView(insights=insights)
        found = await self._run(
            self.mem.strategies(user_id=uid, **OPS["strategies"].kwargs(options))
        )
        return StrategiesView(strategies=found)

    @_tool(OPS["history"], extra=[_MEMORY_ID])
    async def get_history(self, memory_id: str, user_id: str | None = None) -> HistoryView:
        """The audit trail of one of the user's memories, oldest first: when it was added,
        updated, replaced by a newer fact, retracted or deleted, with the content before
        and after. Works for deleted memories too."""
        events = await self._run(self.mem.history(memory_id, user_id=self._user(user_id)))
        return HistoryView(events=events)

    @_tool(OPS["explain"], extra=[_MEMORY_ID])
    async def explain_memory(
        self, memory_id: str, user_id: str | None = None, **options: Any
    ) -> Explanation:
        """Why one of the user's memories is recalled the way it is, or why it is not:
        its retention (how much of it is still remembered; it fades with age unless
        pinned, important or recalled often), its importance and why, when it expires,
        and whether it is pinned, archived, superseded by a newer fact, merged into a
        duplicate or consolidated. With a query, also its rank for that query or why
        search leaves it out. `summary` says it all in one line per point. Use it when
        the user asks why you remember, or forgot, something."""
        return await self._run(
            self.mem.explain(
                memory_id, user_id=self._user(user_id), **OPS["explain"].kwargs(options)
            )
        )

    @_tool(
        OPS["pin"],
        OPS["unpin"],
        extra=[
            _MEMORY_ID,
            (
                "pinned",
                bool,
                Field(True, description="true (default) pins the memory; false unpins it."),
            ),
        ],
    )
    async def pin_memory(
        self, memory_id: str, pinned: bool = True, user_id: str | None = None
    ) -> MemoryView:
        """Pin one of the user's memories so that it is kept for good: a pinned memory
        never fades, never expires and is never forgotten or archived by maintenance
        (pinning an archived memory brings it back). Use it when the user asks you to
        always remember something. With pinned=false, unpin it: it fades again like any
        other memory. Pinning a pinned memory changes nothing. Returns the memory."""
        call = self.mem.pin if pinned else self.mem.unpin
        record = await self._run(call(memory_id, user_id=self._user(user_id)))
        return MemoryView.of(record)

    #: Every tool, and whether it only reads.
    TOOLS: tuple[tuple[str, bool], ...] = (
        ("add_memory", False),
        ("search_memory", True),
        ("get_context", True),
        ("list_memories", True),
        ("delete_memory", False),
        ("forget_memory", False),
        ("get_facts", True),
        ("record_outcome", False),
        ("get_strategies", True),
        ("get_history", True),
        ("explain_memory", True),
        ("pin_memory", False),
    )

    #: Tools that, called again with the same arguments, change nothing more.
    IDEMPOTENT = frozenset({"delete_memory", "pin_memory"})
