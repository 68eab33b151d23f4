"""The lifecycle wired into Memory: importance at write, pinning, retention in ranking,
reinforcement on recall, explain, archive and restore (real SQLite, a fake clock)."""

from __future__ import annotations

import contextlib
import inspect
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from helpers import is_postgres
from mnemolayer import AsyncMemory, Memory, NotFoundError, ValidationError
from mnemolayer.cli import app
from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle import LifecycleConfig, RetentionInput, forgetting_action, retention
from mnemolayer.lifecycle.decay import reinforce, retention_many
from mnemolayer.models import MemoryKind, new_id

GREETING = "hi"
ALLERGY = "Remember: my daughter is allergic to peanuts"
TEA = "I drink green tea every morning"


def events(mem: Memory, memory_id: str) -> list[str]:
    return [e.event for e in mem.history(memory_id)]


def imported(mem: Memory, like: Any, **fields: Any) -> str:
    """Import a copy of record ``like`` with ``fields`` changed (the way a store holding
    lifecycle state, e.g. from maintenance, arrives); returns its id."""
    rid = new_id()
    row = {"type": "memory", **like.to_json(), "id": rid, "content_hash": rid, **fields}
    for key in ("expires_at", "merged_into", "consolidated_into"):
        if key in fields and hasattr(fields[key], "isoformat"):
            row[key] = fields[key].isoformat()
    assert mem.import_rows([row]) == 1
    return rid


@pytest.fixture
def flat(db_path: Path, clock: Any) -> Iterator[Memory]:
    """Like ``mem``, ranking without retention (``ranking_weight=0``)."""
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None,
        lifecycle=LifecycleConfig(ranking_weight=0.0),
    ) as memory:  # fmt: skip
        yield memory


# -- importance at write ---------------------------------------------------------------


def test_importance_is_estimated_when_omitted_and_the_callers_value_wins(mem: Memory) -> None:
    hi, allergy = mem.add([GREETING, ALLERGY], user_id="u")
    assert hi.importance < 0.4 < allergy.importance
    assert mem.get(allergy.id).importance == allergy.importance  # stored as estimated
    given = mem.add(ALLERGY + "!", user_id="u", importance=0.2)[0]
    assert given.importance == 0.2
    zero = mem.add("Remember my passport number", user_id="u", importance=0)[0]
    assert zero.importance == 0.0  # 0 is a value, not "missing"
    explained = mem.explain(allergy.id).importance
    assert explained.source == "estimate" and explained.value == allergy.importance
    assert any("remember" in r for r in explained.reasons)
    assert mem.explain(given.id).importance.source == "set"


def test_knowledge_kinds_start_above_a_plain_turn(mem: Memory) -> None:
    turn = mem.add("the weather was grey", user_id="u")[0]
    pref = mem.add("the weather was grey again", user_id="u", kind="preference")[0]
    fact = mem.add("the weather was grey once more", user_id="u", kind="semantic")[0]
    outcome = mem.record_outcome(
        user_id="u", task="book a table", strategy="call the restaurant", success=True
    )
    assert turn.importance == pytest.approx(0.4)
    assert pref.importance == pytest.approx(0.6)
    assert fact.importance == pytest.approx(0.5) and outcome.importance >= 0.5
    assert any("preference record" in r for r in mem.explain(pref.id).importance.reasons)


def test_fact_records_take_their_importance_from_the_fact(smem: Memory) -> None:
    smem.add("My name is Lena and I love hiking", user_id="u")
    facts = smem.facts(user_id="u")
    assert facts
    for fact in facts:
        assert fact.memory_id is not None
        imp = smem.explain(fact.memory_id).importance
        assert imp.source == "fact" and imp.value >= 0.5 and imp.reasons


def test_bad_importance_and_pinned_values_name_their_field(mem: Memory) -> None:
    for kwargs, field in (({"importance": 1.5}, "importance"), ({"pinned": "yes"}, "pinned")):
        with pytest.raises(ValidationError) as err:
            mem.add(TEA, user_id="u", **kwargs)
        assert err.value.field == field
    assert mem.list(user_id="u").items == []


# -- pinning ------------------------------------------------------------------------------


