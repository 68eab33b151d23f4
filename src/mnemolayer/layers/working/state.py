"""The data of working memory: a window's messages and persisted state, compaction
events, saved-window descriptions, the :class:`SessionStore` seam windows persist
through, and the budget limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.protocols import SessionStore
from mnemolayer.values import SessionInfo, WindowState, WorkingMessage

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


# -- session stores ----------------------------------------------------------------------


def check_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not MIN_BUDGET_TOKENS <= value <= MAX_BUDGET_TOKENS:
        raise ValidationError(
            "budget_tokens",
            f"must be between {MIN_BUDGET_TOKENS} and {MAX_BUDGET_TOKENS}, got {value}",
        )
    return value
