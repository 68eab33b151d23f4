"""The sources of a memory and the trust each one gets by default."""

from __future__ import annotations

from typing import Any

from mnemolayer.errors import ValidationError
from mnemolayer.models import SOURCES, TRUSTED_SOURCES, Source

__all__ = ["SOURCES", "TRUSTED_SOURCES", "default_source", "is_trusted", "validate_source"]

#: A message's role → its source when ``add`` is given none. ``system`` is the
#: application's own voice (its prompt), on the assistant's side of the conversation.
_BY_ROLE: dict[str, Source] = {
    "user": "user",
    "assistant": "assistant",
    "system": "assistant",
    "tool": "tool",
}


def default_source(role: str | None) -> Source:
    """The source of a message of ``role`` given no ``source``: ``"tool"`` for tool
    messages, ``"assistant"`` for assistant and system ones, else ``"user"``."""
    return _BY_ROLE.get((role or "user").strip().casefold(), "user")


def is_trusted(source: str) -> bool:
    """Whether memories of ``source`` are trusted (:data:`TRUSTED_SOURCES`)."""
    return source in TRUSTED_SOURCES


def validate_source(value: Any, field: str = "source") -> Source | None:
    """``value`` as a source, or ``None`` when it is ``None`` (the role decides).

    Raises:
        ValidationError: not one of :data:`SOURCES` (names ``field``).
    """
    if value is None:
        return None
    if not isinstance(value, str) or value not in SOURCES:
        raise ValidationError(
            field, f"unknown source {value!r}; expected one of {', '.join(SOURCES)}"
        )
    return value  # type: ignore[return-value]  # checked against SOURCES just above