def test_pinned_memories_keep_retention_one_and_are_never_forgotten(
    mem: Memory, clock: Any
) -> None:
    pinned = mem.add(GREETING, user_id="u", pinned=True)[0]
    plain = mem.add("ok", user_id="u")[0]
    clock.advance(days=1000)
    now = mem.now()
    assert mem.get(pinned.id).pinned is True
    assert retention(mem.get(pinned.id), now, mem.lifecycle) == 1.0
    assert forgetting_action(mem.get(pinned.id), now, mem.lifecycle) == "keep"
    assert forgetting_action(mem.get(plain.id), now, mem.lifecycle) == "archive"
    explained = mem.explain(pinned.id)
    assert explained.pinned and explained.retention.value == 1.0
    assert not explained.retention.below_threshold
    with pytest.raises(ValidationError) as err:
        mem.archive(pinned.id)
    assert err.value.field == "memory_id" and "pinned" in str(err.value)
    assert mem.get(pinned.id).archived_at is None


def test_pin_and_unpin_are_recorded_once(mem: Memory, clock: Any) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    clock.advance(days=400)
    assert retention(mem.get(rec.id), mem.now(), mem.lifecycle) < 0.05
    assert mem.pin(rec.id, user_id="u").pinned is True
    assert mem.pin(rec.id).pinned is True  # again: nothing changes
    assert retention(mem.get(rec.id), mem.now(), mem.lifecycle) == 1.0
    assert mem.unpin(rec.id).pinned is False
    assert mem.unpin(rec.id).pinned is False
    assert events(mem, rec.id) == ["ADD", "PIN", "UNPIN"]
    assert retention(mem.get(rec.id), mem.now(), mem.lifecycle) < 0.05  # decays again


def test_pinning_an_archived_memory_restores_it(mem: Memory) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    mem.archive(rec.id)
    assert mem.search("green tea", user_id="u") == []
    pinned = mem.pin(rec.id)
    assert pinned.pinned and pinned.archived_at is None
    assert events(mem, rec.id) == ["ADD", "ARCHIVE", "RESTORE", "PIN"]
    assert [h.id for h in mem.search("green tea", user_id="u")] == [rec.id]


def test_lifecycle_calls_check_ids_and_owners(mem: Memory) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    for call in (mem.pin, mem.unpin, mem.archive, mem.restore, mem.explain):
        with pytest.raises(NotFoundError):
            call(rec.id, user_id="someone-else")
        with pytest.raises(NotFoundError):
            call(new_id())
        with pytest.raises(ValidationError) as err:
            call("not an id")
        assert err.value.field == "memory_id"
    with pytest.raises(ValidationError) as err:
        mem.explain(rec.id, query="  ")
    assert err.value.field == "query"


# -- retention in ranking -------------------------------------------------------------------


def test_ranking_prefers_the_fresher_of_two_equal_memories(
    mem: Memory, flat: Memory, clock: Any
) -> None:
    # The same words in two sessions: two records, exactly as relevant.
    old = mem.add(TEA, user_id="u", session_id="s1", timestamp=clock.now - timedelta(days=90))[0]
    new = mem.add(TEA, user_id="u", session_id="s2", timestamp=clock.now - timedelta(days=1))[0]
    hits = {h.id: h for h in mem.search("green tea", user_id="u")}
    assert list(hits) == [new.id, old.id]
    assert hits[new.id].scores["retention"] > hits[old.id].scores["retention"]
    assert hits[new.id].scores["relevance"] == pytest.approx(hits[old.id].scores["relevance"])
    # Without retention both keep their reranked score: the old order (a tie, by insertion).
    flat_hits = flat.search("green tea", user_id="u", session_id=None)
    assert [h.id for h in flat_hits] == [old.id, new.id]
    for h in flat_hits:
        assert h.score == pytest.approx(h.scores["reranked"])


def test_ranking_prefers_the_more_important_of_two_equal_memories(mem: Memory, clock: Any) -> None:
    when = clock.now - timedelta(days=60)
    low = mem.add(TEA, user_id="u", session_id="a", timestamp=when, importance=0.1)[0]
    high = mem.add(TEA, user_id="u", session_id="b", timestamp=when, importance=0.9)[0]
    hits = mem.search("green tea", user_id="u")
    assert [h.id for h in hits] == [high.id, low.id]
    assert hits[0].score > hits[1].score


