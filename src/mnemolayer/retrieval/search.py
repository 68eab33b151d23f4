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
(:func:`mnemolayer.lifecycle.decay.reinforce`). When the embedder fails on the query, a
hybrid search goes on with the keyword candidates alone, so memories stay findable while
the model is down.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from mnemolayer.lifecycle.decay import reinforce
from mnemolayer.models import Hit
from mnemolayer.protocols import Reranker
from mnemolayer.query import Scope
from mnemolayer.retrieval.candidates import CandidateFinder, Candidates, SearchRequest
from mnemolayer.retrieval.expand import diversify_order, expand_candidates
from mnemolayer.retrieval.explain import ranking_explanation
from mnemolayer.retrieval.rerank import score
from mnemolayer.retrieval.reranking import rerank_order
from mnemolayer.retrieval.timewin import add_window_candidates, apply_window
from mnemolayer.retrieval.truth import (
    TruthPlan,
    apply_truth,
    collapse,
    fact_links,
    fact_partners,
    plan_truth,
    stated_only_by_expired,
    truth_request,
)
from mnemolayer.retrieval.vectors import VectorCache
from mnemolayer.store.where import active_where, scope_where
from mnemolayer.text.timeq import time_window

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

    #: The optional reranking step (:mod:`mnemolayer.retrieval.reranking`); ``None``: off.
    reranker: Reranker | None = None
    _links_cache: dict[
        str, tuple[int, list[tuple[int, int, bool]], dict[int, set[int]], frozenset[int]]
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._links_cache = {}

    def search(self, req: SearchRequest) -> list[Hit]:
        cfg = self.config
        n = req.pool if req.pool is not None else max(cfg.candidates, req.limit)
        q = self._embed_query(req) if req.mode != "keyword" else None
        if q is None and req.mode == "hybrid":  # the embedder is down: keywords alone
            req = replace(req, mode="keyword")
        allowed = self._allowed(req)
        cands = Candidates()
        if q is not None:
            self._vector_candidates(req, allowed, n, cands, q)
        window = time_window(req.query, req.as_of or req.now) if cfg.time_window else None
        if req.mode in ("hybrid", "keyword"):
            # The time phrase is not about the memories' words ("last", "week").
            kw_req = replace(req, query=window.rest) if window and window.rest.strip() else req
            self._keyword_candidates(kw_req, n, cands)
        if cfg.fact_keys and cands.entity_names:
            self._add_entity_facts(req, cands)
        if cfg.uses_conversation and cands.cosine:
            self._add_conversation(req, cands)
        if cfg.expands and cands.query_vector is not None:
            expand_candidates(self.store, self.vectors, self.embedder, cfg, req, cands)
        if cfg.context_weight > 0:
            self._add_neighbours(cands)
        links, partners_all, facts = self._links(req)
        # A fact stated only by expired memories is out of recall at once.
        hidden: set[int] = set()
        if links:
            expired = self.store.expired_records(
                req.scope.user_id, now=req.now, lifecycle=req.lifecycle
            )
            hidden = stated_only_by_expired(set(expired), partners_all, facts)
        may_return = self._may_return(req, allowed, cands)
        if window is not None:
            add_window_candidates(self.store, req.scope.user_id, window, cands, may_return)
        plan = TruthPlan()
        if cfg.truth:
            plan = plan_truth(self.store, truth_request(req, window), links, cands, may_return)
        if not cands.rowids:
            return []
        # Rank on a light projection; build full records only for the hits returned.
        signals = self.store.rank_signals(cands.rowids, user_id=req.scope.user_id)
        rowids = [r for r in cands.rowids if r in signals and r not in hidden]
        if not rowids:
            return []
        cands.consolidated = self._consolidated(req, rowids)
        scores = score(cfg, self.embedder, req, rowids, [signals[r] for r in rowids], cands)
        apply_truth(plan, rowids, scores, cfg.outdated_penalty)
        keep = None
        if window is not None:
            keep = apply_window(
                window,
                rowids,
                [signals[r] for r in rowids],
                self._event_times(req, rowids, partners_all, facts),
                scores,
                cfg.time_boost,
                cfg.time_min_hits,
            )
        order = np.argsort(-scores["final"], kind="stable")
        if cfg.mmr_lambda < 1.0 or cfg.session_cap > 0 or cfg.aggregation_session_cap > 0:
            order = diversify_order(scores["final"], rowids, cands, req, cfg)
        if keep is not None:
            order = order[keep[order]]
        if req.threshold is not None:
            order = order[scores["final"][order] >= req.threshold]
        if self.reranker is not None:
            args = (req.query, rowids, order, scores, facts, partners_all, self.store)
            order = rerank_order(self.reranker, cfg, *args)
        partners = partners_all if cfg.collapse_facts else {}
        # A message that stated a closed version of a fact never stands for a current one.
        stale = frozenset(cands.outdated).union(*(s for _, s in plan.groups))
        picked = collapse(order.tolist(), rowids, partners, req.limit, facts, stale)
        records = self.store.with_waiting_access(
            self.store.get_many_by_rowid(
                [r for _, _, group in picked for r in group], user_id=req.scope.user_id
            )
        )
        hits: list[Hit] = []
        # Each score's values at the shown candidates, as Python floats, in one step.
        shown = np.array([i for _, i, _ in picked], dtype=np.int64)
        columns = {k: v[shown].tolist() for k, v in scores.items()}
        for at, (ranked, i, group) in enumerate(picked):
            rid = rowids[i]
            if rid not in records:  # deleted by another process since ranking
                continue
            breakdown = {k: x for k, v in columns.items() if not math.isnan(x := float(v[at]))}
            breakdown["final"] = float(scores["final"][ranked])
            hit = Hit(
                memory=records[rid],
                score=float(scores["final"][ranked]),
                scores=breakdown,
                provenance=[records[r].id for r in group if r in records],
            )
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
            self.store.record_access(
                used,
                lambda rec: reinforce(rec, now, lifecycle).as_changes(),
                user_id=req.scope.user_id,
                flush_size=cfg.access_flush_size,
                flush_after_s=cfg.access_flush_seconds,
            )
        return hits

    def _event_times(
        self,
        req: SearchRequest,
        rowids: list[int],
        partners: dict[int, set[int]],
        facts: frozenset[int],
    ) -> dict[int, list[str]]:
        """When each candidate says its event happened besides its ``occurred_at``: a
        fact record's ``valid_from``, and a message's facts' (the dates extracted at
        write); one read by rowid."""
        linked = {r: [f for f in partners.get(r, ()) if f in facts] for r in rowids}
        wanted = set(rowids).union(*linked.values()) if linked else set(rowids)
        began = self.store.valid_froms(req.scope.user_id, sorted(wanted))
        out: dict[int, list[str]] = {}
        for r in rowids:
            times = [began[x] for x in (r, *linked[r]) if x in began]
            if times:
                out[r] = times
        return out

    def _links(
        self, req: SearchRequest
    ) -> tuple[list[tuple[int, int, bool]], dict[int, set[int]], frozenset[int]]:
        """The user's fact links, fact/message partners and fact rowids, kept per user
        generation (rebuilding them costs O(facts) per search)."""
        user = req.scope.user_id
        gen = self.store.generation(user)
        kept = self._links_cache.get(user)
        if kept is not None and kept[0] == gen:
            return kept[1], kept[2], kept[3]
        # Keyword mode reads the links without loading vectors (another model's vectors
        # may be stored, awaiting reindex).
        links = (
            fact_links(self.vectors.get(user))
            if req.mode != "keyword"
            else self.store.fact_links(user)
        )
        partners = fact_partners(links)
        facts = frozenset(f for f, _, _ in links)
        if len(self._links_cache) >= 64:
            self._links_cache.clear()
        self._links_cache[user] = (gen, links, partners, facts)
        return links, partners, facts

    @staticmethod
    def _may_return(
        req: SearchRequest, allowed: tuple[bool, np.ndarray] | None, cands: Candidates
    ) -> Callable[[int], bool]:
        """Whether this search may return a rowid of its user (in scope and active): the
        vector signal's cosines cover exactly those; keyword mode asks ``allowed``."""
        if req.mode != "keyword":
            return lambda rid: rid in cands.cosine
        if allowed is None:
            return lambda rid: True
        include, ids = allowed
        listed = set(ids.tolist())
        return (lambda rid: rid in listed) if include else (lambda rid: rid not in listed)
