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
candidates (:func:`active_where`).
Returned hits are counted as accesses, which reinforces them
(:func:`mnemolayer.lifecycle.decay.reinforce`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.decay import explain_retention, rank_score, reinforce, retention_many
from mnemolayer.lifecycle.expiry import expired_where
from mnemolayer.models import Hit, MemoryRecord
from mnemolayer.query import Filter, compile_postgres, compile_sqlite, compile_udf
from mnemolayer.retrieval import fusion
from mnemolayer.retrieval.ann import AnnConfig, LazyCosines, UserAnn, ann_candidates
from mnemolayer.retrieval.bm25 import bm25_scores, idf
from mnemolayer.store.graph import GraphStore, normalize_name
from mnemolayer.store.sqlite.store import RankSignals, SQLiteStore
from mnemolayer.text.terms import fts_match_expression, query_terms

__all__ = [
    "Scope",
    "SearchRequest",
    "Searcher",
    "VectorCache",
    "active_where",
    "ranking_explanation",
    "scope_where",
]

Mode = Literal["hybrid", "vector", "keyword"]


@dataclass(frozen=True)
class Scope:
    """Which records a read may see: always one user, optionally narrower."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    kinds: tuple[str, ...] | None = None
    filter: Filter | None = None
    #: The store is encrypted: the metadata filter runs in Python on decrypted metadata.
    encrypted: bool = False
    #: The store's SQL dialect (``store.dialect``): how the metadata filter is compiled.
    dialect: str = "sqlite"


def scope_where(scope: Scope, prefix: str = "") -> tuple[str, list[Any]]:
    """SQL boolean expression (and its parameters) for ``scope`` minus ``user_id``, over
    the ``memories`` table aliased by ``prefix`` (``"m."`` or ``""``)."""
    parts: list[str] = []
    params: list[Any] = []
    if scope.agent_id is not None:
        parts.append(f"{prefix}agent_id = ?")
        params.append(scope.agent_id)
    if scope.session_id is not None:
        parts.append(f"{prefix}session_id = ?")
        params.append(scope.session_id)
    if scope.kinds:
        parts.append(f"{prefix}kind IN ({','.join('?' * len(scope.kinds))})")
        params.extend(scope.kinds)
    if scope.filter is not None:
        if scope.encrypted:
            sql, fparams = compile_udf(scope.filter, prefix)
        elif scope.dialect == "postgres":
            sql, fparams = compile_postgres(scope.filter, column=f"{prefix}metadata")
        else:
            sql, fparams = compile_sqlite(scope.filter, column=f"{prefix}metadata")
        parts.append(f"({sql})")
        params.extend(fparams)
    return (" AND ".join(parts) or "1"), params


def active_where(
    now: datetime,
    prefix: str = "",
    *,
    include_history: bool = False,
    lifecycle: LifecycleConfig | None = None,
) -> tuple[str, list[Any]]:
    """SQL (and its parameters) that excludes expired, archived and merged records, and
    superseded ones unless ``include_history``.

    Expired means past the *effective* expiry: the record's own ``expires_at``, else its
    kind's ``lifecycle.ttl_days`` (:func:`~mnemolayer.lifecycle.expiry.expired_where`,
    the same condition maintenance deletes by). ``lifecycle=None`` applies no default
    TTL (only the records' own ``expires_at``). A pinned record never expires (nor does
    maintenance delete it)."""
    expired, params = expired_where(now, lifecycle, prefix)
    active = (
        f"({prefix}pinned = 1 OR NOT {expired}) "
        f"AND {prefix}archived_at IS NULL AND {prefix}merged_into IS NULL"
    )
    if include_history:
        return active, params
    return f"{active} AND {prefix}superseded_by IS NULL", params


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


@dataclass
class _UserVectors:
    generation: int
    rowids: np.ndarray  # (m,) one per chunk, sorted
    matrix: np.ndarray  # (m, dim)
    unique: np.ndarray  # (u,) distinct rowids
    starts: np.ndarray  # (u,) first chunk of each
    neighbours: dict[int, tuple[int, ...]]  # rowid → adjacent turns in its session
    # Fact keys: semantic record → the record it was derived from, as positions in
    # ``unique``; ``link_current`` says whether the fact is still current.
    link_fact: np.ndarray
    link_source: np.ndarray
    link_current: np.ndarray
    closed: frozenset[int]  # superseded semantic records
    entity_names: list[tuple[str, str]]  # (normalised name or alias, entity id)
    ann: UserAnn | None = None  # ANN index (retrieval.ann), handed on across reloads


class VectorCache:
    """Per-user chunk vectors in memory; reloaded when the user's generation changes.

    Never the source of truth: the store holds the vectors, this only avoids re-reading
    them for every query (a cheap generation check per search instead).
    """

    def __init__(self, store: SQLiteStore, dim: int, max_users: int = 64) -> None:
        self._store = store
        self._dim = dim
        self._max_users = max_users
        self._users: dict[str, _UserVectors] = {}
        self._lock = threading.Lock()

    def get(self, user_id: str) -> _UserVectors:
        gen = self._store.generation(user_id)
        with self._lock:
            cached = self._users.get(user_id)
            if cached is not None and cached.generation == gen:
                return cached
        rowids, matrix = self._store.load_vectors(user_id, self._dim)
        unique, starts = np.unique(rowids, return_index=True)
        order = self._store.session_order(user_id)
        neighbours: dict[int, tuple[int, ...]] = {}
        for i, rid in enumerate(order):
            if rid >= 0:
                around = (order[i - 1] if i else -1, order[i + 1] if i + 1 < len(order) else -1)
                neighbours[rid] = tuple(n for n in around if n >= 0)
        links = self._store.fact_links(user_id)
        pos = {int(r): i for i, r in enumerate(unique.tolist())}
        known = [(f, s, cur) for f, s, cur in links if f in pos and s in pos]
        link_fact = np.array([pos[f] for f, _, _ in known], dtype=np.int64)
        link_source = np.array([pos[s] for _, s, _ in known], dtype=np.int64)
        link_current = np.array([cur for _, _, cur in known], dtype=bool)
        closed = frozenset(f for f, _, cur in links if not cur)
        entry = _UserVectors(
            gen, rowids, matrix, unique, starts, neighbours,
            link_fact, link_source, link_current, closed,
            GraphStore(self._store).entity_names(user_id),
        )  # fmt: skip
        if cached is not None:  # the index follows the changes (retrieval.ann)
            entry.ann = cached.ann
        with self._lock:
            if len(self._users) >= self._max_users and user_id not in self._users:
                # Oldest first, but users with an ANN index (costly to rebuild) last.
                first = next(iter(self._users))
                self._users.pop(next((u for u, e in self._users.items() if e.ann is None), first))
            self._users[user_id] = entry
        return entry


@dataclass
class SearchRequest:
    """One validated search.

    Attributes:
        lifecycle: retention settings (ranking weight, reinforcement).
        explain: attach :func:`ranking_explanation` to each hit.
        track: count the hits returned as accesses (when ``RetrievalConfig.track_access``
            is on too); off for look-ups that only explain.
        pool: candidates per signal; ``None``: ``max(RetrievalConfig.candidates, limit)``.
            ``Memory.explain`` ranks with a large ``limit`` and the usual pool, so a
            memory's rank is the one an ordinary search gives it.
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