def test_relevance_still_beats_freshness(mem: Memory, clock: Any) -> None:
    old = mem.add(TEA, user_id="u", timestamp=clock.now - timedelta(days=365))[0]
    mem.add("my cat is called Tom", user_id="u")
    assert mem.search("green tea every morning", user_id="u")[0].id == old.id


# -- reinforcement --------------------------------------------------------------------------


def test_recall_reinforces_what_it_returns_with_a_capped_bump(mem: Memory, clock: Any) -> None:
    tea, set_high = mem.add([TEA, "green tea is my favourite"], user_id="u")
    mem.update(set_high.id, importance=0.95)
    before = mem.get(tea.id).importance
    clock.advance(days=3)
    hits = mem.search("green tea", user_id="u")
    now = mem.now()
    for h in hits:
        stored = mem.get(h.id)
        assert stored.access_count == (1 if h.score > 0 else 0)
    after = mem.get(tea.id)
    assert after.last_accessed_at == now
    assert after.importance == pytest.approx(before + mem.lifecycle.access_importance_bump)
    for _ in range(20):
        mem.search("green tea", user_id="u")
    assert mem.get(tea.id).access_count == 21
    assert mem.get(tea.id).importance == pytest.approx(mem.lifecycle.max_reinforced_importance)
    assert mem.get(set_high.id).importance == 0.95  # above the cap: never lowered
    assert mem.explain(tea.id).importance.source == "reinforced"


def test_an_access_restarts_decay(mem: Memory, clock: Any) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    clock.advance(days=60)
    faded = retention(mem.get(rec.id), mem.now(), mem.lifecycle)
    mem.search("green tea", user_id="u")
    assert retention(mem.get(rec.id), mem.now(), mem.lifecycle) == 1.0 > faded
    assert mem.explain(rec.id).retention.anchor == "last_accessed_at"


