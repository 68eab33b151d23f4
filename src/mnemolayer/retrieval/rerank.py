"""Recall's scoring: the candidates' vector and keyword signals fused into a relevance
in [0, 1] (weighted or reciprocal-rank fusion, :mod:`mnemolayer.retrieval.fusion`), lifted
by their session neighbours, by the day or conversation the query names
(:mod:`mnemolayer.retrieval.named_time`) and by the conversation features, lowered when
outdated, reranked with importance, recency and
access counts, and scaled by retention (:mod:`mnemolayer.lifecycle.decay`) and, for a
consolidation's sources, by ``LifecycleConfig.consolidated_weight``.
"""

from __future__ import annotations

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder
from mnemolayer.lifecycle.decay import rank_scores, retention_many
from mnemolayer.retrieval import fusion
from mnemolayer.retrieval.ann import LazyCosines
from mnemolayer.retrieval.candidates import Candidates, SearchRequest
from mnemolayer.retrieval.expand import expansion_features
from mnemolayer.retrieval.named_time import lift_named, named_mask
from mnemolayer.retrieval.structure import conversation_features, lift
from mnemolayer.store.sqlite.store import RankSignals

__all__ = ["score"]


def score(
    cfg: RetrievalConfig,
    embedder: Embedder,
    req: SearchRequest,
    rowids: list[int],
    recs: list[RankSignals],
    cands: Candidates,
) -> dict[str, np.ndarray]:
    """Each candidate's score breakdown, as arrays in ``rowids`` order (``recs`` are their
    rank signals): the signals, their fusion into ``relevance``, the rerank with
    importance, recency and access, retention and the consolidation weight, and
    ``final``; NaN where a part does not apply."""
    nan = float("nan")
    cos = (
        cands.cosine.many(rowids)
        if isinstance(cands.cosine, LazyCosines)
        else np.array([cands.cosine.get(r, nan) for r in rowids], dtype=np.float64)
    )
    bm25 = np.array([cands.bm25.get(r, nan) for r in rowids], dtype=np.float64)
    has_vec, has_kw = ~np.isnan(cos), ~np.isnan(bm25)
    use_vec = req.mode != "keyword"
    use_kw = req.mode != "vector"
    v = k = np.full(len(rowids), np.nan)  # normalised parts; undefined under RRF
    if cfg.fusion == "rrf" and req.mode == "hybrid":
        relevance = fusion.rrf(
            [
                np.array([cands.vec_rank.get(r, 0) for r in rowids], dtype=np.float64),
                np.array([cands.kw_rank.get(r, 0) for r in rowids], dtype=np.float64),
            ],
            k=cfg.rrf_k,
        )
    else:
        if cfg.normalization == "absolute":
            floor = cfg.similarity_floor
            if floor is None:
                floor = float(getattr(embedder, "similarity_floor", 0.0))
            v = np.where(has_vec, fusion.absolute_similarity(np.nan_to_num(cos), floor), 0.0)
            full = cands.bm25_full or 1.0
            k = np.where(has_kw, np.clip(np.nan_to_num(bm25) / full, 0.0, 1.0), 0.0)
        else:
            v = fusion.minmax(np.nan_to_num(cos), has_vec)
            # BM25 is scaled from 0, not min-max: the weakest match still beats no match.
            top = float(np.nanmax(bm25)) if has_kw.any() else 0.0
            k = np.where(has_kw, np.nan_to_num(bm25) / top if top > 0 else 1.0, 0.0)
        w = cfg.keyword_weight if (use_vec and use_kw) else (0.0 if use_vec else 1.0)
        relevance = (
            fusion.weighted([v, k], [1.0 - w, w]) if w not in (0.0, 1.0) else (k if w else v)
        )
    context = np.zeros_like(relevance)
    if cfg.context_weight > 0 and cands.neighbours:
        index = {rid: i for i, rid in enumerate(rowids)}
        for i, rid in enumerate(rowids):
            near = [relevance[index[nb]] for nb in cands.neighbours.get(rid, ()) if nb in index]
            context[i] = max(near, default=0.0)
        relevance = (relevance + cfg.context_weight * context) / (1.0 + cfg.context_weight)
    named = _named(cfg, req, rowids, recs, cands)
    if named is not None:
        relevance = lift_named(relevance, named, cfg.named_time_weight)
    features, relevance_base = _conversation_lift(cfg, req, rowids, relevance, cands)
    if features:
        relevance = lift(cfg, relevance, features)
    # Current knowledge first: a turn whose facts were all superseded, and (when
    # history is asked for) a superseded fact, rank below what is true now.
    stale = cands.closed | cands.outdated if cands.outdated else cands.closed
    outdated = np.array([r in stale for r in rowids], dtype=bool)
    relevance = np.where(outdated, relevance * (1.0 - cfg.outdated_penalty), relevance)
    importance = np.array([r.importance for r in recs], dtype=np.float64)
    now = req.now
    age_days = np.array([max((now - r.occurred_at).total_seconds(), 0.0) / 86400 for r in recs])
    recency = 0.5 ** (age_days / cfg.recency_half_life_days)
    access = np.array([1.0 - 1.0 / (1.0 + r.access_count) for r in recs], dtype=np.float64)
    reranked = fusion.rerank(
        relevance,
        importance,
        recency,
        access,
        importance_weight=cfg.importance_weight,
        recency_weight=cfg.recency_weight,
        access_weight=cfg.access_weight,
    )
    kept = retention_many(recs, now, req.lifecycle)
    # A consolidation's sources stay in recall, downweighted below the semantic
    # record that stands for them.
    consolidated = np.array([r in cands.consolidated for r in rowids], dtype=bool)
    weight = np.where(consolidated, req.lifecycle.consolidated_weight, 1.0)
    final = weight * rank_scores(reranked, kept, req.lifecycle)
    fact_key = np.array([cands.fact_key.get(r, nan) for r in rowids], dtype=np.float64)
    return {
        "fact_key": fact_key,
        "outdated": outdated.astype(np.float64),
        "vector": cos,
        "keyword": bm25,
        "vector_norm": np.where(has_vec, v, np.nan),
        "keyword_norm": np.where(has_kw, k, np.nan),
        "context": context,
        "named_time": named if named is not None else np.full(len(rowids), nan),
        "relevance_base": relevance_base,
        **features,
        "relevance": relevance,
        "importance": importance,
        "recency": recency,
        "access": access,
        "reranked": reranked,
        "retention": kept,
        "consolidated": np.where(consolidated, weight, np.nan),
        "final": final,
    }


def _conversation_lift(
    cfg: RetrievalConfig,
    req: SearchRequest,
    rowids: list[int],
    relevance: np.ndarray,
    cands: Candidates,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The conversation features (:mod:`mnemolayer.retrieval.structure`) of the
    candidates, ``{}`` when they are off or the user has no sessions; and the relevance
    they lift (kept in the breakdown as ``relevance_base`` for ``bench tune``)."""
    conv = cands.conversation
    if conv is None or not conv.session or not cfg.uses_conversation:
        return {}, np.full(len(rowids), np.nan)
    features = conversation_features(req.query, rowids, relevance, conv)
    features.update(expansion_features(rowids, cands))
    return features, relevance.copy()


def _named(
    cfg: RetrievalConfig,
    req: SearchRequest,
    rowids: list[int],
    recs: list[RankSignals],
    cands: Candidates,
) -> np.ndarray | None:
    """Which candidates are on a day (or in the first conversation) the query names
    (:mod:`mnemolayer.retrieval.named_time`); ``None`` when it names none or the lift
    is off."""
    if cfg.named_time_weight <= 0:
        return None
    occurred = [r.occurred_at for r in recs]
    return named_mask(req.query, rowids, occurred, cands.conversation, req.now)
