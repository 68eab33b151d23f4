"""Multi-hop and aggregation recall: candidates found beyond the first pass, and a top-k
spread across sessions.

An aggregated answer ("camping, pottery, painting": "What activities does Melanie do?")
lives in turns of different sessions that share few words with the question. Three
additions to the candidate pool, each a :class:`~mnemolayer.config.RetrievalConfig` knob:

* **entity-centred expansion** (:func:`add_entity_predicate`, ``entity_expansion``): the
  entities the query names, their facts (subject or object), the predicate of the fact
  that best matches the query; every turn stating a fact with that entity and predicate
  joins the candidates and gets the ``entity`` feature (1).
* **a second, pivoting pass** (:func:`add_pivot`, ``pivot_turns``): the query vector moved
  towards the vectors of the first pass's best hits (Rocchio relevance feedback,
  Rocchio 1971, as the recursive retrieval of Khattab et al.'s multi-hop setting), the
  best turns of that pass join the candidates, and every candidate gets the ``pivot``
  feature (its pivoted similarity, absolute-normalised) for a discounted lift.
* **memory chains** (:func:`add_chains`, ``chain_turns``): the turn each of the best
  vector candidates replies to (the previous turn of its session).

And one re-ordering of the ranked list, :func:`diversify` (``mmr_lambda``,
``session_cap``): maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998) with
session identity as the similarity, so that a top-k holding five turns of one session
gives way to the best turn of another.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

# The whole-word name match that the entity facts of the first pass use too.
from mnemolayer.retrieval.candidates import _mentions
from mnemolayer.store.graph import GraphStore, normalize_name

if TYPE_CHECKING:
    from mnemolayer.config import RetrievalConfig
    from mnemolayer.embed.base import Embedder
    from mnemolayer.retrieval.candidates import Candidates, SearchRequest
    from mnemolayer.retrieval.vectors import UserVectors, VectorCache
    from mnemolayer.store.base import SQLStore

__all__ = [
    "DIVERSIFY_DEPTH",
    "EXPANSION_FEATURES",
    "add_chains",
    "add_entity_predicate",
    "add_pivot",
    "aggregation_shaped",
    "diversify",
    "diversify_order",
    "expand_candidates",
    "expansion_features",
    "named_entities",
    "session_cap_for",
]

#: Features this module adds to a candidate's breakdown (``Hit.scores``).
EXPANSION_FEATURES: tuple[str, ...] = ("entity", "pivot")


def named_entities(query: str, names: Sequence[tuple[str, str]]) -> list[str]:
    """Ids of the entities whose normalised name or alias ``query`` names."""
    q = normalize_name(query)
    return list(dict.fromkeys(eid for norm, eid in names if _mentions(q, norm)))


def _record_sims(uv: UserVectors, q: np.ndarray) -> np.ndarray:
    """Cosine of ``q`` with every record of ``uv`` (best chunk), by position in
    ``uv.unique``."""
    sims = uv.matrix @ q.astype(np.float32)
    if len(uv.unique) != len(uv.rowids):
        sims = np.maximum.reduceat(sims, uv.starts)
    return np.asarray(sims, dtype=np.float64)


def add_entity_predicate(
    store: SQLStore,
    req: SearchRequest,
    uv: UserVectors,
    cands: Candidates,
    limit: int,
) -> None:
    """Entity-centred expansion: the turns whose facts share the query's entity and
    predicate join the candidates (at most ``limit``), marked in ``cands.entity``.

    The query's entity: every entity it names (:func:`named_entities`). Its predicate:
    that of the entity's fact whose sentence is nearest the query (cosine). Every fact
    with that entity (as subject or object) and predicate, current or not, leads to the
    turns it was extracted from; in scope ones join, best fact first.
    """
    if cands.query_vector is None or not uv.entity_names or limit <= 0:
        return
    named = named_entities(req.query, uv.entity_names)
    if not named:
        return
    topics = GraphStore(store).fact_topics(req.scope.user_id, named)
    if not topics:
        return
    pos = {int(r): i for i, r in enumerate(uv.unique.tolist())}
    topics = [t for t in topics if t[2] in pos]
    if not topics:
        return
    sims = _record_sims(uv, cands.query_vector)
    best: dict[str, tuple[float, str]] = {}
    for entity, predicate, fact in topics:
        s = float(sims[pos[fact]])
        if s > best.get(entity, (-2.0, ""))[0]:
            best[entity] = (s, predicate)
    chosen = {(e, p) for e, (_, p) in best.items()}
    facts = sorted(
        {f for e, p, f in topics if (e, p) in chosen}, key=lambda f: -float(sims[pos[f]])
    )
    sources: dict[int, list[int]] = {}
    for f_pos, s_pos in zip(uv.link_fact.tolist(), uv.link_source.tolist(), strict=True):
        sources.setdefault(int(uv.unique[f_pos]), []).append(int(uv.unique[s_pos]))
    seen = set(cands.rowids)
    added = 0
    for fact in facts:
        for rid in sources.get(fact, ()):
            if rid not in cands.cosine:  # out of scope, or not active
                continue
            cands.entity.add(rid)
            if rid not in seen:
                if added >= limit:
                    continue
                seen.add(rid)
                cands.rowids.append(rid)
                added += 1


def add_pivot(
    req: SearchRequest, uv: UserVectors, cands: Candidates, cfg: RetrievalConfig, floor: float
) -> None:
    """The second pass: ``q' = q + mean(v_1..v_s)`` over the vectors of the ``s =
    cfg.pivot_seeds`` best vector candidates (renormalised); the ``cfg.pivot_turns`` in
    scope records nearest ``q'`` join the candidates, and each in-scope record's cosine
    with ``q'``, absolute-normalised with ``floor`` (as relevance is), is kept in
    ``cands.pivot`` for the ``pivot`` feature."""
    q = cands.query_vector
    if q is None or cfg.pivot_turns <= 0 or not cands.vec_rank or uv.matrix.shape[0] == 0:
        return
    pos = {int(r): i for i, r in enumerate(uv.unique.tolist())}
    seeds = [r for r in sorted(cands.vec_rank, key=cands.vec_rank.__getitem__) if r in pos]
    seeds = seeds[: cfg.pivot_seeds]
    if not seeds:
        return
    seed_vecs = uv.matrix[[int(uv.starts[pos[r]]) for r in seeds]].astype(np.float64)
    moved = q.astype(np.float64) + seed_vecs.mean(axis=0)
    norm = float(np.linalg.norm(moved))
    if norm <= 0:
        return
    sims = _record_sims(uv, moved / norm)
    in_scope = np.array([int(r) in cands.cosine for r in uv.unique.tolist()], dtype=bool)
    sims = np.where(in_scope, sims, -np.inf)
    top = np.argsort(-sims, kind="stable")[: cfg.pivot_turns + len(seeds)]
    scale = 1.0 - floor if floor < 1.0 else 1.0
    for i in np.flatnonzero(in_scope).tolist():
        cands.pivot[int(uv.unique[i])] = float(np.clip((sims[i] - floor) / scale, 0.0, 1.0))
    seen = set(cands.rowids)
    added = 0
    for i in top.tolist():
        rid = int(uv.unique[i])
        if not np.isfinite(sims[i]) or added >= cfg.pivot_turns:
            break
        if rid not in seen:
            seen.add(rid)
            cands.rowids.append(rid)
            added += 1


def add_chains(cands: Candidates, seeds: int) -> None:
    """Memory chains: the turn each of the ``seeds`` best vector candidates replies to
    (the previous turn of its session, when in scope) joins the candidates."""
    conv = cands.conversation
    if conv is None or seeds <= 0:
        return
    seen = set(cands.rowids)
    for rid in sorted(cands.vec_rank, key=cands.vec_rank.__getitem__)[:seeds]:
        prev = conv.previous.get(rid)
        if prev is not None and prev not in seen and prev in cands.cosine:
            seen.add(prev)
            cands.rowids.append(prev)


def expansion_features(rowids: Sequence[int], cands: Candidates) -> dict[str, np.ndarray]:
    """``entity`` (1 for a turn found through the query's entity and predicate) and
    ``pivot`` (the second pass's normalised similarity) per candidate, in ``rowids``
    order; ``{}`` when neither expansion ran."""
    if not cands.entity and not cands.pivot:
        return {}
    return {
        "entity": np.array([1.0 if r in cands.entity else 0.0 for r in rowids]),
        "pivot": np.array([cands.pivot.get(r, 0.0) for r in rowids]),
    }


def diversify(
    scores: np.ndarray,
    sessions: Sequence[int],
    limit: int,
    *,
    mmr_lambda: float = 1.0,
    session_cap: int = 0,
) -> np.ndarray:
    """Order candidate positions best first, spreading the first ``limit`` over sessions.

    Maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998) with session identity
    as the similarity: each next pick maximises ``λ · score - (1 - λ) · [its session is
    already picked]``; with ``session_cap`` > 0, a session already holding that many picks
    is passed over while another candidate is left. Candidates outside any session
    (``sessions[i] < 0``) never count as similar. Positions after ``limit`` follow in
    score order.

    Args:
        scores: shape ``(n,)``, the final scores.
        sessions: length ``n``, a session number per candidate (``-1``: none).
        limit: how many picks to diversify (the search's ``limit``).
        mmr_lambda: λ in [0, 1]; 1 with no cap keeps the score order.
        session_cap: most picks per session in the first ``limit``; 0: no cap.

    Returns:
        A permutation of ``range(n)``, shape ``(n,)``.
    """
    order = np.argsort(-scores, kind="stable")
    if (mmr_lambda >= 1.0 and session_cap <= 0) or limit <= 1 or len(order) <= 1:
        return order
    pool = order[: max(3 * limit, 30)].tolist()
    picked: list[int] = []
    count: dict[int, int] = {}
    while pool and len(picked) < limit:
        best_j, best_v = -1, -np.inf
        for j, i in enumerate(pool):
            s = sessions[i]
            n = count.get(s, 0) if s >= 0 else 0
            if session_cap > 0 and n >= session_cap:
                continue
            v = mmr_lambda * float(scores[i]) - (1.0 - mmr_lambda) * (1.0 if n else 0.0)
            if v > best_v:
                best_j, best_v = j, v
        if best_j < 0:  # every left candidate's session is full: take the best of them
            best_j = 0
        i = pool.pop(best_j)
        picked.append(i)
        if sessions[i] >= 0:
            count[sessions[i]] = count.get(sessions[i], 0) + 1
    chosen = set(picked)
    rest = [int(i) for i in order.tolist() if i not in chosen]
    return np.array(picked + rest, dtype=np.int64)


def expand_candidates(
    store: SQLStore,
    vectors: VectorCache,
    embedder: Embedder,
    cfg: RetrievalConfig,
    req: SearchRequest,
    cands: Candidates,
) -> None:
    """Run the expansions ``cfg`` turns on (entity and predicate, pivot, chains), in
    that order, on a search's candidates (the searcher's hook)."""
    uv = vectors.get(req.scope.user_id)
    if cfg.entity_expansion > 0:
        add_entity_predicate(store, req, uv, cands, cfg.entity_expansion)
    if cfg.pivot_turns > 0:
        floor = cfg.similarity_floor
        if floor is None:
            floor = float(getattr(embedder, "similarity_floor", 0.0))
        add_pivot(req, uv, cands, cfg, floor)
    if cfg.chain_turns > 0:
        add_chains(cands, cfg.chain_turns)


def session_cap_for(query: str, cfg: RetrievalConfig) -> int:
    """The session cap a search for ``query`` uses: ``cfg.aggregation_session_cap`` for an
    :func:`aggregation_shaped` query when set, else ``cfg.session_cap``."""
    if cfg.aggregation_session_cap > 0 and aggregation_shaped(query):
        return cfg.aggregation_session_cap
    return cfg.session_cap


#: How many of a search's first hits :func:`diversify_order` spreads over sessions (the
#: rest follow in score order): the top 10 that recall@10 and a prompt's first lines
#: read. A context search asks for 60 hits; spreading all of them measured worse.
DIVERSIFY_DEPTH = 10


def diversify_order(
    final: np.ndarray,
    rowids: Sequence[int],
    cands: Candidates,
    req: SearchRequest,
    cfg: RetrievalConfig,
) -> np.ndarray:
    """:func:`diversify` of the first ``min(req.limit, DIVERSIFY_DEPTH)`` with the
    sessions of the user's conversation index (a candidate outside any session is
    similar to none), the MMR λ and the session cap of ``cfg`` (:func:`session_cap_for`)."""
    conv = cands.conversation
    sessions = [conv.session.get(r, -1) if conv is not None else -1 for r in rowids]
    cap = session_cap_for(req.query, cfg)
    depth = min(req.limit, DIVERSIFY_DEPTH)
    return diversify(final, sessions, depth, mmr_lambda=cfg.mmr_lambda, session_cap=cap)


_AGGREGATION = re.compile(
    r"^\s*(what|which|where|who)\b[^?]*\b(has|have)\b"
    r"|^\s*(what|which)\s+(\w+\s+)?\w+s\s+(do|does|did|has|have|is|are)\b"
    r"|\bhow many\b"
    r"|\b(activities|events|hobbies|ways|things|places|books|types|kinds)\b",
    re.IGNORECASE,
)


def aggregation_shaped(query: str) -> bool:
    """Whether ``query`` asks for a list whose items may sit in different sessions:
    "What activities does Melanie partake in?", "Where has Melanie camped?", "How many
    times…" (a perfect-tense question, a plural head noun before its verb, "how many",
    or a list noun). On LoCoMo dev it matches 0.58 of the multi-hop questions and 0.05
    to 0.10 of the others."""
    return bool(_AGGREGATION.search(query))