@contextlib.contextmanager
def _another_writer(db_path: Path, mem: Memory) -> Iterator[None]:
    """Hold the store's write lock from another connection while the block runs: SQLite's
    file lock (``BEGIN IMMEDIATE``), or the PostgreSQL store's writer lock."""
    if is_postgres(db_path):
        import psycopg

        with psycopg.connect(str(db_path)) as pg:
            pg.execute("SELECT pg_advisory_xact_lock(%s)", (mem.store._lock_key,))  # type: ignore[attr-defined]
            yield
            pg.rollback()
        return
    other = sqlite3.connect(db_path, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_explaining_or_a_read_only_store_does_not_count_accesses_and_a_busy_one_counts_later(
    mem: Memory, db_path: Path, clock: Any
) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    assert mem.explain(rec.id, query="green tea").query is not None
    assert mem.get(rec.id).access_count == 0
    mem.close()  # a read-only open sees a closed (checkpointed) file
    with Memory(db_path, embedder="hashing", clock=clock, read_only=True) as ro:
        assert [h.id for h in ro.search("green tea", user_id="u")] == [rec.id]
    mem = Memory(
        db_path,
        embedder="hashing",
        clock=clock,
        extractor=None,
        retrieval=RetrievalConfig(access_flush_size=1),  # try to write on every search
    )
    with _another_writer(db_path, mem):
        started = time.monotonic()
        assert [h.id for h in mem.search("green tea", user_id="u")] == [rec.id]
        assert [h.id for h in mem.search("green tea", user_id="u")] == [rec.id]
        assert time.monotonic() - started < 5  # did not wait out the busy timeout
        assert len(mem.store.access_log) == 1  # counted, waiting for the lock
    # Written once the store is free: both accesses, none lost, none twice.
    assert mem.get(rec.id).access_count == 2
    mem.search("green tea", user_id="u")
    assert mem.get(rec.id).access_count == 3 and not mem.store.access_log
    mem.close()


def test_batched_access_counting_ranks_exactly_as_a_write_per_search(
    new_db: Callable[[str], Any], clock: Any
) -> None:
    """Retention and reinforcement read the access counts: a search must see the
    accesses of the searches before it whether they were written yet or not."""
    texts = [
        "I drink green tea every morning",
        "Green tea with jasmine is my favourite",
        "My sister drinks black tea",
        "We had tea in Kyoto last spring",
        "Coffee keeps me awake, tea does not",
    ]
    stores = {}
    for name, size in (("per_search", 1), ("batched", 10_000)):
        m = Memory(
            new_db(name), embedder="hashing", clock=clock, extractor=None,
            retrieval=RetrievalConfig(access_flush_size=size, access_flush_seconds=3600.0),
        )  # fmt: skip
        for t in texts:
            m.add(t, user_id="u", importance=0.5)
        stores[name] = m
    clock.advance(days=90)  # old enough for retention to tell accessed memories apart
    queries = ["green tea", "tea in Kyoto", "black tea", "tea", "jasmine", "coffee"] * 3
    ranked: dict[str, list[list[tuple[str, float]]]] = {name: [] for name in stores}
    for query in queries:
        for name, m in stores.items():
            hits = m.search(query, user_id="u", limit=5)
            ranked[name].append([(h.memory.content, round(h.score, 9)) for h in hits])
        clock.advance(hours=1)
    assert len(stores["batched"].store.access_log) > 0  # nothing written yet
    assert ranked["batched"] == ranked["per_search"]
    for m in stores.values():
        m.close()


def test_searches_are_not_write_transactions_and_their_accesses_are_written_together(
    mem: Memory, db_path: Path, clock: Any
) -> None:
    [tea] = mem.add(TEA, user_id="u")
    writes: list[int] = []
    real = type(mem.store)._write_briefly

    def counted(self: Any, wait_s: float, fn: Any) -> bool:
        writes.append(1)
        return real(self, wait_s, fn)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(mem.store), "_write_briefly", counted)
        for _ in range(30):
            assert mem.search("green tea", user_id="u")[0].id == tea.id
        assert writes == []  # 30 searches, not one write of their own
        assert len(mem.store.access_log) >= 1
        # A write of any kind takes the waiting accesses along, in its own transaction.
        mem.add("I like oolong too", user_id="u")
        assert writes == [] and not mem.store.access_log
        before = mem.get(tea.id)
        assert before.access_count == 30 and before.last_accessed_at == mem.now()
        assert before.importance == pytest.approx(
            min(
                tea.importance + 30 * mem.lifecycle.access_importance_bump,
                max(tea.importance, mem.lifecycle.max_reinforced_importance),
            )
        )
        # Reading access state flushes what waits (one short write, then none).
        clock.advance(days=1)
        mem.search("green tea", user_id="u")
        assert mem.get(tea.id).access_count == 31 and writes == [1]
        assert mem.get(tea.id).last_accessed_at == mem.now() and writes == [1]
    # Closing writes what still waits; a reopened store sees it.
    mem.search("green tea", user_id="u")
    mem.close()
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as again:
        assert again.get(tea.id).access_count == 32


# -- explain --------------------------------------------------------------------------------


def test_search_explain_attaches_the_ranking_only_when_asked(mem: Memory, clock: Any) -> None:
    mem.add([TEA, "my cat is called Tom"], user_id="u", timestamp=clock.now - timedelta(days=10))
    assert all(h.explanation is None for h in mem.search("green tea", user_id="u"))
    hits = mem.search("green tea", user_id="u", explain=True)
    for rank, h in enumerate(hits, start=1):
        e = h.explanation
        assert e is not None and e["rank"] == rank
        assert e["final"] == pytest.approx(h.score)
        assert e["retention"] == pytest.approx(h.scores["retention"])
        assert e["final"] == pytest.approx(e["reranked"] * e["retention_factor"])
        assert e["consolidated_factor"] == 1.0 and "consolidated" not in h.scores
        assert e["retention_parts"]["half_life_days"] > 0 and "retention" in e["summary"]


