"""A full disk under the SQLite store (issue 16, item 11), made without privileges.

The writer (this file run as a script) runs with ``RLIMIT_FSIZE`` lowered and SIGXFSZ
ignored, so once a file of the store (the database or its write-ahead log) would grow
past the limit, the kernel refuses the write with EFBIG: to SQLite that is what a full
disk is (SQLITE_FULL or, for EFBIG, SQLITE_IOERR_WRITE). It adds messages until an add
fails and reports, one line each, every acknowledged add (``A <id>``), the error the
failing add raised (``E <type> <message>``), whether a read still works (``R <n>``),
and, after raising the limit again in the same process, whether the next add on the
same ``Memory`` works (``W <id>``). A real filesystem that is full (ENOSPC) is not
made here: that needs a mount, so root.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import index_problems, integrity_check
from mnemolayer import Memory

#: tests/, where the shared helpers live.
TESTS = str(Path(__file__).resolve().parents[1])
#: Bytes any file of the writer may reach: room for the schema and some adds.
LIMIT = 1_500_000


def _writer(path: str) -> None:
    from mnemolayer.errors import MnemolayerError

    mem = Memory(path, embedder="hashing", extractor=None)
    for i in range(100_000):
        try:
            rec = mem.add(f"note {i}: the weather in town today " + "word " * 40, user_id="u")
        except MnemolayerError as exc:
            print("E", type(exc).__name__, str(exc).replace("\n", " "), flush=True)
            break
        print("A", rec[0].id, flush=True)
    print("R", len(mem.search("weather", user_id="u", limit=5)), flush=True)
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    print("W", mem.add("after the disk has room again", user_id="u")[0].id, flush=True)
    mem.close()


def _limited() -> None:  # runs in the child before exec: inherited by the writer
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.RLIM_INFINITY))


@pytest.mark.timeout(120)
def test_a_full_disk_fails_the_add_clearly_and_loses_no_acknowledged_write(
    tmp_path: Path,
) -> None:
    db = tmp_path / "full.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([TESTS, *sys.path])}
    run = subprocess.run(
        [sys.executable, __file__, str(db)],
        preexec_fn=_limited,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    lines = [line.split(" ", 2) for line in run.stdout.splitlines()]
    acked = [parts[1] for parts in lines if parts[0] == "A"]
    (error,) = [parts for parts in lines if parts[0] == "E"]
    assert len(acked) >= 3  # the limit left room for some adds before it was reached
    assert error[1] == "StoreError"
    assert "disk is full" in error[2] and str(db) in error[2]
    assert "corrupt" not in error[2]
    assert [parts[1] for parts in lines if parts[0] == "R"] != ["0"]  # reads kept working
    (after,) = [parts[1] for parts in lines if parts[0] == "W"]  # and the next add worked

    assert integrity_check(db) == [("ok",)]
    assert index_problems(db) == {}
    with Memory(db, embedder="hashing", extractor=None) as mem:  # a process without limit
        for memory_id in [*acked, after]:
            assert mem.get(memory_id, user_id="u").id == memory_id
        assert mem.add("and in a new process", user_id="u")
        assert len(mem.list(user_id="u", limit=1000).items) == len(acked) + 2


if __name__ == "__main__":
    _writer(sys.argv[1])
