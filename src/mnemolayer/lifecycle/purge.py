"""Maintenance step: purge records that left recall long ago (opt-in).

Forgetting archives a faded record (restorable) and merging hides a near-duplicate behind
its survivor (whose provenance it is); both stay in the file, so the rows of a store grow
with everything ever said even where its active records level off. With
``LifecycleConfig.purge_archived_after_days`` or ``purge_merged_after_days`` set, a pass
deletes the user's records archived (``archived_at``) or merged (``updated_at``, stamped
when the record was merged) at least that many days before the pass's ``now``, through
the deletion path of expiry (:meth:`~mnemolayer.lifecycle.passes.Pass.delete`: records,
vectors and keyword index, a ``PURGE`` history event without content, the knowledge
graph kept consistent as ``Memory.delete`` keeps it). What stays:

- pinned records;
- records that carry a fact of the knowledge graph (their sentence): deleting one would
  take the fact out of the graph and reopen the facts it had closed;
- a record that a current fact or consolidation cites, while that semantic record has no
  source left outside the purge: knowledge keeps a source, so a purge deletes copies of
  what stated a fact, never the fact;
- a record that something is still merged into.

A record merged into a purged record goes with it, however recently it was merged: it is
a copy of what is no longer kept, and setting it free would return an old duplicate to
recall. Merged records are deleted before the records they were merged into, so a purge
releases nothing. The step runs right after expiry, before merging; since it waits a
positive number of days, a second pass at the same time finds nothing to purge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemolayer.lifecycle.passes import Pass
from mnemolayer.store.txn import Txn

__all__ = ["purge_step"]

_BATCH = 100


@dataclass(frozen=True)
class _Cutoffs:
    """Times at or before which an archived / merged record is due (``None``: off)."""

    archived: datetime | None
    merged: datetime | None

    @classmethod
    def of(cls, p: Pass) -> _Cutoffs:
        def before(days: float | None) -> datetime | None:
            return None if days is None else p.now - timedelta(days=days)

        cfg = p.config
        return cls(before(cfg.purge_archived_after_days), before(cfg.purge_merged_after_days))


def _held(p: Pass, txn: Txn | None, ids: list[str], going: set[str]) -> set[str]:
    """Which of ``ids`` must stay although due: those that carry a fact, and those that a
    current semantic record (not itself going) cites while it has no existing source
    outside ``going`` (the records the purge may delete). Read inside ``txn``, or
    (``None``) by plain reads."""
    c = txn
    held = set(p.semantic.graph.facts_by_memory_ids(p.user_id, ids))
    for rec in p.store.citing(c, p.user_id, ids):
        if rec.superseded_by is not None or rec.id in going:
            continue
        if not p.store.present_ids(c, [s for s in rec.source_ids if s not in going]):
            held.update(s for s in rec.source_ids if s in going)
    return held & set(ids)


def _plan(p: Pass, cut: _Cutoffs) -> tuple[list[str], list[str]]:
    """``(merged ids, archived ids)`` to purge now (the module docstring's rules)."""
    aged = p.store.merged_before(p.user_id, cut.merged) if cut.merged is not None else []
    archived = p.store.archived_before(p.user_id, cut.archived) if cut.archived is not None else []
    archived = [r for r in archived if r.id not in p.gone]  # dry run: expired in this pass
    followers = p.store.merged_into_any(p.user_id, [r.id for r in archived])
    merged = {r.id: r for r in [*aged, *followers] if not r.pinned and r.id not in p.gone}
    going = set(merged) | {r.id for r in archived}
    p.examine(going)
    held = _held(p, None, sorted(going), going)
    staying = {str(f.merged_into) for f in followers if f.pinned or f.id in held}
    purged = {r.id for r in archived if r.id not in held and r.id not in staying}
    aged_ids = {r.id for r in aged}
    leaving = [
        i for i, r in merged.items()
        if i not in held and (i in aged_ids or r.merged_into in purged)
    ]  # fmt: skip
    return sorted(leaving), sorted(purged)


def _purge(p: Pass, c: Txn, merged: list[str], archived: list[str], going: set[str]) -> list[str]:
    """Delete ``merged`` and then ``archived`` (nothing merged into them any more) where
    still due and not held: re-checked inside the transaction, since other processes may
    have restored, pinned, merged or cited them since the plan."""
    cut = _Cutoffs.of(p)
    held = _held(p, c, [*merged, *archived], going)
    gone: list[str] = []
    for ids, is_merged in ((merged, True), (archived, False)):
        drop = [i for i in ids if i not in held]
        if not drop:
            continue

        def deleting(t: Txn, drop: list[str] = drop, is_merged: bool = is_merged) -> list[str]:
            return p.store.delete_purge_due(
                t,
                p.user_id,
                drop,
                merged=is_merged,
                merged_before=cut.merged,
                archived_before=cut.archived,
            )

        gone += p.delete(c, deleting, "PURGE")
    return gone


def purge_step(p: Pass) -> None:
    """Purge the user's records archived or merged long enough ago (module docstring)."""
    cut = _Cutoffs.of(p)
    if cut.archived is None and cut.merged is None:
        return
    merged, archived = _plan(p, cut)
    if p.dry_run:
        p.gone.update([*merged, *archived])
        p.note("purged", [*merged, *archived])
        return
    going = {*merged, *archived}
    # Merged records first, so the followers of an archived record are gone before it is
    # judged (a record that something is merged into stays).
    order = [(i, True) for i in merged] + [(i, False) for i in archived]
    for start in range(0, len(order), _BATCH):
        batch = order[start : start + _BATCH]
        m = [i for i, is_merged in batch if is_merged]
        a = [i for i, is_merged in batch if not is_merged]

        def write(c: Txn, m: list[str] = m, a: list[str] = a) -> list[str]:
            return _purge(p, c, m, a, going)

        p.note("purged", p.store.transact(write))
        going.difference_update(i for i, _ in batch)