def test_explain_a_current_memory_with_a_query(mem: Memory, clock: Any) -> None:
    tea = mem.add(TEA, user_id="u", timestamp=clock.now - timedelta(days=30))[0]
    cat = mem.add("my cat is called Tom", user_id="u")[0]
    e = mem.explain(tea.id, query="green tea")
    assert e.recallable and e.suppressed == [] and not e.pinned
    assert 0.0 < e.retention.value < 1.0 and e.retention.age_days == pytest.approx(30.0)
    assert e.expiry.source == "none" and e.expiry.expires_at is None and not e.expiry.expired
    assert (e.superseded, e.archived_at, e.merged_into, e.consolidated_into) == (None,) * 4
    assert e.query is not None and e.query.rank == 1 and e.query.excluded is None
    assert e.query.scores["retention"] == pytest.approx(e.retention.value)
    assert e.query.ranking is not None and e.query.ranking["rank"] == 1
    far = mem.explain(cat.id, query="green tea")
    assert far.query is not None and (far.query.rank or 0) > 1
    data = e.to_json()
    assert data["at"].startswith("2024-05-08T12:00:00") and data["summary"] == e.summary


def test_explain_an_expired_memory(mem: Memory, clock: Any) -> None:
    base = mem.add(TEA, user_id="u")[0]
    gone = imported(mem, base, content="green tea, expired", expires_at=clock.now)
    e = mem.explain(gone, query="green tea")
    assert e.expiry.source == "record" and e.expiry.expired
    assert e.suppressed == ["expired"] and not e.recallable
    assert e.query is not None and e.query.rank is None and "expired" in (e.query.excluded or "")


def test_a_pinned_memory_never_expires(mem: Memory, clock: Any) -> None:
    base = mem.add(TEA, user_id="u")[0]
    kept = imported(mem, base, content="green tea, pinned", expires_at=clock.now, pinned=True)
    assert kept in [h.id for h in mem.search("green tea", user_id="u")]
    e = mem.explain(kept)
    assert e.expiry.source == "pinned" and not e.expiry.expired and e.recallable
    mem.unpin(kept)
    assert kept not in [h.id for h in mem.search("green tea", user_id="u")]
    assert mem.explain(kept).suppressed == ["expired"]


def test_a_memory_past_its_kinds_ttl_is_out_of_recall_unless_pinned(
    db_path: Path, clock: Any
) -> None:
    cfg = LifecycleConfig(ttl_days={MemoryKind.EPISODIC: 90})
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, lifecycle=cfg) as mem:
        old = clock.now - timedelta(days=91)
        rec = mem.add(TEA, user_id="u", timestamp=old)[0]
        kept = mem.add(TEA + "!", user_id="u", timestamp=old, pinned=True)[0]
        e = mem.explain(rec.id, query="green tea")
        assert e.expiry.source == "ttl" and e.expiry.ttl_days == 90 and e.expiry.expired
        assert not e.recallable and e.suppressed == ["expired"]
        assert e.query is not None and "expired" in (e.query.excluded or "")
        # Recall applies the TTL at once (maintenance deletes later), pinned records aside.
        assert [h.id for h in mem.search("green tea", user_id="u")] == [kept.id]
        assert mem.explain(kept.id).recallable
        assert mem.maintain().users[0].ids["expired"] == [rec.id]
        assert mem.get(kept.id).pinned


def test_explain_a_superseded_fact(smem: Memory, clock: Any) -> None:
    smem.add("I live in Lisbon.", user_id="u", timestamp=clock.now - timedelta(days=20))
    smem.add("I live in Porto.", user_id="u")
    lisbon = next(f for f in smem.facts(user_id="u", include_history=True) if f.object == "Lisbon")
    assert lisbon.memory_id is not None
    e = smem.explain(lisbon.memory_id, query="where do I live")
    assert e.superseded is not None and e.superseded.by == smem.get(lisbon.memory_id).superseded_by
    assert e.superseded.valid_to is not None
    assert e.suppressed == ["superseded"] and e.importance.source == "fact"
    assert e.query is not None and e.query.rank is None


def test_explain_archived_merged_and_consolidated_memories(mem: Memory) -> None:
    tea = mem.add(TEA, user_id="u")[0]
    merged = imported(mem, tea, content="green tea each morning", merged_into=tea.id)
    sources = imported(mem, tea, content="green tea at breakfast", consolidated_into=tea.id)
    archived = mem.archive(mem.add("green tea in the evening", user_id="u")[0].id)
    m = mem.explain(merged)
    assert m.merged_into == tea.id and m.suppressed == ["merged"]
    assert any(tea.id in line for line in m.summary)
    c = mem.explain(sources, query="green tea")
    assert c.consolidated_into == tea.id and c.recallable  # downweighted, not removed
    assert c.query is not None and c.query.rank is not None
    a = mem.explain(archived.id, query="green tea")
    assert a.archived_at == mem.now() and a.suppressed == ["archived"]
    assert a.query is not None and "archived" in (a.query.excluded or "")


