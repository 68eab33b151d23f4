"""OpenAI Agents SDK adapters: a ``Session`` kept in working memory, and a recall tool
over long-term memory (``pip install -e '.[openai-agents]'`` in the mnemolayer checkout).

* :class:`MnemolayerSession` implements the SDK's ``Session`` protocol
  (``get_items``/``add_items``/``pop_item``/``clear_session``) over one session's working
  memory (:meth:`Memory.working`): the token-budgeted window that resumes in a new
  process. Each item (a ``TResponseInputItem`` dict: a message, a function call, a
  function call's output, ...) is held as its JSON text, so ``get_items`` returns the
  very dict that was added. When the window overflows, the oldest items leave it: each
  is archived to episodic memory as its readable text (a message's words, ``called
  name(arguments)``, a tool's output), so recall finds it, and folded into the running
  summary, which ``get_items`` returns first as a ``system`` message.
* :func:`recall_tool` is a ``FunctionTool`` (``recall_memory(query, k)``) that runs
  :meth:`Memory.search` (hybrid recall) over one user's long-term memory and answers
  with the memories as lines of text, best first, each with its id, kind, day and score.

With the memory's ``privacy`` redaction on, personal data is redacted in each item's
JSON text before it is held, so ``get_items`` returns the redacted dict (a message whose
JSON the redaction broke comes back as a plain message of its role with the text).

Both take an open :class:`~mnemolayer.Memory`, which the caller closes. Each session call
runs the store's work in a worker thread, so the event loop does not wait on SQLite,
PostgreSQL or the embedder. The SDK exports traces to OpenAI unless told not to: offline,
call ``agents.set_tracing_disabled(True)`` (or set ``OPENAI_AGENTS_DISABLE_TRACING=1``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread

from mnemolayer._extras import require
from mnemolayer.errors import ValidationError
from mnemolayer.extract.summarize import ExtractiveSummarizer
from mnemolayer.integrations._recall import check_k, hits_text
from mnemolayer.layers.working.state import SUMMARY_PREFIX
from mnemolayer.layers.working.window import WorkingMemory, working
from mnemolayer.memory import Memory
from mnemolayer.models import Hit, MemoryRecord
from mnemolayer.text.tokens import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMER_TOKENS

require("agents", extra="openai-agents", purpose="the OpenAI Agents SDK adapters")

from agents import FunctionTool, function_tool  # noqa: E402
from agents.tool import default_tool_error_function  # noqa: E402

if TYPE_CHECKING:
    from agents import TResponseInputItem
    from agents.memory import SessionSettings

    from mnemolayer.privacy.redact import RedactionConfig
    from mnemolayer.protocols import SessionStore, Summarizer
    from mnemolayer.text.tokens import TokenCounter

__all__ = ["MnemolayerSession", "item_role", "item_text", "recall_tool"]

T = TypeVar("T")

#: Message roles of the Responses API → working-memory roles.
_MESSAGE_ROLES = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
}


def item_role(item: Mapping[str, Any]) -> str:
    """The working-memory role of one input item: a message's own role (``developer``
    → ``system``); ``tool`` for a tool's output (a ``type`` ending in ``_output``);
    ``assistant`` for what the model did (function calls, reasoning, other calls)."""
    kind = item.get("type") or "message"
    if kind == "message":
        return _MESSAGE_ROLES.get(str(item.get("role")), "user")
    if isinstance(kind, str) and kind.endswith("_output"):
        return "tool"
    return "assistant"


def _parts_text(content: Any) -> str:
    """The text of a message's ``content``: a string, or the text of its parts
    (``input_text``, ``output_text``, ``refusal``), one per line."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping):
            text = part.get("text", part.get("refusal"))
            if isinstance(text, str) and text.strip():
                texts.append(text)
    return "\n".join(texts)


