"""What :meth:`Memory.add <mnemolayer.layers.episodic.write.EpisodicWriter.add>` returns:
the stored records, and the messages it skipped because their user had deleted them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mnemolayer.models import MemoryRecord

__all__ = ["AddResult", "SkippedMessage"]


class SkippedMessage(BaseModel):
    """A message :meth:`Memory.add` did not store.

    Attributes:
        index: its position in the call's messages (0 for a single text).
        message_id: its caller-side id (``Message.id``, ``"id"`` of a message dict).
        reason: ``"deleted"``: a message with this id, content and scope (session
            included) was deleted before, and its tombstone keeps it deleted when it is
            replayed (:mod:`mnemolayer.store.tombstones`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    message_id: str
    reason: Literal["deleted"] = "deleted"


class AddResult(list[MemoryRecord]):
    """The records :meth:`Memory.add` stored or matched, in message order, as a list;
    :attr:`skipped` names the messages it skipped.

    Without skipped messages (always, for messages without a caller id) it holds one
    record per message, as before tombstones. A skipped message has no record in the
    list, so ``len(result) + len(result.skipped)`` is the number of messages, and
    :meth:`per_message` lines the records up with the messages again. It compares equal
    to a plain list of the same records.

    Attributes:
        skipped: the messages not stored, by position (:class:`SkippedMessage`).
    """

    def __init__(
        self, records: Iterable[MemoryRecord] = (), skipped: Iterable[SkippedMessage] = ()
    ) -> None:
        super().__init__(records)
        self.skipped: list[SkippedMessage] = sorted(skipped, key=lambda s: s.index)

    def per_message(self) -> list[MemoryRecord | None]:
        """One entry per message of the call, in order: its record, or ``None`` where
        the message was skipped."""
        gaps = {s.index for s in self.skipped}
        records = iter(self)
        return [None if i in gaps else next(records) for i in range(len(self) + len(self.skipped))]

    def __repr__(self) -> str:
        return f"AddResult({list.__repr__(self)}, skipped={self.skipped!r})"
