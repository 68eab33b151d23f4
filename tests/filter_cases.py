"""Metadata filter cases shared by the store-hook tests on both engines
(contract/test_store_hooks.py) and the one on an encrypted SQLite file
(sqlite_only/test_sealed_filters.py): records with metadata, filters, and a check that
``store.compile_filter`` selects exactly what :func:`mnemolayer.query.matches` says."""

from __future__ import annotations

from typing import Any

from mnemolayer import Memory
from mnemolayer.query import matches, parse_filter

METADATA: list[dict[str, Any]] = [
    {"city": "Porto", "rank": 3, "tags": ["work", "travel"]},
    {"city": "Lima", "rank": 1},
    {"city": "Porto", "rank": 7, "done": True},
    {"rank": 2.5, "tags": ["home"]},
    {},
]
FILTERS: list[dict[str, Any]] = [
    {"city": "Porto"},
    {"rank": {"gte": 2}},
    {"city": {"in": ["Lima", "Oslo"]}},
    {"tags": {"contains": "work"}},
    {"or": [{"city": "Lima"}, {"done": True}]},
    {"not": {"city": "Porto"}},
]


def fill(mem: Memory) -> dict[str, dict[str, Any]]:
    """One record per entry of METADATA for user ``u``: ``{id: metadata}``."""
    out: dict[str, dict[str, Any]] = {}
    for i, meta in enumerate(METADATA):
        [rec] = mem.add(f"note number {i} about the weather", user_id="u", metadata=meta)
        out[rec.id] = meta
    mem.add("someone else's note", user_id="v", metadata={"city": "Porto"})
    return out


def check_filters(mem: Memory, stored: dict[str, dict[str, Any]]) -> None:
    for spec in FILTERS:
        f = parse_filter(spec)
        expected = {i for i, meta in stored.items() if matches(f, meta)}
        sql, params = mem.store.compile_filter(f)
        assert mem.store.ids_where(f"user_id = ? AND ({sql})", ["u", *params]) == expected, spec
        sql, params = mem.store.compile_filter(f, "m.")
        rows = mem.store.read(
            f"SELECT m.id FROM memories m WHERE m.user_id = ? AND ({sql})", ["u", *params]
        )
        assert {r[0] for r in rows} == expected, spec
