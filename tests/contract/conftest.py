"""The contract suite: everything here that opens a :class:`~mnemolayer.Memory` or a store
runs on both engines, an SQLite file and a PostgreSQL database, through the
``store_backend`` parametrization of ``tests/conftest.py`` and the fixtures built on it
(``db_path``, ``other_db_path``, ``new_db``, ``module_db``, ``mem``, ``smem``, ``wmem``...).

A test here that takes none of them checks something that needs no store (a validation
error raised before any store is opened, a signature, a pure function); such a test that
opens a store anyway fails (:func:`_stores_come_from_the_fixtures`), so no test can run
on a store of its own, SQLite alone. tests/test_test_layout.py checks the rest: both
engines for every test that has a store, no ``sqlite_only`` here, no store path of a
file's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mnemolayer import registry


@pytest.fixture(autouse=True)
def _stores_come_from_the_fixtures(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A test without ``store_backend`` among its fixtures may open no store."""
    if "store_backend" not in request.fixturenames:

        def refuse(target: Any, **kwargs: Any) -> Any:
            raise AssertionError(
                f"{request.node.nodeid} opened a store ({target!r}) without the store "
                "fixtures: take db_path, new_db or mem (it then runs on SQLite and "
                "PostgreSQL), or move it to tests/sqlite_only if only a file has it"
            )

        monkeypatch.setattr(registry, "open_store", refuse)
    yield
