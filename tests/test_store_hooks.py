"""The hooks of the store (mnemolayer.store.core.StoreCore) that callers outside store/
use instead of branching on the engine (metadata filters, erasure), and the named
statements that replaced their SQL (verified deletion's counts, export's pages and fact
provenance). Each runs on both engines and is checked by what it does, not by the SQL
it writes."""

from __future__ import annotations

import base64
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.crypto import EncryptionConfig
from mnemolayer.query import Scope, matches, parse_filter
from mnemolayer.text.terms import user_term_tag

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


def _fill(mem: Memory) -> dict[str, dict[str, Any]]:
    """One record per entry of METADATA for user ``u``: ``{id: metadata}``."""
    out: dict[str, dict[str, Any]] = {}
    for i, meta in enumerate(METADATA):
        [rec] = mem.add(f"note number {i} about the weather", user_id="u", metadata=meta)
        out[rec.id] = meta
    mem.add("someone else's note", user_id="v", metadata={"city": "Porto"})
    return out


def _check_filters(mem: Memory, stored: dict[str, dict[str, Any]]) -> None:
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


def test_compile_filter_selects_what_the_filter_matches(mem: Memory) -> None:
    _check_filters(mem, _fill(mem))


@pytest.mark.sqlite_only
def test_compile_filter_on_sealed_metadata(tmp_path: Path) -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    path = tmp_path / "e.db"
    with Memory(path, embedder="hashing", encryption=EncryptionConfig(master_key=key)) as mem:
        assert mem.store.crypto is not None
        _check_filters(mem, _fill(mem))


def test_user_tables_are_the_tables_with_a_user_id(mem: Memory) -> None:
    tables = mem.store.user_tables()
    assert tables == sorted(tables)
    assert {
        "memories", "vectors", "history", "entities", "entity_aliases", "facts",
        "fact_sources", "working_sessions", "working_messages", "user_generation",
    } <= set(tables)  # fmt: skip
    assert "meta" not in tables and "schema_version" not in tables
    assert mem.store.transact(mem.store.user_tables) == tables


def test_unique_terms_and_vocab_count_follow_a_deletion(mem: Memory) -> None:
    mem.add(["zanzibar quokka", "quokka kettle"], user_id="u")
    mem.add(["kettle lantern"], user_id="v")
    store = mem.store
    mine = store.rowids("user_id = ?", ["u"])
    tag_u, tag_v = user_term_tag("u"), user_term_tag("v")

    def delete(c: Any) -> tuple[set[str], int, int]:
        unique = store.unique_terms(c, mine)
        before = store.vocab_count(c, unique)
        store.delete_where(c, "user_id = ?", ["u"])
        store.compact_keyword_index(c)
        return unique, before, store.vocab_count(c, unique)

    assert store.transact(lambda c: store.unique_terms(c, set())) == set()
    with store.secure_delete():
        unique, before, after = store.transact(delete)
    # Terms are per user: every term of u's rows is u's alone; v's are untouched.
    assert {tag_u + "zanzibar", tag_u + "quokka", tag_u + "kettle"} <= unique
    assert not any(t.startswith(tag_v) for t in unique)
    assert before == len(unique) and after == 0
    assert store.vocab_count(None, unique) == 0
    assert store.vocab_count(None, {tag_v + "kettle", tag_v + "lantern"}) == 2


def test_secure_delete_is_put_back(mem: Memory, store_backend: str) -> None:
    if store_backend == "postgres":
        with mem.store.secure_delete():  # nothing to set: a no-op
            pass
        return
    before = mem.store.read("PRAGMA secure_delete")[0][0]
    with mem.store.secure_delete():
        assert mem.store.read("PRAGMA secure_delete")[0][0] == 1
    assert mem.store.read("PRAGMA secure_delete")[0][0] == before


# -- named statements that replaced SQL outside store/ -----------------------------------


def test_records_page_walks_a_scope_in_id_order(mem: Memory) -> None:
    stored = _fill(mem)
    store = mem.store
    f = parse_filter({"city": "Porto"})
    expected = sorted(i for i, meta in stored.items() if matches(f, meta))
    got: list[str] = []
    last: str | None = None
    while page := store.records_page(Scope("u", filter=f), after=last, limit=1):
        got += [r.id for r in page]
        last = page[-1].id
    assert got == expected and len(got) == 2
    everyone = store.records_page(None, limit=100)
    assert [r.id for r in everyone] == sorted(r.id for r in everyone)
    assert {r.user_id for r in everyone} == {"u", "v"} and len(everyone) == len(stored) + 1
    assert [r.id for r in store.records_page(Scope("u"), after=expected[-1], limit=100)] == [
        i for i in sorted(stored) if i > expected[-1]
    ]