# -- consolidation in ranking ------------------------------------------------------------


def test_a_consolidated_source_ranks_below_an_otherwise_equal_record(
    flat: Memory, clock: Any
) -> None:
    when = clock.now - timedelta(days=3)
    first = flat.add(TEA, user_id="u", session_id="a", timestamp=when, importance=0.5)[0]
    fact = flat.add("The user drinks green tea", user_id="u", kind="semantic")[0]
    source = imported(flat, first, session_id="b", consolidated_into=fact.id)
    hits = {h.id: h for h in flat.search("green tea every morning", user_id="u", explain=True)}
    assert list(hits)[:2] == [first.id, source]
    assert hits[source].scores["relevance"] == pytest.approx(hits[first.id].scores["relevance"])
    weight = flat.lifecycle.consolidated_weight
    assert weight == 0.8 and hits[source].scores["consolidated"] == weight
    assert hits[source].score == pytest.approx(weight * hits[first.id].score)
    e = hits[source].explanation
    assert e is not None and e["consolidated_factor"] == weight
    assert e["final"] == pytest.approx(e["reranked"] * e["retention_factor"] * weight)
    assert f"consolidated into {fact.id}" in e["summary"]
    q = flat.explain(source, query="green tea every morning").query
    assert q is not None and q.scores["consolidated"] == weight and q.rank == 2
    # A search that cannot return the semantic record has nothing to rank above the source.
    episodes = flat.search("green tea every morning", user_id="u", kinds=["episodic"])
    assert "consolidated" not in {k for h in episodes for k in h.scores}
    assert episodes[0].score == pytest.approx(episodes[1].score)
    # Weight 1 turns it off.
    off = Memory(
        flat.path, embedder="hashing", clock=clock, extractor=None,
        lifecycle=LifecycleConfig(ranking_weight=0.0, consolidated_weight=1.0),
    )  # fmt: skip
    with off:
        again = {h.id: h.score for h in off.search("green tea every morning", user_id="u")}
    assert again[source] == pytest.approx(again[first.id])


def test_the_consolidating_semantic_record_is_found_above_its_sources(
    smem: Memory, clock: Any, db_path: Any
) -> None:
    texts = ["I love hiking", "I really love hiking", "Honestly I love hiking"]
    ids = [
        smem.add(t, user_id="u", session_id=f"s{i}", timestamp=clock.now - timedelta(days=30 - i))[
            0
        ].id
        for i, t in enumerate(texts)
    ]
    assert smem.maintain().totals["consolidated"] == 3
    [fact] = [f for f in smem.facts(user_id="u") if f.object == "hiking"]
    hits = smem.search("hiking", user_id="u")
    assert hits[0].id == fact.memory_id and hits[0].memory.kind is MemoryKind.SEMANTIC
    # The fact and the messages that stated it are one hit by default.
    assert set(ids) <= set(hits[0].provenance)
    # Returned separately, the sources are downweighted below it, not deleted.
    separate = Memory(
        db_path, embedder="hashing", clock=clock, retrieval=RetrievalConfig(collapse_facts=False)
    )
    try:
        hits = separate.search("hiking", user_id="u")
        assert hits[0].id == fact.memory_id
        by_id = {h.id: h for h in hits}
        assert set(ids) <= set(by_id)
        for i in ids:
            assert by_id[i].memory.consolidated_into == fact.memory_id
            assert by_id[i].scores["consolidated"] == smem.lifecycle.consolidated_weight
            assert by_id[i].score < hits[0].score
    finally:
        separate.close()


def test_explain_a_session_only_memory(mem: Memory) -> None:
    rec = mem.add(TEA, user_id="u", session_id="s9", session_only=True)[0]
    e = mem.explain(rec.id)
    assert e.session_only and e.session_id == "s9"
    assert any("s9" in line for line in e.summary)


# -- archive and restore --------------------------------------------------------------------


