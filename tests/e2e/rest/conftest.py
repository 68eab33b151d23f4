"""Fixtures of the REST tests: one real server process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rest_server import Server, start_with_tenants


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A multi-tenant server (tenants ``acme`` and ``globex``; keys in ``server.keys``)."""
    srv = start_with_tenants(tmp_path_factory.mktemp("rest"))
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()
