"""One load test: start the replicas, run locust's agents against them headless for a
while, and gather what happened into one JSON document (see :func:`run_load`)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemolayer.errors import ValidationError

from .._harness import file_sha256, make_progress, workspace, write_json
from .servers import Sampler, Served, StoreSpec, serve
from .stats import RequestLog, errors, operations, rounded_percentiles, timeline

#: Seconds the agents get at the deadline to finish the request they have in flight.
STOP_TIMEOUT_S = 30.0

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
        """Raises ValidationError naming the option that is out of range (before anything
        starts or locust is imported)."""
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
        StoreSpec.parse(self.store).check_replicas(self.replicas)


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


@dataclass
class _Run:
    """What one run of the agents left: every request, the samples, the agents'
    exceptions, its length in seconds, and each replica's tracebacks (by pid, its URL)."""

    log: RequestLog
    sampler: Sampler
    exceptions: list[dict[str, Any]]
    seconds: float
    urls: dict[int, str]
    tracebacks: int


def _plan(
    opts: LoadOptions, spec: StoreSpec, served: Served, corpus: tuple[list[Any], list[str]]
) -> Any:
    from .agents import Identity, Plan  # imports locust, which patches for gevent

    tenants = list(served.keys)
    # Without keys every tenant is one store: the tenant prefixes the user id instead.
    identities = [
        Identity(t, f"user{u}" if spec.keyed else f"{t}-user{u}", served.keys[t])
        for u in range(opts.users)
        for t in tenants
    ]
    return Plan(
        bases=[r.url for r in served.replicas],
        identities=identities,
        turns=corpus[0],
        questions=corpus[1],
        think=opts.think,
        seed=opts.seed,
    )


def _drive(opts: LoadOptions, plan: Any, served: Served, show_progress: bool) -> _Run:
    """Run the agents for ``opts.duration_s`` seconds, sampling every ``interval_s``."""
    import gevent
    from locust.env import Environment

    from .agents import agent_class

    # At the deadline each agent finishes the request it has in flight (up to STOP_TIMEOUT_S)
    # instead of being killed mid-request, which locust counts as a failure (status 0).
    env = Environment(
        user_classes=[agent_class(plan)], catch_exceptions=True, stop_timeout=STOP_TIMEOUT_S
    )
    log = RequestLog()
    env.events.request.add_listener(log.on_request)
    runner = env.create_local_runner()
    urls = {r.proc.pid: r.url for r in served.replicas}
    sampler = Sampler([*urls, os.getpid()], start=log.start)
    sampler.sample()
    with make_progress(show_progress) as bar:
        progress = bar.add_task("load", total=round(opts.duration_s), note="")
        runner.start(opts.agents, spawn_rate=opts.spawn_rate)
        deadline = log.start + opts.duration_s
        next_line = 60.0
        while (now := time.monotonic()) < deadline:
            gevent.sleep(min(opts.interval_s, deadline - now))
            sampler.sample()
            elapsed = time.monotonic() - log.start
            note = f"{len(log.rows) / elapsed:.1f} req/s, {log.failures()} errors"
            bar.update(progress, completed=min(round(elapsed), round(opts.duration_s)), note=note)
            if show_progress and not bar.console.is_terminal and elapsed >= next_line:
                # No live bar in a log file: a line a minute instead.
                print(f"load: {elapsed:.0f} s of {opts.duration_s:.0f}, {note}", flush=True)
                next_line += 60
        runner.stop()
        runner.quit()
    exceptions = [
        {"message": str(e["msg"]), "count": e["count"], "traceback": str(e["traceback"])[-2000:]}
        for e in runner.exceptions.values()
    ]
    tracebacks = sum(r.log_text().count("Traceback") for r in served.replicas)
    return _Run(log, sampler, exceptions, time.monotonic() - log.start, urls, tracebacks)


def _figures(run: _Run, interval_s: float) -> dict[str, Any]:
    rows = run.log.rows
    return {
        "totals": {
            "requests": len(rows),
            "failures": run.log.failures(),
            "exceptions": sum(e["count"] for e in run.exceptions),
            "server_tracebacks": run.tracebacks,
            "rps": round(len(rows) / run.seconds, 2),
            "seconds": round(run.seconds, 2),
            **rounded_percentiles(r[2] for r in rows),
        },
        "operations": operations(rows, run.seconds),
        "timeline": timeline(rows, interval_s, run.seconds),
        "servers": [
            {
                "url": url,
                "requests": run.log.by_replica[url],
                "samples": run.sampler.samples[pid],
                "rss_peak_mib": max((s[1] or 0.0 for s in run.sampler.samples[pid]), default=None),
            }
            for pid, url in run.urls.items()
        ],
        "client": {"samples": run.sampler.samples[os.getpid()]},
        "errors": errors(rows),
        "exceptions": run.exceptions,
    }


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
        "totals": {"requests", "failures", "exceptions", "server_tracebacks", "rps",
        "seconds", "p50", "p95", "p99"}, "operations": {name: {"requests", "failures",
        "rps", "p50", "p95", "p99", "mean", "max"}} (ms), "timeline": [{"t", "requests",
        "rps", "failures", "p50", "p95", "p99"}], "servers": [{"url", "requests",
        "samples": [[t s, RSS MiB, CPU %]...], "rss_peak_mib"}], "client": {"samples"}
        (the load generator), "errors", "exceptions"}``.

    Raises:
        ValidationError: an option out of range or a bad ``--data``/``--store``.
        MnemolayerRuntimeError: a server did not start.
    """
    from mnemolayer.cli.demo import SAMPLE

    opts.check()
    spec = StoreSpec.parse(opts.store)
    data = opts.data or SAMPLE
    corpus = load_corpus(data)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = _loadavg()
    with (
        workspace(workdir) as wd,
        serve(
            spec,
            replicas=opts.replicas,
            tenants=[f"tenant{i}" for i in range(opts.tenants)],
            embedder=opts.embedder,
            extractor=opts.extractor,
            workdir=Path(wd),
            server_args=opts.server_args,
        ) as served,
    ):
        run = _drive(opts, _plan(opts, spec, served, corpus), served, show_progress)
    config = _config(opts, spec, served.store, data, len(corpus[0]), len(corpus[1]))
    result: dict[str, Any] = {
        "benchmark": "load",
        "config": {**config, "date": started, "sampler": run.sampler.source},
        "loadavg": {"start": load_start, "end": _loadavg()},
        **_figures(run, opts.interval_s),
    }
    write_json(result, out)
    return result


def _config(
    opts: LoadOptions, spec: StoreSpec, store: str, data: Path, turns: int, questions: int
) -> dict[str, Any]:
    import locust

    from mnemolayer import __version__

    from .agents import WEIGHTS

    return {
        "store": store,
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
        "turns": turns,
        "questions": questions,
        "seed": opts.seed,
        "cores": os.cpu_count(),
        "mnemolayer_version": __version__,
        "locust_version": locust.__version__,
    }


def failed(result: dict[str, Any]) -> int:
    """How many things went wrong: failed requests, agents' exceptions, server tracebacks."""
    totals = result["totals"]
    return int(totals["failures"] + totals["exceptions"] + totals["server_tracebacks"])