def test_restore_brings_an_archived_memory_back_to_recall(mem: Memory) -> None:
    tea, cat = mem.add([TEA, "my cat is called Tom"], user_id="u")
    archived = mem.archive(tea.id, user_id="u")
    assert archived.archived_at == mem.now()
    assert tea.id not in [h.id for h in mem.search("green tea", user_id="u")]
    assert mem.get(tea.id).archived_at is not None  # kept, still listed
    assert tea.id in [r.id for r in mem.list(user_id="u").items]
    assert mem.archive(tea.id).archived_at == archived.archived_at  # again: no change
    restored = mem.restore(tea.id)
    assert restored.archived_at is None
    assert mem.restore(tea.id).archived_at is None  # again: no change
    assert mem.search("green tea", user_id="u")[0].id == tea.id
    assert events(mem, tea.id) == ["ADD", "ARCHIVE", "RESTORE"]
    assert events(mem, cat.id) == ["ADD"]


def test_lifecycle_writes_need_a_writable_store(mem: Memory, db_path: Path, clock: Any) -> None:
    rec = mem.add(TEA, user_id="u")[0]
    mem.close()
    with Memory(db_path, embedder="hashing", clock=clock, read_only=True) as ro:
        assert ro.explain(rec.id).recallable
        with pytest.raises(Exception, match="read-only"):
            ro.pin(rec.id)


# -- command line ---------------------------------------------------------------------------


def test_cli_explains_pins_archives_and_restores(db_path: Path) -> None:
    runner = CliRunner()

    def run(*args: str) -> Any:
        out = runner.invoke(app, ["--db", str(db_path), "--embedder", "hashing", *args])
        assert out.exit_code == 0, out.output
        return out

    rec = json.loads(run("--json", "add", TEA, "--user", "u").stdout)[0]
    shown = run("explain", rec["id"], "--query", "green tea").stdout
    assert "retention" in shown and "rank 1" in shown
    explained = json.loads(run("--json", "explain", rec["id"], "--user", "u").stdout)
    assert explained["recallable"] and explained["importance"]["source"] == "estimate"
    assert run("pin", rec["id"]).stdout == f"pinned {rec['id']}\n"
    assert json.loads(run("--json", "unpin", rec["id"]).stdout)["pinned"] is False
    assert json.loads(run("--json", "archive", rec["id"]).stdout)["archived_at"] is not None
    assert "archived" in run("explain", rec["id"]).stdout
    assert run("restore", rec["id"]).stdout == f"restored {rec['id']}\n"
    failed = runner.invoke(app, ["--db", str(db_path), "--embedder", "hashing", "pin", new_id()])
    assert failed.exit_code == 2 and "no memory" in failed.output


# -- async ----------------------------------------------------------------------------------


def test_async_memory_has_every_call_of_memory(db_path: Path, clock: Any) -> None:
    calls = [
        name
        for name, value in inspect.getmembers(Memory)
        if not name.startswith("_") and inspect.isfunction(value) and name != "now"
    ]
    assert {"maintain", "pin", "explain", "context", "search"} <= set(calls)
    for name in calls:  # ``now`` is cheap and stays synchronous
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name

    async def main() -> tuple[bool, bool, int]:
        async with AsyncMemory(db_path, embedder="hashing", clock=clock, extractor=None) as am:
            rec = (await am.add(TEA, user_id="u"))[0]
            pinned = await am.pin(rec.id)
            explained = await am.explain(rec.id, query="tea")
            await am.add("ok thanks", user_id="u", timestamp=clock.now - timedelta(days=300))
            report = await am.maintain(user_id="u")
            return pinned.pinned, explained.pinned, report.totals["archived"]

    assert anyio.run(main) == (True, True, 1)


def test_batch_retention_matches_one_at_a_time(mem: Memory, clock: Any) -> None:
    recs = mem.add([TEA, GREETING, ALLERGY], user_id="u", timestamp=clock.now - timedelta(days=40))
    mem.pin(recs[1].id)
    clock.advance(days=5)
    mem.search("green tea", user_id="u")
    clock.advance(days=20)
    stored = [mem.get(r.id) for r in recs]
    batch = retention_many([RetentionInput.from_record(r) for r in stored], mem.now())
    single = [retention(r, mem.now()) for r in stored]
    assert batch.tolist() == pytest.approx(single, rel=1e-12)
    assert batch[1] == 1.0 and len(set(batch.tolist())) == 3


