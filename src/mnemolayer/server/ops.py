"""The operations the surfaces expose, each defined once.

An :class:`Op` is one :class:`~mnemolayer.Memory` method as the REST server, the MCP
server and the command line offer it: its name (the method's), a pydantic params model,
a description (the method's docstring summary unless given), and where each surface
offers it (``rest``: ``"METHOD /path"``, ``mcp``: the tool, ``cli``: the command).

A params model holds the method's parameters as a request may carry them: the field
names are ``Memory``'s parameter names (``renamed`` maps the few that surfaces call
otherwise, e.g. ``encoding`` → ``counter``), the types are what JSON can say (strict
numbers and booleans; times as ISO 8601 strings, never Unix seconds), the constraints
are the library's, and the descriptions follow ``Memory``'s docstrings. What a surface
says elsewhere is not in the model: ``user_id`` (a REST path, an MCP argument with a
server default, ``--user``), the id a call acts on (``memory_id``, ``session_id`` of
``end_session``, ``name`` of ``neighbors``: a path or positional value) and the
messages of ``add`` (REST ``content``/``messages``, MCP ``content``, CLI ``TEXT``).

Built from these models: the REST request bodies
(:mod:`mnemolayer.server.rest.schemas` subclasses them) and the MCP tools' input schemas
(:func:`parameters`); REST query parameters take their descriptions from them
(:meth:`Op.doc`). :meth:`Op.kwargs` turns a validated request back into ``Memory``
keyword arguments, so a field added here reaches the call without another list of
names. ``tests/test_surfaces.py`` checks every ``Memory`` parameter against every surface.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from mnemolayer._validate import MAX_ID_CHARS, MAX_MESSAGES
from mnemolayer.memory import Memory
from mnemolayer.models import Source

__all__ = [
    "OPS",
    "Id",
    "Kind",
    "Mode",
    "Op",
    "Params",
    "RecentTurn",
    "Section",
    "Timestamp",
    "parameter",
    "parameters",
]

_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _time_text(value: Any) -> Any:
    # pydantic would read a number, or a string of digits (a query parameter), as Unix
    # seconds; the schema promises an ISO 8601 date-time.
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or _NUMBER.fullmatch(value.strip()):
        raise ValueError("must be an ISO 8601 date-time string, not a number")
    return value


#: A request time: an ISO 8601 string (naive → UTC), never Unix seconds.
Timestamp = Annotated[datetime, BeforeValidator(_time_text)]
#: A scope id (user, agent, session, outcome): 1 to 256 characters.
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
#: The values of :class:`mnemolayer.models.MemoryKind` (a test keeps them in step).
Kind = Literal["episodic", "semantic", "preference", "procedural", "summary"]
Mode = Literal["hybrid", "vector", "keyword"]
#: The sections of :data:`mnemolayer.context.assemble.SECTIONS`.
Section = Literal["profile", "facts", "episodes", "strategies", "recent"]

_FILTERS = (
    'Metadata filter: {"source": "chat"} (equals), {"age": {"gte": 30}}, '
    '{"tags": {"contains": "food"}}, {"or": [{...}, {...}]}, {"not": {...}}. '
    "Operators: eq ne gt gte lt lte in nin contains."
)
_AGENT = "Narrow to one agent's memories."
_SESSION = "Narrow to one conversation session."
_KINDS = "Only these kinds of memory; default all."


class Params(BaseModel):
    """The parameters of one operation; unknown fields are refused (a typo is an error
    naming it, not a silently ignored option)."""

    model_config = ConfigDict(extra="forbid")


class NoParams(Params):
    """An operation with no parameters beyond its scope and target."""


# -- memories -----------------------------------------------------------------------------


class AddParams(Params):
    """``Memory.add`` beyond the messages."""

    agent_id: Id | None = Field(None, description="The agent the memories belong to.")
    session_id: Id | None = Field(
        None, description="The conversation session they belong to (required by session_only)."
    )
    timestamp: Timestamp | None = Field(
        None,
        description="When it happened (ISO 8601; naive → UTC); a message's own timestamp "
        "wins; default now.",
    )
    metadata: dict[str, Any] | None = Field(
        None, description="Extra JSON data kept with each memory."
    )
    importance: StrictFloat | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="How much it matters, in [0, 1]; default estimated from the text.",
    )
    kind: Kind = Field("episodic", description="The memory layer; default episodic.")
    session_only: StrictBool = Field(
        False,
        description="Temporary memories of session_id (required then): recalled like any "
        "other, deleted when the session ends.",
    )
    pinned: StrictBool = Field(
        False, description="Pin the new memories: they never decay, expire or get forgotten."
    )
    expires_at: Timestamp | None = Field(
        None,
        description="When the new memories expire (ISO 8601; naive → UTC; after the "
        "message's time): out of recall at once, deleted by the next maintenance. Default: "
        "the kind's TTL, else never; pinned memories never expire.",
    )
    source: Source | None = Field(
        None,
        description="Where the messages came from: user or assistant (trusted), tool, web, "
        "import or agent (untrusted: kept out of context unless asked for, never "
        "superseding a current fact). Default: each message's role (tool messages are tool).",
    )


class SearchParams(Params):
    """``Memory.search``."""

    query: str = Field(description="What to recall, in natural language.")
    agent_id: Id | None = Field(None, description=_AGENT)
    session_id: Id | None = Field(None, description=_SESSION)
    limit: StrictInt = Field(10, ge=0, le=1000, description="At most this many hits.")
    filters: dict[str, Any] | None = Field(None, description=_FILTERS)
    threshold: StrictFloat | None = Field(
        None, description="Keep hits scoring at least this (scores are in [0, 1])."
    )
    kinds: list[Kind] | None = Field(None, description=_KINDS)
    mode: Mode = Field(
        "hybrid", description="hybrid (meaning and words, default), vector or keyword."
    )
    include_history: StrictBool = Field(
        False, description="Also memories that are no longer true, ranked below current ones."
    )
    as_of: Timestamp | None = Field(
        None,
        description="Ask about the past (ISO 8601; naive → UTC): what was true then ranks "
        "first, and 'last week' counts back from it; default now.",
    )
    explain: StrictBool = Field(
        False,
        description="Attach to each hit why it ranks where it does (`explanation`: "
        "relevance, retention and how they make the final score, with a one-line summary).",
    )
    trusted_only: StrictBool = Field(
        False,
        description="Only memories of trusted sources (the user, the assistant); each hit's "
        "memory says its `source` and `flags` either way.",
    )


class ListParams(Params):
    """``Memory.list``."""

    agent_id: Id | None = Field(None, description=_AGENT)
    session_id: Id | None = Field(None, description=_SESSION)
    kinds: list[Kind] | None = Field(None, description=_KINDS)
    filters: dict[str, Any] | None = Field(None, description=_FILTERS)
    limit: StrictInt = Field(100, ge=0, le=1000, description="Page size.")
    cursor: str | None = Field(None, description="The next_cursor of the previous page.")


class UpdateParams(Params):
    """``Memory.update``: what to change."""

    content: str | None = Field(None, description="New text (re-indexed, its facts mined again).")
    metadata: dict[str, Any] | None = Field(None, description="New metadata, replacing it whole.")
    importance: StrictFloat | None = Field(None, ge=0.0, le=1.0, description="In [0, 1].")


class DeleteAllParams(Params):
    """``Memory.delete_all``: with neither, everything of the user goes."""

    agent_id: Id | None = Field(None, description="Only this agent's memories.")
    session_id: Id | None = Field(None, description="Only this session's memories.")


class ImportRowsParams(Params):
    """``Memory.import_rows``."""

    rows: list[dict[str, Any]] = Field(
        max_length=1_000_000, description="Rows from an export, every one of this user."
    )


class ImportMarkdownParams(Params):
    """``Memory.import_markdown``."""

    text: str = Field(description="The edited MEMORY.md.")


class BatchParams(Params):
    """``Memory.reindex`` and ``Memory.extract_facts``."""

    batch_size: StrictInt = Field(64, ge=1, description="Memories handled per transaction.")


# -- semantic memory ----------------------------------------------------------------------


class FactsParams(Params):
    """``Memory.facts``."""

    subject: str | None = Field(
        None,
        max_length=2000,
        description='A person or thing by name or alias; "user" is the user; default all.',
    )
    predicate: str | None = Field(
        None,
        max_length=200,
        description="Only this relation: name, age, lives_in, job, works_at, spouse, "
        "sister, friend, has_pet, likes, dislikes, prefers, allergic_to, diet, hobby, "
        "visited, plans, goal, ...",
    )
    as_of: Timestamp | None = Field(
        None, description="What was true at this time (ISO 8601; naive → UTC); default now."
    )
    include_history: StrictBool = Field(False, description="Also facts that stopped being true.")
    trusted_only: StrictBool = Field(
        False, description="Leave out facts that only untrusted sources (tool, web...) stated."
    )


class NeighborsParams(Params):
    """``Memory.neighbors`` beyond the entity's name."""

    depth: StrictInt = Field(1, ge=1, le=5, description="How many hops to follow (1-5).")
    include_history: StrictBool = Field(
        False, description="Also follow facts that are no longer true."
    )


