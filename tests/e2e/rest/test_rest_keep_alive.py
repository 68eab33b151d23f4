"""An idle client connection stays open for ``serve --keep-alive`` seconds (75 by
default): longer than an agent's pause between calls, so that a request is not sent on a
connection the server is closing (uvicorn's own default is 5 s; a 10-minute load run on
three replicas lost one request that way)."""

from __future__ import annotations

import http.client
import time
from pathlib import Path
from urllib.parse import urlsplit

from rest_server import start


def _get_twice(url: str, pause_s: float) -> tuple[int, int | None]:
    """Two GET /healthz on one connection, ``pause_s`` apart: the statuses (the second
    ``None`` when the server had closed the connection)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", "/healthz")
        first = conn.getresponse()
        first.read()
        time.sleep(pause_s)
        try:
            conn.request("GET", "/healthz")
            second = conn.getresponse()
            second.read()
            return first.status, second.status
        except (ConnectionError, http.client.HTTPException):
            return first.status, None
    finally:
        conn.close()


def test_an_idle_connection_outlives_uvicorns_default_and_closes_after_the_setting(
    tmp_path: Path,
) -> None:
    default = start(tmp_path, "--db", str(tmp_path / "default.db"))
    short = start(tmp_path, "--db", str(tmp_path / "short.db"), "--keep-alive", "1")
    try:
        assert _get_twice(default.url, 6.0) == (200, 200)
        assert _get_twice(short.url, 3.0) == (200, None)
    finally:
        default.stop()
        short.stop()
    assert "Traceback" not in default.log_text() + short.log_text()
