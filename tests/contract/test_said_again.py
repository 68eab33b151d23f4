"""Words said again, and what expired: the stored record comes back while it lasts; once it has expired
(its own ``expires_at`` or its kind's TTL), the words are stored anew and recalled,
whether or not maintenance ran in between."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.lifecycle.config import LifecycleConfig


def _open(db_path: Path, clock: FakeClock, **kw: object) -> Memory:
    return Memory(db_path, embedder="hashing", clock=clock, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["own_expires_at", "kind_ttl"])
def test_words_said_after_their_memory_expired_are_stored_anew(
    db_path: Path, clock: FakeClock, how: str
) -> None:
    kw = {"lifecycle": LifecycleConfig(ttl_days={"episodic": 5})} if how == "kind_ttl" else {}
    with _open(db_path, clock, **kw) as m:
        said = clock()
        own = {"expires_at": said + timedelta(days=5)} if how == "own_expires_at" else {}
        [old] = m.add("I live in Lisbon.", user_id="u", **own)
        # Said again while it lasts: the same record, unchanged.
        clock.now = said + timedelta(days=2)
        assert [r.id for r in m.add("I live in Lisbon.", user_id="u")] == [old.id]

        clock.now = said + timedelta(days=6)  # expired; maintenance never ran
        assert m.search("Where do I live?", user_id="u") == []
        [new] = m.add("I live in Lisbon.", user_id="u")
        assert new.id != old.id
        assert new.occurred_at == clock.now and new.expires_at is None
        for mode in ("hybrid", "vector", "keyword"):
            hits = m.search("Where do I live? Lisbon", user_id="u", mode=mode, kinds=["episodic"])
            assert [h.id for h in hits] == [new.id], mode
        assert m.profile(user_id="u")["identity"] == {"lives_in": "Lisbon"}
        assert "Lisbon" in m.context("Where do I live?", user_id="u").text
        # The expired record went as maintenance deletes it, its trail kept.
        assert [e.event for e in m.history(old.id)] == ["ADD", "EXPIRE"]


def test_a_pinned_memory_said_again_is_the_same_memory(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, lifecycle=LifecycleConfig(ttl_days={"episodic": 1})) as m:
        [old] = m.add("My door code is 2291.", user_id="u", pinned=True)
        clock.now = clock() + timedelta(days=3)
        assert [r.id for r in m.add("My door code is 2291.", user_id="u")] == [old.id]
        assert [h.id for h in m.search("door code", user_id="u", kinds=["episodic"])] == [old.id]


def test_other_expired_memories_of_the_user_go_with_it(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, lifecycle=LifecycleConfig(ttl_days={"episodic": 1})) as m:
        m.add(["I like tea.", "I work at Google."], user_id="u")
        clock.now = clock() + timedelta(days=2)
        m.add("I like tea.", user_id="u")
        kept = m.list(user_id="u", kinds=["episodic"]).items
        assert [r.content for r in kept] == ["I like tea."]
        assert [f.object for f in m.facts(user_id="u")] == ["tea"]


def test_neighbors_leave_out_what_only_expired_memories_stated(
    db_path: Path, clock: FakeClock
) -> None:
    with _open(db_path, clock, lifecycle=LifecycleConfig(ttl_days={"episodic": 5})) as m:
        said = clock()
        m.add("My sister Maria lives in Rome.", user_id="u", timestamp=said)
        m.add("My friend Tom works at Acme.", user_id="u", timestamp=said + timedelta(days=4))
        before = m.neighbors("user", user_id="u", depth=2)
        assert {n["entity"].name for n in before["neighbors"]} == {"Maria", "Rome", "Tom", "Acme"}
        clock.now = said + timedelta(days=6)  # the first message expired; no maintenance
        after = m.neighbors("user", user_id="u", depth=2)
        assert [(n["entity"].name, n["hops"]) for n in after["neighbors"]] == [
            ("Tom", 1),
            ("Acme", 2),
        ]
        assert {f.object for f in after["facts"]} == {"Tom", "Acme"}