def test_erasure_counts_follow_the_deletion_of_a_session(mem: Memory) -> None:
    mem.add(["alpha kettle", "beta kettle"], user_id="u", session_id="s1")
    mem.add(["gamma lantern"], user_id="u", session_id="s2")
    mem.add(["delta kettle"], user_id="v", session_id="s1")
    store = mem.store
    scope = Scope("u", session_id="s1")
    tables = store.user_tables()
    before = store.scope_counts(None, scope, tables)
    assert before == {"memories": 2, "keyword_index": 2, "vectors": before["vectors"]}
    assert before["vectors"] >= 2  # one row per chunk
    rowids = store.scope_rowids(None, scope)
    assert len(rowids) == 2

    def delete(c: Any) -> tuple[list[tuple[int, str, str]], dict[str, int]]:
        gone = store.delete_scope(c, scope)
        return gone, store.scope_counts(c, scope, tables)

    gone, inside = store.transact(delete)
    assert {g[0] for g in gone} == rowids and {g[2] for g in gone} == {"u"}
    assert inside == {"memories": 0, "keyword_index": 0, "vectors": 0}
    assert store.index_leftovers(rowids) == {
        "keyword_index": 0, "keyword_index_orphans": 0,
        "vectors_of_deleted": 0, "vector_orphans": 0,
    }  # fmt: skip
    # The other session and the other user are untouched.
    assert store.scope_counts(None, Scope("u", session_id="s2"), tables)["memories"] == 1
    assert store.scope_counts(None, Scope("v"), ["memories"])["memories"] == 1


def test_erasure_counts_of_a_whole_user(mem: Memory) -> None:
    recs = mem.add(["alpha kettle", "beta kettle"], user_id="u")
    mem.add(["delta kettle"], user_id="v")
    store = mem.store
    scope = Scope("u")
    tables = store.user_tables()
    counts = store.scope_counts(None, scope, tables)
    assert set(tables) <= set(counts)
    assert counts["memories"] == 2 and counts["keyword_index"] == 2 and counts["history"] == 2
    assert counts == {
        **store.user_row_counts(None, "u", tables), "keyword_index": 2,
    }  # fmt: skip
    ids = {r.id for r in recs}
    assert store.user_memory_ids(None, "u") == ids
    rowids = store.scope_rowids(None, scope)
    store.transact(lambda c: store.delete_scope(c, scope))
    # History still names the deleted records (under any user) until it goes too.
    assert store.citations_left(ids) == {"history_of_deleted": 2, "facts_citing_deleted": 0}
    assert store.known_users() == ["u", "v"]  # u only through its history now
    assert store.user_memory_ids(None, "u") == ids
    store.transact(lambda c: store.delete_user_rows(c, "u", ["history"]))
    assert store.citations_left(ids) == {"history_of_deleted": 0, "facts_citing_deleted": 0}
    assert store.known_users() == ["v"]
    assert store.index_leftovers(rowids)["keyword_index"] == 0
    left = store.user_row_counts(None, "u", tables)
    assert left["memories"] == left["history"] == left["vectors"] == 0
    assert store.user_row_counts(None, "v", ["memories", "history"]) == {
        "memories": 1, "history": 1,
    }  # fmt: skip


def test_index_leftovers_see_rows_of_deleted_records(mem: Memory) -> None:
    [rec] = mem.add(["epsilon kettle"], user_id="u")
    store = mem.store
    rowids = store.scope_rowids(None, Scope("u"))
    # A record deleted on its own (not through delete_where) leaves its keyword row
    # behind; its vectors go with it (a foreign key with ON DELETE CASCADE, both engines).
    store.transact(lambda c: c.execute("DELETE FROM memories WHERE id = ?", (rec.id,)))
    left = store.index_leftovers(rowids)
    assert left["keyword_index"] == left["keyword_index_orphans"] == 1
    assert left["vectors_of_deleted"] == left["vector_orphans"] == 0
    assert store.index_leftovers(()) == {**left, "keyword_index": 0, "vectors_of_deleted": 0}


def test_stated_times_round_trip(smem: Memory) -> None:
    smem.add("I live in Lisbon", user_id="u")
    smem.add("I live in Porto", user_id="v")
    graph = smem.semantic.graph
    times = graph.stated_times("u")
    [fact] = [f for f in graph.export_facts("u") if f.id in times]
    [(source, at)] = times[fact.id].items()
    assert at.tzinfo is not None
    later = at + timedelta(days=3)
    smem.store.transact(
        lambda c: graph.set_stated_at(c, fact, {source: later, "not-a-source": later})
    )
    assert graph.stated_times("u")[fact.id] == {source: later}
    assert set(graph.stated_times(None)) == set(times) | set(graph.stated_times("v"))
