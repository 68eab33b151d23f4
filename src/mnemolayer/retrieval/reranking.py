"""Recall's optional reranking step: a :class:`~mnemolayer.protocols.Reranker` (a
cross-encoder, or a ``/rerank`` endpoint) reorders the best text candidates after scoring.

Off by default (``Memory(reranker=None)``): published results for cross-encoders on
conversational memory are mixed to harmful (``RETRIEVAL.md``), so it is a seam to measure
one's own model with, not a default.

What it does, after :func:`~mnemolayer.retrieval.rerank.score`, the truth and time-window
adjustments and the threshold, on the ordered candidates:

1. The first ``RetrievalConfig.rerank_top`` of the order are considered.
2. Those derived from structure keep their place, untouched: fact records (semantic
   memories, and the facts of the user's fact links), messages found through a fact
   (breakdown ``fact_key``) or stating a fact that is among the considered candidates
   (the two are collapsed into one hit), candidates inside the query's time window (``time_window``)
   and the true versions lifted by the truth step (``truth``).
3. The others' contents go to the reranker in one call; its scores are min-max
   normalised over that call into [0, 1] (a cross-encoder's logits and an endpoint's
   probabilities alike; all equal → all 1) and blended with the candidate's score:
   ``final = (1 - w) · final + w · reranker``, ``w = RetrievalConfig.rerank_weight``.
   The blend, not the reranker alone, because its scores are relative to the call
   while ``final`` also carries truth, lifecycle and time; the breakdown keeps the
   normalised score as ``reranker``.
4. They fill the free places among the first ``rerank_top``, best blended first; the
   rest of the order follows unchanged.

A reranker that fails (unreachable, timed out, malformed answer, any exception) never
fails the search: the order stays as scored, ``reranker`` is absent from the hits'
breakdown, and a warning is logged (logger ``mnemolayer.retrieval.reranking``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.models import MemoryKind
from mnemolayer.protocols import Reranker

if TYPE_CHECKING:
    from mnemolayer.store.base import SQLStore

__all__ = ["rerank_order"]

log = logging.getLogger(__name__)


def rerank_order(
    reranker: Reranker,
    cfg: RetrievalConfig,
    query: str,
    rowids: list[int],
    order: np.ndarray,
    scores: dict[str, np.ndarray],
    facts: Collection[int],
    partners: Mapping[int, Collection[int]],
    store: SQLStore,
) -> np.ndarray:
    """The order with its free places among the first ``cfg.rerank_top`` reranked (see
    the module); ``scores`` (arrays in ``rowids`` order) gain ``reranker`` and the free
    candidates' blended ``final``, in place.

    Args:
        reranker: the model.
        cfg: ``rerank_top`` and ``rerank_weight``.
        query: the search query.
        rowids: the candidates' rowids.
        order: indices into ``rowids``, best first.
        scores: the breakdown.
        facts: rowids of the user's fact records.
        partners: each fact's source messages and each message's facts (rowids).
        store: where the candidates' contents are read (one read by rowid).

    Returns:
        The new order (``order`` itself when nothing was reranked).
    """
    top = order[: cfg.rerank_top].tolist()
    if len(top) < 2:
        return order
    records = store.get_many_by_rowid([rowids[i] for i in top])
    fixed = _fixed(scores, len(rowids))
    in_top = {rowids[i] for i in top}

    def graph(rid: int) -> bool:
        """A fact, or a message whose fact is among the considered candidates."""
        if rid in facts or records[rid].kind == MemoryKind.SEMANTIC:
            return True
        return any(p in facts and p in in_top for p in partners.get(rid, ()))

    free = [i for i in top if not fixed[i] and rowids[i] in records and not graph(rowids[i])]
    if len(free) < 2:
        return order
    try:
        raw = [float(s) for s in reranker.rerank(query, [records[rowids[i]].content for i in free])]
        if len(raw) != len(free) or not all(math.isfinite(s) for s in raw):
            raise ValueError(f"{len(raw)} scores (some not finite?) for {len(free)} texts")
    except Exception as exc:  # a reranker never fails the search
        name = getattr(reranker, "name", type(reranker).__name__)
        log.warning(
            "reranker %s failed (%s: %s); recall keeps its own order",
            name,
            type(exc).__name__,
            " ".join(str(exc).split())[:200],
        )
        return order
    values = np.asarray(raw, dtype=np.float64)
    span = float(values.max() - values.min())
    norm = (values - values.min()) / span if span > 0 else np.ones_like(values)
    w = cfg.rerank_weight
    final = scores["final"]
    blended = (1.0 - w) * final[free] + w * norm
    column = np.full(len(rowids), np.nan)
    column[free] = norm
    scores["reranker"] = column
    final[free] = blended
    ranked = iter([free[j] for j in np.argsort(-blended, kind="stable").tolist()])
    taken = set(free)
    new_top = [next(ranked) if i in taken else i for i in top]
    return np.concatenate([np.asarray(new_top, dtype=order.dtype), order[len(top) :]])


def _fixed(scores: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Which candidates keep their place: found through a fact, inside the time window,
    or lifted by the truth step."""
    fixed = np.zeros(n, dtype=bool)
    if "fact_key" in scores:
        fixed |= ~np.isnan(scores["fact_key"])
    if "time_window" in scores:
        fixed |= scores["time_window"] == 1.0
    if "truth" in scores:
        fixed |= ~np.isnan(scores["truth"])
    return fixed