def item_text(item: Mapping[str, Any]) -> str:
    """What an input item says, as the text episodic memory indexes and the summary
    folds: a message's words; ``called <name>(<arguments>)`` for a function call; the
    output of a function call's output; the summary of a reasoning item. An item with
    none of these (or only blank text) is its compact JSON, so nothing is ever blank."""
    kind = item.get("type") or "message"
    text = ""
    if kind == "message":
        text = _parts_text(item.get("content"))
    elif kind == "function_call":
        text = f"called {item.get('name')}({item.get('arguments', '')})"
    elif isinstance(kind, str) and kind.endswith("_output"):
        output = item.get("output")
        text = output if isinstance(output, str) else _parts_text(output)
    elif kind == "reasoning":
        text = _parts_text(item.get("summary"))
    return text if text.strip() else _dumps(item)


def _dumps(item: Mapping[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def _decode(content: str) -> dict[str, Any] | None:
    """The item a window message holds, or ``None`` for text that is no item's JSON."""
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _readable_line(line: str) -> str:
    """A summariser line ``"role: <item JSON>"`` as ``"role: <item text>"``."""
    role, sep, rest = line.partition(": ")
    item = _decode(rest) if sep else None
    return f"{role}: {item_text(item)}" if item is not None else line


class _ReadableItems:
    """A summariser that reads items as their text, around the memory's own."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.name = inner.name

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        return self.inner.summarize([_readable_line(x) for x in lines], max_tokens, counter)


class _ReadableExtractive(ExtractiveSummarizer):
    """The extractive summariser, reading items as their text (a subclass, so that the
    window folds with the extractive rules)."""

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        return super().summarize([_readable_line(x) for x in lines], max_tokens, counter)


class _ItemHost:
    """The memory as a window's host, with items archived and summarised as their text."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.sessions: SessionStore = memory.sessions
        self.privacy: RedactionConfig | None = memory.privacy
        inner = memory.summarizer
        self.summarizer: Summarizer = (
            _ReadableExtractive() if type(inner) is ExtractiveSummarizer else _ReadableItems(inner)
        )

    def now(self) -> datetime:
        return self.memory.now()

    def add(
        self,
        messages: Any,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[MemoryRecord]:
        readable = []
        for m in messages:
            item = _decode(m["content"])
            if item is None:
                readable.append(m)
                continue
            meta = {**m.get("metadata", {}), "agents_item_type": item.get("type", "message")}
            readable.append({**m, "content": item_text(item), "metadata": meta})
        return self.memory.add(readable, user_id=user_id, agent_id=agent_id, session_id=session_id)


class MnemolayerSession:
    """An OpenAI Agents SDK ``Session`` held in one session's working memory.

    Pass it to ``Runner.run(agent, input, session=...)``: the runner reads the history
    with :meth:`get_items` before each run and saves the run's new items with
    :meth:`add_items`.

    Args:
        memory: the open store.
        session_id: the conversation (the SDK's ``session_id``).
        user_id: whose conversation it is; evicted items go to this user's episodic memory.
        budget_tokens: the window's budget, in tokens (each item costs its JSON text);
            the oldest items leave it past that.
        agent_id: optional narrower scope.
        session_settings: the SDK's ``SessionSettings`` (its ``limit`` caps what the
            runner reads), or ``None``.
        store_user_messages: also store each user message's text in episodic memory as
            it is added (as ``examples/chat_agent.py`` does), so its facts are extracted
            and recall finds it at once, in this session and later ones; when it leaves
            the window it is not stored twice (:meth:`Memory.add` matches the record).
            ``False``: items reach long-term memory only when they leave the window.

    Attributes:
        window: the :class:`~mnemolayer.layers.working.window.WorkingMemory` itself.

    Raises:
        ValidationError: a bad id or budget (naming the field).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        session_id: str,
        user_id: str,
        budget_tokens: int = 4000,
        agent_id: str | None = None,
        session_settings: SessionSettings | None = None,
        store_user_messages: bool = True,
    ) -> None:
        if not isinstance(store_user_messages, bool):
            raise ValidationError(
                "store_user_messages", f"must be a bool, got {type(store_user_messages).__name__}"
            )
        self.memory = memory
        self.store_user_messages = store_user_messages
        self.window: WorkingMemory = working(
            _ItemHost(memory),
            session_id=session_id,
            user_id=user_id,
            budget_tokens=budget_tokens,
            agent_id=agent_id,
        )
        self.session_id = self.window.session_id
        self.user_id = self.window.user_id
        self.session_settings = session_settings
        self._lock = threading.Lock()  # one window, changed by one thread at a time

    async def _run(self, fn: Callable[[], T]) -> T:
        def locked() -> T:
            with self._lock:
                return fn()

        return await anyio.to_thread.run_sync(locked)

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history for the next model call, oldest first.

        Args:
            limit: at most this many items, the latest ones; ``None`` for all.

        Returns:
            The running summary of evicted items (when there is one) as a ``system``
            message ``{"role": "system", "content": "Summary of the earlier
            conversation:\\n..."}``, then each item still in the window, exactly as it was
            added. A function call's output whose call has left the window is left out
            too (the Responses API refuses an output without its call); it is archived.

        Raises:
            ValidationError: ``limit`` not a non-negative int.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ValidationError("limit", f"must be an int or None, got {type(limit).__name__}")
        if limit is not None and limit < 0:
            raise ValidationError("limit", f"must be >= 0, got {limit}")
        items = await self._run(self._items)
        if limit is None:
            return items
        return items[len(items) - limit :] if limit else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` to the window, in order; the oldest leave it past the budget.

        Raises:
            ValidationError: ``items`` not a list of JSON-serialisable dicts, or an item
                alone costing more than the window holds (field ``"items"``, with the
                item's index); nothing is added then.
        """
        if not isinstance(items, list):
            raise ValidationError("items", f"must be a list of dicts, got {type(items).__name__}")
        texts = [self._encode(n, i) for n, i in enumerate(items)]  # every item checked first
        encoded = [(item_role(i), t) for i, t in zip(items, texts, strict=True)]
        room = self.window.budget_tokens - REPLY_PRIMER_TOKENS
        counter = self.window.counter
        for n, (role, text) in enumerate(encoded):
            cost = counter.count(role) + counter.count(text) + MESSAGE_OVERHEAD_TOKENS
            if cost > room:
                raise ValidationError(
                    "items",
                    f"item {n} costs {cost} tokens, more than the {room} a "
                    f"{self.window.budget_tokens}-token window holds; raise budget_tokens",
                )

        said = [
            {"role": "user", "content": item_text(i), "metadata": {"agents_item_type": "message"}}
            for i, (role, _) in zip(items, encoded, strict=True)
            if role == "user" and (i.get("type") or "message") == "message"
        ]

        def add() -> None:
            for role, text in encoded:
                self.window.add(role, text)
            if said and self.store_user_messages:
                w = self.window
                self.memory.add(
                    said, user_id=w.user_id, agent_id=w.agent_id, session_id=w.session_id
                )

        await self._run(add)

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the newest item out of the window and return it (``None`` when empty).
        It is not archived: the SDK pops what it means to take back."""

        def pop() -> TResponseInputItem | None:
            message = self.window.pop()
            return None if message is None else self._item(message.role, message.content)

        return await self._run(pop)

    async def clear_session(self) -> None:
        """Archive every item still in the window to episodic memory and empty it (the
        summary too): the session starts afresh, and recall still finds what was said."""
        await self._run(self.window.clear)

    # -- internals -----------------------------------------------------------------------

    @staticmethod
    def _encode(n: int, item: Any) -> str:
        if not isinstance(item, Mapping):
            raise ValidationError("items", f"item {n} must be a dict, got {type(item).__name__}")
        try:
            return _dumps(item)
        except (TypeError, ValueError) as exc:
            raise ValidationError("items", f"item {n} is not JSON-serialisable: {exc}") from exc

    @staticmethod
    def _item(role: str, content: str) -> TResponseInputItem:
        """The item a window message holds; text that is no item's JSON (a message
        redacted past parsing) comes back as a plain message of its role."""
        item = _decode(content)
        if item is None:
            item = {"role": role if role != "tool" else "user", "content": content}
        return item  # type: ignore[return-value]

    def _items(self) -> list[TResponseInputItem]:
        held = [self._item(m.role, m.content) for m in self.window.window()]
        calls = {i.get("call_id") for i in held if i.get("type") == "function_call"}
        held = [
            i
            for i in held
            if not (i.get("type") == "function_call_output" and i.get("call_id") not in calls)
        ]
        summary = self.window.summary
        if summary:
            lead: TResponseInputItem = {"role": "system", "content": SUMMARY_PREFIX + summary}
            return [lead, *held]
        return held


def recall_tool(
    memory: Memory,
    *,
    user_id: str,
    k: int = 5,
    name: str = "recall_memory",
    session: MnemolayerSession | None = None,
    search_kwargs: dict[str, Any] | None = None,
) -> FunctionTool:
    """A function tool that searches one user's long-term memory.

    The model calls it as ``recall_memory(query, k)``: ``query`` is what to look for, and
    ``k`` (default the ``k`` given here) how many memories, 1-50.

    Args:
        memory: the open store.
        user_id: whose memories are searched (the model cannot choose another user).
        k: how many memories a call returns unless it asks otherwise, 1-50.
        name: the tool's name, as the model sees it.
        session: the agent's session, if any: memories whose text is that of an item
            still in its window (the question just asked, stored at once) are left out,
            since the model sees them already.
        search_kwargs: more :meth:`Memory.search` arguments (``kinds``, ``filters``,
            ``as_of``, ``trusted_only``, ``threshold``, ...).

    Returns:
        The tool, for ``Agent(tools=[...])``. It answers with one line per memory, best
        first: ``[<id>] <kind>, <YYYY-MM-DD>, score <0-1>: <content>``, or
        ``"No memories matched."``; a bad ``k`` or blank ``query`` from the model comes
        back to it as the tool's error message.

    Raises:
        ValidationError: a bad ``user_id``, ``k`` or ``name`` (naming the field).
    """
    default_k = check_k(k)
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValidationError("user_id", "must be a non-blank string")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValidationError("name", f"must be an identifier, got {name!r}")
    if session is not None and not isinstance(session, MnemolayerSession):
        raise ValidationError(
            "session", f"must be a MnemolayerSession, got {type(session).__name__}"
        )
    extra = dict(search_kwargs or {})

    def search(query: str, count: int) -> list[Hit]:
        if session is None:
            return memory.search(query, user_id=user_id, limit=count, **extra)
        with session._lock:
            seen = {item_text(i) for i in session._items()}
        hits = memory.search(query, user_id=user_id, limit=count + len(seen), **extra)
        return [h for h in hits if h.memory.content not in seen][:count]

    async def recall_memory(query: str, k: int = default_k) -> str:
        """Search the user's long-term memory: past conversations, facts and preferences.

        Args:
            query: what to look for, in the user's words.
            k: how many memories to return, 1-50.
        """
        count = check_k(k)
        return hits_text(await anyio.to_thread.run_sync(search, query, count))

    return function_tool(recall_memory, name_override=name, failure_error_function=_tool_error)


def _tool_error(ctx: Any, error: Exception) -> str:
    """What the model reads when the recall tool fails: a ``ValidationError`` of its own
    arguments says what was wrong (so it can call again); anything else is the SDK's
    fixed message, without the exception's details."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        return f"Error: {cause}. Call the tool again with corrected arguments."
    return default_tool_error_function(ctx, error)
