"""What capture does when a model cannot answer: the records are stored without what it
would have given, marked pending (:attr:`~mnemolayer.models.MemoryRecord.pending`), for
:mod:`~mnemolayer.layers.episodic.enrich` to complete later."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from mnemolayer.embed.base import Embedder, is_outage
from mnemolayer.models import MemoryRecord
from mnemolayer.retrieval.index import embed_records

__all__ = ["embed_or_defer", "with_pending"]

log = logging.getLogger(__name__)


def with_pending(record: MemoryRecord, *, embedding: bool, extraction: bool) -> MemoryRecord:
    """``record`` with :attr:`~MemoryRecord.pending` set to the kinds given true."""
    kinds = [k for k, on in (("embedding", embedding), ("extraction", extraction)) if on]
    return record if kinds == record.pending else record.model_copy(update={"pending": kinds})


def embed_or_defer(embedder: Embedder, records: Sequence[MemoryRecord]) -> list[np.ndarray] | None:
    """:func:`~mnemolayer.retrieval.index.embed_records`, or ``None`` (logged as a
    warning) when the embedder could not answer (it raised: unreachable, timed out,
    crashed): the caller stores what it can without the vectors.

    An :class:`~mnemolayer.errors.EmbedderUnavailableError` is an outage too.

    Raises:
        EmbedderError: the embedder answered wrongly (another dimension, too few vectors,
            NaN: :func:`~mnemolayer.embed.base.check_vectors`). That is a
            misconfiguration a retry would not mend, so nothing is stored.
    """
    if not records:
        return []
    try:
        return embed_records(embedder, records)
    except Exception as exc:
        if not is_outage(exc):
            raise
        log.warning(
            "embedder %r failed on %d record(s); storing them with their embedding pending",
            embedder.name, len(records), exc_info=True,
        )  # fmt: skip
        return None
