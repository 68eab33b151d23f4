"""Retrieval metrics for the memory benchmarks: pure functions over ranked id lists.

Every ranking function takes ``ranked`` (ids in rank order, best first; later duplicates
of an id are ignored, so a gold id counts once) and ``gold`` (the relevant ids; must not
be empty: a question without evidence cannot be scored and is skipped by the caller).
Relevance is binary: an id is relevant if it is in ``gold``.

Definitions follow the standard IR literature: Manning, Raghavan & Schütze,
*Introduction to Information Retrieval* (2008), ch. 8 for recall and reciprocal rank,
Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques" (ACM TOIS 20(4),
2002) for NDCG.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "METRIC_NAMES",
    "aggregate",
    "ndcg_at_k",
    "percentiles",
    "question_scores",
    "recall_at_k",
    "reciprocal_rank",
    "session_recall_at_k",
]

#: The per-question metrics :func:`question_scores` returns, in report order.
METRIC_NAMES: tuple[str, ...] = (
    "recall@1",
    "recall@5",
    "recall@10",
    "ndcg@10",
    "mrr",
    "session_recall@5",
)


def _unique(ranked: Iterable[Hashable]) -> list[Hashable]:
    """``ranked`` without later duplicates, order kept."""
    seen: set[Hashable] = set()
    out: list[Hashable] = []
    for item in ranked:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _check(gold: Collection[Hashable], k: int | None = None) -> None:
    if not gold:
        raise ValueError("gold must not be empty (a question without evidence cannot be scored)")
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def recall_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int) -> float:
    """Recall@k: the fraction of gold ids found among the top ``k`` ranked ids.

    ``|gold ∩ top_k(ranked)| / |gold|`` (Manning et al. 2008, §8.3). With several gold
    ids a question can score partial credit; a benchmark's recall@k is the mean over
    questions.

    Returns:
        A value in [0, 1].

    Raises:
        ValueError: ``gold`` is empty or ``k < 1``.
    """
    _check(gold, k)
    gold_set = set(gold)
    found = sum(1 for item in _unique(ranked)[:k] if item in gold_set)
    return found / len(gold_set)


def ndcg_at_k(ranked: Sequence[Hashable], gold: Collection[Hashable], k: int = 10) -> float:
    """Normalised discounted cumulative gain at ``k`` with binary relevance.

    ``DCG@k = Σ_{i=1..k} rel_i / log2(i + 1)`` with ``rel_i = 1`` if the id at rank ``i``
    is gold, else 0; ``NDCG@k = DCG@k / IDCG@k`` where ``IDCG@k`` is the DCG of the ideal
    ranking (all gold ids first, ``min(|gold|, k)`` of them). Järvelin & Kekäläinen,
    ACM TOIS 20(4), 2002, with the ``log2(i + 1)`` discount of Burges et al. (ICML 2005).

    Returns:
        A value in [0, 1]; 1 when every gold id (up to ``k``) heads the ranking.

    Raises:
        ValueError: ``gold`` is empty or ``k < 1``.
    """
    _check(gold, k)
    gold_set = set(gold)
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, item in enumerate(_unique(ranked)[:k], start=1)
        if item in gold_set
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def reciprocal_rank(ranked: Sequence[Hashable], gold: Collection[Hashable]) -> float:
    """Reciprocal rank: ``1 / rank`` of the first gold id in ``ranked``, 0 if none is there.

    The mean over questions is the mean reciprocal rank (MRR; Voorhees, TREC-8 QA track
    report, 1999). The ranking is cut at whatever length the caller passes, so with ten
    hits this is MRR@10.

    Raises:
        ValueError: ``gold`` is empty.
    """
    _check(gold)
    gold_set = set(gold)
    for rank, item in enumerate(_unique(ranked), start=1):
        if item in gold_set:
            return 1.0 / rank
    return 0.0


def session_recall_at_k(
    ranked_sessions: Sequence[Hashable], gold_sessions: Collection[Hashable], k: int
) -> float:
    """Session-level recall@k: the fraction of gold *sessions* covered by the top ``k`` hits.

    ``ranked_sessions[i]`` is the session of the ``i``-th hit (duplicates expected: several
    hits may come from one session); a gold session counts as covered when any of the
    first ``k`` hits comes from it. This is recall@k at session granularity, the coarser
    unit used by LoCoMo's RAG evaluation (Maharana et al., ACL 2024) and LongMemEval
    (Wu et al., ICLR 2025).

    Raises:
        ValueError: ``gold_sessions`` is empty or ``k < 1``.
    """
    _check(gold_sessions, k)
    gold_set = set(gold_sessions)
    covered = gold_set.intersection(ranked_sessions[:k])
    return len(covered) / len(gold_set)


def question_scores(
    ranked: Sequence[Hashable],
    gold: Collection[Hashable],
    ranked_sessions: Sequence[Hashable],
    gold_sessions: Collection[Hashable],
) -> dict[str, float]:
    """Every metric of :data:`METRIC_NAMES` for one question.

    Args:
        ranked: evidence ids of the hits, best first.
        gold: the question's gold evidence ids.
        ranked_sessions: the session of each hit, aligned with ``ranked``.
        gold_sessions: the sessions of the gold evidence.

    Returns:
        ``{metric name: value in [0, 1]}``.
    """
    return {
        "recall@1": recall_at_k(ranked, gold, 1),
        "recall@5": recall_at_k(ranked, gold, 5),
        "recall@10": recall_at_k(ranked, gold, 10),
        "ndcg@10": ndcg_at_k(ranked, gold, 10),
        "mrr": reciprocal_rank(ranked, gold),
        "session_recall@5": session_recall_at_k(ranked_sessions, gold_sessions, 5),
    }


def aggregate(rows: Iterable[Mapping[str, float]]) -> dict[str, Any]:
    """Macro-average per-question scores: the mean of each metric, plus ``questions`` (count).

    An empty ``rows`` gives ``{"questions": 0}`` and no metric keys (a mean of nothing is
    undefined, not 0).
    """
    rows = list(rows)
    result: dict[str, Any] = {"questions": len(rows)}
    if rows:
        for name in rows[0]:
            result[name] = sum(row[name] for row in rows) / len(rows)
    return result


def percentiles(
    values: Iterable[float], points: Sequence[float] = (50, 95, 99)
) -> dict[str, float | None]:
    """Latency percentiles by linear interpolation between closest ranks.

    The estimator is Hyndman & Fan (1996) definition 7, NumPy's default
    (``numpy.percentile(..., method="linear")``): for sorted ``x`` of length ``n`` the
    ``p``-th percentile is ``x[h]`` interpolated at ``h = (n - 1) * p / 100``.

    Returns:
        ``{"p50": ..., "p95": ..., "p99": ...}`` (keys follow ``points``); each value is
        ``None`` when ``values`` is empty.

    Raises:
        ValueError: a point is outside [0, 100].
    """
    data = sorted(values)
    out: dict[str, float | None] = {}
    for p in points:
        if not 0 <= p <= 100:
            raise ValueError(f"percentile must be in [0, 100], got {p}")
        key = f"p{p:g}"
        if not data:
            out[key] = None
            continue
        h = (len(data) - 1) * p / 100
        lo = math.floor(h)
        hi = min(lo + 1, len(data) - 1)
        out[key] = data[lo] + (h - lo) * (data[hi] - data[lo])
    return out
