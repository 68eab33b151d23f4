"""LlamaIndex adapters: a memory block that recalls long-term memory, and a chat store
kept in working memory (``pip install -e '.[llamaindex]'`` in the mnemolayer checkout,
which brings ``llama-index-core``).

* :class:`MnemolayerMemoryBlock` is a ``BaseMemoryBlock`` for LlamaIndex's ``Memory``
  (``Memory.from_defaults(memory_blocks=[...])``). Each ``get`` renders
  :meth:`Memory.context` (profile, facts, recalled episodes, strategies; token-budgeted)
  for the latest user message into the ``<memory>`` part of the prompt; the messages
  that LlamaIndex flushes out of its short-term queue are stored in episodic memory with
  their roles, their speaker (``additional_kwargs["name"]``) and LlamaIndex's session id,
  so later sessions recall them.
* :class:`MnemolayerChatStore` is a ``BaseChatStore`` for ``ChatMemoryBuffer`` (chat
  engines, agents): each key is the ``session_id`` of one working-memory window
  (:meth:`Memory.working`) of one user. The window keeps the latest turns under a token
  budget and summarises what overflows: ``get_messages`` returns pinned turns, the
  running summary as a system message, then the latest turns, not every message ever
  added; evicted turns are in episodic memory.

Working memory holds text only: a message of the chat store with an image, audio or
tool-call block, or with no text, is refused by name; ``additional_kwargs`` (a
``tool_call_id``) is not kept. Both classes take an open :class:`~mnemolayer.Memory`,
which the caller closes; their async methods run the sync ones in a worker thread
(:class:`Memory` is thread-safe).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

from mnemolayer import _validate as v
from mnemolayer._extras import require
from mnemolayer.context.items import SECTIONS
from mnemolayer.errors import ValidationError
from mnemolayer.layers.working.state import check_budget
from mnemolayer.memory import Memory
from mnemolayer.registry import get_token_counter

require("llama_index.core", extra="llamaindex", purpose="the LlamaIndex adapters")

from llama_index.core.base.llms.types import (  # noqa: E402
    CachePoint,
    ChatMessage,
    MessageRole,
    TextBlock,
)
from llama_index.core.bridge.pydantic import ConfigDict, Field  # noqa: E402
from llama_index.core.memory.memory import BaseMemoryBlock  # noqa: E402
from llama_index.core.storage.chat_store.base import BaseChatStore  # noqa: E402

__all__ = ["MnemolayerChatStore", "MnemolayerMemoryBlock"]

#: LlamaIndex message roles → mnemolayer roles (``developer`` is OpenAI's new name for
#: the system message; ``chatbot`` and ``model`` are Cohere's and Gemini's assistant).
_ROLES = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.TOOL: "tool",
    MessageRole.FUNCTION: "tool",
    MessageRole.CHATBOT: "assistant",
    MessageRole.MODEL: "assistant",
}
#: The sections the block renders by default: LlamaIndex's own queue is the recent turns.
DEFAULT_SECTIONS = ("profile", "facts", "episodes", "strategies")
MAX_CONTEXT_TOKENS = 1_000_000


def _text(message: ChatMessage) -> str:
    """The text blocks of ``message``, joined as LlamaIndex's ``content`` joins them."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))


def _role(message: Any, field: str) -> str:
    if not isinstance(message, ChatMessage):
        raise ValidationError(field, f"must be a ChatMessage, got {type(message).__name__}")
    return _ROLES[MessageRole(message.role)]


def _turn(message: Any, field: str) -> tuple[str, str]:
    """``(role, text)`` of a message for the window, or a ``ValidationError``."""
    role = _role(message, field)
    for block in message.blocks:
        if not isinstance(block, TextBlock | CachePoint):
            raise ValidationError(
                field, f"holds a {block.block_type!r} block; working memory keeps text only"
            )
    return role, v.content(_text(message), f"{field}.content")


def _key(key: Any) -> str:
    return str(v.scope_id(key, "key", required=True))


def _context_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not 1 <= value <= MAX_CONTEXT_TOKENS:
        raise ValidationError(
            "budget_tokens", f"must be between 1 and {MAX_CONTEXT_TOKENS}, got {value}"
        )
    return value


