"""The data of working memory: a window's messages and persisted state, compaction
events, saved-window descriptions, the :class:`SessionStore` seam windows persist
through, and the budget limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from mnemolayer.errors import ValidationError

__all__ = [
    "COMPACTION_SLACK",
    "MAX_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS",
    "PINNED_SHARE",
    "ROLES",
    "SUMMARY_PREFIX",
    "SUMMARY_SHARE",
    "CompactionEvent",
    "CompactionHook",
    "SessionInfo",
    "SessionStore",
    "WindowState",
    "WorkingMessage",
    "check_budget",
]

#: Smallest accepted window, in tokens: room for the reply primer and one short turn.
MIN_BUDGET_TOKENS = 64
#: Largest accepted window, in tokens (beyond any current model's context).
MAX_BUDGET_TOKENS = 10_000_000
#: Share of the budget the running summary may use.
SUMMARY_SHARE = 0.25
#: Share of the budget pinned messages may use together (the rest is for the summary and
#: the latest turns, so the newest turn always has room).
PINNED_SHARE = 0.5
#: The running summary is shown to the model as a system message starting with this.
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
#: Share of the budget a compaction frees beyond what the summary needs, so that the next
#: few turns fit without compacting again.
COMPACTION_SLACK = 0.1
ROLES = ("user", "assistant", "system", "tool")


# -- data --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkingMessage:
    """One message in a working-memory window.

    Attributes:
        id: the message id (hex), stable across resumes; pass it to
            :meth:`WorkingMemory.pin`.
        role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``.
        content: the text as the model sees it (cut to fit when ``truncated``).
        created_at: when it was added (aware UTC).
        pinned: kept through every compaction.
        archived_id: id of the episodic record already holding the full text (set for
            a truncated turn, which is archived as soon as it is added), else ``None``.
    """

    id: str
    role: str
    content: str
    created_at: datetime
    pinned: bool = False
    archived_id: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether ``content`` is a cut of a longer turn (archived in full)."""
        return self.archived_id is not None

    def as_dict(self) -> dict[str, str]:
        """``{"role": ..., "content": ...}``, the chat-completion message shape."""
        return {"role": self.role, "content": self.content}


@dataclass
class WindowState:
    """Everything a :class:`SessionStore` persists for one window.

    Attributes:
        user_id, session_id: the scope (required); agent_id: optional narrower scope.
        budget_tokens: the window's budget, in tokens.
        encoding: the token counter's name (``"o200k_base"``).
        messages: pinned and recent messages, oldest first.
        summary: the running summary text (``""`` when nothing was compacted yet).
        summary_rounds: how many times the summary was itself re-summarised.
        evicted_count: how many turns were compacted out of the window so far.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    encoding: str
    messages: list[WorkingMessage] = field(default_factory=list)
    summary: str = ""
    summary_rounds: int = 0
    evicted_count: int = 0


@dataclass(frozen=True)
class CompactionEvent:
    """What one compaction did, handed to the ``before`` and ``after`` hooks.

    Attributes:
        session_id, user_id, agent_id: the window's scope.
        evicted: the turns leaving the window, oldest first (their full text).
        summary_before: the running summary before folding them in.
        summary_after: the summary afterwards; ``None`` in the ``before`` hook.
        archived_ids: ids of the episodic records holding the evicted turns, in the
            order of ``evicted``; empty in the ``before`` hook.
        tokens_before: the window's cost, in tokens, at the moment of overflow (may be
            above the budget); tokens_after: its cost afterwards (``None`` before).
    """

    session_id: str
    user_id: str
    agent_id: str | None
    evicted: tuple[WorkingMessage, ...]
    summary_before: str
    summary_after: str | None
    archived_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int | None


CompactionHook = Callable[[CompactionEvent], Any]


@dataclass(frozen=True)
class SessionInfo:
    """One saved window, as :meth:`SessionStore.list_sessions` describes it.

    Attributes:
        user_id, session_id, agent_id: the window's scope.
        budget_tokens: its budget, in tokens.
        messages: how many messages it holds (pinned and recent; the summary not counted).
        evicted_count: how many turns were compacted out of it so far.
        summary_rounds: how many times its summary was re-summarised.
        updated_at: when it was last saved (aware UTC), ``None`` when the store does not
            know.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    messages: int
    evicted_count: int
    summary_rounds: int
    updated_at: datetime | None


# -- session stores ----------------------------------------------------------------------


@runtime_checkable
class SessionStore(Protocol):
    """Where working-memory windows persist. One window per (user, agent, session).

    Implementations must make :meth:`save` atomic: a reader sees the old window or the new
    one, never a mix.
    """

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        """The saved window of this scope, or ``None`` when there is none."""
        ...

    def save(self, state: WindowState) -> None:
        """Replace the saved window of ``state``'s scope with ``state``."""
        ...

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        """Forget the window of this scope; ``True`` when one existed."""
        ...

    def delete_user(self, user_id: str) -> int:
        """Forget every window of one user; how many there were."""
        ...

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        """The saved windows of one user, most recently saved first."""
        ...

    def list_users(self) -> list[str]:
        """Every user with at least one saved window, sorted (whole-store export)."""
        ...


def check_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not MIN_BUDGET_TOKENS <= value <= MAX_BUDGET_TOKENS:
        raise ValidationError(
            "budget_tokens",
            f"must be between {MIN_BUDGET_TOKENS} and {MAX_BUDGET_TOKENS}, got {value}",
        )
    return value
