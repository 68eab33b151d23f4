"""Redis killed (SIGKILL) in the middle of a working-memory session (issue 16, item 11).

Each test starts a private ``redis-server`` on a free port (the shared one is never
killed). The call after the kill must raise a clear :class:`StoreError` at once (refused
connection: no wait for a timeout), leave the window object as it was (the failed turn
is not saved later with the next one), and once Redis runs again on the same port the
same ``Memory`` and window object work again. What Redis had acknowledged survives the
kill only if Redis persists it: with ``--appendonly no`` the windows are gone after the
restart (working memory in a non-persistent Redis is a cache); with ``--appendonly yes``
(``appendfsync everysec``, the default: Redis writes the log before it replies, so a
killed process loses nothing acknowledged; a crash of the host could) they survive.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreError
from mnemolayer.layers.working.window import working

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")


class PrivateRedis:
    """A ``redis-server`` of the test's own on a fixed port, to kill and restart."""

    def __init__(self, folder: Path, *, appendonly: bool) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.folder = folder
        self.appendonly = appendonly
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        aof = "yes" if self.appendonly else "no"
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", aof, "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None


@pytest.fixture(params=[False, True], ids=["appendonly-no", "appendonly-yes"])
def redis(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path, appendonly=request.param)
    server.start()
    yield server
    if server.proc is not None:
        server.kill()


def _texts(window: Any) -> list[str]:
    return [m["content"] for m in window.messages()]


@pytest.mark.timeout(60)
def test_a_killed_redis_fails_the_next_call_clearly_and_the_session_works_after_a_restart(
    db_path: Path, redis: PrivateRedis
) -> None:
    with Memory(db_path, embedder="hashing", extractor=None, sessions=redis.url) as mem:
        win = working(mem, session_id="s1", user_id="u1", budget_tokens=500)
        win.add("user", "My locker code is 4711.")
        redis.kill()

        started = time.monotonic()
        with pytest.raises(StoreError, match=r"cannot reach Redis at redis://127\.0\.0\.1"):
            win.add("user", "This turn cannot be saved.")
        with pytest.raises(StoreError, match=r"cannot reach Redis"):
            working(mem, session_id="s1", user_id="u1")
        assert time.monotonic() - started < 5  # refused at once, no hang
        assert _texts(win) == ["My locker code is 4711."]  # the failed turn left no trace

        redis.start()
        survived = _texts(working(mem, session_id="s1", user_id="u1"))
        assert survived == (["My locker code is 4711."] if redis.appendonly else [])
        win.add("user", "Back online.")  # the same objects work again
        assert _texts(working(mem, session_id="s1", user_id="u1")) == [
            "My locker code is 4711.",  # the window object still held it, and saved it again
            "Back online.",
        ]


@pytest.mark.timeout(60)
def test_a_redis_restarted_between_two_calls_is_not_noticed(
    db_path: Path, redis: PrivateRedis
) -> None:
    """The pooled connection is dead after the restart; the call reconnects by itself."""
    with Memory(db_path, embedder="hashing", extractor=None, sessions=redis.url) as mem:
        win = working(mem, session_id="s1", user_id="u1", budget_tokens=500)
        win.add("user", "first")
        redis.kill()
        redis.start()
        win.add("user", "second")
        assert _texts(working(mem, session_id="s1", user_id="u1")) == ["first", "second"]
