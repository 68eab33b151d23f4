"""The cost of encryption at rest: add throughput and search latency on the same data,
plain and encrypted (``Memory(encryption=...)``, :mod:`mnemolayer.crypto`).

The data are LoCoMo-like turns: two speakers per conversation, sessions of 20 turns a
day apart, sentences about people, places, plans and preferences from fixed templates
(seeded, so both runs store identical text). The ``hashing`` embedder keeps the embedder
out of the measurement; the ``rules`` fact extractor runs as it does by default, so fact
and graph writes (sealed too) are counted.

Run ``python -m bench.encryption [--turns 2000] [--queries 200] [--repeat 3]
[--json OUT]``; each configuration runs ``--repeat`` times, alternating, and the median
of each figure is reported.
Add throughput is turns per second with one ``add`` call per turn (one transaction each);
search latency is per query, in milliseconds, after a warm-up query, for ``hybrid`` and
``keyword`` modes.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mnemolayer.crypto import EncryptionConfig
from mnemolayer.memory import Memory

__all__ = ["main", "make_turns", "measure"]

_NAMES = ["Caroline", "Melanie", "Jon", "Gina", "Tim", "John", "Maria", "Audrey", "Andrew"]
_PLACES = ["Lisbon", "Boston", "Kyoto", "Lima", "Oslo", "Nairobi", "Porto", "Denver"]
_THINGS = ["pottery", "hiking", "painting", "violin", "chess", "baking", "running", "poetry"]
_TEMPLATES = [
    "I went to a {thing} class in {place} last weekend and loved it.",
    "My friend {name} moved to {place} for a new job.",
    "I'm planning a trip to {place} with {name} next month.",
    "Have you tried {thing}? {name} got me into it.",
    "Yesterday I spent the whole afternoon on {thing} at the park.",
    "{name} and I talked about adopting a dog, maybe from a shelter in {place}.",
    "I really like {thing}, it helps me relax after work.",
    "The support group in {place} meets every Tuesday, {name} comes too.",
    "I finished a book about {thing} that {name} recommended.",
    "We had dinner near the harbour in {place}; the food was great.",
]


def make_turns(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` turns: ``{"user", "speaker", "session", "text", "at"}``, five users, sessions
    of 20 turns one day apart, two alternating speakers per user."""
    rng = random.Random(seed)
    start = datetime(2023, 5, 1, 9, tzinfo=UTC)
    out: list[dict[str, Any]] = []
    for i in range(n):
        user = f"user{i % 5}"
        k = i // 5
        session = k // 20
        speakers = _NAMES[(i % 5) : (i % 5) + 2]
        text = rng.choice(_TEMPLATES).format(
            name=rng.choice(_NAMES), place=rng.choice(_PLACES), thing=rng.choice(_THINGS)
        )
        out.append(
            {
                "user": user,
                "speaker": speakers[k % 2],
                "session": f"s{session}",
                "text": f"{text} (turn {k})",
                "at": start + timedelta(days=session, minutes=k % 20),
            }
        )
    return out


def _queries(n: int, seed: int = 11) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    forms = [
        "When did {name} move to {place}?",
        "Who likes {thing}?",
        "trip to {place}",
        "What does {name} do for fun?",
        "{thing} class",
    ]
    return [
        (
            f"user{rng.randrange(5)}",
            rng.choice(forms).format(
                name=rng.choice(_NAMES), place=rng.choice(_PLACES), thing=rng.choice(_THINGS)
            ),
        )
        for _ in range(n)
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(
    path: Path, turns: Sequence[dict[str, Any]], queries: int, key: str | None
) -> dict[str, Any]:
    """Add ``turns`` one ``add`` each, then run ``queries`` searches per mode.

    Returns:
        ``{"add_turns_per_s", "add_seconds", "search": {mode: {"p50_ms", "p95_ms"}},
        "file_bytes"}``.
    """
    enc = EncryptionConfig(master_key=key) if key else None
    mem = Memory(path, embedder="hashing", encryption=enc)
    try:
        t0 = time.perf_counter()
        for t in turns:
            mem.add(
                {"role": "user", "name": t["speaker"], "content": t["text"]},
                user_id=t["user"],
                session_id=t["session"],
                timestamp=t["at"],
            )
        add_s = time.perf_counter() - t0
        result: dict[str, Any] = {
            "add_turns_per_s": len(turns) / add_s,
            "add_seconds": add_s,
            "search": {},
        }
        qs = _queries(queries)
        for mode in ("hybrid", "keyword"):
            mem.search(qs[0][1], user_id=qs[0][0], mode=mode)  # warm the vector cache
            times = []
            for user, q in qs:
                t1 = time.perf_counter()
                mem.search(q, user_id=user, mode=mode, limit=10)
                times.append((time.perf_counter() - t1) * 1000)
            result["search"][mode] = {
                "p50_ms": statistics.median(times),
                "p95_ms": _pct(times, 0.95),
            }
    finally:
        mem.close()
    result["file_bytes"] = sum(
        p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file()
    )
    return result


def _median_run(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per figure, the median over the runs."""
    first = results[0]
    return {
        "add_turns_per_s": statistics.median(r["add_turns_per_s"] for r in results),
        "add_seconds": statistics.median(r["add_seconds"] for r in results),
        "search": {
            mode: {
                stat: statistics.median(r["search"][mode][stat] for r in results)
                for stat in first["search"][mode]
            }
            for mode in first["search"]
        },
        "file_bytes": first["file_bytes"],
        "runs": len(results),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run both configurations and print (or write) the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration (median)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    turns = make_turns(args.turns)
    key = base64.b64encode(os.urandom(32)).decode()
    out: dict[str, Any] = {"turns": args.turns, "queries": args.queries}
    with tempfile.TemporaryDirectory() as tmp:
        # Warm-up (imports, tokenizer and extractor caches), not reported.
        measure(Path(tmp) / "warm.db", turns[:100], 5, key)
        runs: dict[str, list[dict[str, Any]]] = {"plain": [], "encrypted": []}
        for i in range(args.repeat):  # alternated, so drift hits both alike
            runs["plain"].append(measure(Path(tmp) / f"plain{i}.db", turns, args.queries, None))
            runs["encrypted"].append(measure(Path(tmp) / f"enc{i}.db", turns, args.queries, key))
    for name, results in runs.items():
        out[name] = _median_run(results)
    p, e = out["plain"], out["encrypted"]
    lines = [
        f"{'':10} {'plain':>10} {'encrypted':>10} {'change':>8}",
        f"{'add /s':10} {p['add_turns_per_s']:10.1f} {e['add_turns_per_s']:10.1f} "
        f"{e['add_turns_per_s'] / p['add_turns_per_s'] - 1:+8.1%}",
    ]
    for mode in ("hybrid", "keyword"):
        for stat in ("p50_ms", "p95_ms"):
            a, b = p["search"][mode][stat], e["search"][mode][stat]
            lines.append(f"{mode[:3]} {stat:6} {a:10.2f} {b:10.2f} {b / a - 1:+8.1%}")
    lines.append(f"{'bytes':10} {p['file_bytes']:10d} {e['file_bytes']:10d}")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
