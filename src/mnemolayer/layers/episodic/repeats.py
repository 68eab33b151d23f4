"""Messages said again: an add whose words (with speaker, kind and scope) match a stored
record returns that record; said at a later time, they restate its facts at that time
(:func:`restatements`, which reopens a fact retracted in between). A match that has
expired is not returned: the writer has the expired memories deleted first (the facade
wires maintenance's expiry step) and stores the words anew."""

from __future__ import annotations

from mnemolayer.extract.base import ExtractedFact
from mnemolayer.models import MemoryRecord

__all__ = ["restatements"]


def restatements(
    records: list[MemoryRecord],
    existing: dict[str, MemoryRecord],
    facts: dict[str, list[ExtractedFact]],
) -> tuple[list[MemoryRecord], dict[str, list[ExtractedFact]]]:
    """Stored messages said again at a later time, as views carrying the new time (for
    extraction), and the given facts re-keyed to the stored ids.

    Args:
        records: the messages being added.
        existing: the stored records they match, by content hash.
        facts: facts given with the messages, by message id.
    """
    given = dict(facts)
    restated: dict[str, MemoryRecord] = {}
    for r in records:
        old = existing.get(r.content_hash)
        if old is None or old.occurred_at is None or r.occurred_at is None:
            continue
        if r.id in facts:
            given[old.id] = facts[r.id]
        if r.occurred_at > old.occurred_at and old.id not in restated:
            restated[old.id] = old.model_copy(update={"occurred_at": r.occurred_at})
    return list(restated.values()), given
