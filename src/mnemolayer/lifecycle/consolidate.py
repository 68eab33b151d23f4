"""Maintenance step: consolidate what was said again and again into semantic memory.

Two sources of recurring content, both requiring at least
``MaintenanceOptions.consolidate_min_interactions`` (3) distinct interactions (sessions;
records without a session count per day):

* **Facts.** Semantic memory already keeps one fact per statement, with every message
  that stated it in its provenance (``fact_sources``, and the sentence record's
  ``source_ids``). A current fact stated in 3+ interactions *is* the consolidated
  semantic record; its source messages are linked to it (``consolidated_into``) so
  recall downweights them rather than ranking several copies of one fact.
* **Near-duplicate groups without a fact.** Content the extractor finds no fact in
  ("I go running every morning") that was said in 3+ interactions has been merged into
  one survivor by the merge step; a new ``semantic`` record with the survivor's text
  is created, its provenance (``source_ids``) naming the survivor and every record
  merged into it, and the survivor is linked to it. The new record reuses the
  survivor's vectors (the same text) and its keyword terms include the speaker.
  Small talk is not consolidated (survivors below
  ``LifecycleConfig.forget_below_importance``), nor are groups whose records state a
  fact (the fact covers them). A survivor already consolidated gets the provenance of
  records merged into it later.

Sources are never deleted; each linked one gets a ``CONSOLIDATE`` history event, and so
does the semantic record.
"""

from __future__ import annotations

from typing import Literal

from mnemolayer.lifecycle.passes import Pass, interactions
from mnemolayer.models import MemoryKind, MemoryRecord, content_hash, new_id
from mnemolayer.retrieval.index import keyword_terms
from mnemolayer.store.txn import Txn

__all__ = ["consolidate_step"]

_BATCH = 100
_Plan = tuple[Literal["link", "create", "extend"], MemoryRecord, list[MemoryRecord]]


def _current(p: Pass, r: MemoryRecord) -> bool:
    return (
        r.archived_at is None
        and r.merged_into is None
        and r.superseded_by is None
        and not p.inactive(r.id)
    )


def _linkable(p: Pass, r: MemoryRecord) -> bool:
    return (
        _current(p, r)
        and r.consolidated_into is None
        and not r.pinned
        and not r.session_only
        and r.kind is not MemoryKind.SEMANTIC
    )


def _fact_plans(p: Pass) -> list[_Plan]:
    """Current facts stated in enough interactions, with their unlinked sources."""
    need = p.options.consolidate_min_interactions
    facts = [
        f
        for f in p.semantic.graph.current_facts(None, p.user_id)
        if f.memory_id is not None and len(f.source_ids) >= need
    ]
    # Which sources could still be linked (the store's twin of _linkable): a cheap pre-filter.
    open_ids = p.store.consolidation_open_ids(p.user_id, [s for f in facts for s in f.source_ids])
    facts = [f for f in facts if open_ids.intersection(f.source_ids)]
    if not facts:
        return []
    recs = p.store.user_records(
        p.user_id, [x for f in facts for x in (f.memory_id or "", *f.source_ids)]
    )
    plans: list[_Plan] = []
    for f in facts:
        target = recs.get(f.memory_id or "")
        if target is None or not _current(p, target):
            continue
        sources = [recs[s] for s in f.source_ids if s in recs and s not in p.gone]
        todo = [s for s in sources if _linkable(p, s)]
        p.examine(s.id for s in todo)
        if todo and interactions(sources) >= need:
            plans.append(("link", target, todo))
    return plans


def _groups(p: Pass) -> dict[str, list[MemoryRecord]]:
    """Survivor id → the records merged into it (in a dry run, with the planned merges),
    for the survivors that may still need work: not consolidated yet and important
    enough, or consolidated into a record whose provenance lacks one of them."""
    groups: dict[str, list[MemoryRecord]] = {}
    rows = p.store.merged_awaiting_consolidation(p.user_id, p.config.forget_below_importance)
    for r in rows:
        if r.merged_into is not None and r.id not in p.gone:
            groups.setdefault(r.merged_into, []).append(r)
    if p.dry_run and p.merged:
        planned = p.store.user_records(p.user_id, p.merged)
        for mid, survivor in p.merged.items():
            if mid in planned:
                groups.setdefault(survivor, []).append(planned[mid])
    return groups


