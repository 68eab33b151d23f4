"""Fusion of retrieval signals and reranking, as pure functions over numpy arrays.

Every function takes one row per candidate and returns scores in [0, 1].
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "absolute_similarity",
    "minmax",
    "rerank",
    "rrf",
    "weighted",
]


def minmax(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per-query min-max normalisation of ``values`` over the ``present`` candidates.

    Candidates where ``present`` is false score 0. When all present values are equal they
    all score 1 (one candidate is as good as the best).
    """
    out = np.zeros_like(values, dtype=np.float64)
    if not present.any():
        return out
    v = values[present]
    lo, hi = float(v.min()), float(v.max())
    out[present] = 1.0 if hi - lo < 1e-12 else (v - lo) / (hi - lo)
    return out


def absolute_similarity(cosine: np.ndarray, floor: float) -> np.ndarray:
    """Map cosine similarity to [0, 1] with a model-specific floor: ``(cos - floor) / (1 - floor)``."""
    return np.clip((cosine - floor) / (1.0 - floor), 0.0, 1.0)


def weighted(signals: list[np.ndarray], weights: list[float]) -> np.ndarray:
    """Convex combination of normalised signals (Bruch et al., TOIS 2023, "convex combination").

    Args:
        signals: k arrays of shape (n,), each in [0, 1].
        weights: k non-negative weights; normalised to sum 1.
    """
    total = sum(weights)
    if total <= 0:
        raise ValueError("fusion weights must not all be zero")
    out = np.zeros_like(signals[0], dtype=np.float64)
    for s, w in zip(signals, weights, strict=True):
        out += (w / total) * s
    return out


def rrf(ranks: list[np.ndarray], k: int = 60) -> np.ndarray:
    """Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): ``Σ 1/(k + rank)``.

    Args:
        ranks: per signal, an array of 1-based ranks (0 = not found by that signal).
        k: the RRF constant.

    Returns:
        Fused scores rescaled to [0, 1] (1 = ranked first by every signal).
    """
    out = np.zeros(ranks[0].shape, dtype=np.float64)
    for r in ranks:
        found = r > 0
        out[found] += 1.0 / (k + r[found])
    return out / (len(ranks) / (k + 1.0))


def rerank(
    relevance: np.ndarray,
    importance: np.ndarray,
    recency: np.ndarray,
    access: np.ndarray,
    *,
    importance_weight: float,
    recency_weight: float,
    access_weight: float,
) -> np.ndarray:
    """``(1 - wi - wr - wa)·relevance + wi·importance + wr·recency + wa·access``, clipped to [0, 1].

    Raises:
        ValueError: the three weights sum to more than 1.
    """
    rest = 1.0 - importance_weight - recency_weight - access_weight
    if rest < -1e-9:
        raise ValueError("importance_weight + recency_weight + access_weight must be ≤ 1")
    score = (
        rest * relevance
        + importance_weight * importance
        + recency_weight * recency
        + access_weight * access
    )
    return np.clip(score, 0.0, 1.0)