def test_concurrent_writers_never_count_an_access_twice_nor_lose_one(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two threads flushing at once, or a flush beside a write transaction that takes the
    waiting accesses along: each access is written exactly once. A flush that returns
    True has every access counted before it committed, also those another thread was
    writing; a write transaction that fails gives its accesses back."""
    [tea] = mem.add(TEA, user_id="u")
    store = mem.store
    real = type(store)._apply_access
    slow = threading.Event()

    def slowed(self: Any, c: Any, batch: Any, users: Any) -> None:
        real(self, c, batch, users)
        if slow.is_set():
            time.sleep(0.3)  # the other flush runs meanwhile

    monkeypatch.setattr(type(store), "_apply_access", slowed)
    bump = lambda rec: reinforce(rec, mem.now(), mem.lifecycle).as_changes()  # noqa: E731
    for _ in range(3):
        store.record_access([tea.id], bump, user_id="u", flush_size=10**6, flush_after_s=3600)
    slow.set()
    results: list[bool] = []
    first = threading.Thread(target=lambda: results.append(store.flush_access(wait_s=5)))
    first.start()
    time.sleep(0.1)  # the first flush holds its accesses, writing
    assert store.flush_access(wait_s=5)  # waits for the first one's commit
    assert mem.store.read("SELECT access_count FROM memories WHERE id = ?", (tea.id,))[0][0] == 3
    first.join()
    assert results == [True]
    slow.clear()
    assert mem.get(tea.id).access_count == 3  # not 6

    # A write transaction that fails after taking the accesses along gives them back.
    store.record_access([tea.id], bump, user_id="u", flush_size=10**6, flush_after_s=3600)

    def fail(c: Any) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.transact(fail)
    assert len(store.access_log) == 1
    assert mem.get(tea.id).access_count == 4


def test_a_write_that_fails_while_writing_the_counts_gives_them_back(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The waiting counts fail to be written inside a write transaction (the server
    went away mid-statement, say): the transaction fails, the counts wait again, nothing
    stays half-taken, and the next flush writes each once without waiting on them."""
    [tea] = mem.add(TEA, user_id="u")
    store = mem.store
    bump = lambda rec: reinforce(rec, mem.now(), mem.lifecycle).as_changes()  # noqa: E731
    store.record_access([tea.id], bump, user_id="u", flush_size=10**6, flush_after_s=3600)
    real = type(store)._apply_access
    calls = {"n": 0}

    def fails_once(self: Any, *args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("lost the server mid-write")
        real(self, *args)

    monkeypatch.setattr(type(store), "_apply_access", fails_once)
    with pytest.raises(Exception, match="lost the server"):
        mem.add("I like oolong too", user_id="u")
    assert len(store.access_log) == 1 and store.access_log.snapshot()[tea.id][0] == 1
    started = time.monotonic()
    assert store.flush_access(wait_s=2)
    assert time.monotonic() - started < 1  # nothing in flight to wait for
    assert mem.get(tea.id).access_count == 1 and not store.access_log


@pytest.mark.parametrize("update_from", [True, False])
def test_counts_are_written_alike_with_and_without_update_from(
    mem: Memory, update_from: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One ``UPDATE ... FROM (VALUES ...)`` per 200 records, or (an SQLite before 3.33)
    one ``UPDATE`` per record: the same counts, also past one statement's 200."""
    monkeypatch.setattr(type(mem.store), "update_from_values", update_from)
    records = mem.add([f"note {i} about the garden" for i in range(450)], user_id="u")
    bump = lambda rec: reinforce(rec, mem.now(), mem.lifecycle).as_changes()  # noqa: E731
    for times in (1, 2):
        ids = [r.id for r in records[: 150 * times + 150]]
        mem.store.record_access(ids, bump, user_id="u", flush_size=10**6, flush_after_s=3600)
    assert mem.store.flush_access(wait_s=5)
    counts = {r.id: mem.get(r.id).access_count for r in records[::50]}
    assert counts == {
        r.id: (2 if i < 300 else 1 if i < 450 else 0) for i, r in enumerate(records) if i % 50 == 0
    }
