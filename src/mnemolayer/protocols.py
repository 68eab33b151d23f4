"""The seams: what the services of :class:`mnemolayer.Memory` need from the parts that
can be swapped (stores, models, clocks), in one place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mnemolayer.models import MemoryRecord

__all__ = ["EpisodicSink", "Progress"]

#: Called after each batch of a long operation with ``(done, total)``.
Progress = Callable[[int, int], None]


class EpisodicSink(Protocol):
    """Where a working-memory window stores the turns that leave it: ``add`` as
    :meth:`mnemolayer.Memory.add` (the episodic writer, or the facade itself)."""

    def add(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[MemoryRecord]: ...
