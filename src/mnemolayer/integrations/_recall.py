"""What the agent-framework adapters share: one user's recall as text a model reads, and
the check of how many memories a tool call may ask for."""

from __future__ import annotations

from collections.abc import Sequence

from mnemolayer.errors import ValidationError
from mnemolayer.models import Hit

__all__ = ["MAX_K", "check_k", "hits_text"]

#: The most memories one recall tool call returns.
MAX_K = 50


def check_k(k: object, field: str = "k") -> int:
    """``k`` as an int in 1..:data:`MAX_K`.

    Raises:
        ValidationError: not an int (a bool is refused) or out of range, naming ``field``.
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValidationError(field, f"must be an int, got {type(k).__name__}")
    if not 1 <= k <= MAX_K:
        raise ValidationError(field, f"must be between 1 and {MAX_K}, got {k}")
    return k


def hits_text(hits: Sequence[Hit]) -> str:
    """Recall's hits as lines a model reads, best first:
    ``[<id>] <kind>, <YYYY-MM-DD>, score <0.00-1.00>: <content>``; a fixed sentence when
    there are none, so the model is told rather than handed an empty string."""
    if not hits:
        return "No memories matched."
    lines = []
    for h in hits:
        m = h.memory
        day = (m.occurred_at or m.created_at).date().isoformat()
        lines.append(f"[{m.id}] {m.kind.value}, {day}, score {h.score:.2f}: {m.content}")
    return "\n".join(lines)
