"""Maintenance (``Memory.maintain``): expiry, merging, consolidation and forgetting on a
real SQLite file with a fake clock; idempotence, dry runs and two processes at once."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
import pytest

from helpers import all_records, integrity_check
from mnemolayer import Memory, NotFoundError, StoreError, ValidationError
from mnemolayer.lifecycle import LifecycleConfig
from mnemolayer.lifecycle.maintain import MaintenanceOptions, MaintenanceReport
from mnemolayer.models import MemoryKind, new_id

pytestmark = pytest.mark.timeout(120)

DAY = timedelta(days=1)


def ago(clock: Any, days: float) -> Any:
    return clock.now - timedelta(days=days)


def events(mem: Memory, memory_id: str) -> list[str]:
    return [e.event for e in mem.history(memory_id)]


def found(mem: Memory, query: str, **kw: Any) -> list[str]:
    return [h.memory.content for h in mem.search(query, user_id="u", **kw)]


def say(mem: Memory, text: str, session: str, when: Any, **kw: Any) -> str:
    [rec] = mem.add(text, user_id="u", session_id=session, timestamp=when, **kw)
    return rec.id


def imported(mem: Memory, like_id: str, **fields: Any) -> str:
    """Import a copy of a record with ``fields`` changed (a record whose state ``add``
    cannot set, e.g. pinned and already past its expiry); returns its id."""
    rid = new_id()
    row = {"type": "memory", **mem.get(like_id).to_json(), "id": rid, "content_hash": rid}
    row.update({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in fields.items()})
    assert mem.import_rows([row]) == 1
    return rid


class ConstantEmbedder:
    """Every text gets the same vector: cosine 1 for every pair, so only the guards of
    ``is_near_duplicate`` stand between look-alike facts and a merge."""

    name = "constant-test"
    dim = 8
    max_tokens = 512

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        return np.full((len(texts), self.dim), 1 / np.sqrt(self.dim), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def ttl_mem(db_path: Path, clock: Any) -> Iterator[Memory]:
    """Semantic memory on (rules), episodic turns expiring after 90 days."""
    cfg = LifecycleConfig(ttl_days={MemoryKind.EPISODIC: 90})
    with Memory(db_path, embedder="hashing", clock=clock, lifecycle=cfg) as memory:
        yield memory


def a_life(mem: Memory, clock: Any) -> dict[str, str]:
    """Small talk long ago, one routine said in three sessions, one record past its own
    expiry, one fresh detail."""
    ids = {
        "hi": say(mem, "hi", "s1", ago(clock, 120)),
        "ok": say(mem, "ok thanks", "s1", ago(clock, 119)),
        "dog1": say(mem, "I walk the dog after dinner", "s2", ago(clock, 10)),
        "dog2": say(mem, "I walk the dog after dinner.", "s3", ago(clock, 5)),
        "dog3": say(mem, "i walk the dog after dinner", "s4", ago(clock, 1)),
        "fresh": say(mem, "The plumber comes on Tuesday at 9", "s4", ago(clock, 1)),
    }
    ids["expired"] = say(
        mem, "door code 4711", "s4", ago(clock, 2), importance=0.5, expires_at=ago(clock, 1)
    )
    return ids


# -- the pass as a whole -------------------------------------------------------------


def test_a_second_pass_right_after_changes_nothing(mem: Memory, clock: Any) -> None:
    ids = a_life(mem, clock)
    first = mem.maintain()
    t = first.totals
    assert (t["expired"], t["merged"], t["created"], t["archived"]) == (1, 2, 1, 2)
    assert first.changes == sum(t[k] for k in t if k not in ("examined", "active"))
    assert set(first.users[0].ids["archived"]) == {ids["hi"], ids["ok"]}
    second = mem.maintain()
    assert second.changes == 0, second.to_json()
    assert second.totals["active"] == first.totals["active"]
    clock.advance(days=1)
    assert mem.maintain().changes == 0  # a day later there is still nothing to do


def test_report_is_json_ready_and_lists_are_capped(mem: Memory, clock: Any) -> None:
    for i in range(5):
        say(mem, "ok", f"s{i}", ago(clock, 200 + i * 3))
        say(mem, f"lol {i}", f"s{i}", ago(clock, 200 + i * 3))
    report = mem.maintain(options=MaintenanceOptions(max_ids=2))
    assert isinstance(report, MaintenanceReport)
    user = report.users[0]
    assert user.merged == 4 and len(user.ids["merged"]) == 2
    data = report.to_json()
    assert data["dry_run"] is False and data["now"].startswith("2024-05-08")
    assert data["totals"]["merged"] == 4 and data["changes"] == report.changes
    assert data["users"][0]["user_id"] == "u" and data["duration_s"] >= 0


def test_a_dry_run_counts_the_same_and_writes_nothing(mem: Memory, clock: Any) -> None:
    a_life(mem, clock)
    before = mem.stats(user_id="u")
    planned = mem.maintain(dry_run=True)
    assert planned.dry_run and mem.stats(user_id="u") == before
    assert mem.store.get_meta("maintain.watermark:u") is None
    done = mem.maintain()
    for key in ("expired", "merged", "consolidated", "created", "archived", "active"):
        assert planned.totals[key] == done.totals[key], key


def test_bad_arguments_are_refused(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="user_id"):
        mem.maintain(user_id="")
    with pytest.raises(ValidationError, match="now"):
        mem.maintain(now="yesterday-ish")
    with pytest.raises(ValidationError, match="dry_run"):
        mem.maintain(dry_run="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="options"):
        mem.maintain(options={"merge": False})  # type: ignore[arg-type]


def test_a_read_only_store_can_only_be_dry_run(db_path: Path, clock: Any) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        a_life(mem, clock)
    with Memory(db_path, embedder="hashing", clock=clock, read_only=True) as ro:
        assert ro.maintain(dry_run=True).totals["merged"] == 2
        with pytest.raises(StoreError, match="read-only"):
            ro.maintain()


def test_one_user_at_a_time_and_never_across_users(mem: Memory, clock: Any) -> None:
    for user in ("u", "v"):
        for i in range(3):
            mem.add("I walk the dog after dinner", user_id=user, session_id=f"s{i}")
    only_u = mem.maintain(user_id="u")
    assert [r.user_id for r in only_u.users] == ["u"] and only_u.totals["merged"] == 2
    v_records = all_records(mem, "v")
    assert all(r.merged_into is None for r in v_records)
    both = mem.maintain()
    assert [r.user_id for r in both.users] == ["u", "v"]
    assert both.users[1].merged == 2 and both.users[0].changes == 0
    survivors = {r.merged_into for r in all_records(mem, "v") if r.merged_into}
    assert survivors <= {r.id for r in v_records}


# -- expiry --------------------------------------------------------------------------


def test_expired_memories_leave_every_index_and_their_facts_go(ttl_mem: Memory, clock: Any) -> None:
    old = say(ttl_mem, "I live in Paris", "s1", ago(clock, 100))
    new = say(ttl_mem, "I cook pasta on Sundays", "s2", ago(clock, 2))
    # Past its TTL, the message and the fact it stated are out of recall and facts at
    # once; maintenance then deletes them.
    assert not [t for t in found(ttl_mem, "Paris") if "Paris" in t]
    assert [f.object for f in ttl_mem.facts(user_id="u") if f.object == "Paris"] == []
    report = ttl_mem.maintain()
    assert report.totals["expired"] == 1 and report.totals["derived_deleted"] == 1
    assert not [t for t in found(ttl_mem, "Paris") if "Paris" in t]
    assert found(ttl_mem, "Paris", mode="keyword") == []
    assert [r.id for r in all_records(ttl_mem, "u")] == [new]
    with pytest.raises(NotFoundError):
        ttl_mem.get(old)
    [event] = [e for e in ttl_mem.history(old) if e.event == "EXPIRE"]
    assert event.old_content is None  # a deletion by policy keeps no copy
    assert not [f for f in ttl_mem.facts(user_id="u") if f.object == "Paris"]
    stats = ttl_mem.stats(user_id="u")
    assert stats["vectors"] == stats["memories"] == 1


def test_a_record_expires_by_its_own_time_even_without_a_ttl(mem: Memory, clock: Any) -> None:
    base = say(mem, "The plumber comes on Tuesday", "s1", ago(clock, 1))
    later = say(mem, "code 1", "s1", ago(clock, 1), expires_at=clock.now + DAY)
    gone = say(mem, "code 2", "s1", ago(clock, 1), expires_at=ago(clock, 0.5))
    assert mem.maintain().totals["expired"] == 1
    assert {r.id for r in all_records(mem, "u")} == {base, later}
    clock.advance(days=2)
    assert mem.maintain().users[0].ids["expired"] == [later]
    assert "EXPIRE" in events(mem, gone)


def test_when_a_survivor_expires_what_was_merged_into_it_returns(
    ttl_mem: Memory, clock: Any
) -> None:
    older = say(ttl_mem, "Our cleaner comes every second week", "s1", ago(clock, 80))
    newer = say(ttl_mem, "our cleaner comes every second week", "s2", ago(clock, 20))
    assert ttl_mem.maintain().totals["merged"] == 1
    assert ttl_mem.get(newer).merged_into == older
    clock.advance(days=15)  # the older one is now past the 90-day TTL
    report = ttl_mem.maintain()
    assert report.totals["expired"] == 1 and report.totals["released"] == 1
    assert ttl_mem.get(newer).merged_into is None and "UNMERGE" in events(ttl_mem, newer)
    assert found(ttl_mem, "cleaner") == ["our cleaner comes every second week"]
    assert ttl_mem.maintain().changes == 0


def test_records_merged_into_one_deleted_elsewhere_are_set_free(mem: Memory, clock: Any) -> None:
    older = say(mem, "Our cleaner comes every second week", "s1", ago(clock, 8))
    newer = say(mem, "our cleaner comes every second week", "s2", ago(clock, 2))
    mem.maintain()
    mem.delete(older)
    assert found(mem, "cleaner") == []
    report = mem.maintain()
    assert report.users[0].ids["released"] == [newer] and mem.get(newer).merged_into is None
    assert found(mem, "cleaner") == ["our cleaner comes every second week"]
    assert mem.maintain().changes == 0


def test_search_explain_and_maintain_agree_on_expiry(ttl_mem: Memory, clock: Any) -> None:
    """Effective expiry (own ``expires_at``, else the kind's TTL; pinned: never) is one
    rule: what search leaves out as expired, explain calls expired and maintain deletes."""
    cases = {
        "past its kind's TTL": say(ttl_mem, "quince jam recipe one", "s1", ago(clock, 91)),
        "within its kind's TTL": say(ttl_mem, "quince jam recipe two", "s1", ago(clock, 89)),
        "own time passed": say(
            ttl_mem, "quince jam recipe three", "s1", ago(clock, 5), expires_at=ago(clock, 1)
        ),
        "own time later than the TTL": say(
            ttl_mem,
            "quince jam recipe four",
            "s1",
            ago(clock, 95),
            expires_at=clock.now + DAY,
        ),
        "pinned past its TTL": say(
            ttl_mem, "quince jam recipe five", "s1", ago(clock, 200), pinned=True
        ),
        "pinned past its own time": say(
            ttl_mem,
            "quince jam recipe six",
            "s1",
            ago(clock, 5),
            pinned=True,
            expires_at=ago(clock, 1),
        ),
        "semantic, no TTL": say(
            ttl_mem, "quince jam recipe seven", "s1", ago(clock, 400), kind="semantic"
        ),
    }
    expired = {"past its kind's TTL", "own time passed"}
    for mode in ("hybrid", "keyword", "vector"):
        hits = ttl_mem.search("quince jam recipe", user_id="u", limit=20, mode=mode)
        assert {h.id for h in hits} == {cases[k] for k in cases if k not in expired}, mode
    for name, rid in cases.items():
        assert (ttl_mem.explain(rid).suppressed == ["expired"]) == (name in expired), name
    report = ttl_mem.maintain()
    assert set(report.users[0].ids["expired"]) == {cases[k] for k in expired}
    assert {r.id for r in all_records(ttl_mem, "u")} == {
        cases[k] for k in cases if k not in expired
    }


def test_add_takes_an_expiry_after_the_message_time(mem: Memory, clock: Any) -> None:
    [rec] = mem.add("Gate code 5521 this week", user_id="u", expires_at="2024-05-10T00:00:00+02:00")
    assert rec.expires_at is not None and rec.expires_at.isoformat() == "2024-05-09T22:00:00+00:00"
    assert mem.get(rec.id).expires_at == rec.expires_at
    assert [h.id for h in mem.search("gate code", user_id="u")] == [rec.id]
    clock.advance(days=2)  # past it: out of recall at once, deleted by the next pass
    assert mem.search("gate code", user_id="u") == []
    assert mem.maintain().users[0].ids["expired"] == [rec.id]
    for bad in ("not a time", clock.now - DAY, clock.now):
        with pytest.raises(ValidationError) as err:
            mem.add("Gate code 9999", user_id="u", expires_at=bad)
        assert err.value.field == "expires_at"
    messages = [
        {"content": "first", "timestamp": ago(clock, 3)},
        {"content": "second", "timestamp": clock.now + 2 * DAY},
    ]
    with pytest.raises(ValidationError, match=r"messages\[1\]") as err:
        mem.add(messages, user_id="u", expires_at=clock.now + DAY)
    assert err.value.field == "expires_at"
    assert [r.content for r in all_records(mem, "u")] == []  # nothing stored


# -- pinned ------------------------------------------------------------------------------


def test_pinned_memories_never_decay_expire_or_merge_away(ttl_mem: Memory, clock: Any) -> None:
    hi = say(ttl_mem, "hi", "s1", ago(clock, 300), pinned=True)
    old = say(ttl_mem, "Anna's birthday is 3 March", "s1", ago(clock, 200), pinned=True)
    dup = say(ttl_mem, "anna's birthday is 3 march", "s2", ago(clock, 10))
    own = imported(ttl_mem, old, content="locker 12", expires_at=ago(clock, 1), pinned=True)
    both = say(ttl_mem, "Anna's birthday is 3 March!", "s3", ago(clock, 5), pinned=True)
    report = ttl_mem.maintain()
    assert report.totals["expired"] == 0 and report.totals["archived"] == 0
    assert ttl_mem.get(hi).archived_at is None and ttl_mem.get(own).pinned
    # The unpinned copy merges into a pinned one; two pinned ones never merge.
    assert ttl_mem.get(dup).merged_into in {old, both}
    assert ttl_mem.get(old).merged_into is None and ttl_mem.get(both).merged_into is None
    assert ttl_mem.maintain().changes == 0


# -- merging -----------------------------------------------------------------------------

TRAPS = [
    ("I like tea", "I like green tea"),
    ("Anna's phone is 555-0101", "Anna's phone is 555-0102"),
    ("I live in Paris", "I live in Lyon"),
    ("I eat meat", "I don't eat meat"),
    ("Tom owes Sam 20 dollars", "Sam owes Tom 20 dollars"),
    ("我喜欢喝茶", "我喜欢喝绿茶"),
]


def test_look_alike_facts_never_merge_even_at_cosine_one(db_path: Path, clock: Any) -> None:
    with Memory(db_path, embedder=ConstantEmbedder(), clock=clock, extractor=None) as mem:
        pairs = [
            (say(mem, a, "s1", ago(clock, 3)), say(mem, b, "s2", ago(clock, 2)))
            for a, b in [
                *TRAPS,
                ("My sister Anna lives in Berlin.", "my sister anna lives in berlin"),
            ]
        ]
        report = mem.maintain()
        assert report.totals["merged"] == 1
        assert mem.get(pairs[-1][1]).merged_into == pairs[-1][0]  # the older survives
        for a, b in pairs[:-1]:
            assert mem.get(a).merged_into is None and mem.get(b).merged_into is None
        assert events(mem, pairs[-1][0])[-1] == "MERGE" and "MERGE" in events(mem, pairs[-1][1])


def test_records_with_different_metadata_never_merge(mem: Memory, clock: Any) -> None:
    """Metadata is the caller's: two records it labelled differently are two items."""
    text = "Our cleaner comes every second week"
    a = say(mem, text, "s1", ago(clock, 9), metadata={"doc": "a", "tags": ["x", "y"]})
    b = say(mem, text, "s2", ago(clock, 8), metadata={"doc": "b", "tags": ["x", "y"]})
    c = say(mem, text + ".", "s3", ago(clock, 7), metadata={"tags": ["x", "y"], "doc": "a"})
    plain = [say(mem, text, f"p{i}", ago(clock, 6 - i)) for i in range(2)]
    report = mem.maintain()
    assert set(report.users[0].ids["merged"]) == {c, plain[1]}
    assert mem.get(c).merged_into == a  # the same metadata, in another key order
    assert mem.get(plain[1]).merged_into == plain[0]
    assert mem.get(a).merged_into is None and mem.get(b).merged_into is None
    assert mem.maintain().changes == 0


def test_langgraph_store_items_survive_maintenance(smem: Memory, clock: Any) -> None:
    """Three items with the same text under three keys stay three items: none merges,
    each is still read by key and found by a query, with its own value."""
    from mnemolayer.integrations.langgraph import MnemolayerStore

    store = MnemolayerStore(smem, index={"fields": ["text"]})
    for text in ("I love hiking", "I walk the dog after dinner"):
        for i in range(3):
            clock.advance(days=1)
            store.put(("alice", "notes"), f"{text[:6]}-{i}", {"text": text, "n": i})
    clock.advance(days=1)
    report = smem.maintain()
    assert report.totals["merged"] == 0 and report.totals["created"] == 0
    for text in ("I love hiking", "I walk the dog after dinner"):
        keys = {f"{text[:6]}-{i}" for i in range(3)}
        for i in range(3):
            item = store.get(("alice", "notes"), f"{text[:6]}-{i}")
            assert item is not None and item.value == {"text": text, "n": i}
        found = store.search(("alice",), query=text, limit=10)
        assert keys <= {it.key for it in found}
        scores = [it.score for it in found if it.key in keys]
        assert max(scores) - min(scores) < 0.05  # none downweighted below the others
    assert smem.maintain().changes == 0


def test_the_survivor_takes_provenance_importance_and_the_restatement(
    mem: Memory, clock: Any
) -> None:
    old = say(mem, "Our cleaner comes every second week", "s1", ago(clock, 60), importance=0.5)
    new = say(mem, "our cleaner comes every second week", "s2", ago(clock, 3), importance=0.55)
    before = mem.get(old)
    mem.maintain()
    survivor = mem.get(old)
    assert mem.get(new).merged_into == old
    assert set(survivor.source_ids) == set(before.source_ids) | set(mem.get(new).source_ids)
    assert survivor.importance == pytest.approx(0.55) and survivor.access_count == 1
    assert survivor.last_accessed_at == ago(clock, 3)
    assert found(mem, "cleaner") == ["Our cleaner comes every second week"]


def test_only_new_records_are_examined_again(mem: Memory, clock: Any) -> None:
    for i in range(30):
        say(mem, f"note number {i} about the garden", f"s{i}", ago(clock, 2))
    assert mem.maintain().totals["examined"] >= 30
    say(mem, "Note number 7 about the garden!", "s99", ago(clock, 1))
    again = mem.maintain()
    assert again.totals["merged"] == 1 and again.totals["examined"] <= 2


# -- consolidation -------------------------------------------------------------------------


def test_a_fact_said_in_three_sessions_links_its_sources(smem: Memory, clock: Any) -> None:
    texts = ["I love hiking", "I really love hiking", "Honestly I love hiking"]
    ids = [say(smem, t, f"s{i}", ago(clock, 30 - 10 * i)) for i, t in enumerate(texts)]
    say(smem, "I love chess", "s0", ago(clock, 30))
    say(smem, "I love chess so much", "s1", ago(clock, 20))  # two sessions only
    [fact] = [f for f in smem.facts(user_id="u") if f.object == "hiking"]
    assert fact.memory_id is not None and set(fact.source_ids) == set(ids)
    report = smem.maintain()
    assert report.totals["consolidated"] == 3 and report.totals["created"] == 0
    for mid in ids:
        assert smem.get(mid).consolidated_into == fact.memory_id
        assert "CONSOLIDATE" in events(smem, mid)
    assert set(smem.get(fact.memory_id).source_ids) == set(ids)
    assert "CONSOLIDATE" in events(smem, fact.memory_id)
    chess = [
        r for r in all_records(smem, "u") if "chess" in r.content and r.kind.value == "episodic"
    ]
    assert all(r.consolidated_into is None for r in chess)
    assert smem.maintain().changes == 0


def test_content_said_in_three_sessions_becomes_one_semantic_record(
    mem: Memory, clock: Any
) -> None:
    ids = [
        say(mem, "Board games with the neighbours every Friday", f"s{i}", ago(clock, 9 - 3 * i))
        for i in range(3)
    ]
    smalltalk = [say(mem, "good morning", f"s{i}", ago(clock, 9 - 3 * i)) for i in range(3)]
    twice = [say(mem, "Yoga class on Wednesdays", f"s{i}", ago(clock, 9 - 3 * i)) for i in range(2)]
    report = mem.maintain()
    assert report.totals["created"] == 1 and report.totals["merged"] == 2 + 2 + 1
    [semantic] = mem.search("board games", user_id="u", kinds=["semantic"])
    assert semantic.memory.source_ids == ids  # the survivor, then what was merged into it
    assert semantic.memory.content == "Board games with the neighbours every Friday"
    assert mem.get(ids[0]).consolidated_into == semantic.memory.id
    assert events(mem, semantic.memory.id) == ["ADD", "CONSOLIDATE"]
    assert all(mem.get(i).consolidated_into is None for i in [*smalltalk, *twice])
    assert mem.maintain().changes == 0
    # Said a fourth time: merged, and the semantic record's provenance grows.
    fourth = say(mem, "board games with the neighbours every friday", "s9", ago(clock, 0))
    later = mem.maintain()
    assert later.totals["merged"] == 1 and later.totals["consolidated"] == 1
    assert mem.get(semantic.memory.id).source_ids == [*ids, fourth]


# -- forgetting ----------------------------------------------------------------------------


def test_faded_small_talk_is_archived_and_can_be_restored(mem: Memory, clock: Any) -> None:
    hi = say(mem, "ok thanks", "s1", ago(clock, 100))
    plain = say(mem, "The weather is nice today", "s1", ago(clock, 300))
    recent = say(mem, "lol", "s2", ago(clock, 10))
    report = mem.maintain()
    assert report.users[0].ids["archived"] == [hi]
    assert mem.get(plain).archived_at is None  # importance 0.4: kept however old
    assert mem.get(recent).archived_at is None
    assert "ok thanks" not in found(mem, "ok thanks")
    assert hi in {r.id for r in all_records(mem, "u")}  # archived, still listed
    mem.restore(hi)
    assert found(mem, "ok thanks")[0] == "ok thanks"
    assert mem.maintain().changes == 0  # a restore counts as an access
    assert events(mem, hi)[-2:] == ["ARCHIVE", "RESTORE"]


def test_delete_policy_deletes_but_never_what_knowledge_cites(db_path: Path, clock: Any) -> None:
    cfg = LifecycleConfig(forget_action="delete")
    with Memory(db_path, embedder="hashing", clock=clock, lifecycle=cfg) as mem:
        hi = say(mem, "hi there", "s1", ago(clock, 200))
        jazz = say(mem, "I love jazz", "s1", ago(clock, 200), importance=0.1)
        report = mem.maintain()
        assert report.users[0].ids["deleted"] == [hi]
        assert report.users[0].ids["archived"] == [jazz]  # its fact is current
        assert "FORGET" in events(mem, hi) and mem.get(jazz).archived_at is not None
        assert [f.object for f in mem.facts(user_id="u")] == ["jazz"]


# -- purging -------------------------------------------------------------------------------


def purging(db_path: Path, clock: Any, **settings: Any) -> Memory:
    return Memory(
        db_path, embedder="hashing", clock=clock, extractor=None,
        lifecycle=LifecycleConfig(**settings),
    )  # fmt: skip


def test_archived_records_are_purged_after_the_configured_days(db_path: Path, clock: Any) -> None:
    with purging(db_path, clock, purge_archived_after_days=30) as mem:
        hi = say(mem, "ok thanks", "s1", ago(clock, 100))
        kept = say(mem, "The weather is nice today", "s1", ago(clock, 100))
        assert mem.maintain().users[0].ids["archived"] == [hi]
        pinned = imported(mem, hi, pinned=True, archived_at=ago(clock, 90))
        clock.advance(days=29)
        assert mem.maintain().changes == 0  # archived 29 days ago: still restorable
        clock.advance(days=2)
        report = mem.maintain()
        assert report.users[0].ids["purged"] == [hi] and report.changes == 1
        with pytest.raises(NotFoundError):
            mem.get(hi)
        [event] = [e for e in mem.history(hi) if e.event == "PURGE"]
        assert event.old_content is None  # a deletion by policy keeps no copy
        assert mem.get(pinned).pinned  # pinned records are never purged
        assert {r.id for r in all_records(mem, "u")} == {kept, pinned}
        stats = mem.stats(user_id="u")
        assert stats["vectors"] == stats["memories"] == 2
        assert mem.maintain().changes == 0


def test_merged_copies_are_purged_and_the_survivor_keeps_their_provenance(
    db_path: Path, clock: Any
) -> None:
    with purging(db_path, clock, purge_merged_after_days=10) as mem:
        older = say(mem, "Our cleaner comes every second week", "s1", ago(clock, 60))
        newer = say(mem, "our cleaner comes every second week", "s2", ago(clock, 20))
        assert mem.maintain().totals["merged"] == 1
        provenance = mem.get(older).source_ids
        clock.advance(days=9)
        assert mem.maintain().changes == 0
        clock.advance(days=2)
        planned = mem.maintain(dry_run=True)
        report = mem.maintain()
        assert planned.totals["purged"] == report.totals["purged"] == 1
        assert report.users[0].ids["purged"] == [newer] and report.totals["released"] == 0
        assert mem.get(older).source_ids == provenance
        assert found(mem, "cleaner") == ["Our cleaner comes every second week"]
        assert "PURGE" in events(mem, newer)
        assert mem.maintain().changes == 0


def test_a_record_merged_into_a_purged_one_goes_with_it(db_path: Path, clock: Any) -> None:
    with purging(db_path, clock, purge_archived_after_days=30) as mem:
        first = say(mem, "ok thanks", "s1", ago(clock, 200))
        copy = say(mem, "ok thanks", "s2", ago(clock, 150))
        done = mem.maintain()
        assert done.users[0].ids["merged"] == [copy] and done.users[0].ids["archived"] == [first]
        clock.advance(days=31)
        planned = mem.maintain(dry_run=True)
        report = mem.maintain()
        assert planned.totals["purged"] == report.totals["purged"] == 2
        assert set(report.users[0].ids["purged"]) == {first, copy}
        assert report.totals["released"] == 0  # no old duplicate returns to recall
        assert all_records(mem, "u") == [] and "UNMERGE" not in events(mem, copy)
        assert mem.maintain().changes == 0


def test_a_record_something_stays_merged_into_is_not_purged(db_path: Path, clock: Any) -> None:
    with purging(db_path, clock, purge_archived_after_days=30) as mem:
        first = say(mem, "ok thanks", "s1", ago(clock, 200))
        assert mem.maintain().users[0].ids["archived"] == [first]
        pinned = imported(mem, first, pinned=True, merged_into=first, archived_at=None)
        clock.advance(days=31)
        assert mem.maintain(dry_run=True).changes == mem.maintain().changes == 0
        assert mem.get(pinned).merged_into == first and mem.get(first).archived_at is not None


def test_purging_keeps_a_source_of_every_current_fact(db_path: Path, clock: Any) -> None:
    cfg = LifecycleConfig(forget_action="delete", purge_archived_after_days=30)
    with Memory(db_path, embedder="hashing", clock=clock, lifecycle=cfg) as mem:
        jazz = say(mem, "I love jazz", "s1", ago(clock, 200), importance=0.1)
        assert mem.maintain().users[0].ids["archived"] == [jazz]  # its fact is current
        [fact] = mem.facts(user_id="u")
        assert fact.memory_id is not None
        mem.archive(fact.memory_id)
        clock.advance(days=31)
        assert mem.maintain().totals["purged"] == 0  # the fact's only source, and its record
        again = say(mem, "I really love jazz", "s2", ago(clock, 1))
        report = mem.maintain()
        assert report.users[0].ids["purged"] == [jazz]  # the fact has another source now
        [still] = mem.facts(user_id="u")
        assert (still.object, still.source_ids) == ("jazz", [again])
        assert mem.get(fact.memory_id).archived_at is not None  # a fact's record stays
        assert mem.maintain().changes == 0


@pytest.mark.parametrize("days", [0, -1, float("inf"), float("nan")])
def test_purge_ages_must_be_positive_and_finite(days: float) -> None:
    for field in ("purge_archived_after_days", "purge_merged_after_days"):
        with pytest.raises(pydantic.ValidationError, match=field):
            LifecycleConfig.model_validate({field: days})


def test_explain_says_will_be_forgotten_exactly_when_maintain_forgets(
    mem: Memory, clock: Any
) -> None:
    """Explain and maintain judge forgetting by one rule (retention below the threshold
    and importance below ``forget_below_importance``; pinned never; a restore counts as
    an access), so the records explained as "will be forgotten" are the ones archived."""
    ids = {
        "old small talk": say(mem, "ok thanks", "s1", ago(clock, 200)),
        "old plain turn": say(mem, "The weather is nice today", "s1", ago(clock, 300)),
        "old, importance set high": say(mem, "lol", "s2", ago(clock, 300), importance=0.9),
        "old, pinned": say(mem, "hi", "s2", ago(clock, 300), pinned=True),
        "recent small talk": say(mem, "haha", "s3", ago(clock, 20)),
        "old, at the floor": say(mem, "hmm ok", "s3", ago(clock, 400), importance=0.35),
        "old, under the floor": say(mem, "hmm right", "s3", ago(clock, 400), importance=0.34),
        "old, restored": say(mem, "bye", "s4", ago(clock, 200)),
    }
    mem.archive(ids["old, restored"])
    mem.restore(ids["old, restored"])
    forgotten = {"old small talk", "old, under the floor"}

    def explained() -> set[str]:
        out = set()
        for name, rid in ids.items():
            e = mem.explain(rid)
            assert e.will_be_forgotten == any("will be forgotten" in s for s in e.summary)
            if e.will_be_forgotten:
                out.add(name)
        return out

    assert explained() == forgotten
    assert "kept: importance 0.40 ≥ 0.35" in " ".join(mem.explain(ids["old plain turn"]).summary)
    planned = mem.maintain(dry_run=True).users[0].ids["archived"]
    assert set(planned) == {ids[k] for k in forgotten}
    assert set(mem.maintain().users[0].ids["archived"]) == {ids[k] for k in forgotten}
    assert explained() == set()  # archived now: nothing more to forget
    clock.advance(days=300)  # much later the restored one fades again, and only it
    newly = explained()
    assert newly == {"recent small talk", "old, restored"}
    assert set(mem.maintain().users[0].ids["archived"]) == {ids[k] for k in newly}


def test_the_importance_floor_is_a_lifecycle_setting(db_path: Path, clock: Any) -> None:
    strict = LifecycleConfig(forget_below_importance=0.55)
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, lifecycle=strict) as m:
        plain = say(m, "The weather is nice today", "s1", ago(clock, 300))
        assert m.explain(plain).will_be_forgotten
        assert m.maintain().users[0].ids["archived"] == [plain]
    off = LifecycleConfig(forget_below_importance=0.0)
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, lifecycle=off) as m:
        hi = say(m, "hi", "s2", ago(clock, 300))
        assert not m.explain(hi).will_be_forgotten and m.maintain().totals["archived"] == 0
    with pytest.raises(Exception, match="forget_below_importance"):
        MaintenanceOptions(forget_below_importance=0.5)  # type: ignore[call-arg]


