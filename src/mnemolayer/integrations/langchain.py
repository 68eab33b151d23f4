"""LangChain adapters: a chat-message history kept in working memory, and a retriever
over long-term memory (``pip install -e '.[langchain]'`` in the mnemolayer checkout; the
``langgraph`` extra brings ``langchain-core`` too).

* :class:`MnemolayerChatMessageHistory` is a ``BaseChatMessageHistory`` for
  ``RunnableWithMessageHistory`` and friends: each message goes into one session's
  working memory (:meth:`Memory.working`), the token-budgeted window that summarises
  what overflows and resumes in a new process; :attr:`messages` is what the next model
  call should see (pinned turns, the running summary as a system message, the latest
  turns). Turns that leave the window are archived to episodic memory, so they stay
  searchable; ``clear()`` archives the rest and empties the window.
* :class:`MnemolayerRetriever` is a ``BaseRetriever``: ``invoke(query)`` runs
  :meth:`Memory.search` (hybrid recall) for one user and returns ``Document`` objects,
  best first, with the memory's id, kind, score, time and provenance in ``metadata``.

Both take an open :class:`~mnemolayer.Memory`, which the caller closes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mnemolayer._extras import require
from mnemolayer.errors import ValidationError
from mnemolayer.memory import Memory

require("langchain_core", extra="langchain", purpose="the LangChain adapters")

from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.chat_history import BaseChatMessageHistory  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from pydantic import ConfigDict, Field  # noqa: E402

__all__ = ["MnemolayerChatMessageHistory", "MnemolayerRetriever"]

#: LangChain message types → working-memory roles.
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class MnemolayerChatMessageHistory(BaseChatMessageHistory):
    """One session's chat history, held in mnemolayer's working memory.

    Args:
        memory: the open store.
        session_id: the conversation (LangChain's ``session_id``).
        user_id: whose conversation it is.
        budget_tokens: the window's budget; older turns are summarised past it.

    Raises:
        ValidationError: a bad id or budget (naming the field); adding a message of a
            type with no role here (``function``, a custom ``ChatMessage`` role).
    """

    def __init__(
        self, memory: Memory, *, session_id: str, user_id: str, budget_tokens: int = 4000
    ) -> None:
        self.memory = memory
        self.window = memory.working(
            session_id=session_id, user_id=user_id, budget_tokens=budget_tokens
        )

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """What the next model call should see (see the module docstring), as LangChain
        messages; a summary of evicted turns comes as a ``SystemMessage``."""
        out: list[BaseMessage] = []
        for m in self.window.messages():
            role, content = m["role"], m["content"]
            if role == "user":
                out.append(HumanMessage(content=content))
            elif role == "assistant":
                out.append(AIMessage(content=content))
            elif role == "tool":
                out.append(ToolMessage(content=content, tool_call_id=m.get("id", "tool")))
            else:
                out.append(SystemMessage(content=content))
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` to the window, in order."""
        for message in messages:
            role = _ROLES.get(message.type)
            if role is None:
                raise ValidationError(
                    "messages", f"no working-memory role for a {message.type!r} message"
                )
            # A str (callable, deprecated) in langchain-core 1.x, a method before.
            text = message.text
            self.window.add(role, str(text) if isinstance(text, str) else text())

    def clear(self) -> None:
        """Archive what the window holds to episodic memory and empty it."""
        self.window.clear()


class MnemolayerRetriever(BaseRetriever):
    """Hybrid recall over one user's long-term memory, as LangChain documents.

    Attributes:
        memory: the open store.
        user_id: whose memories are searched.
        k: how many documents, 1-100.
        search_kwargs: more :meth:`Memory.search` arguments (``kinds``, ``filters``,
            ``as_of``, ``trusted_only``, ``threshold``, ...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    user_id: str
    k: int = 5
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.memory.search(query, user_id=self.user_id, limit=self.k, **self.search_kwargs)
        return [
            Document(
                page_content=h.memory.content,
                id=h.memory.id,
                metadata={
                    "id": h.memory.id,
                    "kind": h.memory.kind.value,
                    "score": h.score,
                    "occurred_at": (h.memory.occurred_at or h.memory.created_at).isoformat(),
                    "session_id": h.memory.session_id,
                    "speaker": h.memory.speaker,
                    "source": h.memory.source,
                    "provenance": list(h.provenance),
                },
            )
            for h in hits
        ]
