"""Why a hit ranks where it does (``search(explain=True)``, ``Memory.explain``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.decay import explain_retention
from mnemolayer.models import MemoryRecord

__all__ = ["ranking_explanation"]


def ranking_explanation(
    record: MemoryRecord,
    scores: dict[str, float],
    rank: int,
    now: datetime,
    lifecycle: LifecycleConfig,
    retrieval: RetrievalConfig,
) -> dict[str, Any]:
    """Why a hit ranks where it does, as a JSON-ready dict.

    Args:
        record: the hit's record, as it was ranked (before this search's access).
        scores: the hit's breakdown (:attr:`Hit.scores`).
        rank: its 1-based position in the results.
        now: the search's time.
        lifecycle, retrieval: the settings it was ranked with.

    Returns:
        ``{"rank", "relevance", "reranked", "retention", "ranking_weight",
        "retention_factor", "consolidated_factor", "final", "retention_parts",
        "summary"}``: ``relevance`` and the other numbers are the breakdown's,
        ``reranked`` is relevance after the importance / recency / access rerank,
        ``retention_factor`` is ``1 - w + w · retention``, ``consolidated_factor`` is
        ``LifecycleConfig.consolidated_weight`` for a consolidation's source and 1
        otherwise (``final = reranked · retention_factor · consolidated_factor``),
        ``retention_parts`` the :class:`~mnemolayer.lifecycle.RetentionExplanation` of the
        retention (as JSON) and ``summary`` one readable line.
    """
    parts = explain_retention(record, now, lifecycle)
    w = lifecycle.ranking_weight
    factor = 1.0 - w + w * parts.value
    consolidated = scores.get("consolidated", 1.0)
    signals = [
        f"{name} {scores[key]:.3f}"
        for name, key in (("vector", "vector_norm"), ("keyword", "keyword_norm"))
        if key in scores
    ]
    notes = []
    if scores.get("context"):
        notes.append(f"context {scores['context']:.3f}")
    if scores.get("outdated"):
        notes.append(f"outdated ×{1.0 - retrieval.outdated_penalty:g}")
    if "reranker" in scores:  # the optional reranking step blended into final
        notes.append(f"reranker {scores['reranker']:.3f}, weight {retrieval.rerank_weight:g}")
    kept = (
        "pinned, retention 1"
        if parts.pinned
        else f"retention {parts.value:.3f} ({parts.age_days:.1f} d since {parts.anchor}, "
        f"half-life {parts.half_life_days:.1f} d)"
    )
    source = (
        f"; consolidated into {record.consolidated_into} → ×{consolidated:g}"
        if "consolidated" in scores
        else ""
    )
    summary = (
        f"rank {rank}: relevance {scores.get('relevance', 0.0):.3f}"
        + (f" ({', '.join(signals + notes)})" if signals or notes else "")
        + f"; {kept} × weight {w:g} → ×{factor:.3f}{source}; "
        + f"final {scores.get('final', 0.0):.3f}"
    )
    return {
        "rank": rank,
        "relevance": scores.get("relevance"),
        "reranked": scores.get("reranked"),
        "retention": parts.value,
        "ranking_weight": w,
        "retention_factor": factor,
        "consolidated_factor": consolidated,
        "final": scores.get("final"),
        "retention_parts": parts.to_json(),
        "summary": summary,
    }