class ProfileParams(Params):
    """``Memory.profile``."""

    subject: str = Field(
        "user",
        min_length=1,
        max_length=2000,
        description='A person by name or alias; default "user", the user.',
    )


class FeedbackParams(Params):
    """``Memory.learn_from_feedback``."""

    action: str = Field(description="What the agent did that the user reacted to.")
    feedback: str = Field(description="A polarity (positive, -1, 👍...) or the user's words.")
    session_id: Id | None = Field(None, description="The session it happened in.")
    timestamp: Timestamp | None = Field(None, description="When (ISO 8601); default now.")


# -- context and procedural memory ----------------------------------------------------------


class RecentTurn(Params):
    """One recent conversation turn."""

    role: str
    content: str
    time: Timestamp | None = None


def _turns(recent: Sequence[RecentTurn] | None) -> list[tuple[str, str, datetime | None]] | None:
    return [(t.role, t.content, t.time) for t in recent] if recent is not None else None


class ContextParams(Params):
    """``Memory.context``."""

    query: str = Field(description="The user's message or the task at hand.")
    session_id: Id | None = Field(
        None,
        description="The conversation; with no `recent`, its saved working-memory window "
        "is the recent section.",
    )
    budget_tokens: StrictInt = Field(
        1500, ge=1, le=1_000_000, description="Most tokens the context may cost."
    )
    format: Literal["markdown", "json"] = Field("markdown", description="Form of the text.")
    sections: list[Section] | None = Field(
        None, description="Which sections to include; default all."
    )
    recent: list[RecentTurn] | None = Field(
        None,
        max_length=MAX_MESSAGES,
        description="The latest conversation turns, oldest first; the newest are kept when "
        "they do not all fit.",
    )
    encoding: str | None = Field(
        None, max_length=200, description="Token encoding (default o200k_base)."
    )
    include_untrusted: StrictBool = Field(
        False,
        description="Also memories of untrusted sources (tool, web, import, agent), "
        "left out by default.",
    )


