"""The lifecycle service of :class:`mnemolayer.Memory`: importance at write, pinning, manual
archiving and restoring, and explanations of why a memory ranks where it does.

* **Importance at write** (:func:`write_importance`): when ``Memory.add`` is not given an
  importance, the rules of :mod:`mnemolayer.lifecycle.importance` estimate one from the
  text. Records that are knowledge rather than conversation start higher: a
  ``preference`` record at least 0.6 (the estimator's base 0.4 plus its preference
  signal), a ``semantic``, ``procedural`` or ``summary`` record at least 0.5 (the
  neutral importance, which keeps its kind's base half-life), while a plain turn with no
  signal stays at 0.4. The caller's importance always wins. Fact sentence records made
  by extraction get their importance from the fact's category (identity and
  relationship 0.7, preference 0.65, plan 0.6, other 0.5; see
  :mod:`mnemolayer.layers.semantic.apply`), above a plain turn's 0.4.
  The reasons are not stored: :meth:`Lifecycle.explain` recomputes them from the
  content, which gives the same estimate (the rules are deterministic), and says when
  the stored value differs (set by the caller, or raised by recall).
* **Pinning** (:meth:`Lifecycle.pin`): a pinned memory keeps retention 1, so it never
  decays, is never forgotten by maintenance and ranks as if fresh; it never expires
  either (recall keeps it past its ``expires_at`` and maintenance neither applies its
  kind's TTL nor deletes it).
* **Archiving** (:meth:`Lifecycle.archive`, :meth:`Lifecycle.restore`): an
  archived memory is out of recall but kept, and restoring it brings it back.
* **Explain** (:meth:`Lifecycle.explain`): retention and its parts, importance and
  why, expiry, supersession, archive, merge and consolidation state, and for a query
  the rank the memory gets or why it is left out.

History events: ``PIN``, ``UNPIN``, ``ARCHIVE`` and ``RESTORE``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.extract import predicates
from mnemolayer.layers.episodic.read import get_record
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.decay import as_accessed, explain_retention
from mnemolayer.lifecycle.explanation import (
    Explanation,
    ImportanceExplanation,
    QueryExplanation,
    SupersededExplanation,
    expiry_of,
    summary_lines,
    suppressed_by,
    will_be_forgotten,
)
from mnemolayer.lifecycle.importance import ImportanceEstimate, estimate_importance
from mnemolayer.models import MemoryKind, MemoryRecord
from mnemolayer.retrieval.search import Scope, SearchRequest, ranking_explanation

if TYPE_CHECKING:
    from mnemolayer.config import RetrievalConfig
    from mnemolayer.protocols import Txn
    from mnemolayer.retrieval.search import Searcher
    from mnemolayer.store.base import SQLStore
    from mnemolayer.store.graph import GraphStore

__all__ = ["KIND_IMPORTANCE_FLOOR", "Lifecycle", "write_importance"]

#: The least importance a record of these kinds gets when the caller gives none.
KIND_IMPORTANCE_FLOOR: dict[MemoryKind, float] = {
    MemoryKind.PREFERENCE: 0.6,
    MemoryKind.SEMANTIC: 0.5,
    MemoryKind.PROCEDURAL: 0.5,
    MemoryKind.SUMMARY: 0.5,
}


def write_importance(content: str, kind: MemoryKind) -> ImportanceEstimate:
    """The importance ``Memory.add`` gives a record when the caller gives none: the rule
    estimate of ``content`` (:func:`~mnemolayer.lifecycle.importance.estimate_importance`),
    raised to :data:`KIND_IMPORTANCE_FLOOR` for its kind, with the reasons."""
    estimate = estimate_importance(content)
    floor = KIND_IMPORTANCE_FLOOR.get(kind)
    if floor is None or estimate.value >= floor:
        return estimate
    return ImportanceEstimate(
        value=floor, reasons=[*estimate.reasons, f"{kind.value} record (at least {floor:.2f})"]
    )


class Lifecycle:
    """A memory's lifecycle state as the facade serves it: pin, unpin, archive, restore,
    and why a memory ranks where it does (:meth:`explain`).

    Args:
        store: the open store.
        graph: the knowledge graph (a fact's record takes its importance from the fact).
        lifecycle: decay, TTL and reinforcement settings.
        retrieval: ranking settings (how many candidates :meth:`explain` ranks).
        searcher: hybrid recall, to rank a memory for a query.
        clock: returns "now" (aware UTC).
        require_model: raises while the store's vectors are another model's.
    """

    def __init__(
        self,
        store: SQLStore,
        graph: GraphStore,
        lifecycle: LifecycleConfig,
        retrieval: RetrievalConfig,
        searcher: Searcher,
        clock: Callable[[], datetime],
        require_model: Callable[[], None],
    ) -> None:
        self.store = store
        self.graph = graph
        self.lifecycle = lifecycle
        self.retrieval = retrieval
        self.searcher = searcher
        self.clock = clock
        self.require_model = require_model

    # -- pin, archive, restore -----------------------------------------------------------

    def pin(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """Pin a memory: its retention stays 1, so it never decays, and it never expires
        or is forgotten by maintenance. Pinning an archived memory restores it too
        (``RESTORE`` then ``PIN`` history events). Pinning a pinned memory changes nothing.

        Returns:
            The memory as it is now.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: a malformed id.
        """
        return self._transition(memory_id, user_id, "PIN", {"pinned": True, "archived_at": None})

    def unpin(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """Unpin a memory: it decays again from its last access or occurrence (the
        time it spent pinned counts as age). Unpinning an unpinned memory changes nothing.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: a malformed id.
        """
        return self._transition(memory_id, user_id, "UNPIN", {"pinned": False})

    def archive(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """Archive a memory by hand: it leaves recall (search and the context builder)
        but stays listed and can be restored with :meth:`restore`. Archiving an
        archived memory changes nothing.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: a malformed id, or the memory is pinned (field
                ``"memory_id"``: unpin it first).
        """
        return self._transition(memory_id, user_id, "ARCHIVE", {"archived_at": "now"})

    def restore(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """Bring an archived memory back into recall (``RESTORE`` history event). A
        memory that is not archived is returned unchanged; a merged one stays merged
        (its content lives on in the record it was merged into).

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: a malformed id.
        """
        return self._transition(memory_id, user_id, "RESTORE", {"archived_at": None})

    def _transition(
        self, memory_id: str, user_id: str | None, event: str, target: dict[str, Any]
    ) -> MemoryRecord:
        """Move one memory to ``target`` state (``archived_at: "now"`` = the clock's now),
        with one history event per change, in one transaction."""
        uid = v.scope_id(user_id, "user_id") if user_id is not None else None
        current = get_record(self.store, memory_id, uid)
        now = self.clock()
        wanted = {k: (now if val == "now" else val) for k, val in target.items()}

        def differs(old: MemoryRecord, key: str, value: Any) -> bool:
            if key == "pinned":
                return bool(old.pinned != value)
            return (getattr(old, key) is None) != (value is None)  # set vs cleared

        def write(c: Txn) -> MemoryRecord:
            old = self.store.set_state(c, current.id, {})  # no changes: reads it
            if old is None:  # deleted by another process since get()
                raise NotFoundError(f"memory_id: no memory {current.id!r}")
            if event == "ARCHIVE" and old.pinned:
                raise ValidationError(
                    "memory_id", f"memory {old.id} is pinned; unpin it before archiving it"
                )
            changes = {k: val for k, val in wanted.items() if differs(old, k, val)}
            if not changes:
                return old
            new = old.model_copy(update={**changes, "updated_at": now})
            self.store.set_state(c, old.id, {**changes, "updated_at": now})
            if event == "PIN" and "archived_at" in changes:
                self.store.add_history(c, old.id, old.user_id, "RESTORE", old, new, now)
            if event != "PIN" or "pinned" in changes:
                self.store.add_history(c, old.id, old.user_id, event, old, new, now)
            return new

        return self.store.transact(write)

    # -- explain -------------------------------------------------------------------------

    def explain(
        self, memory_id: str, *, user_id: str | None = None, query: str | None = None
    ) -> Explanation:
        """Why a memory ranks where it does, or why recall leaves it out.

        Args:
            memory_id: the memory.
            user_id: check that it belongs to this user.
            query: also rank it for this query (over its user's memories, all kinds,
                current knowledge, without counting an access) and say where it lands or
                why it is not returned.

        Returns:
            An :class:`Explanation` (``to_json()`` for a JSON-ready dict).

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given).
            ValidationError: a malformed id or a blank query.
        """
        uid = v.scope_id(user_id, "user_id") if user_id is not None else None
        record = get_record(self.store, memory_id, uid)
        text = v.content(query, "query") if query is not None else None
        now = self.clock()
        cfg = self.lifecycle
        suppressed = suppressed_by(record, now, cfg)
        # Judged as maintenance judges it: a restore from the archive counts as an access.
        judged = as_accessed(record, self.store.restored_at([record.id]).get(record.id))
        kept = explain_retention(judged, now, cfg)
        fields: dict[str, Any] = {
            "memory_id": record.id,
            "user_id": record.user_id,
            "kind": record.kind,
            "at": now,
            "recallable": not suppressed,
            "suppressed": suppressed,
            "retention": kept,
            "will_be_forgotten": will_be_forgotten(kept, suppressed),
            "importance": self._importance(record),
            "pinned": record.pinned,
            "expiry": expiry_of(record, now, cfg),
            "superseded": (
                SupersededExplanation(by=record.superseded_by, valid_to=record.valid_to)
                if record.superseded_by is not None
                else None
            ),
            "archived_at": record.archived_at,
            "merged_into": record.merged_into,
            "consolidated_into": record.consolidated_into,
            "session_only": record.session_only,
            "session_id": record.session_id,
            "query": self._rank_for(record, text, now, suppressed) if text else None,
        }
        return Explanation(**fields, summary=summary_lines(fields, record))

    def _importance(self, record: MemoryRecord) -> ImportanceExplanation:
        if record.kind is MemoryKind.SEMANTIC:
            fact = self.graph.fact_by_memory_id(record.user_id, record.id)
            if fact is not None:
                category = predicates.PREDICATES[fact.predicate].category
                return ImportanceExplanation(
                    value=record.importance,
                    source="fact",
                    estimate=None,
                    reasons=[f"{category} fact ({fact.predicate})"],
                )
        est = write_importance(record.content, record.kind)
        cfg = self.lifecycle
        reinforced = est.value
        if est.value < cfg.max_reinforced_importance:
            reinforced = min(
                est.value + cfg.access_importance_bump * record.access_count,
                cfg.max_reinforced_importance,
            )
        source: Literal["estimate", "reinforced", "set"] = "set"
        if abs(record.importance - est.value) < 1e-9:
            source = "estimate"
        elif record.access_count and abs(record.importance - reinforced) < 1e-9:
            source = "reinforced"
        return ImportanceExplanation(
            value=record.importance, source=source, estimate=est.value, reasons=est.reasons
        )

    def _rank_for(
        self, record: MemoryRecord, query: str, now: datetime, suppressed: builtins.list[str]
    ) -> QueryExplanation:
        if suppressed:
            return QueryExplanation(
                query=query, rank=None, score=None, scores={}, ranking=None,
                excluded=f"left out of search: {', '.join(suppressed)}",
            )  # fmt: skip
        self.require_model()
        req = SearchRequest(
            query=query, scope=Scope(record.user_id), limit=10_000, threshold=None,
            mode="hybrid", now=now, lifecycle=self.lifecycle, track=False,
            pool=self.retrieval.candidates,
        )  # fmt: skip
        hits = self.searcher.search(req)
        for rank, hit in enumerate(hits, start=1):
            # A message collapsed into its fact's hit is recalled by that hit.
            if hit.id == record.id or record.id in hit.provenance:
                return QueryExplanation(
                    query=query, rank=rank, score=hit.score, scores=hit.scores,
                    ranking=ranking_explanation(
                        hit.memory, hit.scores, rank, now, self.lifecycle, self.retrieval
                    ),
                    excluded=None,
                )  # fmt: skip
        return QueryExplanation(
            query=query, rank=None, score=None, scores={}, ranking=None,
            excluded=(
                f"not a candidate: not among the {self.retrieval.candidates} best vector "
                "matches, the keyword matches or their neighbours"
            ),
        )  # fmt: skip
