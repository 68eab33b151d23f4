"""What the agents' requests add up to: per operation, over time, and the errors."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from ..metrics import percentiles

__all__ = ["RequestLog", "errors", "operations", "rounded_percentiles", "timeline"]

Row = tuple[float, str, float, str | None]


def rounded_percentiles(times: Iterable[float]) -> dict[str, float | None]:
    """p50, p95 and p99 of ``times`` (ms), to 0.01 ms (``None`` when there are none)."""
    return {k: None if v is None else round(v, 2) for k, v in percentiles(times).items()}


class RequestLog:
    """Every request the agents made, as locust reports it (its ``request`` event):
    ``rows`` of (seconds since start, operation, milliseconds, error or ``None``), and the
    requests per replica (``scheme://host:port``)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.rows: list[Row] = []
        self.by_replica: Counter[str] = Counter()

    def on_request(
        self, *, name: str, response_time: float, exception: Any = None, url: str = "", **_: Any
    ) -> None:
        error = None if exception is None else str(exception)[:300]
        self.rows.append((time.monotonic() - self.start, name, float(response_time), error))
        parts = urlsplit(url)
        self.by_replica[f"{parts.scheme}://{parts.netloc}"] += 1

    def failures(self) -> int:
        return sum(1 for row in self.rows if row[3] is not None)


def operations(rows: Sequence[Row], seconds: float) -> dict[str, dict[str, Any]]:
    """Per operation: requests, failures, requests/s over ``seconds``, p50/p95/p99, mean
    and max (ms)."""
    by_op: dict[str, list[float]] = {}
    failed: Counter[str] = Counter()
    for _, name, ms, error in rows:
        by_op.setdefault(name, []).append(ms)
        failed[name] += error is not None
    out = {}
    for name, times in sorted(by_op.items()):
        out[name] = {
            "requests": len(times),
            "failures": failed[name],
            "rps": round(len(times) / seconds, 2),
            **rounded_percentiles(times),
            "mean": round(sum(times) / len(times), 2),
            "max": round(max(times), 2),
        }
    return out


def timeline(rows: Sequence[Row], interval: float, seconds: float) -> list[dict[str, Any]]:
    """Points every ``interval`` seconds (``t``: the end of each): requests, requests/s,
    failures and p50/p95/p99 (ms) of the requests that ended in it, and under
    ``operations`` each operation's requests and p50/p95/p99 (ms)."""
    buckets: list[list[Row]] = [[] for _ in range(max(1, round(seconds / interval)))]
    for row in rows:
        buckets[min(int(row[0] / interval), len(buckets) - 1)].append(row)
    out = []
    for i, bucket in enumerate(buckets):
        by_op: dict[str, list[float]] = {}
        for _, name, ms, _ in bucket:
            by_op.setdefault(name, []).append(ms)
        out.append(
            {
                "t": round((i + 1) * interval, 2),
                "requests": len(bucket),
                "rps": round(len(bucket) / interval, 2),
                "failures": sum(1 for row in bucket if row[3] is not None),
                **rounded_percentiles(row[2] for row in bucket),
                "operations": {
                    name: {"requests": len(times), **rounded_percentiles(times)}
                    for name, times in sorted(by_op.items())
                },
            }
        )
    return out


def errors(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The 20 most frequent (operation, message) failures, with counts."""
    seen = Counter((name, error) for _, name, _, error in rows if error is not None)
    return [
        {"operation": name, "message": message, "count": n}
        for (name, message), n in seen.most_common(20)
    ]
