"""Recall's candidates: which records a search may return, the vector candidates (exact,
or through the ANN index, :mod:`mnemolayer.retrieval.ann`), the keyword candidates (BM25
over the keyword index), and what fact keys, entities and session neighbours add.
:mod:`mnemolayer.retrieval.rerank` scores them; the searcher
(:class:`~mnemolayer.retrieval.search.Searcher`) runs the whole search.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder, embed_checked, is_outage
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.query import Scope
from mnemolayer.retrieval.ann import AnnConfig, UserAnn, ann_candidates
from mnemolayer.retrieval.bm25 import bm25_scores, idf
from mnemolayer.retrieval.conversation import ConversationIndex, build_conversation_index
from mnemolayer.retrieval.named_time import named_turns
from mnemolayer.retrieval.vectors import UserVectors, VectorCache
from mnemolayer.store.base import SQLStore
from mnemolayer.store.graph import GraphStore, normalize_name
from mnemolayer.text.terms import fts_match_expression, query_terms

__all__ = ["CandidateFinder", "Candidates", "Mode", "SearchRequest"]

Mode = Literal["hybrid", "vector", "keyword"]

log = logging.getLogger(__name__)


@dataclass
class SearchRequest:
    """One validated search.

    Attributes:
        lifecycle: retention settings (ranking weight, reinforcement).
        explain: attach :func:`~mnemolayer.retrieval.explain.ranking_explanation` to
            each hit.
        track: count the hits returned as accesses (when ``RetrievalConfig.track_access``
            is on too); off for look-ups that only explain.
        pool: candidates per signal; ``None``: ``max(RetrievalConfig.candidates, limit)``.
            ``Memory.explain`` ranks with a large ``limit`` and the usual pool, so a
            memory's rank is the one an ordinary search gives it.
        as_of: the moment whose truth the query asks for (``None``: now): the fact
            versions valid then rank first (:mod:`mnemolayer.retrieval.truth`), and
            relative time in the query ("last week") counts back from it.
    """

    query: str
    scope: Scope
    limit: int
    threshold: float | None
    mode: Mode
    now: datetime
    include_history: bool = False
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    explain: bool = False
    track: bool = True
    pool: int | None = None
    as_of: datetime | None = None


@dataclass
class Candidates:
    """What one search has found so far, by rowid: the candidates in the order found,
    their signals and ranks, and what ranking needs to know about them."""

    rowids: list[int] = field(default_factory=list)
    cosine: Mapping[int, float] = field(default_factory=dict)  # lazy on the ANN path
    vec_rank: dict[int, int] = field(default_factory=dict)
    bm25: dict[int, float] = field(default_factory=dict)
    kw_rank: dict[int, int] = field(default_factory=dict)
    neighbours: dict[int, tuple[int, ...]] = field(default_factory=dict)
    bm25_full: float = 0.0  # BM25 of a document matching every query term once
    fact_key: dict[int, float] = field(default_factory=dict)  # cosine via a fact key
    outdated: set[int] = field(default_factory=set)  # turns matched on a closed fact
    closed: frozenset[int] = frozenset()
    entity_names: list[tuple[str, str]] = field(default_factory=list)
    consolidated: set[int] = field(default_factory=set)  # sources of a consolidation
    conversation: ConversationIndex | None = None  # session structure (retrieval.structure)
    query_vector: np.ndarray | None = None  # the embedded query (retrieval.expand)
    entity: set[int] = field(default_factory=set)  # via the query's entity and predicate
    pivot: dict[int, float] = field(default_factory=dict)  # second-pass similarity


def _mentions(text: str, name: str) -> bool:
    """Whether normalised ``text`` names ``name``: as a whole word for alphabetic
    names ("Ann" is not in "Annual"), as a substring for CJK ones."""
    if len(name) < 2:
        return False
    at = text.find(name)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() and before.isascii()) and not (
            after.isalnum() and after.isascii()
        ):
            return True
        at = text.find(name, at + 1)
    return False


class CandidateFinder:
    """Finds the candidates of a :class:`SearchRequest` in one store with one embedder
    (the base of :class:`~mnemolayer.retrieval.search.Searcher`, which ranks them)."""

    def __init__(self, store: SQLStore, embedder: Embedder, config: RetrievalConfig) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.vectors = VectorCache(store, embedder.dim)
        #: When a user's vector search goes through the ANN index (retrieval.ann).
        self.ann = AnnConfig()
        # BM25 collection statistics per user, with the store's change token they hold for.
        self._stats: dict[str, tuple[object, tuple[int, float]]] = {}
        self._stats_token: object = None
        self.last_embed_seconds = 0.0

    def _allowed(self, req: SearchRequest) -> tuple[bool, np.ndarray] | None:
        """Which rowids vector search may return: ``(True, ids)`` only these, ``(False, ids)``
        all but these, ``None`` all of the user's."""
        scope = req.scope
        by_kind = scope.kinds is not None and scope == Scope(scope.user_id, kinds=scope.kinds)
        # The kind map first: a record written after it is left out, never let in unchecked.
        kinds = self.vectors.kind_rowids(scope.user_id) if by_kind else {}
        allowed = self.store.recall_allowed(
            Scope(scope.user_id) if by_kind else scope,
            now=req.now,
            include_history=req.include_history,
            lifecycle=req.lifecycle,
        )
        if by_kind:
            # Narrowed by kind alone: the user's records of those kinds (known in process
            # per generation) less the inactive ones, instead of reading every record in
            # scope per search. A record added since that generation is left out, as
            # vector search leaves it out until it reloads.
            wanted = [kinds[k] for k in dict.fromkeys(scope.kinds or ()) if k in kinds]
            ids = np.concatenate(wanted) if wanted else np.empty(0, dtype=np.int64)
            if allowed is not None:
                _, inactive = allowed  # (False, ids): the unscoped form's only answer
                ids = np.setdiff1d(ids, np.fromiter(inactive, dtype=np.int64), assume_unique=True)
            return True, ids
        if allowed is None:
            return None
        include, found = allowed
        return include, np.fromiter(found, dtype=np.int64, count=len(found))

    def _embed_query(self, req: SearchRequest) -> np.ndarray | None:
        """The query's vector; ``None`` (logged as a warning) when the embedder cannot
        answer a hybrid search (it raises anything but :class:`EmbedderError`, or an
        :class:`EmbedderUnavailableError`: an endpoint down), which then
        ranks on keywords alone: memories stay findable while the model is down. A
        vector-only search raises the embedder's error; a wrong answer always raises."""
        try:
            return self._query_vector(req.query)
        except Exception as exc:
            if not is_outage(exc) or req.mode != "hybrid":
                raise
            log.warning(
                "embedder %r failed on the query; searching by keyword only",
                self.embedder.name, exc_info=True,
            )  # fmt: skip
            return None

    def _query_vector(self, query: str) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return np.asarray(embed_checked(self.embedder, [query], "query")[0])
        finally:
            self.last_embed_seconds = time.perf_counter() - t0

    def _vector_candidates(
        self,
        req: SearchRequest,
        allowed: tuple[bool, np.ndarray] | None,
        n: int,
        cands: Candidates,
        q: np.ndarray | None = None,
    ) -> None:
        """The vector candidates of ``req``, for the query vector ``q`` (``None``:
        embedded here)."""
        q = self._query_vector(req.query) if q is None else q
        cands.query_vector = q
        uv = self.vectors.get(req.scope.user_id)
        if uv.matrix.shape[0] == 0:
            return
        if self.ann.use_for(uv.matrix.shape[0]) and self._ann_candidates(
            req, uv, q.astype(np.float32), allowed, n, cands
        ):
            return
        chunk_sims = uv.matrix @ q.astype(np.float32)
        sims = (
            chunk_sims
            if len(uv.unique) == len(uv.rowids)
            else np.maximum.reduceat(chunk_sims, uv.starts)
        )
        ids = uv.unique
        sims = self._fact_sims(req, uv, sims, cands)
        cands.closed, cands.entity_names = uv.closed, uv.entity_names
        if allowed is not None:
            include, listed = allowed
            keep = np.isin(ids, listed) if include else ~np.isin(ids, listed)
            ids, sims = ids[keep], sims[keep]
        if ids.size == 0:
            return
        top = (
            np.argpartition(-sims, min(n, ids.size) - 1)[:n]
            if ids.size > n
            else np.arange(ids.size)
        )
        top = top[np.argsort(-sims[top], kind="stable")]
        for rank, i in enumerate(top, start=1):
            rid = int(ids[i])
            cands.rowids.append(rid)
            cands.vec_rank[rid] = rank
        # Cosine for every record in scope, so keyword-only candidates get one too.
        cands.cosine = dict(zip(ids.tolist(), sims.tolist(), strict=True))
        cands.neighbours = uv.neighbours

    def _ann_candidates(
        self,
        req: SearchRequest,
        uv: UserVectors,
        q: np.ndarray,
        allowed: tuple[bool, np.ndarray] | None,
        n: int,
        cands: Candidates,
    ) -> bool:
        """Vector candidates through the user's ANN index (:mod:`.ann`); ``False`` when
        it cannot serve this search and exact search must."""
        if uv.ann is None or uv.ann.config != self.ann:
            uv.ann = UserAnn(self.ann, uv.matrix.shape[1])
        found = ann_candidates(
            uv, uv.ann, q, n, allowed, lambda sims: self._fact_sims(req, uv, sims, cands)
        )
        if found is None:
            return False
        ranked, cands.cosine = found
        for rank, rid in enumerate(ranked, start=1):
            cands.rowids.append(rid)
            cands.vec_rank[rid] = rank
        cands.closed, cands.entity_names = uv.closed, uv.entity_names
        cands.neighbours = uv.neighbours
        return True

    def _fact_sims(
        self, req: SearchRequest, uv: UserVectors, sims: np.ndarray, cands: Candidates
    ) -> np.ndarray:
        """Outdated marks and fact-key lifts on the per-record cosines ``sims`` (by
        position in ``uv.unique``)."""
        if uv.link_fact.size:
            self._mark_outdated(uv, sims, cands)
            if self.config.fact_keys:
                sims = self._through_fact_keys(req, uv, sims, cands)
        return sims

    @staticmethod
    def _mark_outdated(uv: UserVectors, sims: np.ndarray, cands: Candidates) -> None:
        """A message is outdated for this query when one of its facts that is no longer
        true matches the query about as well as (within :attr:`OUTDATED_MARGIN` cosine
        of) its best current fact: "My friend Ana lives in Lima", asked "where does my
        friend Ana live?" after she moved, is outdated although "Ana is a friend" holds."""
        closed = ~uv.link_current
        if not closed.any():
            return
        best_closed = np.full(sims.shape, -np.inf)
        np.maximum.at(best_closed, uv.link_source[closed], sims[uv.link_fact[closed]])
        best_current = np.full(sims.shape, -np.inf)
        if uv.link_current.any():
            cur = uv.link_current
            np.maximum.at(best_current, uv.link_source[cur], sims[uv.link_fact[cur]])
        competing = best_closed >= best_current - CandidateFinder.OUTDATED_MARGIN
        for i in np.flatnonzero(competing & np.isfinite(best_closed)).tolist():
            cands.outdated.add(int(uv.unique[i]))

    @staticmethod
    def _through_fact_keys(
        req: SearchRequest, uv: UserVectors, sims: np.ndarray, cands: Candidates
    ) -> np.ndarray:
        """A record derived into facts is also found through its facts' sentences: its
        cosine becomes the best of its own and its (current) facts' (fact-augmented keys,
        LongMemEval §5). Closed facts count only when history is asked for."""
        use = uv.link_current if not req.include_history else np.ones_like(uv.link_current)
        if not use.any():
            return sims
        via = np.full(sims.shape, -np.inf)
        np.maximum.at(via, uv.link_source[use], sims[uv.link_fact[use]])
        lifted = via > sims
        for i in np.flatnonzero(lifted).tolist():
            cands.fact_key[int(uv.unique[i])] = float(via[i])
        return np.where(lifted, via, sims)

    #: How close (in cosine) a closed fact's match must come to the best current fact's
    #: for its message to count as outdated for the query.
    OUTDATED_MARGIN = 0.05

    #: At most this many current facts per query join the candidates through the
    #: entities the query names.
    ENTITY_FACTS = 20

    def _add_entity_facts(self, req: SearchRequest, cands: Candidates) -> None:
        """Entities the query names pull their current facts (and, through the fact
        keys, the messages they came from) into the candidates."""
        query = normalize_name(req.query)
        named = [eid for norm, eid in cands.entity_names if _mentions(query, norm)]
        if not named:
            return
        graph = GraphStore(self.store)
        seen = set(cands.rowids)
        for rid in graph.current_fact_rowids(req.scope.user_id, named, self.ENTITY_FACTS):
            if rid not in seen and rid in cands.cosine:  # in scope, active
                seen.add(rid)
                cands.rowids.append(rid)

    def _add_conversation(self, req: SearchRequest, cands: Candidates) -> None:
        """Attach the user's session structure (built once per store generation) and
        widen the pool with the turns of the days or conversation the query names
        (:mod:`.named_time`) and with the best turns of the sessions of the best vector
        candidates (``RetrievalConfig.session_turns`` / ``top_sessions``)."""
        uv = self.vectors.get(req.scope.user_id)
        if uv.conversation is None:
            uv.conversation = build_conversation_index(self.store, req.scope.user_id)
        conv = cands.conversation = uv.conversation
        cfg = self.config
        if cfg.named_time_weight > 0:  # the turns of a day or conversation the query names
            seen = set(cands.rowids)
            for rid in named_turns(req.query, conv, req.now):
                if rid not in seen and rid in cands.cosine:
                    seen.add(rid)
                    cands.rowids.append(rid)
        if cfg.session_turns <= 0 or cfg.top_sessions <= 0 or not conv.turns:
            return
        ranked = sorted(cands.vec_rank, key=cands.vec_rank.__getitem__)
        top: list[int] = []
        for rid in ranked:
            s = conv.session.get(rid)
            if s is not None and s not in top:
                top.append(s)
                if len(top) >= cfg.top_sessions:
                    break
        seen = set(cands.rowids)
        for s in top:
            turns = [r for r in conv.turns[s] if r in cands.cosine]
            turns.sort(key=lambda r: -cands.cosine[r])
            for rid in turns[: cfg.session_turns]:
                if rid not in seen:
                    seen.add(rid)
                    cands.rowids.append(rid)

    @staticmethod
    def _add_neighbours(cands: Candidates) -> None:
        """Add the turns next to each candidate in its session (when in scope), so a reply
        whose own words miss the query can rise on its neighbour's relevance."""
        seen = set(cands.rowids)
        for rid in list(cands.rowids):
            for nb in cands.neighbours.get(rid, ()):
                if nb not in seen and nb in cands.cosine:
                    seen.add(nb)
                    cands.rowids.append(nb)

    def _keyword_candidates(self, req: SearchRequest, n: int, cands: Candidates) -> None:
        terms = [t for t in query_terms(req.query) if fts_match_expression([t])]
        # An encrypted store indexes blind terms: the query's are blinded the same way.
        terms = list(dict.fromkeys(self.store.blind_query_terms(req.scope.user_id, terms)))
        match = fts_match_expression(terms)
        if match is None:
            return
        rows = self.store.keyword_candidates(
            req.scope,
            match,
            n,
            now=req.now,
            include_history=req.include_history,
            lifecycle=req.lifecycle,
        )
        if not rows:
            return
        n_docs, avg_len = self._text_stats(req.scope.user_id)
        df = self.store.term_doc_counts(terms, user_id=req.scope.user_id)
        scores = bm25_scores(terms, [text.split() for _, text in rows], df, n_docs, avg_len)
        # A document holding every query term once, at average length, scores Σ idf.
        n = max(n_docs, 1)
        cands.bm25_full = sum(idf(n, min(df.get(t, 0), n)) for t in terms)
        ranked = sorted(zip((r for r, _ in rows), scores, strict=True), key=lambda x: -x[1])
        seen = set(cands.rowids)
        for rank, (rid, score) in enumerate(ranked, start=1):
            cands.bm25[rid] = score
            cands.kw_rank[rid] = rank
            if rid not in seen:
                cands.rowids.append(rid)

    def _consolidated(self, req: SearchRequest, rowids: list[int]) -> set[int]:
        """Which of ``rowids`` maintenance consolidated into a semantic record that this
        search may return (in scope and active): only those are downweighted, since a
        search that cannot return the semantic record (``kinds=["episodic"]``, a session
        or metadata filter) has nothing to rank above them."""
        if req.lifecycle.consolidated_weight >= 1.0:
            return set()  # weight 1: nothing to downweight
        return self.store.consolidated_in_scope(
            rowids,
            req.scope,
            now=req.now,
            include_history=req.include_history,
            lifecycle=req.lifecycle,
        )

    #: Users whose BM25 statistics are kept between searches (all are dropped at once
    #: when this many are held, and when the store changes: a deleted user's counts do
    #: not outlive the next search).
    STATS_USERS = 4096

    def _text_stats(self, user_id: str) -> tuple[int, float]:
        """BM25 collection statistics ``(N, mean length)``, recomputed when the store's
        data changes. The keyword index holds per-user terms (so document
        frequencies are per user), N is the user's record count, to match; the mean
        length is the store's (a property of the kind of text, not of the user, and one
        read; :meth:`SQLiteStore.text_stats`). The PostgreSQL store does the same."""
        token = self.store.change_token()  # read first: a change while computing shows
        if token != self._stats_token:
            self._stats, self._stats_token = {}, token
        kept = self._stats.get(user_id)
        if kept is not None and kept[0] == token:
            return kept[1]
        stats = self.store.text_stats(user_id)
        if len(self._stats) >= self.STATS_USERS:
            self._stats = {}
        self._stats[user_id] = (token, stats)
        return stats
