"""What the steps of one maintenance pass share: the options, the per-user report, the
pass context and the deletion path (:mod:`mnemolayer.lifecycle.maintain` runs the steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryRecord
from mnemolayer.store.txn import Txn

if TYPE_CHECKING:
    from mnemolayer.embed.base import Embedder
    from mnemolayer.layers.semantic.apply import SemanticLayer
    from mnemolayer.store.base import SQLStore

__all__ = ["ACTIONS", "MaintenanceOptions", "Pass", "UserMaintenance", "interactions"]

#: The changes a pass counts, in the order it makes them.
ACTIONS = (
    "expired",
    "purged",
    "embedded",
    "extracted",
    "merged",
    "consolidated",
    "created",
    "archived",
    "deleted",
    "derived_deleted",
    "released",
)

Action = Literal[
    "expired", "purged", "embedded", "extracted", "merged", "consolidated", "created", "archived", "deleted",
    "derived_deleted", "released",
]  # fmt: skip


class MaintenanceOptions(BaseModel):
    """What a maintenance pass does beyond :class:`~mnemolayer.lifecycle.LifecycleConfig`
    (which holds the policy: thresholds, the importance floor of forgetting, TTLs).

    Attributes:
        consolidate_min_interactions: a fact (or a near-duplicate group) said in at
            least this many interactions (distinct sessions; records without a session
            count per day) is consolidated.
        merge: run near-duplicate merging.
        consolidate: run consolidation.
        max_ids: at most this many ids listed per action in the report.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    consolidate_min_interactions: int = Field(3, ge=2, le=1000)
    merge: bool = True
    consolidate: bool = True
    max_ids: int = Field(50, ge=0, le=100_000)


class UserMaintenance(BaseModel):
    """What one pass changed for one user (or, in a dry run, would change).

    Attributes:
        user_id: the user.
        examined: records looked at by some step.
        expired: records deleted because their expiry passed (own ``expires_at`` or
            their kind's TTL).
        purged: records deleted because they were archived or merged long enough ago
            (``LifecycleConfig.purge_archived_after_days`` / ``purge_merged_after_days``).
        embedded: records stored while the embedder failed that now have their vectors
            (in a dry run: the records waiting for it).
        extracted: messages stored while the extractor failed whose facts were now
            extracted (in a dry run: the messages waiting for it).
        merged: near-duplicates merged into an older (or pinned, or more important) one.
        consolidated: records linked to the semantic record that consolidates them
            (``consolidated_into``; recall downweights them).
        created: semantic records created to consolidate a group of near-duplicates that
            no extracted fact covers.
        archived: records archived because their retention fell below the threshold.
        deleted: records deleted for the same reason (``forget_action="delete"``).
        derived_deleted: semantic records deleted with the records that were their only
            sources (a fact's sentence, a consolidation); not counted in a dry run.
        released: records that pointed at a deleted record (merged into it, or
            consolidated into it) and were set free; not counted in a dry run.
        active: the user's recallable records after the pass (not archived, merged,
            expired or superseded); in a dry run, the count now minus what would leave.
        ids: per action, the ids concerned (at most ``MaintenanceOptions.max_ids``).
    """

    model_config = ConfigDict(extra="forbid")

    user_id: str
    examined: int = 0
    expired: int = 0
    purged: int = 0
    embedded: int = 0
    extracted: int = 0
    merged: int = 0
    consolidated: int = 0
    created: int = 0
    archived: int = 0
    deleted: int = 0
    derived_deleted: int = 0
    released: int = 0
    active: int = 0
    ids: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def changes(self) -> int:
        """How many changes the pass made (0: nothing to do)."""
        return sum(int(getattr(self, a)) for a in ACTIONS)


def interactions(records: Iterable[MemoryRecord]) -> int:
    """How many interactions ``records`` come from: distinct sessions, and for records
    without a session, distinct days (of ``occurred_at``, else ``created_at``)."""
    keys = {
        r.session_id
        if r.session_id is not None
        else f"\x00{(r.occurred_at or r.created_at).date()}"
        for r in records
    }
    return len(keys)