@dataclass
class _Candidates:
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


class Searcher:
    """Runs :class:`SearchRequest` s against one store with one embedder.

    Attributes:
        last_embed_seconds: time the last search spent embedding its query (benchmarks
            report search latency with and without it).
    """

    def __init__(self, store: SQLiteStore, embedder: Embedder, config: RetrievalConfig) -> None:
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

    def search(self, req: SearchRequest) -> list[Hit]:
        cfg = self.config
        n = req.pool if req.pool is not None else max(cfg.candidates, req.limit)
        allowed = self._allowed(req)
        cands = _Candidates()
        if req.mode in ("hybrid", "vector"):
            self._vector_candidates(req, allowed, n, cands)
        if req.mode in ("hybrid", "keyword"):
            self._keyword_candidates(req, n, cands)
        if cfg.fact_keys and cands.entity_names:
            self._add_entity_facts(req, cands)
        if cfg.context_weight > 0:
            self._add_neighbours(cands)
        if not cands.rowids:
            return []
        # Rank on a light projection; build full records only for the hits returned.
        signals = self.store.rank_signals(cands.rowids)
        rowids = [r for r in cands.rowids if r in signals]
        cands.consolidated = self._consolidated(req, rowids)
        scores = self._score(req, rowids, [signals[r] for r in rowids], cands)
        order = np.argsort(-scores["final"], kind="stable")
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

    # -- candidates ------------------------------------------------------------------

    def _allowed(self, req: SearchRequest) -> tuple[bool, np.ndarray] | None:
        """Which rowids vector search may return: ``(True, ids)`` only these, ``(False, ids)``
        all but these, ``None`` all of the user's."""
        where, params = scope_where(req.scope)
        act, act_params = active_where(
            req.now, include_history=req.include_history, lifecycle=req.lifecycle
        )
        if where == "1":
            # Fast path: only inactive records need excluding; without default TTLs those
            # are in the partial index of inactive records.
            maybe = (
                "expires_at IS NOT NULL OR superseded_by IS NOT NULL "
                "OR archived_at IS NOT NULL OR merged_into IS NOT NULL"
            )
            if req.lifecycle.ttl_days:
                maybe += f" OR kind IN ({','.join('?' * len(req.lifecycle.ttl_days))})"
            inactive = self.store.rowids(
                f"user_id = ? AND ({maybe}) AND NOT ({act})",
                [req.scope.user_id, *(k.value for k in req.lifecycle.ttl_days), *act_params],
            )
            if not inactive:
                return None
            return False, np.fromiter(inactive, dtype=np.int64, count=len(inactive))
        ids = self.store.rowids(
            f"user_id = ? AND {where} AND {act}", [req.scope.user_id, *params, *act_params]
        )
        return True, np.fromiter(ids, dtype=np.int64, count=len(ids))

    def _vector_candidates(
        self,
        req: SearchRequest,
        allowed: tuple[bool, np.ndarray] | None,
        n: int,
        cands: _Candidates,
    ) -> None:
        t0 = time.perf_counter()
        q = self.embedder.embed([req.query], "query")[0]
        self.last_embed_seconds = time.perf_counter() - t0
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
        uv: _UserVectors,
        q: np.ndarray,
        allowed: tuple[bool, np.ndarray] | None,
        n: int,
        cands: _Candidates,
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
        self, req: SearchRequest, uv: _UserVectors, sims: np.ndarray, cands: _Candidates
    ) -> np.ndarray:
        """Outdated marks and fact-key lifts on the per-record cosines ``sims`` (by
        position in ``uv.unique``)."""
        if uv.link_fact.size:
            self._mark_outdated(uv, sims, cands)
            if self.config.fact_keys:
                sims = self._through_fact_keys(req, uv, sims, cands)
        return sims

    @staticmethod
    def _mark_outdated(uv: _UserVectors, sims: np.ndarray, cands: _Candidates) -> None:
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
        competing = best_closed >= best_current - Searcher.OUTDATED_MARGIN
        for i in np.flatnonzero(competing & np.isfinite(best_closed)).tolist():
            cands.outdated.add(int(uv.unique[i]))

    @staticmethod
    def _through_fact_keys(
        req: SearchRequest, uv: _UserVectors, sims: np.ndarray, cands: _Candidates
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

    def _add_entity_facts(self, req: SearchRequest, cands: _Candidates) -> None:
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

    @staticmethod
    def _add_neighbours(cands: _Candidates) -> None:
        """Add the turns next to each candidate in its session (when in scope), so a reply
        whose own words miss the query can rise on its neighbour's relevance."""
        seen = set(cands.rowids)
        for rid in list(cands.rowids):
            for nb in cands.neighbours.get(rid, ()):
                if nb not in seen and nb in cands.cosine:
                    seen.add(nb)
                    cands.rowids.append(nb)

    def _keyword_candidates(self, req: SearchRequest, n: int, cands: _Candidates) -> None:
        terms = [t for t in query_terms(req.query) if fts_match_expression([t])]
        # An encrypted store indexes blind terms: the query's are blinded the same way.
        terms = list(dict.fromkeys(self.store.blind_query_terms(req.scope.user_id, terms)))
        match = fts_match_expression(terms)
        if match is None:
            return
        where, params = scope_where(req.scope, "m.")
        act, act_params = active_where(
            req.now, "m.", include_history=req.include_history, lifecycle=req.lifecycle
        )
        rows = self.store.keyword_matches(
            req.scope.user_id, match, f"{where} AND {act}", [*params, *act_params], n
        )
        if not rows:
            return
        n_docs, avg_len = self._text_stats(req.scope.user_id)
        df = self.store.term_doc_counts(terms)
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
        where, params = scope_where(req.scope, "t.")
        act, act_params = active_where(
            req.now, "t.", include_history=req.include_history, lifecycle=req.lifecycle
        )
        target = (
            "EXISTS (SELECT 1 FROM memories t WHERE t.id = memories.consolidated_into "
            f"AND t.user_id = ? AND {where} AND {act})"
        )
        out: set[int] = set()
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            out |= self.store.rowids(
                f"rowid IN ({','.join('?' * len(part))}) AND consolidated_into IS NOT NULL "
                f"AND {target}",
                [*part, req.scope.user_id, *params, *act_params],
            )
        return out

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

    # -- scoring ---------------------------------------------------------------------

    def _score(
        self,
        req: SearchRequest,
        rowids: list[int],
        recs: list[RankSignals],
        cands: _Candidates,
    ) -> dict[str, np.ndarray]:
        cfg = self.config
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
                    floor = float(getattr(self.embedder, "similarity_floor", 0.0))
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
        # Current knowledge first: a turn whose facts were all superseded, and (when
        # history is asked for) a superseded fact, rank below what is true now.
        outdated = np.array(
            [(r in cands.closed) or (r in cands.outdated) for r in rowids],
            dtype=bool,
        )
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
        final = weight * np.array(
            [
                rank_score(float(f), float(k), req.lifecycle)
                for f, k in zip(reranked, kept, strict=True)
            ],
            dtype=np.float64,
        )
        fact_key = np.array([cands.fact_key.get(r, nan) for r in rowids], dtype=np.float64)
        return {
            "fact_key": fact_key,
            "outdated": outdated.astype(np.float64),
            "vector": cos,
            "keyword": bm25,
            "vector_norm": np.where(has_vec, v, np.nan),
            "keyword_norm": np.where(has_kw, k, np.nan),
            "context": context,
            "relevance": relevance,
            "importance": importance,
            "recency": recency,
            "access": access,
            "reranked": reranked,
            "retention": kept,
            "consolidated": np.where(consolidated, weight, np.nan),
            "final": final,
        }


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
