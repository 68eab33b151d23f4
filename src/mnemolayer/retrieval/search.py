"""Hybrid recall: vector ∪ keyword candidates → fusion → rerank → threshold.

The flow (DESIGN.md, "Flow of one turn"): candidates come from exact cosine search over
the user's vectors (cached in process, reloaded when the store's per-user generation
changes; beyond ``AnnConfig.threshold`` vectors, proposed by an ANN index and rescored
exactly, :mod:`mnemolayer.retrieval.ann`) and from BM25 over the FTS5 keyword index;
both are fused into a relevance in [0, 1] and reranked with importance, recency and
access counts; the result is scaled by the memory's retention
(:mod:`mnemolayer.lifecycle.decay`: ``score · (1 - w + w · retention)``,
``w = LifecycleConfig.ranking_weight``), and the sources of a consolidation are
downweighted by ``LifecycleConfig.consolidated_weight`` when the semantic record that
consolidates them is in the search's scope.
Expired (own ``expires_at`` or the kind's TTL), archived and merged records are never
candidates (:func:`~mnemolayer.store.where.active_where`).
Returned hits are counted as accesses, which reinforces them
(:func:`mnemolayer.lifecycle.decay.reinforce`).
"""

from __future__ import annotations

import numpy as np

from mnemolayer.lifecycle.decay import reinforce
from mnemolayer.models import Hit
from mnemolayer.query import Scope
from mnemolayer.retrieval.candidates import CandidateFinder, Candidates, SearchRequest
from mnemolayer.retrieval.expand import diversify_order, expand_candidates
from mnemolayer.retrieval.explain import ranking_explanation
from mnemolayer.retrieval.rerank import score
from mnemolayer.retrieval.vectors import VectorCache
from mnemolayer.store.where import active_where, scope_where

__all__ = [
    "Scope",
    "SearchRequest",
    "Searcher",
    "VectorCache",
    "active_where",
    "ranking_explanation",
    "scope_where",
]


class Searcher(CandidateFinder):
    """Runs :class:`SearchRequest` s against one store with one embedder: finds the
    candidates (:class:`~mnemolayer.retrieval.candidates.CandidateFinder`), scores them
    (:func:`~mnemolayer.retrieval.rerank.score`) and returns the best.

    Attributes:
        last_embed_seconds: time the last search spent embedding its query (benchmarks
            report search latency with and without it).
    """

    def search(self, req: SearchRequest) -> list[Hit]:
        cfg = self.config
        n = req.pool if req.pool is not None else max(cfg.candidates, req.limit)
        allowed = self._allowed(req)
        cands = Candidates()
        if req.mode in ("hybrid", "vector"):
            self._vector_candidates(req, allowed, n, cands)
        if req.mode in ("hybrid", "keyword"):
            self._keyword_candidates(req, n, cands)
        if cfg.fact_keys and cands.entity_names:
            self._add_entity_facts(req, cands)
        if cfg.uses_conversation and cands.cosine:
            self._add_conversation(req, cands)
        if cfg.expands and cands.query_vector is not None:
            expand_candidates(self.store, self.vectors, self.embedder, cfg, req, cands)
        if cfg.context_weight > 0:
            self._add_neighbours(cands)
        if not cands.rowids:
            return []
        # Rank on a light projection; build full records only for the hits returned.
        signals = self.store.rank_signals(cands.rowids)
        rowids = [r for r in cands.rowids if r in signals]
        cands.consolidated = self._consolidated(req, rowids)
        scores = score(cfg, self.embedder, req, rowids, [signals[r] for r in rowids], cands)
        order = np.argsort(-scores["final"], kind="stable")
        if cfg.mmr_lambda < 1.0 or cfg.session_cap > 0 or cfg.aggregation_session_cap > 0:
            order = diversify_order(scores["final"], rowids, cands, req, cfg)
        if req.threshold is not None:
            order = order[scores["final"][order] >= req.threshold]
        order = order[: req.limit]
        records = self.store.get_many_by_rowid([rowids[i] for i in order])
        hits: list[Hit] = []
        for i in order:
            rid = rowids[i]
            if rid not in records:  # deleted by another process since ranking
                continue
            breakdown = {k: float(v[i]) for k, v in scores.items() if not np.isnan(v[i])}
            hit = Hit(memory=records[rid], score=float(scores["final"][i]), scores=breakdown)
            if req.explain:
                hit.explanation = ranking_explanation(
                    hit.memory, breakdown, len(hits) + 1, req.now, req.lifecycle, cfg
                )
            hits.append(hit)
        # Only hits that matched count as used: a zero-score filler at the end of the
        # list must not be kept alive by queries about something else.
        used = [h.memory.id for h in hits if h.score > 0.0]
        if cfg.track_access and req.track and used:
            lifecycle, now = req.lifecycle, req.now
            self.store.record_access(used, lambda rec: reinforce(rec, now, lifecycle).as_changes())
        return hits
