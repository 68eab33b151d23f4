"""The servers a load test runs against: the store they share, their keys, N replicas of
``mnemolayer serve`` started as processes, and their memory and CPU sampled over time.

A store spec names what the replicas serve:

* ``sqlite`` (default): a fresh multi-tenant data directory (one SQLite store per tenant,
  API keys in ``keys.db``), made in the work directory; one replica only, since a data
  directory belongs to one server process;
* ``postgres``: a fresh database on ``$MNEMOLAYER_BENCH_PG_URL``, else on an embedded
  PostgreSQL started for the run (``bench/_harness.py``); served with ``--db`` (one store,
  no keys: tenants become a prefix of the user ids);
* a ``postgresql://`` URL: that database, as it is (not dropped afterwards).

Extra ``serve`` options (``--server-arg``) reach every replica, for servers that take
more (a Redis URL for sessions shared by the replicas).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mnemolayer.errors import MnemolayerRuntimeError, ValidationError

__all__ = ["Replica", "Sampler", "Served", "StoreSpec", "serve"]

#: Seconds a replica may take to answer /healthz (loading the real model on a busy
#: machine takes tens of seconds).
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class StoreSpec:
    """What the replicas serve: ``kind`` is ``"sqlite"`` or ``"postgres"``; ``url`` a
    given PostgreSQL database (``None``: make a fresh one)."""

    kind: str
    url: str | None = None

    @classmethod
    def parse(cls, value: str) -> StoreSpec:
        """``sqlite``, ``postgres`` or a ``postgresql://`` URL.

        Raises:
            ValidationError: anything else (field ``--store``).
        """
        if value in ("sqlite", "postgres"):
            return cls(value)
        if value.startswith(("postgresql://", "postgres://")):
            return cls("postgres", value)
        raise ValidationError(
            "--store", f"expected sqlite, postgres or a postgresql:// URL, got {value!r}"
        )

    @property
    def keyed(self) -> bool:
        """Whether the servers require API keys (one per tenant)."""
        return self.kind == "sqlite"

    def check_replicas(self, replicas: int) -> None:
        """Raises ValidationError (``--replicas``) for more than one replica of a data dir."""
        if self.kind == "sqlite" and replicas > 1:
            raise ValidationError(
                "--replicas",
                "an SQLite data directory is served by one process; "
                "replicas need a shared store (--store postgres or a postgresql:// URL)",
            )

    def describe(self) -> str:
        """The spec for the results, without a password."""
        if self.url is None:
            return self.kind
        from mnemolayer.urls import redact_url

        return redact_url(self.url)


@dataclass
class Replica:
    """One ``mnemolayer serve`` process: its base URL and log file."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@dataclass
class Served:
    """Running replicas and the API key of each tenant (``None``: no keys)."""

    replicas: list[Replica]
    keys: dict[str, str | None]
    store: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def _store_args(
    spec: StoreSpec, workdir: Path, tenants: Sequence[str]
) -> Iterator[tuple[list[str], dict[str, str | None]]]:
    """The ``serve`` arguments of the store, and each tenant's key (``None``: no keys)."""
    if spec.kind == "sqlite":
        from mnemolayer.server import KeyStore

        data_dir = workdir / "data"
        if data_dir.exists():
            raise ValidationError("--workdir", f"{data_dir} exists: give an empty work directory")
        data_dir.mkdir(parents=True)
        store = KeyStore(data_dir / "keys.db")
        try:
            keys: dict[str, str | None] = {
                t: store.create(t, name="bench load")[0] for t in tenants
            }
        finally:
            store.close()
        yield ["--data-dir", str(data_dir)], keys
        return
    no_keys: dict[str, str | None] = dict.fromkeys(tenants)
    if spec.url is not None:
        yield ["--db", spec.url], no_keys
        return
    from .._harness import fresh_postgres

    with fresh_postgres(workdir, "load") as url:
        yield ["--db", url], no_keys


