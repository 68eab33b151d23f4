"""Fault injection (issue 16, item 11): what callers see when the disk fills, the store
turns read-only or Redis is killed, and how long until calls work again.

Each fault reports acknowledged writes (calls that returned), writes found afterwards
(in a fresh reader, after the fault is gone), the errors callers saw (by type) and the
recovery time: from the fault going away to the first call that worked. Needs no
privileges and no PostgreSQL: a full disk is a writer process with ``RLIMIT_FSIZE``
lowered (EFBIG, what SQLite sees of a full disk); read-only is chmod, or, as root (who
ignores permissions), a store opened with ``read_only=True``; Redis is a private
``redis-server`` killed with SIGKILL and restarted on the same port.
"""

from __future__ import annotations

import collections
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mnemolayer import Memory
from mnemolayer.errors import MnemolayerError


@dataclass
class FaultResult:
    fault: str
    acknowledged: int = 0
    found_after: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    recovery_s: float | None = None
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _open(path: Path, **kwargs: Any) -> Memory:
    return Memory(path, embedder="hashing", extractor=None, **kwargs)


_WRITER = """
import resource, sys, time
from mnemolayer import Memory
from mnemolayer.errors import MnemolayerError
mem = Memory(sys.argv[1], embedder="hashing", extractor=None)
for i in range(100_000):
    try:
        print("A", mem.add(f"note {i}: the weather today " + "word " * 40, user_id="u")[0].id)
    except MnemolayerError as exc:
        print("E", type(exc).__name__, flush=True)
        break
for _ in range(3):  # the disk is still full: each further add fails the same way
    try:
        mem.add("still full", user_id="u")
    except MnemolayerError as exc:
        print("E", type(exc).__name__, flush=True)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
start = time.monotonic()
print("A", mem.add("room again", user_id="u")[0].id)
print("T", time.monotonic() - start)
"""


def _fsize_limited(limit: int) -> Any:
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return preexec


def disk_full(workdir: Path, limit: int = 1_500_000) -> FaultResult:
    """Adds until the file-size limit refuses one, then lifts it in the same process."""
    db = workdir / "full.db"
    run = subprocess.run(
        [sys.executable, "-c", _WRITER, str(db)],
        preexec_fn=_fsize_limited(limit),
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    result = FaultResult("disk full (SQLite, RLIMIT_FSIZE)")
    lines = [line.split(" ") for line in run.stdout.splitlines()]
    acked = {p[1] for p in lines if p[0] == "A"}
    result.errors = dict(collections.Counter(p[1] for p in lines if p[0] == "E"))
    result.recovery_s = next((float(p[1]) for p in lines if p[0] == "T"), None)
    result.acknowledged = len(acked)
    with _open(db) as mem:
        found = {r.id for r in mem.list(user_id="u", limit=100_000).items}
    result.found_after = len(acked & found)
    if run.returncode != 0:
        result.note = f"writer exited {run.returncode}: {run.stderr.strip()[-200:]}"
    return result


def read_only(workdir: Path, writes: int = 20) -> FaultResult:
    """A store made read-only, written to, then made writable again."""
    folder = workdir / "ro"
    db = folder / "m.db"
    result = FaultResult("read-only store (SQLite)")
    errors: collections.Counter[str] = collections.Counter()
    acked: set[str] = set()
    with _open(db) as mem:
        for i in range(writes):
            acked.add(mem.add(f"before {i}", user_id="u")[0].id)
    root = os.geteuid() == 0
    if root:
        result.note = "as root: read_only=True (permissions do not apply to root)"
    else:
        db.chmod(0o444)
        folder.chmod(0o555)
    try:
        with _open(db, read_only=True if root else None) as reader:
            for i in range(writes):
                try:
                    reader.add(f"refused {i}", user_id="u")
                except MnemolayerError as exc:
                    errors[type(exc).__name__] += 1
            reader.search("before", user_id="u")  # reads keep working
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    start = time.monotonic()
    with _open(db) as mem:
        acked.add(mem.add("writable again", user_id="u")[0].id)
        result.recovery_s = time.monotonic() - start
        found = {r.id for r in mem.list(user_id="u", limit=1000).items}
    result.acknowledged, result.found_after = len(acked), len(acked & found)
    result.errors = dict(errors)
    return result


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _redis(port: int, folder: Path, appendonly: bool) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "yes" if appendonly else "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.01)
    proc.kill()
    raise RuntimeError(f"redis-server did not start on port {port}")


def redis_killed(workdir: Path, appendonly: bool, turns: int = 20) -> FaultResult:
    """Turns added to a working-memory window, Redis killed, calls tried, Redis restarted;
    recovery is from the restart to the first call that works."""
    from mnemolayer.layers.working.window import working

    aof = "yes" if appendonly else "no"
    result = FaultResult(f"Redis killed mid-session (appendonly {aof})")
    folder = Path(tempfile.mkdtemp(dir=workdir))
    port = _free_port()
    proc = _redis(port, folder, appendonly)
    errors: collections.Counter[str] = collections.Counter()
    try:
        with _open(workdir / f"redis-{aof}.db", sessions=f"redis://127.0.0.1:{port}/0") as mem:
            win = working(mem, session_id="s", user_id="u", budget_tokens=100_000)
            acked = [win.add("user", f"turn {i}").content for i in range(turns)]
            proc.kill()
            proc.wait()
            for i in range(3):
                try:
                    win.add("user", f"during the outage {i}")
                except MnemolayerError as exc:
                    errors[type(exc).__name__] += 1
            proc = _redis(port, folder, appendonly)
            start = time.monotonic()
            fresh = working(mem, session_id="s", user_id="u")
            result.recovery_s = time.monotonic() - start
            found = {m["content"] for m in fresh.messages()}
    finally:
        proc.kill()
        proc.wait()
    result.acknowledged, result.found_after = len(acked), len(found & set(acked))
    result.errors = dict(errors)
    if not appendonly:
        result.note = "a non-persistent Redis loses every window when it dies"
    return result


def run_faults(workdir: Path | None = None) -> list[FaultResult]:
    """Every fault that needs no PostgreSQL; Redis ones only where redis-server exists."""
    with tempfile.TemporaryDirectory(prefix="mnemolayer-faults-") as tmp:
        where = workdir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        results = [disk_full(where), read_only(where)]
        if shutil.which("redis-server"):
            results += [redis_killed(where, False), redis_killed(where, True)]
        return results
