"""Relative time in queries at recall: the query's time window
(:func:`mnemolayer.text.timeq.time_window`, resolved against the search's ``as_of`` or
the store's clock) boosts the candidates whose event time falls inside it and, when
enough do, filters out the rest.

A candidate's event times are its ``occurred_at`` and the ``valid_from`` of its facts
(the date extracted at write, :meth:`~mnemolayer.store.index.IndexSQL.valid_froms`). A
candidate inside ``[start, end)`` gets ``final · (1 + RetrievalConfig.time_boost)``
(capped at 1) and ``time_window = 1`` in its breakdown; one outside gets
``time_window = 0``, and is dropped when at least ``RetrievalConfig.time_min_hits``
candidates are inside (the fallback: an empty window never empties the result).
The records the store holds inside the window join the candidates (at most
:data:`WINDOW_CANDIDATES`, the latest), so "what did I do yesterday?" finds yesterday's
turns even when their words miss the question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from mnemolayer.retrieval.candidates import Candidates
from mnemolayer.store.base import SQLStore
from mnemolayer.store.sqlite.engine import iso
from mnemolayer.store.sqlite.store import RankSignals
from mnemolayer.text.timeq import TimeWindow

__all__ = ["WINDOW_CANDIDATES", "add_window_candidates", "apply_window"]

#: At most this many records inside the window join the candidates.
WINDOW_CANDIDATES = 50


def add_window_candidates(
    store: SQLStore,
    user_id: str,
    window: TimeWindow,
    cands: Candidates,
    may_return: Callable[[int], bool],
) -> None:
    """Add the latest records of ``user_id`` whose ``occurred_at`` is inside ``window``
    (where the search may return them) to ``cands``."""
    found = store.rowids_between(
        user_id, iso(window.start) or "", iso(window.end) or "", WINDOW_CANDIDATES * 4
    )
    seen = set(cands.rowids)
    added = 0
    for rid in found:
        if rid not in seen and may_return(rid):
            seen.add(rid)
            cands.rowids.append(rid)
            added += 1
            if added >= WINDOW_CANDIDATES:
                break


def apply_window(
    window: TimeWindow,
    rowids: Sequence[int],
    recs: Sequence[RankSignals],
    extra_times: dict[int, list[str]],
    scores: dict[str, np.ndarray],
    boost: float,
    min_hits: int,
) -> np.ndarray:
    """Boost the candidates inside ``window`` in place on ``scores`` (``final``, and
    ``time_window`` added: 1 inside, 0 outside) and return which to keep (all, unless
    at least ``min_hits`` are inside)."""
    start, end = iso(window.start) or "", iso(window.end) or ""

    def inside(rid: int, occurred: datetime) -> bool:
        times = [iso(occurred) or "", *extra_times.get(rid, [])]
        return any(start <= t < end for t in times)

    mask = np.array([inside(r, s.occurred_at) for r, s in zip(rowids, recs, strict=True)])
    if mask.size == 0:
        return mask
    scores["final"] = np.where(
        mask, np.minimum(scores["final"] * (1.0 + boost), 1.0), scores["final"]
    )
    scores["time_window"] = mask.astype(np.float64)
    if min_hits > 0 and int(mask.sum()) >= min_hits:
        return mask
    return np.ones_like(mask)
