"""Metadata filters: parsing, and agreement of the Python evaluator with SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemolayer.errors import ValidationError
from mnemolayer.query import (
    And,
    Compare,
    Filter,
    Not,
    Op,
    Or,
    matches,
    parse_filter,
)
from mnemolayer.store.sqlite.filters import compile_sqlite

RECORDS: dict[int, dict[str, Any] | None] = {
    1: {"city": "Porto", "age": 34, "tags": ["food", "travel"], "lang": "en", "vip": True,
        "score": 4.5},
    2: {"city": "Lisboa", "age": 29, "tags": ["work"], "lang": "zh", "vip": False, "score": 3},
    3: {"city": "porto", "age": 40.0, "tags": "food blog", "lang": "pt"},
    4: {"city": "東京", "age": "34", "tags": [], "note": None},
    5: {"age": True, "score": 1, "tags": [1, 2.5, True, None, "x' OR 1=1 --"]},
    6: {},
    7: {"city": "x' OR '1'='1", "age": 2**63 - 1, "name": 'Robert"); DROP TABLE docs;--'},
    8: {"nested": {"city": "Porto"}, "a.b": "dotted", "lang": ["en"]},
    9: None,  # a NULL metadata column
    10: {"big": 2**64 + 1},  # beyond 64 bits: SQLite reads it as a float
}  # fmt: skip
ALL = set(RECORDS)


def _execute(db: sqlite3.Connection, f: Filter) -> set[int]:
    sql, params = compile_sqlite(f)
    rows = db.execute(f"SELECT id, {sql} FROM docs", params).fetchall()
    assert {value for _, value in rows} <= {0, 1}, "the expression must never be NULL"
    return {rowid for rowid, value in rows if value}


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, metadata TEXT)")
    conn.executemany(
        "INSERT INTO docs VALUES (?, ?)",
        [(i, None if m is None else json.dumps(m)) for i, m in RECORDS.items()],
    )
    yield conn
    conn.close()


AGREEMENT = [
    ({"city": "Porto"}, {1}),
    ({"city": {"eq": "Porto"}}, {1}),
    ({"city": {"ne": "Porto"}}, ALL - {1}),
    ({"city": "東京"}, {4}),
    ({"age": 34}, {1}),
    ({"age": 34.0}, {1}),
    ({"age": 40}, {3}),
    ({"age": {"gte": 30, "lt": 40}}, {1}),
    ({"age": {"gt": 30}}, {1, 3, 7}),
    ({"age": {"lte": 29}}, {2}),
    ({"age": {"gt": 9.2e18}}, {7}),
    ({"age": {"gt": "3"}}, {4}),
    ({"city": {"gt": "P"}}, {1, 3, 4, 7}),
    ({"city": {"lt": "Porto"}}, {2}),
    ({"vip": True}, {1}),
    ({"vip": False}, {2}),
    ({"vip": 1}, set()),
    ({"age": True}, {5}),
    ({"score": 1}, {5}),
    ({"score": True}, set()),
    ({"score": {"gte": 3}}, {1, 2}),
    ({"note": None}, {4}),
    ({"note": {"ne": None}}, ALL - {4}),
    ({"missing": 1}, set()),
    ({"missing": {"gt": 0}}, set()),
    ({"missing": {"ne": 1}}, ALL),
    ({"missing": {"nin": [1, "a"]}}, ALL),
    ({"lang": {"in": ["en", "zh"]}}, {1, 2}),
    ({"lang": {"nin": ["en", "zh"]}}, ALL - {1, 2}),
    ({"lang": {"in": []}}, set()),
    ({"lang": {"nin": []}}, ALL),
    ({"age": {"in": [29, "34", True]}}, {2, 4, 5}),
    ({"tags": {"contains": "food"}}, {1, 3}),
    ({"tags": {"contains": "foo"}}, {3}),
    ({"tags": {"contains": ""}}, {3}),
    ({"tags": {"contains": 2.5}}, {5}),
    ({"tags": {"contains": 1}}, {5}),
    ({"tags": {"contains": True}}, {5}),
    ({"tags": {"contains": None}}, {5}),
    ({"tags": {"contains": "x' OR 1=1 --"}}, {5}),
    ({"lang": {"contains": "en"}}, {1, 8}),
    ({"age": {"contains": 34}}, set()),
    ({"a.b": "dotted"}, {8}),
    ({"city": "x' OR '1'='1"}, {7}),
    ({"name": 'Robert"); DROP TABLE docs;--'}, {7}),
    ({"city": "% OR 1"}, set()),
    ({"big": {"gte": 1.8446744073709552e19}}, {10}),
    ({"big": 1.8446744073709552e19}, {10}),
    ({"and": [{"city": "Porto"}, {"age": 34}]}, {1}),
    ({"or": [{"city": "Porto"}, {"city": "Lisboa"}]}, {1, 2}),
    ({"not": {"city": "Porto"}}, ALL - {1}),
    ({"not": {"or": [{"vip": True}, {"lang": "zh"}]}}, ALL - {1, 2}),
    ({"city": "Porto", "age": {"gt": 100}}, set()),
    (
        {"or": [
            {"and": [{"age": {"gte": 30}}, {"not": {"tags": {"contains": "food"}}}]},
            {"note": None},
        ]},
        {4, 7},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "expected"), AGREEMENT, ids=[str(r) for r, _ in AGREEMENT])
def test_python_and_sqlite_agree(db: sqlite3.Connection, raw: dict, expected: set[int]) -> None:
    f = parse_filter(raw)
    python = {i for i, m in RECORDS.items() if matches(f, m)}
    assert python == expected
    assert _execute(db, f) == expected


def test_parse_builds_the_ast() -> None:
    assert parse_filter({"city": "Porto"}) == Compare("city", Op.EQ, "Porto")
    assert parse_filter({"age": {"gte": 30, "lt": 40}}) == And(
        (Compare("age", Op.GTE, 30), Compare("age", Op.LT, 40))
    )
    assert parse_filter({"lang": {"in": ["en", "zh"]}}) == Compare("lang", Op.IN, ("en", "zh"))
    assert parse_filter({"or": [{"a": 1}, {"not": {"b": None}}]}) == Or(
        (Compare("a", Op.EQ, 1), Not(Compare("b", Op.EQ, None)))
    )


def test_keys_and_values_are_bound_parameters_only() -> None:
    f = parse_filter({"secret_key": {"contains": "secret_value"}, "k2": {"in": ["v2"]}})
    sql, params = compile_sqlite(f)
    for text in ("secret_key", "secret_value", "k2", "v2"):
        assert text not in sql
    assert '$."secret_key"' in params and "secret_value" in params


def test_compile_with_a_qualified_column(db: sqlite3.Connection) -> None:
    sql, params = compile_sqlite(parse_filter({"city": "Porto"}), column="d.metadata")
    rows = db.execute(f"SELECT d.id FROM docs AS d WHERE {sql}", params).fetchall()
    assert rows == [(1,)]


@pytest.mark.parametrize("column", ["metadata; DROP TABLE docs", "json_extract(x)", "", "a.b.c"])
def test_compile_rejects_a_column_that_is_not_an_identifier(column: str) -> None:
    with pytest.raises(ValidationError) as info:
        compile_sqlite(parse_filter({"a": 1}), column=column)
    assert info.value.field == "column"


BAD = [
    ("not a dict", "filters"),
    (["a"], "filters"),
    ({}, "filters"),
    ({"and": {"a": 1}}, "filters.and"),
    ({"and": []}, "filters.and"),
    ({"or": "x"}, "filters.or"),
    ({"not": [{"a": 1}]}, "filters.not"),
    ({"not": {}}, "filters.not"),
    ({"and": [{"a": 1}, {"price": {"between": [1, 2]}}]}, "filters.and[1].price.between"),
    ({"price": {"$gte": 1}}, "filters.price.$gte"),
    ({"price": {}}, "filters.price"),
    ({"nested": {"city": "Porto"}}, "filters.nested.city"),
    ({"lang": {"in": "en"}}, "filters.lang.in"),
    ({"lang": {"nin": {"a": 1}}}, "filters.lang.nin"),
    ({"lang": {"in": ["en", ["zh"]]}}, "filters.lang.in[1]"),
    ({"tags": ["a"]}, "filters.tags"),
    ({"tags": {"contains": {"x": 1}}}, "filters.tags.contains"),
    ({"price": {"gt": None}}, "filters.price.gt"),
    ({"price": {"lte": True}}, "filters.price.lte"),
    ({"price": {"eq": float("nan")}}, "filters.price.eq"),
    ({"price": float("inf")}, "filters.price"),
    ({"price": 2**64}, "filters.price"),
    ({"a": "nul\x00"}, "filters.a"),
    ({'a"b': 1}, 'filters.a"b'),
    ({"x') OR 1=1 --": 1}, "filters.x') OR 1=1 --"),
    ({"$.x": 1}, "filters.$.x"),
    ({"": 1}, "filters"),
    ({1: 2}, "filters"),
    ({"or": [{"a": 1}, {"not": {"b": {"contains": {"x": 1}}}}]}, "filters.or[1].not.b.contains"),
    ({"a": {"in": list(range(1001))}}, "filters.a.in"),
]


@pytest.mark.parametrize(("raw", "field"), BAD, ids=[repr(r)[:60] for r, _ in BAD])
def test_malformed_filters_raise_naming_the_field(raw: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_filter(raw)
    assert info.value.field == field


def test_custom_field_name_and_depth_limit() -> None:
    with pytest.raises(ValidationError) as info:
        parse_filter({"a": {"bad": 1}}, field="where")
    assert info.value.field == "where.a.bad"
    deep: dict[str, Any] = {"a": 1}
    for _ in range(20):
        deep = {"not": deep}
    with pytest.raises(ValidationError, match="deeper"):
        parse_filter(deep)


# ------------------------------------------------------------------ property test

_KEYS = st.sampled_from(["a", "b", "c"])
_TEXT = st.text(alphabet="abAB 拿铁'\"%_é\\", max_size=4)
_FILTER_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0.5, 1.0, 2.0, -1.5, 1e300]),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
_STORED_SCALARS = st.one_of(_FILTER_SCALARS, st.integers(-(2**80), 2**80))
_VALUES = st.one_of(
    _STORED_SCALARS,
    st.lists(_STORED_SCALARS, max_size=4),
    st.dictionaries(_KEYS, _STORED_SCALARS, max_size=2),
)
_METADATA = st.one_of(st.none(), st.dictionaries(_KEYS, _VALUES, max_size=3))
_ORDERED = st.one_of(st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False), _TEXT)


def _operand(op: str) -> st.SearchStrategy[Any]:
    if op in ("in", "nin"):
        return st.lists(_FILTER_SCALARS, max_size=4)
    if op in ("gt", "gte", "lt", "lte"):
        return _ORDERED
    return _FILTER_SCALARS


_CONDITION = st.sampled_from([o.value for o in Op]).flatmap(
    lambda op: _operand(op).map(lambda operand: {op: operand})
)
_LEAF = st.dictionaries(_KEYS, st.one_of(_FILTER_SCALARS, _CONDITION), min_size=1, max_size=2)
_RAW_FILTERS = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda items: {"and": items}),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: {"or": items}),
        inner.map(lambda item: {"not": item}),
    ),
    max_leaves=6,
)
_PROPERTY_DB = sqlite3.connect(":memory:", check_same_thread=False)
_PROPERTY_DB.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, metadata TEXT)")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_RAW_FILTERS, records=st.lists(_METADATA, min_size=1, max_size=6))
def test_property_python_and_sqlite_agree(raw: dict, records: list[dict | None]) -> None:
    f = parse_filter(raw)
    db = _PROPERTY_DB
    db.execute("DELETE FROM docs")
    db.executemany(
        "INSERT INTO docs VALUES (?, ?)",
        [(i, None if m is None else json.dumps(m)) for i, m in enumerate(records)],
    )
    python = {i for i, m in enumerate(records) if matches(f, m)}
    assert _execute(db, f) == python