def _sections(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValidationError("sections", f"must be a non-empty list of {', '.join(SECTIONS)}")
    for i, name in enumerate(value):
        if name not in SECTIONS:
            raise ValidationError(f"sections[{i}]", f"must be one of {', '.join(SECTIONS)}")
    return tuple(value)


def _memory(value: Any) -> Memory:
    if not isinstance(value, Memory):
        raise ValidationError("memory", f"must be a mnemolayer Memory, got {type(value).__name__}")
    return value


class MnemolayerMemoryBlock(BaseMemoryBlock[str]):
    """Long-term recall of one user as a block of LlamaIndex's ``Memory``.

    Args:
        memory: the open store.
        user_id: whose memories are recalled and stored.
        agent_id: optional narrower scope of what is stored.
        name: the block's name, its tag in the ``<memory>`` template.
        budget_tokens: the most tokens the rendered context may cost (mnemolayer's
            ``o200k_base`` counter), 1-1,000,000.
        sections: which :meth:`Memory.context` sections to render, default
            :data:`DEFAULT_SECTIONS` (``"recent"`` is left to LlamaIndex's queue).
        include_untrusted: also recall memories of tools, web pages and imports.
        priority: LlamaIndex's truncation order; 0 (default) never truncates, 1 or more
            lets ``Memory`` cut the context (:meth:`atruncate`) when over its limit.

    Raises:
        ValidationError: a bad field (``memory``, ``user_id``, ``agent_id``,
            ``budget_tokens``, ``sections`` / ``sections[i]``).
    """

    memory: Memory = Field(exclude=True)
    user_id: str
    agent_id: str | None = None
    budget_tokens: int = 1000
    sections: tuple[str, ...] = DEFAULT_SECTIONS
    include_untrusted: bool = False

    def __init__(
        self,
        memory: Memory,
        *,
        user_id: str,
        agent_id: str | None = None,
        name: str = "mnemolayer",
        budget_tokens: int = 1000,
        sections: Sequence[str] = DEFAULT_SECTIONS,
        include_untrusted: bool = False,
        priority: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            memory=_memory(memory),
            user_id=v.scope_id(user_id, "user_id", required=True),
            agent_id=v.scope_id(agent_id, "agent_id"),
            name=name,
            budget_tokens=_context_budget(budget_tokens),
            sections=_sections(sections),
            include_untrusted=bool(include_untrusted),
            priority=priority,
            **kwargs,
        )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The rendered context for the latest user message (``""`` without one, or when
        nothing is recalled); ``block_kwargs["session_id"]`` is recorded on the context."""
        query = next(
            (t for m in reversed(messages or []) if m.role == "user" and (t := _text(m).strip())),
            None,
        )
        if query is None:
            return ""
        ctx = await asyncio.to_thread(
            self.memory.context,
            query,
            user_id=self.user_id,
            session_id=block_kwargs.get("session_id"),
            budget_tokens=self.budget_tokens,
            sections=list(self.sections),
            include_untrusted=self.include_untrusted,
        )
        return ctx.text

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the messages flushed from the short-term queue in episodic memory, one
        record per message with text (a bare tool call has nothing to recall)."""
        rows = []
        for i, m in enumerate(messages):
            role, text = _role(m, f"messages[{i}]"), _text(m)
            if not text.strip():
                continue
            row: dict[str, Any] = {"role": role, "content": text}
            if isinstance(name := m.additional_kwargs.get("name"), str) and name.strip():
                row["name"] = name
            rows.append((m.additional_kwargs.get("session_id"), row))
        for session_id, group in itertools.groupby(rows, key=lambda r: r[0]):
            await asyncio.to_thread(
                self.memory.add,
                [row for _, row in group],
                user_id=self.user_id,
                agent_id=self.agent_id,
                session_id=session_id,
            )

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """``content`` cut by about ``tokens_to_truncate`` tokens (mnemolayer's counter,
        close to LlamaIndex's), keeping the most important first sections; ``None`` when
        nothing would be left."""
        counter = get_token_counter(None)
        keep = counter.count(content) - max(int(tokens_to_truncate), 0)
        if keep <= 0:
            return None
        return counter.truncate(content, keep).rstrip() or None


class MnemolayerChatStore(BaseChatStore):
    """LlamaIndex chat histories of one user, each key a working-memory session.

    Args:
        memory: the open store.
        user_id: whose conversations these are.
        agent_id: optional narrower scope of the windows.
        budget_tokens: each window's budget in tokens; older turns are summarised
            past it.

    Raises:
        ValidationError: a bad field (``memory``, ``user_id``, ``agent_id``,
            ``budget_tokens``); in the methods, a bad ``key``, ``idx`` or message
            (``message``, ``messages[i]``: not a ``ChatMessage``, no text, a block other
            than text).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory = Field(exclude=True)
    user_id: str
    agent_id: str | None = None
    budget_tokens: int = 4000

    def __init__(
        self,
        memory: Memory,
        *,
        user_id: str,
        agent_id: str | None = None,
        budget_tokens: int = 4000,
    ) -> None:
        super().__init__(
            memory=_memory(memory),
            user_id=v.scope_id(user_id, "user_id", required=True),
            agent_id=v.scope_id(agent_id, "agent_id"),
            budget_tokens=check_budget(budget_tokens),
        )

    @classmethod
    def class_name(cls) -> str:
        return "MnemolayerChatStore"

    def _window(self, key: str) -> Any:
        return self.memory.working(
            session_id=key,
            user_id=self.user_id,
            agent_id=self.agent_id,
            budget_tokens=self.budget_tokens,
        )

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        """Make ``messages`` the window of ``key``: the turns it held are replaced, not
        archived (turns evicted earlier stay in episodic memory); a summary message read
        back by :meth:`get_messages` comes back as a plain system turn."""
        key = _key(key)
        if not isinstance(messages, Sequence):
            raise ValidationError("messages", f"must be a list, got {type(messages).__name__}")
        turns = [_turn(m, f"messages[{i}]") for i, m in enumerate(messages)]
        self.memory.sessions.delete(self.user_id, key, self.agent_id)
        window = self._window(key)
        for role, text in turns:
            window.add(role, text)

    def get_messages(self, key: str) -> list[ChatMessage]:
        """What the next model call should see for ``key`` (see the module docstring);
        ``[]`` for an unknown key."""
        window = self.memory.session_window(_key(key), self.user_id, agent_id=self.agent_id)
        if window is None:
            return []
        return [ChatMessage(role=m["role"], content=m["content"]) for m in window.messages()]

    def add_message(self, key: str, message: ChatMessage) -> None:
        """Append ``message`` to the window of ``key`` (made when new), compacting older
        turns into the summary and episodic memory when it overflows."""
        key = _key(key)
        role, text = _turn(message, "message")
        self._window(key).add(role, text)

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        """Archive the window of ``key`` to episodic memory and forget it; what it showed
        (as :meth:`get_messages`), or ``None`` for an unknown key."""
        window = self.memory.session_window(_key(key), self.user_id, agent_id=self.agent_id)
        if window is None:
            return None
        shown = [ChatMessage(role=m["role"], content=m["content"]) for m in window.messages()]
        window.clear()
        return shown

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        """Remove the message at ``idx`` of :meth:`get_messages` (negative counts from the
        end) from the window, without archiving it; the summary message drops the
        summary. A copy already in episodic memory (a turn cut to fit) stays.

        Returns:
            The removed message, or ``None`` for an unknown key or an index out of range.

        Raises:
            ValidationError: ``idx`` not an int.
        """
        key = _key(key)
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise ValidationError("idx", f"must be an int, got {type(idx).__name__}")
        store = self.memory.sessions
        state = store.load(self.user_id, key, self.agent_id)
        if state is None:
            return None
        # The order of WorkingMemory.messages(): leading pins, the summary, the rest.
        lead = next((i for i, m in enumerate(state.messages) if not m.pinned), len(state.messages))
        shown: list[int | None] = list(range(lead))
        shown += [None] if state.summary else []
        shown += list(range(lead, len(state.messages)))
        if not -len(shown) <= idx < len(shown):
            return None
        at = shown[idx]
        if at is None:
            removed = self.get_messages(key)[lead]
            state.summary = ""
        else:
            held = state.messages[at]
            removed = ChatMessage(role=held.role, content=held.content)
            state.messages = state.messages[:at] + state.messages[at + 1 :]
        store.save(state)
        return removed

    def delete_last_message(self, key: str) -> ChatMessage | None:
        """Remove the newest message of ``key`` (see :meth:`delete_message`)."""
        return self.delete_message(key, -1)

    def get_keys(self) -> list[str]:
        """The session ids with a saved window for this user (and agent), most recently
        saved first."""
        return [
            s.session_id
            for s in self.memory.list_sessions(self.user_id)
            if s.agent_id == self.agent_id
        ]
