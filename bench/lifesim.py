"""A simulated agent life: months of generated daily conversations for a few users, with
maintenance run on a schedule, to show what the lifecycle keeps and what it lets go.

Each user talks once a day (one session per day). A day holds small talk ("hi", "ok
thanks"), one one-off detail (an activity with a varying circumstance, "Repaired the
bike after work", or an amount paid), and on a schedule: recurring statements restated
every few days (where they work, a sibling, a routine without an extractable fact),
preferences that change (a drink liked then disliked, a diet, a city), pinned memories
(a passport number, a pinned greeting) and details that carry their own expiry (a hotel
room for a week). Generation is deterministic (seeded). After every
``maintain_every`` days a maintenance pass runs at the end of the day; the number of
active (recallable) records per user is the store-size curve.

Run ``python -m bench.lifesim [--out docs/lifecycle_sim.png]`` to simulate
three policies and plot their curves (active records, and rows in the file):

- the default (``LifecycleConfig()``): plain turns are kept, active records grow;
- :data:`COMPACT` (``forget_below_importance=0.55``: conversation turns fade once old,
  knowledge stays): active records level off, but the rows keep growing, since archived
  records stay (restorable) and so do near-duplicates merged into a survivor (its
  provenance). Deleting instead of archiving alone does not change that: of the 1,584
  rows such a store holds at day 180, 1,094 are merged copies (small talk said daily,
  facts and routines restated every few days), 46 records archived because a current
  fact or consolidation cites them, 9 superseded facts' records;
- :data:`BOUNDED`: the compact policy deleting what fades and purging records archived
  or merged 30 days ago (``LifecycleConfig.purge_archived_after_days`` and
  ``purge_merged_after_days``): the rows of the file level off with the active records.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.maintain import MaintenanceOptions

if TYPE_CHECKING:
    from mnemolayer.memory import Memory

__all__ = ["BOUNDED", "COMPACT", "USERS", "Persona", "Simulation", "main", "simulate"]

START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
SMALL_TALK = ("hi", "good morning", "ok thanks", "lol", "hey there", "thanks!", "haha", "bye")
ACTIVITIES = (
    "Repaired the bike", "Cleaned the kitchen", "Watched a documentary", "Baked bread",
    "Read a chapter", "Fixed the sink", "Painted the fence", "Walked along the river",
    "Tried a new cafe", "Sorted old photos", "Called the bank", "Played chess online",
)  # fmt: skip
CIRCUMSTANCES = (
    "after work", "before lunch", "with a friend", "in the rain", "late at night",
    "on the balcony", "at the library", "near the station", "for an hour", "with the neighbours",
    "on my own", "while it snowed", "with my cousin", "in the morning", "after the gym",
)  # fmt: skip
PAID_FOR = ("parking", "groceries", "a haircut", "the taxi", "lunch", "concert tickets")


@dataclass(frozen=True)
class Persona:
    """One simulated user: what they restate, how their preferences change, and what is
    current at the end (``current``: query → words a current memory must contain;
    ``superseded``: contents of facts that were replaced)."""

    user_id: str
    recurring: tuple[tuple[int, int, str], ...]  # (first day, every n days, text)
    changes: tuple[tuple[int, str], ...]  # (day, text)
    current: tuple[tuple[str, str], ...]
    superseded: tuple[str, ...]


USERS: tuple[Persona, ...] = (
    Persona(
        "ana",
        ((1, 7, "I work at Acme"), (2, 10, "My sister is Anna"), (3, 5, "I walk the dog after dinner")),
        ((2, "I love coffee"), (4, "I live in Lisbon"), (10, "I am vegetarian"),
         (70, "I hate coffee"), (71, "I love green tea"), (95, "I moved to Porto"),
         (120, "I am vegan now")),
        (("green tea", "green tea"), ("coffee", "dislikes coffee"), ("vegan", "vegan"),
         ("Porto", "Porto")),
        ("The user likes coffee", "The user lives in Lisbon", "The user is vegetarian"),
    ),
    Persona(
        "ben",
        ((1, 6, "I work at Globex"), (2, 9, "My brother is Tom"), (4, 4, "I swim before breakfast")),
        ((3, "I love espresso"), (5, "I live in Leeds"), (12, "I am vegetarian"),
         (60, "I hate espresso"), (61, "I love mint tea"), (100, "I moved to York"),
         (130, "I am pescatarian now")),
        (("mint tea", "mint tea"), ("espresso", "dislikes espresso"),
         ("pescatarian", "pescatarian"), ("York", "York")),
        ("The user likes espresso", "The user lives in Leeds", "The user is vegetarian"),
    ),
    Persona(
        "chen",
        ((1, 8, "I work at Initech"), (3, 11, "My sister is Mei"), (2, 6, "I practise piano in the evening")),
        ((2, "I love black tea"), (6, "I live in Berlin"), (15, "I am vegan"),
         (80, "I hate black tea"), (81, "I love hot chocolate"), (110, "I moved to Munich"),
         (140, "I am vegetarian now")),
        (("hot chocolate", "hot chocolate"), ("black tea", "dislikes black tea"),
         ("vegetarian", "vegetarian"), ("Munich", "Munich")),
        ("The user likes black tea", "The user lives in Berlin", "The user is vegan"),
    ),
)  # fmt: skip

#: The policy of an agent that wants a bounded store: conversation turns fade once old
#: (forgetting reaches importance up to 0.55), knowledge stays.
COMPACT = LifecycleConfig(forget_below_importance=0.55)
#: The policy of an agent that wants a bounded file: :data:`COMPACT`, deleting what fades
#: (archiving only what a current fact cites) and purging records archived or merged into
#: a near-duplicate 30 days ago (about four weekly passes: a mistaken archive can still be
#: restored for a month).
BOUNDED = LifecycleConfig(
    forget_below_importance=0.55, forget_action="delete",
    purge_archived_after_days=30.0, purge_merged_after_days=30.0,
)  # fmt: skip
#: (day, text, days until it expires): details stated with their own expiry
#: (``Memory.add(expires_at=...)``).
EXPIRING = (
    (20, "My hotel room is 512 this week", 7),
    (150, "The guest wifi password is kiwi77", 5),
)
#: (day, text): pinned when said.
PINNED = (
    (3, "My passport number is P4471920"),
    (15, "hi"),
    (40, "Remember: my locker code is 2231"),
)


@dataclass
class Simulation:
    """What a run produced.

    Attributes:
        curve: one row per maintenance pass: ``day``, ``active`` (per user), ``active_total``,
            ``records`` (rows of the memories table, archived and merged included),
            ``vectors`` (rows of the vector table), ``keyword_index`` (rows of the
            full-text index) and the pass's ``totals``.
        pinned: per user, the pinned records' ids.
        expiring: per user, the ids of records that carried their own expiry.
        seconds: wall-clock time of the run; ``maintain_seconds`` of its passes.
        maintained_records: records in the store summed over the passes (for the time
            per 1,000 records).
    """

    curve: list[dict[str, Any]] = field(default_factory=list)
    pinned: dict[str, list[str]] = field(default_factory=dict)
    expiring: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    maintain_seconds: float = 0.0
    maintained_records: int = 0


def _day_messages(persona: Persona, day: int, rng: random.Random) -> list[str]:
    texts = [rng.choice(SMALL_TALK)]
    if rng.random() < 0.3:
        texts.append(f"Paid {rng.randint(3, 90)} euros for {rng.choice(PAID_FOR)}")
    else:
        texts.append(f"{rng.choice(ACTIVITIES)} {rng.choice(CIRCUMSTANCES)}")
    texts += [
        text
        for first, every, text in persona.recurring
        if day >= first and (day - first) % every == 0
    ]
    texts += [text for when, text in persona.changes if when == day]
    if rng.random() < 0.5:
        texts.append(rng.choice(SMALL_TALK))
    return texts


def simulate(
    mem: Memory,
    clock: FakeClock,
    *,
    days: int = 180,
    users: Sequence[Persona] = USERS,
    maintain_every: int = 7,
    options: MaintenanceOptions | None = None,
    seed: int = 7,
) -> Simulation:
    """Live ``days`` days for ``users`` in ``mem`` (whose clock must be ``clock``), with
    a maintenance pass every ``maintain_every`` days. The policy is ``mem.lifecycle``
    (e.g. ``forget_below_importance``); ``options`` are the passes' options.

    Returns:
        The :class:`Simulation` (curve, pinned and expiring ids, timings).
    """
    rng = random.Random(seed)
    sim = Simulation(pinned={p.user_id: [] for p in users}, expiring={p.user_id: [] for p in users})
    started = time.perf_counter()
    for day in range(days):
        for persona in users:
            at = clock.set(START + timedelta(days=day, minutes=10 * users.index(persona)))
            session = f"d{day}"
            mem.add(_day_messages(persona, day, rng), user_id=persona.user_id, session_id=session)
            for when, text in PINNED:
                if when == day:
                    [rec] = mem.add(text, user_id=persona.user_id, session_id=session, pinned=True)
                    sim.pinned[persona.user_id].append(rec.id)
            for when, text, ttl in EXPIRING:
                if when == day:
                    [rec] = mem.add(
                        text, user_id=persona.user_id, session_id=session,
                        expires_at=at + timedelta(days=ttl),
                    )  # fmt: skip
                    sim.expiring[persona.user_id].append(rec.id)
        if (day + 1) % maintain_every == 0 or day == days - 1:
            clock.set(START + timedelta(days=day, hours=14))
            before = time.perf_counter()
            report = mem.maintain(options=options)
            sim.maintain_seconds += time.perf_counter() - before
            stats = mem.stats()
            records = int(stats["memories"])
            sim.maintained_records += records
            [(indexed,)] = mem.store.read("SELECT COUNT(*) FROM memories_fts")
            sim.curve.append(
                {
                    "day": day + 1,
                    "active": {u.user_id: u.active for u in report.users},
                    "active_total": report.totals["active"],
                    "records": records,
                    "vectors": int(stats["vectors"]),
                    "keyword_index": int(indexed),
                    "totals": report.totals,
                }
            )
    sim.seconds = time.perf_counter() - started
    return sim


def _plot(runs: dict[str, Simulation], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    # Where two policies' lines coincide (the compact ones keep the same active records,
    # the first two about the same rows), one is thinner or dashed so both show.
    styles = (("tab:blue", "-", 2.6, 3.2), ("tab:green", "-", 2.6, 1.6),
              ("tab:red", "--", 1.4, 1.6))  # fmt: skip
    for (label, sim), (color, style, width, dots) in zip(runs.items(), styles, strict=False):
        days = [row["day"] for row in sim.curve]
        ax.plot(days, [row["active_total"] for row in sim.curve], color=color, linestyle=style,
                linewidth=width, label=f"active, {label}")  # fmt: skip
        ax.plot(days, [row["records"] for row in sim.curve], color=color, linestyle=":",
                linewidth=dots, label=f"rows in the file, {label}")  # fmt: skip
    ax.set_xlabel("day")
    ax.set_ylabel("records of 3 users")
    ax.set_title(
        "Simulated agent life, weekly maintenance: active records and rows in the file\n"
        "(rows of the memories table; vectors and keyword index hold as many)",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m bench.lifesim``."""
    from mnemolayer.memory import Memory

    parser = argparse.ArgumentParser(
        prog="python -m bench.lifesim", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--out", default=None, help="save the curves as a PNG here")
    parser.add_argument("--json", default=None, help="write the curves as JSON here")
    args = parser.parse_args(argv)
    policies = {
        "default policy": LifecycleConfig(),
        "compact (forget below 0.55)": COMPACT,
        "bounded (compact, delete, purge after 30 d)": BOUNDED,
    }
    runs: dict[str, Simulation] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, cfg) in enumerate(policies.items()):
            clock = FakeClock(START)
            path = Path(tmp) / f"sim{i}.db"
            with Memory(path, embedder=args.embedder, clock=clock, lifecycle=cfg) as mem:
                runs[label] = sim = simulate(mem, clock, days=args.days)
            per_k = 1000 * sim.maintain_seconds / max(sim.maintained_records, 1)
            print(f"{label}: {sim.seconds:.1f} s; maintain {per_k * 1000:.1f} ms per 1,000 records")
            for row in sim.curve:
                print(
                    f"  day {row['day']:3d}: active {row['active_total']:4d}  rows {row['records']:5d}"
                    f"  vectors {row['vectors']:5d}  keyword index {row['keyword_index']:5d}"
                )
    if args.json:
        doc = {label: {"curve": s.curve, "seconds": s.seconds, "maintain_seconds": s.maintain_seconds,
                       "maintained_records": s.maintained_records} for label, s in runs.items()}  # fmt: skip
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if args.out:
        _plot(runs, Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
