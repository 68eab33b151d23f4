"""Pydantic AI adapters: memory tools for an agent, and a history processor that keeps
the messages under a token budget with recalled memories beside the latest prompt
(``pip install -e '.[pydantic-ai]'`` in the mnemolayer checkout; ``pydantic-ai-slim``
alone is enough).

* :func:`memory_toolset` is a ``FunctionToolset`` bound to one user: ``remember(text)``
  stores a memory (:meth:`Memory.add`), ``recall(query, k)`` runs hybrid recall
  (:meth:`Memory.search`) and answers with the memories as lines of text, best first,
  each with its id, kind, day and score, and ``forget(memory_id)`` deletes one of that
  user's memories (:meth:`Memory.delete`). A bad argument from the model comes back to
  it as a retry prompt (``ModelRetry``) that says what was wrong.
* :class:`MemoryHistoryProcessor` goes in ``Agent(history_processors=[...])``. Before
  each model request it adds a system prompt part with the memories recalled for the
  latest user prompt (replacing the one it added before, so a run with tool calls holds
  one), then drops the oldest whole turns until the messages fit ``budget_tokens``. A turn
  starts at a request holding a user prompt, so a tool call never loses its return; the
  system prompt of the first request is kept; the latest turn always stays.

Both take an open :class:`~mnemolayer.Memory`, which the caller closes. The processor
runs in Pydantic AI's worker thread (it is a plain function), the tools likewise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mnemolayer._extras import require
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.integrations._recall import check_k, hits_text
from mnemolayer.memory import Memory
from mnemolayer.models import SOURCES
from mnemolayer.registry import get_token_counter
from mnemolayer.text.tokens import MESSAGE_OVERHEAD_TOKENS, TokenCounter

require("pydantic_ai", extra="pydantic-ai", purpose="the Pydantic AI adapters")

from pydantic_ai import ModelRetry  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    SystemPromptPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

__all__ = ["RECALL_PREFIX", "MemoryHistoryProcessor", "memory_toolset"]

#: The recalled-memories part the processor adds starts with this (and is found by it).
RECALL_PREFIX = "Memories recalled for the user's latest message (may be relevant):\n"


def _user_id(user_id: object) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValidationError("user_id", "must be a non-blank string")
    return user_id


def memory_toolset(
    memory: Memory,
    *,
    user_id: str,
    k: int = 5,
    source: str = "agent",
    forget: bool = True,
    search_kwargs: dict[str, Any] | None = None,
) -> FunctionToolset[Any]:
    """Memory tools for one user, as a toolset for ``Agent(toolsets=[...])``.

    Args:
        memory: the open store.
        user_id: whose memories the tools read and write (the model cannot choose another).
        k: how many memories ``recall`` returns unless the model asks otherwise, 1-50.
        source: the provenance of what ``remember`` stores (:data:`mnemolayer.models.SOURCES`);
            ``"agent"`` (default) marks it untrusted: searched like any memory, but out of
            :meth:`Memory.context` unless asked for and never superseding a current fact.
            ``"user"`` when the model only writes down what the user said.
        forget: include the ``forget`` tool.
        search_kwargs: more :meth:`Memory.search` arguments for ``recall`` (``kinds``,
            ``filters``, ``as_of``, ``trusted_only``, ``threshold``, ...).

    Returns:
        The toolset: ``remember(text) -> str`` (the new memory's id, in a sentence),
        ``recall(query, k) -> str`` (one line per memory, best first:
        ``[<id>] <kind>, <YYYY-MM-DD>, score <0-1>: <content>``, or ``"No memories
        matched."``) and, with ``forget``, ``forget(memory_id) -> str``.

    Raises:
        ValidationError: a bad ``user_id``, ``k``, ``source`` or ``forget`` (naming the field).
    """
    uid = _user_id(user_id)
    default_k = check_k(k)
    if source not in SOURCES:
        raise ValidationError("source", f"must be one of {', '.join(SOURCES)}, got {source!r}")
    if not isinstance(forget, bool):
        raise ValidationError("forget", f"must be a bool, got {type(forget).__name__}")
    extra = dict(search_kwargs or {})
    toolset: FunctionToolset[Any] = FunctionToolset()

    @toolset.tool_plain
    def remember(text: str) -> str:
        """Store something worth remembering about the user for later conversations.

        Args:
            text: one self-contained statement, e.g. "Ana is allergic to peanuts".
        """
        try:
            records = memory.add(text, user_id=uid, source=source)
        except ValidationError as exc:
            raise ModelRetry(str(exc)) from exc
        return f"Remembered as memory {records[0].id}."

    @toolset.tool_plain
    def recall(query: str, k: int = default_k) -> str:
        """Search the user's long-term memory: past conversations, facts and preferences.

        Args:
            query: what to look for, in the user's words.
            k: how many memories to return, 1-50.
        """
        try:
            hits = memory.search(query, user_id=uid, limit=check_k(k), **extra)
        except ValidationError as exc:
            raise ModelRetry(str(exc)) from exc
        return hits_text(hits)

    if forget:

        @toolset.tool_plain(name="forget")
        def forget_memory(memory_id: str) -> str:
            """Delete one of the user's memories, by the id ``recall`` showed for it.

            Args:
                memory_id: the memory's id (the hex in square brackets).
            """
            try:
                memory.delete(memory_id, user_id=uid)
            except (NotFoundError, ValidationError) as exc:
                raise ModelRetry(str(exc)) from exc
            return f"Forgot memory {memory_id}."

    return toolset


def _part_text(part: Any) -> str:
    """The text of one message part, as the token budget counts it."""
    if isinstance(part, ToolCallPart):
        return f"{part.tool_name} {part.args_as_json_str()}"
    content = getattr(part, "content", None)
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False, default=str)


def _is_recall(part: Any) -> bool:
    return isinstance(part, SystemPromptPart) and part.content.startswith(RECALL_PREFIX)


def _latest_prompt(messages: Sequence[ModelMessage]) -> tuple[int, str] | None:
    """The index of the last request holding a user prompt, and that prompt's text."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if not isinstance(m, ModelRequest):
            continue
        for part in reversed(m.parts):
            if isinstance(part, UserPromptPart):
                content = part.content
                if isinstance(content, str):
                    return i, content
                texts = [c for c in content if isinstance(c, str)]
                return i, "\n".join(texts)
    return None


class MemoryHistoryProcessor:
    """A Pydantic AI history processor: recalled memories for the latest user prompt,
    and the messages trimmed to a token budget (see the module docstring).

    Args:
        memory: the open store.
        user_id: whose memories are recalled.
        budget_tokens: what the messages may cost, in tokens (each part its text plus
            the chat framing), recalled memories included; at least 64. The latest turn
            stays even when it alone costs more.
        recall_k: how many memories to recall for the latest prompt, 0-50 (0: none).
        threshold: recall only memories whose score is at least this, in [0, 1].
        counter: the tokenizer (anything :func:`mnemolayer.registry.get_token_counter`
            accepts; default ``"o200k_base"``).
        search_kwargs: more :meth:`Memory.search` arguments (``kinds``, ``filters``,
            ``trusted_only``, ...).

    Raises:
        ValidationError: a bad ``user_id``, ``budget_tokens``, ``recall_k`` or
            ``threshold`` (naming the field).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        user_id: str,
        budget_tokens: int = 4000,
        recall_k: int = 5,
        threshold: float = 0.0,
        counter: TokenCounter | str | None = None,
        search_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.memory = memory
        self.user_id = _user_id(user_id)
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
            raise ValidationError("budget_tokens", f"must be an int, got {budget_tokens!r}")
        if budget_tokens < 64:
            raise ValidationError("budget_tokens", f"must be at least 64, got {budget_tokens}")
        self.budget_tokens = budget_tokens
        off = recall_k == 0 and not isinstance(recall_k, bool)
        self.recall_k = 0 if off else check_k(recall_k, "recall_k")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValidationError("threshold", f"must be a number, got {threshold!r}")
        if not 0.0 <= threshold <= 1.0:
            raise ValidationError("threshold", f"must be in [0, 1], got {threshold}")
        self.threshold = float(threshold)
        self.counter = get_token_counter(counter)
        self.search_kwargs = dict(search_kwargs or {})

    def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The messages to send: recalled memories added, the oldest turns dropped to fit."""
        out = [self._without_recall(m) for m in messages]
        latest = _latest_prompt(out)
        if latest is not None and self.recall_k:
            index, prompt = latest
            part = self._recall_part(prompt)
            if part is not None:
                request = out[index]
                assert isinstance(request, ModelRequest)
                at = max(i for i, p in enumerate(request.parts) if isinstance(p, UserPromptPart))
                parts = [*request.parts[:at], part, *request.parts[at:]]
                out[index] = replace(request, parts=parts)
        return self._fit(out)

    def cost(self, message: ModelMessage) -> int:
        """What one message costs against the budget, in tokens."""
        return sum(
            self.counter.count(_part_text(p)) + MESSAGE_OVERHEAD_TOKENS for p in message.parts
        )

    # -- internals -----------------------------------------------------------------------

    def _without_recall(self, message: ModelMessage) -> ModelMessage:
        if isinstance(message, ModelRequest) and any(_is_recall(p) for p in message.parts):
            return replace(message, parts=[p for p in message.parts if not _is_recall(p)])
        return message

    def _recall_part(self, prompt: str) -> SystemPromptPart | None:
        if not prompt.strip():
            return None
        hits = self.memory.search(
            prompt,
            user_id=self.user_id,
            limit=self.recall_k,
            threshold=self.threshold or None,
            **self.search_kwargs,
        )
        return SystemPromptPart(content=RECALL_PREFIX + hits_text(hits)) if hits else None

    def _fit(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Drop the oldest whole turns until the messages fit; keep the first system prompt."""
        starts = [
            i
            for i, m in enumerate(messages)
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
        ]
        if not starts:
            return messages
        costs = [self.cost(m) for m in messages]
        first = messages[0]
        system: list[SystemPromptPart] = (
            [p for p in first.parts if isinstance(p, SystemPromptPart) and not _is_recall(p)]
            if isinstance(first, ModelRequest)
            else []
        )
        system_cost = sum(self.counter.count(p.content) + MESSAGE_OVERHEAD_TOKENS for p in system)
        cut = starts[-1]  # the latest turn stays, whatever it costs
        for start in starts:
            extra = 0 if start == 0 else system_cost  # the first system prompt, carried
            if sum(costs[start:]) + extra <= self.budget_tokens:
                cut = start
                break
        if cut == 0:
            return messages
        kept = messages[cut:]
        head = kept[0]
        assert isinstance(head, ModelRequest)
        has_system = any(isinstance(p, SystemPromptPart) and not _is_recall(p) for p in head.parts)
        if system and not has_system:
            parts: list[ModelRequestPart] = [*system, *head.parts]
            kept[0] = replace(head, parts=parts)
        return kept