def test_forgetting_waits_for_age_importance_span(mem: Memory, clock: Any) -> None:
    hi = say(mem, "hi", "s1", ago(clock, 60))
    assert mem.maintain().totals["archived"] == 0
    clock.advance(days=20)
    assert mem.maintain().users[0].ids["archived"] == [hi]


# -- several processes -----------------------------------------------------------------------


def _maintain_in_process(path: str, now: str, start: Any, results: Any) -> None:
    """Runs in a spawned process with its own connection to the file."""
    try:
        with Memory(path, embedder="hashing", extractor=None) as mem:
            start.wait(30)
            results.put(("ok", mem.maintain(now=now).to_json()))
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put(("error", repr(exc)))


def test_two_processes_maintaining_at_once_change_each_record_once(
    mem: Memory, clock: Any, db_path: Path
) -> None:
    rows: list[dict[str, Any]] = []
    for i in range(150):
        rows.append({"content": "ok thanks", "role": "user", "timestamp": ago(clock, 200 + i)})
    mem.add(rows, user_id="u", session_id="old")
    for g in range(40):
        for s in range(3):
            mem.add(f"routine number {g} of the week", user_id="u", session_id=f"s{s}",
                    timestamp=ago(clock, 5 - s))  # fmt: skip
    expected = mem.maintain(dry_run=True).totals
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(
            target=_maintain_in_process, args=(str(db_path), clock.now.isoformat(), start, results)
        )
        for _ in range(2)
    ]
    for proc in procs:
        proc.start()
    start.set()
    outcomes = [results.get(timeout=90) for _ in procs]
    for proc in procs:
        proc.join(30)
    assert [status for status, _ in outcomes] == ["ok", "ok"], outcomes
    for key in ("merged", "archived", "consolidated", "created"):
        assert sum(doc["totals"][key] for _, doc in outcomes) == expected[key], key
    records = all_records(mem, "u")
    history = [e.event for e in mem.store.history_rows("u")]
    assert history.count("ARCHIVE") == len([r for r in records if r.archived_at])
    assert history.count("MERGE") == 2 * len([r for r in records if r.merged_into])
    assert len([r for r in records if r.kind is MemoryKind.SEMANTIC]) == expected["created"]
    assert integrity_check(db_path) == [("ok",)]
    assert mem.maintain(now=clock.now).changes == 0


# -- command line --------------------------------------------------------------------------


def test_the_maintain_command(mem: Memory, clock: Any, db_path: Path) -> None:
    from typer.testing import CliRunner

    from mnemolayer.cli import app

    a_life(mem, clock)
    runner = CliRunner()
    base = ["--db", str(db_path), "--embedder", "hashing"]
    now = clock.now.isoformat()
    dry = runner.invoke(app, [*base, "maintain", "--now", now, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] and planned["totals"]["merged"] == 2
    shown = runner.invoke(app, [*base, "maintain", "--user", "u", "--now", now])
    assert shown.exit_code == 0 and "merged into a near-duplicate" in shown.stdout
    again = runner.invoke(app, [*base, "--json", "maintain", "--now", now])
    assert json.loads(again.stdout)["changes"] == 0
    bad = runner.invoke(app, [*base, "maintain", "--now", "someday"])
    assert bad.exit_code == 2 and "now" in bad.stderr


def test_the_bench_dedup_command_finds_no_false_merge() -> None:
    from typer.testing import CliRunner

    from bench.cli import bench_app

    result = CliRunner().invoke(bench_app, ["--embedder", "hashing", "dedup", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["config"]["pairs"] >= 100 and doc["chosen"]["guarded"]["fp"] == 0