class OutcomeParams(Params):
    """``Memory.record_outcome``."""

    task: str = Field(description="What was attempted.")
    strategy: str = Field(description="How it was attempted.")
    success: StrictBool = Field(description="Whether it worked.")
    detail: str | None = Field(None, description="A note: the error, what went right.")
    agent_id: Id | None = Field(None, description="The agent that made the attempt.")
    session_id: Id | None = Field(None, description="The session it happened in.")
    timestamp: Timestamp | None = Field(None, description="When (ISO 8601); default now.")
    outcome_id: Id | None = Field(
        None, description="Idempotency key: recording the same id again is a no-op."
    )
    metadata: dict[str, Any] | None = Field(
        None,
        description="Extra JSON data (not the keys task, strategy, success, detail, outcome_id).",
    )


class AgentParams(Params):
    """``Memory.outcomes`` and ``Memory.reflect``."""

    agent_id: Id | None = Field(None, description="Only this agent's outcomes.")


class StrategiesParams(Params):
    """``Memory.strategies``."""

    task: str = Field(min_length=1, max_length=2000, description="The task at hand.")
    agent_id: Id | None = Field(None, description="Only this agent's outcomes.")
    limit: StrictInt = Field(10, ge=0, le=1000, description="At most this many strategies.")


# -- lifecycle, sessions ----------------------------------------------------------------------


class ExplainParams(Params):
    """``Memory.explain``."""

    query: str | None = Field(
        None,
        min_length=1,
        max_length=2000,
        description="Also rank the memory for this query and say where it lands, or why "
        "search leaves it out.",
    )


