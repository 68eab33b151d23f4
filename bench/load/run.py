"""One load test: start the replicas, run locust's agents against them headless for a
while, and gather what happened into one JSON document (see :func:`run_load`)."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemolayer.errors import ValidationError

from .._harness import file_sha256, make_progress, workspace, write_json
from ..metrics import percentiles
from .servers import Sampler, StoreSpec, serve

__all__ = ["LoadOptions", "failed", "load_corpus", "run_load"]


@dataclass(frozen=True)
class LoadOptions:
    """What a load test runs (the ``python -m bench load`` options).

    Attributes:
        store: ``sqlite``, ``postgres`` or a ``postgresql://`` URL (:class:`StoreSpec`).
        replicas: server processes sharing the store.
        agents: concurrent simulated agents (locust users).
        tenants, users: tenants, and users per tenant, the agents speak for.
        duration_s: seconds of load after the first agent starts.
        spawn_rate: agents started per second.
        think: seconds an agent waits between requests, ``(min, max)``.
        data: a LoCoMo-format JSON file whose turns and questions the agents use.
        embedder, extractor: the servers' models.
        interval_s: seconds between samples of the servers' memory and the timeline.
        server_args: more ``mnemolayer serve`` options for every replica.
        seed: seeds the agents' choices.
    """

    store: str = "sqlite"
    replicas: int = 1
    agents: int = 12
    tenants: int = 3
    users: int = 4
    duration_s: float = 60.0
    spawn_rate: float = 4.0
    think: tuple[float, float] = (0.5, 2.0)
    data: Path | None = None
    embedder: str = "hashing"
    extractor: str = "rules"
    interval_s: float = 5.0
    server_args: Sequence[str] = field(default_factory=tuple)
    seed: int = 0

    def check(self) -> None:
        """Raises ValidationError naming the option that is out of range."""
        for name, value, low in (
            ("--replicas", self.replicas, 1),
            ("--agents", self.agents, 1),
            ("--tenants", self.tenants, 1),
            ("--users", self.users, 1),
        ):
            if value < low:
                raise ValidationError(name, f"must be at least {low}, got {value}")
        if self.duration_s < 1:
            raise ValidationError("--duration", f"at least 1 s, got {self.duration_s:g} s")
        lo, hi = self.think
        if not 0 <= lo <= hi:
            raise ValidationError("--think", f"need 0 <= min <= max seconds, got {lo:g}-{hi:g}")
        if self.spawn_rate <= 0:
            raise ValidationError("--spawn-rate", f"must be positive, got {self.spawn_rate:g}")
        if self.interval_s <= 0:
            raise ValidationError("--interval", f"must be positive, got {self.interval_s:g}")


def load_corpus(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """Every turn (``{"name", "content"}``) and question of a LoCoMo-format file.

    Raises:
        ValidationError: a file without turns or questions (field ``--data``).
    """
    from ..locomo import _sessions, load_conversations

    turns: list[dict[str, str]] = []
    questions: list[str] = []
    try:
        samples = load_conversations(path)
    except (OSError, ValueError) as exc:
        raise ValidationError("--data", f"cannot read {path}: {exc}") from exc
    for sample in samples:
        for _, _, session in _sessions(sample["conversation"]):
            for turn in session:
                text = str(turn.get("text") or "").strip()
                if text:
                    turns.append({"name": str(turn["speaker"]), "content": text})
        questions += [str(q["question"]) for q in sample.get("qa") or [] if q.get("question")]
    if not turns or not questions:
        raise ValidationError("--data", f"{path} has no conversation turns or no questions")
    return turns, questions


def _loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


class _Log:
    """Every request the agents made: (seconds since start, operation, ms, error)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.rows: list[tuple[float, str, float, str | None]] = []

    def on_request(
        self, *, name: str, response_time: float, exception: Any = None, **_: Any
    ) -> None:
        error = None if exception is None else str(exception)[:300]
        self.rows.append((time.monotonic() - self.start, name, float(response_time), error))

    def failures(self) -> int:
        return sum(1 for row in self.rows if row[3] is not None)


def _operations(rows: Sequence[tuple[float, str, float, str | None]], seconds: float) -> Any:
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
            **{k: None if v is None else round(v, 2) for k, v in percentiles(times).items()},
            "mean": round(sum(times) / len(times), 2),
            "max": round(max(times), 2),
        }
    return out


def _timeline(
    rows: Sequence[tuple[float, str, float, str | None]], interval: float, seconds: float
) -> list[dict[str, Any]]:
    buckets: list[list[tuple[float, bool]]] = [[] for _ in range(max(1, round(seconds / interval)))]
    for t, _, ms, error in rows:
        buckets[min(int(t / interval), len(buckets) - 1)].append((ms, error is not None))
    out = []
    for i, bucket in enumerate(buckets):
        times = [ms for ms, _ in bucket]
        pct = percentiles(times)
        out.append(
            {
                "t": round((i + 1) * interval, 2),
                "requests": len(times),
                "rps": round(len(times) / interval, 2),
                "failures": sum(1 for _, bad in bucket if bad),
                **{k: None if v is None else round(v, 2) for k, v in pct.items()},
            }
        )
    return out


def _errors(rows: Sequence[tuple[float, str, float, str | None]]) -> list[dict[str, Any]]:
    seen = Counter((name, error) for _, name, _, error in rows if error is not None)
    return [
        {"operation": name, "message": message, "count": n}
        for (name, message), n in seen.most_common(20)
    ]


