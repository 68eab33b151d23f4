"""A PostgreSQL URL that nothing answers is reported at once, without its password, and
leaves nothing behind (no server needed: the address is one where nothing listens)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreError


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_an_unreachable_postgresql_is_reported_at_once_without_its_password(
    tmp_path: Path, scheme: str
) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"{scheme}://memuser:s3cret-pw@127.0.0.1:{port}/memdb"
    started = time.monotonic()
    with pytest.raises(StoreError) as err:
        Memory(url, embedder="hashing")
    assert time.monotonic() - started < 10
    assert f"{scheme}://memuser:***@127.0.0.1:{port}/memdb" in str(err.value)
    assert "s3cret-pw" not in str(err.value) + repr(err.value.__cause__)
    assert list(tmp_path.iterdir()) == []
