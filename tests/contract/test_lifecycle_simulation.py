"""The issue's bar: a simulated agent life of 180 days for 3 users with weekly
maintenance (:mod:`bench.lifesim`; fake clock, real SQLite, the hashing
embedder and the rule extractor). The store stays bounded, every pinned memory and every
current preference is still recalled at day 180, superseded and expired ones are not.

Two policies live the same life:

- the compact policy (``LifecycleConfig(forget_below_importance=0.55)``: conversation
  turns fade once old, knowledge stays) bounds the *active* records, while the rows of
  the file keep growing (archived records and merged near-duplicates stay);
- the bounded policy (compact, ``forget_action="delete"``, archived and merged records
  purged after 30 days) bounds the *rows* too: memories table, vectors and keyword index.

With the default policy (0.35) plain turns are kept for LoCoMo-style questions about any
past turn, and the store grows with them (the module's ``main`` plots all three). The
expiring details are stored with ``Memory.add(expires_at=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bench.lifesim import BOUNDED, COMPACT, START, USERS, Simulation, simulate
from mnemolayer import Memory, NotFoundError
from mnemolayer.lifecycle import LifecycleConfig
from mnemolayer.testing import FakeClock

# Two 180-day lives: about 20 s of simulation on two idle cores.
pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

Life = tuple[Memory, Simulation]

#: The bounded policy's rows over the last 8 weeks (passes on days 126 to 180) may vary
#: by at most this factor. Measured: 672 to 702 rows (1.045), the jitter of a 30-day
#: window of merged copies (34 to 55 a week). Over the same weeks the compact store grows
#: from 1,193 to 1,661 rows (1.39), and deleting without purging from 1,188 to 1,584
#: (1.33); the bound fails for any growth above about 9 rows a week (a fifth of the
#: merged copies).
MAX_LATE_RATIO = 1.10


def _live(where: Any, cfg: LifecycleConfig) -> Iterator[Life]:
    clock = FakeClock(START)
    with Memory(where, embedder="hashing", clock=clock, lifecycle=cfg) as mem:
        sim = simulate(mem, clock)
        print("\nday  active (ana, ben, chen)   rows  vectors  keyword index")
        for row in sim.curve:
            print(
                f"{row['day']:3d}  {row['active_total']:4d} {tuple(row['active'].values())}"
                f"  {row['records']:5d}  {row['vectors']:5d}  {row['keyword_index']:5d}"
            )
        yield mem, sim


@pytest.fixture(scope="module")
def compact_life(module_db: Callable[[str], Any]) -> Iterator[Life]:
    yield from _live(module_db("compact"), COMPACT)


@pytest.fixture(scope="module")
def bounded_life(module_db: Callable[[str], Any]) -> Iterator[Life]:
    yield from _live(module_db("bounded"), BOUNDED)


@pytest.fixture(params=["compact_life", "bounded_life"])
def life(request: pytest.FixtureRequest, store_backend: str) -> Life:
    """Each policy's life (the bar holds under both), on this run's engine
    (``store_backend`` named here so that the test is parametrized by it)."""
    lived: Life = request.getfixturevalue(request.param)
    return lived


def test_the_active_records_stay_bounded(life: Life) -> None:
    _mem, sim = life
    by_day = {row["day"]: row for row in sim.curve}
    late = [row["active_total"] for row in sim.curve if row["day"] >= 126]
    assert max(late) <= 1.05 * by_day[126]["active_total"]


def test_archiving_keeps_every_row(compact_life: Life) -> None:
    _mem, sim = compact_life
    by_day = {row["day"]: row for row in sim.curve}
    assert by_day[180]["records"] > 1.25 * by_day[126]["records"]  # the agent kept talking
    assert by_day[180]["active_total"] < 0.3 * by_day[180]["records"]


def test_deleting_and_purging_bounds_the_rows_of_the_file(bounded_life: Life) -> None:
    _mem, sim = bounded_life
    late = [row for row in sim.curve if row["day"] > 180 - 8 * 7]
    assert [row["day"] for row in late] == [126, 133, 140, 147, 154, 161, 168, 175, 180]
    for table in ("records", "vectors", "keyword_index"):
        counts = [row[table] for row in late]
        assert max(counts) <= MAX_LATE_RATIO * min(counts), (table, counts)
    assert sum(row["totals"]["purged"] for row in sim.curve) > 0


def test_every_pinned_memory_is_still_recalled(life: Life) -> None:
    mem, sim = life
    for user, ids in sim.pinned.items():
        assert len(ids) == 3
        for rid in ids:
            rec = mem.get(rid)
            assert rec.pinned and rec.archived_at is None and rec.merged_into is None
            hits = mem.search(rec.content, user_id=user, limit=5)
            assert rid in [h.memory.id for h in hits], (user, rec.content)


def test_every_current_preference_is_recalled_and_no_superseded_one(life: Life) -> None:
    mem, _sim = life
    for persona in USERS:
        for query, words in persona.current:
            hits = mem.search(query, user_id=persona.user_id, limit=5)
            # The fact: a hit of its own, or collapsed into the hit of the message that
            # stated it (Hit.provenance holds both ids).
            facts = [
                r for h in hits for r in (mem.get(i, user_id=persona.user_id) for i in h.provenance)
                if r.kind.value == "semantic"
            ]  # fmt: skip
            assert any(words in r.content for r in facts), (
                persona.user_id, query, [h.memory.content for h in hits],
            )  # fmt: skip
            assert not [h for h in hits if h.memory.superseded_by is not None]
        for old in persona.superseded:
            hits = mem.search(old, user_id=persona.user_id, limit=10)
            assert old not in [h.memory.content for h in hits], (persona.user_id, old)


def test_expired_details_are_gone(life: Life) -> None:
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


def test_maintenance_was_idempotent_at_the_end(life: Life) -> None:
    mem, sim = life
    last = sim.curve[-1]["totals"]
    assert last["examined"] > 0
    assert mem.maintain().changes == 0