def _drive(opts: LoadOptions, plan: Any, pids: Sequence[int], show_progress: bool) -> Any:
    """Run the agents for ``opts.duration_s`` seconds; the log, sampler and exceptions."""
    import gevent
    from locust.env import Environment

    from .agents import agent_class

    env = Environment(user_classes=[agent_class(plan)], catch_exceptions=True)
    log = _Log()
    env.events.request.add_listener(log.on_request)
    runner = env.create_local_runner()
    sampler = Sampler([*pids, os.getpid()], start=log.start)
    sampler.sample()
    with make_progress(show_progress) as bar:
        progress = bar.add_task("load", total=round(opts.duration_s), note="")
        runner.start(opts.agents, spawn_rate=opts.spawn_rate)
        deadline = log.start + opts.duration_s
        while (now := time.monotonic()) < deadline:
            gevent.sleep(min(opts.interval_s, deadline - now))
            sampler.sample()
            elapsed = time.monotonic() - log.start
            note = f"{len(log.rows) / elapsed:.1f} req/s, {log.failures()} errors"
            bar.update(progress, completed=min(round(elapsed), round(opts.duration_s)), note=note)
        runner.quit()
    seconds = time.monotonic() - log.start
    exceptions = [
        {"message": str(e["msg"]), "count": e["count"], "traceback": str(e["traceback"])[-2000:]}
        for e in runner.exceptions.values()
    ]
    return log, sampler, exceptions, seconds


def run_load(
    opts: LoadOptions,
    *,
    workdir: str | os.PathLike[str] | None = None,
    show_progress: bool = True,
    out: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run one load test (see ``bench/load/__init__.py``) and return its result.

    Returns:
        ``{"benchmark": "load", "config", "loadavg": {"start", "end"} (1, 5, 15 min),
        "totals": {"requests", "failures", "rps", "seconds", ...}, "operations":
        {name: {"requests", "failures", "rps", "p50", "p95", "p99", "mean", "max"}} (ms),
        "timeline": [{"t", "requests", "rps", "failures", "p50", "p95", "p99"}],
        "servers": [{"url", "rss_mib": [[t, MiB, CPU %]...], ...}], "client", "errors"}``.

    Raises:
        ValidationError: an option out of range or a bad ``--data``/``--store``.
        MnemolayerRuntimeError: a server did not start.
    """
    from mnemolayer import __version__
    from mnemolayer.cli.demo import SAMPLE

    from .agents import WEIGHTS, Identity, Plan

    opts.check()
    spec = StoreSpec.parse(opts.store)
    data = opts.data or SAMPLE
    turns, questions = load_corpus(data)
    tenants = [f"tenant{i}" for i in range(opts.tenants)]
    load_start = _loadavg()
    with (
        workspace(workdir) as wd,
        serve(
            spec,
            replicas=opts.replicas,
            tenants=tenants,
            embedder=opts.embedder,
            extractor=opts.extractor,
            workdir=Path(wd),
            server_args=opts.server_args,
        ) as served,
    ):
        # Without keys every tenant is one store: the tenant prefixes the user id instead.
        identities = [
            Identity(t, f"user{u}" if spec.keyed else f"{t}-user{u}", served.keys[t])
            for u in range(opts.users)
            for t in tenants
        ]
        plan = Plan(
            bases=[r.url for r in served.replicas],
            identities=identities,
            turns=turns,
            questions=questions,
            think=opts.think,
            seed=opts.seed,
        )
        pids = [r.proc.pid for r in served.replicas]
        log, sampler, exceptions, seconds = _drive(opts, plan, pids, show_progress)
        logs = {r.url: r.log_text() for r in served.replicas}
        urls = {r.proc.pid: r.url for r in served.replicas}
    load_end = _loadavg()
    import locust

    result: dict[str, Any] = {
        "benchmark": "load",
        "config": {
            "store": served.store,
            "replicas": opts.replicas,
            "auth": spec.keyed,
            "agents": opts.agents,
            "tenants": opts.tenants,
            "users_per_tenant": opts.users,
            "duration_s": opts.duration_s,
            "spawn_rate": opts.spawn_rate,
            "think_s": list(opts.think),
            "weights": WEIGHTS,
            "embedder": opts.embedder,
            "extractor": opts.extractor,
            "server_args": list(opts.server_args),
            "data": {"path": str(Path(data).resolve()), "sha256": file_sha256(data)},
            "turns": len(turns),
            "questions": len(questions),
            "seed": opts.seed,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cores": os.cpu_count(),
            "sampler": sampler.source,
            "mnemolayer_version": __version__,
            "locust_version": locust.__version__,
        },
        "loadavg": {"start": load_start, "end": load_end},
        "totals": {
            "requests": len(log.rows),
            "failures": log.failures(),
            "exceptions": sum(e["count"] for e in exceptions),
            "server_tracebacks": sum(text.count("Traceback") for text in logs.values()),
            "rps": round(len(log.rows) / seconds, 2),
            "seconds": round(seconds, 2),
            **{
                k: None if v is None else round(v, 2)
                for k, v in percentiles(r[2] for r in log.rows).items()
            },
        },
        "operations": _operations(log.rows, seconds),
        "timeline": _timeline(log.rows, opts.interval_s, seconds),
        "servers": [
            {
                "url": urls[pid],
                "samples": sampler.samples[pid],
                "rss_peak_mib": max((s[1] or 0.0 for s in sampler.samples[pid]), default=None),
            }
            for pid in pids
        ],
        "client": {"samples": sampler.samples[os.getpid()]},
        "errors": _errors(log.rows),
        "exceptions": exceptions,
    }
    write_json(result, out)
    return result


def failed(result: dict[str, Any]) -> int:
    """How many things went wrong: failed requests, agents' exceptions, server tracebacks."""
    totals = result["totals"]
    return int(totals["failures"] + totals["exceptions"] + totals["server_tracebacks"])