def _group_plans(p: Pass) -> list[_Plan]:
    groups = _groups(p)
    if not groups:
        return []
    survivors = p.store.user_records(p.user_id, groups)
    targets = p.store.user_records(
        p.user_id, [s.consolidated_into for s in survivors.values() if s.consolidated_into]
    )
    with_fact = p.semantic.graph.facts_by_memory_ids(p.user_id, list(targets))
    need, floor = p.options.consolidate_min_interactions, p.config.forget_below_importance
    plans: list[_Plan] = []
    for sid, members in groups.items():
        s = survivors.get(sid)
        if s is None or not _current(p, s) or s.kind is MemoryKind.SEMANTIC:
            continue
        if s.consolidated_into is not None:
            target = targets.get(s.consolidated_into)
            if target is not None and target.id not in with_fact:
                new = [m for m in members if m.id not in target.source_ids]
                if new:
                    plans.append(("extend", target, new))
            continue
        if s.pinned or s.session_only or s.importance < floor:
            continue
        everyone = [s, *members]
        p.examine(r.id for r in everyone)
        if interactions(everyone) < need:
            continue
        if p.semantic.graph.facts_for_memories(p.user_id, [r.id for r in everyone]):
            continue  # a fact covers it: the fact's record is the consolidation
        plans.append(("create", s, members))
    return plans


def _semantic_record(p: Pass, survivor: MemoryRecord, members: list[MemoryRecord]) -> MemoryRecord:
    everyone = [survivor, *members]
    times = [r.occurred_at or r.created_at for r in everyone]
    rid = new_id()
    return MemoryRecord(
        id=rid, user_id=p.user_id, agent_id=survivor.agent_id, kind=MemoryKind.SEMANTIC,
        content=survivor.content, speaker=survivor.speaker,
        importance=max(r.importance for r in everyone), created_at=p.now, updated_at=p.now,
        occurred_at=max(times), valid_from=min(times), source_ids=[r.id for r in everyone],
        entities=list(survivor.entities),
        content_hash=content_hash(survivor.content, survivor.agent_id, None, "semantic", rid),
        embedding_model=survivor.embedding_model,
    )  # fmt: skip


def _write(p: Pass, txn: Txn, plan: _Plan) -> tuple[list[str], list[str]]:
    """Apply one plan inside ``txn``: ``(ids linked, ids of the records created)``."""
    c = txn
    action, head, members = plan
    uid, now = p.user_id, p.now
    if action == "extend":
        if not p.store.is_active(c, head.id):
            return [], []
        for m in members:
            p.store.add_source(c, head.id, m.id)
            p.store.add_history(c, m.id, uid, "CONSOLIDATE", m, head, now)
        return [m.id for m in members], []
    if action == "link":
        if not p.store.is_active(c, head.id):
            return [], []
        linked = [m for m in members if p.store.mark_consolidated(c, m.id, head.id)]
        for m in linked:
            p.store.add_history(c, m.id, uid, "CONSOLIDATE", m, head, now)
        if linked:
            p.store.add_history(c, head.id, uid, "CONSOLIDATE", None, head, now)
        return [m.id for m in linked], []
    if not p.store.is_active(c, head.id, unconsolidated=True):
        return [], []  # another pass consolidated it meanwhile
    vectors = p.store.record_vectors(c, head.id)
    if vectors.size == 0:
        return [], []
    rec = _semantic_record(p, head, members)
    p.store.insert(c, rec, keyword_terms(rec, head.speaker or ""), vectors)
    p.store.mark_consolidated(c, head.id, rec.id)
    p.store.add_history(c, head.id, uid, "CONSOLIDATE", head, rec, now)
    p.store.add_history(c, rec.id, uid, "CONSOLIDATE", None, rec, now)
    return [head.id], [rec.id]


def consolidate_step(p: Pass) -> None:
    """Consolidate the user's recurring facts and near-duplicate groups (see the module
    docstring)."""
    plans = _fact_plans(p) + _group_plans(p)
    for start in range(0, len(plans), _BATCH):
        batch = plans[start : start + _BATCH]
        if p.dry_run:
            for action, head, members in batch:
                p.note("consolidated", [head.id] if action == "create" else [m.id for m in members])
                p.report.created += action == "create"
            continue

        def write(c: Txn, batch: list[_Plan] = batch) -> tuple[list[str], list[str]]:
            linked: list[str] = []
            created: list[str] = []
            for plan in batch:
                ids, new = _write(p, c, plan)
                linked += ids
                created += new
            return linked, created

        linked, created = p.store.transact(write)
        p.note("consolidated", linked)
        p.note("created", created)