class MaintainParams(Params):
    """``Memory.maintain``."""

    now: Timestamp | None = Field(
        None, description="Judge expiry and retention at this time (naive → UTC); default now."
    )
    dry_run: StrictBool = Field(False, description="Count what would change; write nothing.")


class EndSessionParams(Params):
    """``Memory.end_session`` beyond the session."""

    agent_id: Id | None = Field(
        None, description="End only this agent's part of the session; default every agent."
    )
    summary_tokens: StrictInt = Field(
        300, ge=16, le=100_000, description="The session summary's budget, in tokens."
    )
    encoding: str | None = Field(
        None,
        max_length=200,
        description="The token encoding that measures summary_tokens; default the window's.",
    )


class SessionWindowParams(Params):
    """``Memory.session_window`` beyond the session."""

    agent_id: Id | None = Field(None, description="The agent's window of the session.")


# -- the table ----------------------------------------------------------------------------


_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]+\.)?([\w]+)`")


def _plain(rst: str) -> str:
    """Docstring text as one line of plain Markdown: ``x`` → `x`, :meth:`a.b` → `b`."""
    text = _ROLE.sub(r"`\1`", " ".join(rst.split()))
    return text.replace("``", "`")


@dataclass(frozen=True)
class Op:
    """One operation: a ``Memory`` method as the surfaces offer it.

    Attributes:
        name: the :class:`~mnemolayer.Memory` method it calls.
        params: its parameters as a request carries them (see the module docstring).
        description: what it does; default the method's docstring summary.
        rest: the REST route, ``"METHOD /path"``; ``None``: not on REST.
        mcp: the MCP tool that offers it; ``None``: not on MCP.
        cli: the command (``"session end"``); ``None``: not on the command line.
        renamed: a params field → the ``Memory`` parameter it is (``encoding`` →
            ``counter``).
        convert: a params field → how its value becomes the ``Memory`` argument.
    """

    name: str
    params: type[Params] = NoParams
    description: str = ""
    rest: str | None = None
    mcp: str | None = None
    cli: str | None = None
    renamed: Mapping[str, str] = field(default_factory=dict)
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.description:
            doc = inspect.getdoc(getattr(Memory, self.name)) or ""
            object.__setattr__(self, "description", _plain(doc.split("\n\n")[0]))

    @property
    def method(self) -> str:
        """The ``Memory`` method's name."""
        return self.name

    def doc(self, name: str) -> str:
        """The description of the params field ``name``."""
        return self.params.model_fields[name].description or ""

    def kwargs(self, values: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
        """The ``Memory`` keyword arguments for the params fields in ``values`` (a
        validated body or an MCP tool's arguments; other fields are left out)."""
        out: dict[str, Any] = {}
        for name in self.params.model_fields:
            if isinstance(values, BaseModel):
                value = getattr(values, name)
            elif name in values:
                value = values[name]
            else:
                continue
            convert = self.convert.get(name)
            out[self.renamed.get(name, name)] = convert(value) if convert else value
        return out


_U = "/v1/users/{user_id}"

_TABLE = (
    Op("add", AddParams, rest=f"POST {_U}/memories", mcp="add_memory", cli="add"),
    Op("search", SearchParams, rest=f"POST {_U}/search", mcp="search_memory", cli="search"),
    Op("get", rest=f"GET {_U}/memories/{{memory_id}}", cli="get"),
    Op("list", ListParams, rest=f"GET {_U}/memories", mcp="list_memories", cli="list"),
    Op("update", UpdateParams, rest=f"PATCH {_U}/memories/{{memory_id}}", cli="update"),
    Op("delete", rest=f"DELETE {_U}/memories/{{memory_id}}", mcp="delete_memory", cli="delete"),
    Op("delete_all", DeleteAllParams, rest=f"DELETE {_U}/memories", cli="forget"),
    Op("forget", rest=f"POST {_U}/memories/{{memory_id}}/forget", mcp="forget_memory",
       cli="erase"),
    Op("history", rest=f"GET {_U}/memories/{{memory_id}}/history", mcp="get_history",
       cli="history"),
    Op("stats", rest=f"GET {_U}/stats", cli="stats"),
    Op("export", rest=f"GET {_U}/export", cli="export"),
    Op("import_rows", ImportRowsParams, rest=f"POST {_U}/import", cli="import"),
    Op("export_markdown", cli="export"),
    Op("import_markdown", ImportMarkdownParams, cli="import"),
    Op("reindex", BatchParams, cli="reindex"),
    Op("extract_facts", BatchParams, cli="extract"),
    Op("facts", FactsParams, rest=f"GET {_U}/facts", mcp="get_facts", cli="facts"),
    Op("entities", rest=f"GET {_U}/entities"),
    Op("neighbors", NeighborsParams, rest=f"GET {_U}/entities/{{name}}/neighbors",
       cli="graph"),
    Op("profile", ProfileParams, rest=f"GET {_U}/profile", mcp="get_facts", cli="profile"),
    Op("learn_from_feedback", FeedbackParams, rest=f"POST {_U}/feedback"),
    Op("context", ContextParams, rest=f"POST {_U}/context", mcp="get_context",
       cli="context", renamed={"encoding": "counter"}, convert={"recent": _turns}),
    Op("record_outcome", OutcomeParams, rest=f"POST {_U}/outcomes", mcp="record_outcome"),
    Op("outcomes", AgentParams, rest=f"GET {_U}/outcomes"),
    Op("strategies", StrategiesParams, rest=f"GET {_U}/strategies", mcp="get_strategies",
       cli="strategies"),
    Op("reflect", AgentParams, rest=f"GET {_U}/insights", mcp="get_strategies",
       cli="strategies"),
    Op("end_session", EndSessionParams, rest=f"POST {_U}/sessions/{{session_id}}/end",
       cli="session end", renamed={"encoding": "counter"}),
    Op("list_sessions", rest=f"GET {_U}/sessions", cli="session list"),
    Op("session_window", SessionWindowParams, cli="session show"),
    Op("pin", rest=f"PUT {_U}/memories/{{memory_id}}/pin", mcp="pin_memory", cli="pin"),
    Op("unpin", rest=f"DELETE {_U}/memories/{{memory_id}}/pin", mcp="pin_memory",
       cli="unpin"),
    Op("archive", rest=f"POST {_U}/memories/{{memory_id}}/archive", cli="archive"),
    Op("restore", rest=f"POST {_U}/memories/{{memory_id}}/restore", cli="restore"),
    Op("explain", ExplainParams, rest=f"GET {_U}/memories/{{memory_id}}/explain",
       mcp="explain_memory", cli="explain"),
    Op("maintain", MaintainParams, rest=f"POST {_U}/maintain", cli="maintain"),
)  # fmt: skip

#: Every operation, by ``Memory`` method name.
OPS: dict[str, Op] = {op.name: op for op in _TABLE}


def parameters(op: Op, *, change: Mapping[str, Any] | None = None) -> list[inspect.Parameter]:
    """``op``'s params fields as keyword parameters of a function signature, each
    annotated ``Annotated[type, *constraints, Field(description=...)]`` with its default
    (what a signature-reading framework such as the MCP SDK turns into a schema).

    Args:
        change: a field → a :func:`~pydantic.Field` that replaces its default,
            constraints and description, or ``(annotation, Field(...))`` that replaces its
            type too (a surface's own bounds, e.g. a smaller page size).
    """
    changes = dict(change or {})
    out = []
    for name, info in op.params.model_fields.items():
        annotation: Any = info.annotation
        replaced = changes.pop(name, None)
        if isinstance(replaced, tuple):
            annotation, info = replaced
        elif replaced is not None:
            info = replaced
        out.append(parameter(name, annotation, info))
    if changes:
        raise ValueError(f"{op.name} has no fields {sorted(changes)}")
    return out


def parameter(name: str, annotation: Any, info: Any) -> inspect.Parameter:
    """One keyword parameter from a field's type and :class:`FieldInfo` (what
    :func:`~pydantic.Field` returns)."""
    if not isinstance(info, FieldInfo):
        raise TypeError(f"{name}: expected Field(...), got {info!r}")
    default = inspect.Parameter.empty if info.default is PydanticUndefined else info.default
    meta = [*info.metadata, Field(description=info.description)]
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[(annotation, *meta)],
    )
