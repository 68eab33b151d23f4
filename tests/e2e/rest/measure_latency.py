"""Measure ``POST /search`` latency over loopback against a real ``mnemolayer serve``.

Not a test: run it by hand, e.g.::

    .venv/bin/python tests/e2e/rest/measure_latency.py --memories 1000 --queries 300

It starts a single-user server with the hashing embedder in a temp dir, stores
``--memories`` short messages for one user, then times ``--queries`` sequential searches
from one keep-alive httpx client (after 20 warm-up queries), and prints p50/p95/p99 in
milliseconds, next to the same searches made in-process on the same store file (the
HTTP overhead is the difference).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rest_server import start

from mnemolayer import Memory

WORDS = [
    "coffee",
    "tea",
    "trip",
    "Lisbon",
    "Porto",
    "meeting",
    "report",
    "dog",
    "cat",
    "garden",
    "piano",
    "book",
    "flight",
    "hotel",
    "dentist",
    "birthday",
    "sister",
    "brother",
    "project",
    "deadline",
    "recipe",
    "pasta",
    "bike",
    "run",
    "swim",
]


def _percentiles(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=100)
    return f"p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms, p99 {q[98]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(7)
    texts = [
        f"note {i}: " + " ".join(rng.choice(WORDS) for _ in range(12)) for i in range(args.memories)
    ]
    queries = [" ".join(rng.choice(WORDS) for _ in range(4)) for _ in range(args.queries + 20)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        server = start(Path(tmp), "--db", str(db), extractor="none")
        try:
            api = server.client()
            for start_at in range(0, len(texts), 200):
                batch = [{"content": t} for t in texts[start_at : start_at + 200]]
                r = api.post("/v1/users/bench/memories", json={"messages": batch})
                r.raise_for_status()
            http: list[float] = []
            for i, q in enumerate(queries):
                t0 = time.perf_counter()
                r = api.post("/v1/users/bench/search", json={"query": q, "limit": 10})
                elapsed = (time.perf_counter() - t0) * 1000
                r.raise_for_status()
                if i >= 20:
                    http.append(elapsed)
        finally:
            server.stop()
        local: list[float] = []
        with Memory(db, embedder="hashing", extractor=None) as mem:
            for i, q in enumerate(queries):
                t0 = time.perf_counter()
                mem.search(q, user_id="bench", limit=10)
                if i >= 20:
                    local.append((time.perf_counter() - t0) * 1000)
    print(f"{args.memories} memories, {args.queries} sequential searches (limit 10)")
    print(f"  HTTP /search over loopback: {_percentiles(http)}")
    print(f"  in-process Memory.search:   {_percentiles(local)}")


if __name__ == "__main__":
    main()