@dataclass
class Pass:
    """One user's maintenance pass: settings, time, and what was done so far (so that
    later steps, and a dry run, see the earlier steps' effects)."""

    store: SQLStore
    semantic: SemanticLayer
    config: LifecycleConfig
    options: MaintenanceOptions
    user_id: str
    now: datetime
    dry_run: bool
    embedder: Embedder
    report: UserMaintenance
    gone: set[str] = field(default_factory=set)
    archived: set[str] = field(default_factory=set)
    merged: dict[str, str] = field(default_factory=dict)  # merged id → survivor id
    freed: set[str] = field(default_factory=set)  # released: to be examined again
    seen: set[str] = field(default_factory=set)

    @property
    def dim(self) -> int:
        return int(self.embedder.dim)

    def examine(self, ids: Iterable[str]) -> None:
        self.seen.update(ids)
        self.report.examined = len(self.seen)

    def note(self, action: Action, ids: Sequence[str]) -> None:
        """Count ``ids`` under ``action`` and list them (capped)."""
        if not ids:
            return
        setattr(self.report, action, getattr(self.report, action) + len(ids))
        listed = self.report.ids.setdefault(action, [])
        listed.extend(ids[: max(self.options.max_ids - len(listed), 0)])

    def inactive(self, memory_id: str) -> bool:
        """Whether an earlier step of this pass removed, archived or merged it."""
        return memory_id in self.gone or memory_id in self.archived or memory_id in self.merged

    def delete(self, txn: Txn, deleting: Callable[[Txn], list[str]], event: str) -> list[str]:
        """Delete records inside transaction ``txn`` with ``deleting`` (a store deletion
        of the user's records, such as ``store.delete_expired``, run with ``txn``: it
        removes records, vectors and keyword rows and returns the ids), keeping the graph
        consistent as ``Memory.delete`` does: each gets an ``event`` history entry
        (without its content: a deletion by policy keeps no copy), the facts only they
        stated go with their sentence records, so do consolidations left without any
        source, and records merged or consolidated into a deleted record are set free.

        Returns:
            The ids ``deleting`` deleted (derived deletions and releases are counted in
            the report).
        """
        uid, now, c = self.user_id, self.now, txn
        gone = deleting(txn)
        for mid in gone:
            self.store.add_history(c, mid, uid, event, None, None, now)
        derived = self.semantic.forget(c, uid, gone, now)
        removed = set(gone) | set(derived)
        orphans = self._orphaned_consolidations(c, list(removed))
        while orphans:
            self.store.delete_user_ids(c, uid, orphans)
            for mid in orphans:
                self.store.add_history(c, mid, uid, "DELETE", None, None, now)
            derived += orphans
            removed |= set(orphans)
            orphans = self._orphaned_consolidations(c, orphans)
        self.release(c, list(removed))
        self.gone |= removed
        self.note("derived_deleted", derived)
        return gone

    def release(self, txn: Txn, gone: Sequence[str]) -> None:
        """Set free the records merged or consolidated into the deleted ``gone`` (an
        ``UNMERGE`` / ``UNCONSOLIDATE`` history event each): they return to recall, no
        longer downweighted, and are examined for merging again."""
        uid, now, c = self.user_id, self.now, txn
        unmerged, unconsolidated = self.store.release_links(c, uid, gone, now)
        for mid in unmerged:
            self.store.add_history(c, mid, uid, "UNMERGE", None, None, now)
        for mid in unconsolidated:
            self.store.add_history(c, mid, uid, "UNCONSOLIDATE", None, None, now)
        self.freed.update(unmerged)
        self.note("released", [*unmerged, *unconsolidated])

    def _orphaned_consolidations(self, txn: Txn, removed: list[str]) -> list[str]:
        """Unpinned semantic records without a fact that cite ``removed`` and have no
        source left (facts' records are the graph's to delete: ``SemanticLayer.forget``)."""
        c = txn
        citing = [r for r in self.store.citing(c, self.user_id, removed) if not r.pinned]
        if not citing:
            return []
        with_fact = self.semantic.graph.facts_by_memory_ids(self.user_id, [r.id for r in citing])
        out = []
        for r in citing:
            if r.id in with_fact:
                continue
            if not self.store.existing_ids(c, [s for s in r.source_ids if s not in removed]):
                out.append(r.id)
        return out