def _start(workdir: Path, models: Sequence[str], args: Sequence[str]) -> Replica:
    """``mnemolayer MODELS serve --port P ARGS`` on a free port, its output in a log."""
    port = _free_port()
    log = workdir / f"server-{port}.log"
    cmd = [sys.executable, "-m", "mnemolayer", *models, "serve", "--port", str(port)]
    cmd += ["--log-level", "warning", *args]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    return Replica(f"http://127.0.0.1:{port}", proc, log)


def _wait_healthy(replicas: Sequence[Replica]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    waiting = list(replicas)
    while waiting:
        r = waiting[0]
        if r.proc.poll() is not None:
            raise MnemolayerRuntimeError(
                f"server {r.url} exited with {r.proc.returncode}:\n{r.log_text()[-4000:]}"
            )
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{r.url}/healthz", timeout=2.0).status_code == 200:
                waiting.pop(0)
                continue
        if time.monotonic() > deadline:
            raise MnemolayerRuntimeError(
                f"server {r.url} did not answer within {START_TIMEOUT_S:.0f} s:\n"
                f"{r.log_text()[-4000:]}"
            )
        time.sleep(0.2)


def _stop(replicas: Sequence[Replica]) -> None:
    for r in replicas:
        if r.proc.poll() is None:
            r.proc.terminate()
    for r in replicas:
        try:
            r.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            r.proc.kill()
            r.proc.wait(timeout=5)


@contextlib.contextmanager
def serve(
    spec: StoreSpec,
    *,
    replicas: int,
    tenants: Sequence[str],
    embedder: str,
    extractor: str,
    workdir: Path,
    server_args: Sequence[str] = (),
) -> Iterator[Served]:
    """Start ``replicas`` servers of ``spec`` and wait until each answers ``/healthz``.

    Yields:
        The replicas (stopped on exit, SIGTERM then SIGKILL after 20 s) and the tenants'
        keys.

    Raises:
        ValidationError: more than one replica of an SQLite data directory (``--replicas``),
            a bad spec, a work directory in use.
        MnemolayerRuntimeError: a server exited or did not answer in time (with its log).
    """
    spec.check_replicas(replicas)
    with _store_args(spec, workdir, tenants) as (store_args, keys):
        models = ["--embedder", embedder, "--extractor", extractor]
        started: list[Replica] = []
        try:
            for _ in range(replicas):
                started.append(_start(workdir, models, [*store_args, *server_args]))
            _wait_healthy(started)
            yield Served(started, keys, spec.describe())
        finally:
            _stop(started)


@dataclass
class Sampler:
    """Samples the resident memory (MiB) and CPU (% of one core) of processes over time:
    with psutil where installed, else resident memory from ``/proc`` (Linux) and no CPU.

    Attributes:
        samples: per process id, ``[seconds since start, RSS MiB, CPU %]`` rows.
    """

    pids: Sequence[int]
    start: float = field(default_factory=time.monotonic)
    samples: dict[int, list[list[float | None]]] = field(default_factory=dict)
    _procs: dict[int, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            import psutil
        except ImportError:
            psutil = None
        for pid in self.pids:
            self.samples[pid] = []
            if psutil is not None:
                proc = psutil.Process(pid)
                proc.cpu_percent(None)  # the first call starts the interval
                self._procs[pid] = proc

    @property
    def source(self) -> str:
        return "psutil" if self._procs else "/proc"

    def sample(self) -> None:
        """One row per process still running."""
        t = round(time.monotonic() - self.start, 2)
        for pid in self.pids:
            rss, cpu = self._read(pid)
            if rss is not None:
                self.samples[pid].append([t, round(rss / 2**20, 1), cpu])

    def _read(self, pid: int) -> tuple[int | None, float | None]:
        proc = self._procs.get(pid)
        if proc is not None:
            try:
                return int(proc.memory_info().rss), round(float(proc.cpu_percent(None)), 1)
            except Exception:  # the process ended (psutil.NoSuchProcess and kin)
                return None, None
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024, None
        except OSError:
            pass
        return None, None
