"""The issue's bar: a simulated agent life of 180 days for 3 users with weekly
maintenance (:mod:`memstrata.bench.lifesim`; fake clock, real SQLite, the hashing
embedder and the rule extractor). The store stays bounded, every pinned memory and every
current preference is still recalled at day 180, superseded and expired ones are not.

The run uses the compact policy (``LifecycleConfig(forget_below_importance=0.55)``:
conversation turns fade once old, knowledge stays); with the default policy (0.35) plain
turns are kept for LoCoMo-style questions about any past turn, and the store grows with
them (the module's ``main`` plots both). The expiring details are stored with
``Memory.add(expires_at=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Memory, NotFoundError
from memstrata.bench.lifesim import COMPACT, START, USERS, Simulation, simulate
from memstrata.lifecycle import FakeClock

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def life(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, Simulation]]:
    clock = FakeClock(START)
    path = Path(tmp_path_factory.mktemp("life")) / "life.db"
    with Memory(path, embedder="hashing", clock=clock, lifecycle=COMPACT) as mem:
        sim = simulate(mem, clock)
        print("\nday  active (ana, ben, chen)   rows")
        for row in sim.curve:
            print(
                f"{row['day']:3d}  {row['active_total']:4d} {tuple(row['active'].values())}  {row['records']:5d}"
            )
        yield mem, sim


def test_the_store_stays_bounded(life: tuple[Memory, Simulation]) -> None:
    _mem, sim = life
    by_day = {row["day"]: row for row in sim.curve}
    assert by_day[180]["records"] > 1.25 * by_day[126]["records"]  # the agent kept talking
    late = [row["active_total"] for row in sim.curve if row["day"] >= 126]
    assert max(late) <= 1.05 * by_day[126]["active_total"]
    assert by_day[180]["active_total"] < 0.3 * by_day[180]["records"]


def test_every_pinned_memory_is_still_recalled(life: tuple[Memory, Simulation]) -> None:
    mem, sim = life
    for user, ids in sim.pinned.items():
        assert len(ids) == 3
        for rid in ids:
            rec = mem.get(rid)
            assert rec.pinned and rec.archived_at is None and rec.merged_into is None
            hits = mem.search(rec.content, user_id=user, limit=5)
            assert rid in [h.memory.id for h in hits], (user, rec.content)


def test_every_current_preference_is_recalled_and_no_superseded_one(
    life: tuple[Memory, Simulation],
) -> None:
    mem, _sim = life
    for persona in USERS:
        for query, words in persona.current:
            hits = mem.search(query, user_id=persona.user_id, limit=5)
            assert any(words in h.memory.content for h in hits if h.memory.kind.value == "semantic"), (
                persona.user_id, query, [h.memory.content for h in hits],
            )  # fmt: skip
            assert not [h for h in hits if h.memory.superseded_by is not None]
        for old in persona.superseded:
            hits = mem.search(old, user_id=persona.user_id, limit=10)
            assert old not in [h.memory.content for h in hits], (persona.user_id, old)


def test_expired_details_are_gone(life: tuple[Memory, Simulation]) -> None:
    mem, sim = life
    for user, ids in sim.expiring.items():
        assert len(ids) == 2
        for rid in ids:
            with pytest.raises(NotFoundError):
                mem.get(rid)
        for text in ("hotel room 512", "guest wifi password kiwi77"):
            hits = mem.search(text, user_id=user, limit=10)
            assert not [
                h for h in hits if "512" in h.memory.content or "kiwi77" in h.memory.content
            ]


def test_maintenance_was_idempotent_at_the_end(life: tuple[Memory, Simulation]) -> None:
    mem, sim = life
    last = sim.curve[-1]["totals"]
    assert last["examined"] > 0
    assert mem.maintain().changes == 0
