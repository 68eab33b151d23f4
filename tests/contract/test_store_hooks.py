"""The hooks of the store (mnemolayer.store.core.StoreCore) that callers outside store/
use instead of branching on the engine (metadata filters, erasure), and the named
statements that replaced their SQL (verified deletion's counts, export's pages and fact
provenance). Each runs on both engines and is checked by what it does, not by the SQL
it writes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from filter_cases import check_filters as _check_filters
from filter_cases import fill as _fill
from mnemolayer import Memory
from mnemolayer.query import Scope, matches, parse_filter
from mnemolayer.store.where import scope_where
from mnemolayer.text.terms import user_term_tag


def test_compile_filter_selects_what_the_filter_matches(mem: Memory) -> None:
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


def test_records_by_id_and_delete_ids(mem: Memory) -> None:
    a, b = mem.add(["alpha kettle", "beta kettle"], user_id="u")
    [c] = mem.add(["gamma kettle"], user_id="v")
    store = mem.store
    got = store.records_by_id([c.id, a.id, "missing", b.id])
    assert [r.id for r in got] == sorted([a.id, b.id, c.id])
    # Only the given user's records go when user_id is given.
    gone = store.transact(lambda t: store.delete_ids(t, [a.id, c.id], user_id="u"))
    assert [(g[1], g[2]) for g in gone] == [(a.id, "u")]
    gone = store.transact(lambda t: store.delete_ids(t, [c.id]))
    assert [g[1] for g in gone] == [c.id]
    assert [r.id for r in store.records_by_id([a.id, b.id, c.id])] == [b.id]
    assert store.index_leftovers({g[0] for g in gone})["keyword_index"] == 0


def test_session_turns_and_session_only_records(mem: Memory, clock: Any) -> None:
    later = mem.add("second turn", user_id="u", session_id="s", timestamp="2024-01-02T00:00:00Z")
    first = mem.add("first turn", user_id="u", session_id="s", timestamp="2024-01-01T00:00:00Z")
    temp = mem.add("locker code 4711", user_id="u", session_id="s", session_only=True)
    other = mem.add("another agent's temp", user_id="u", session_id="s", agent_id="b",
                    session_only=True)  # fmt: skip
    mem.add("elsewhere", user_id="u", session_id="t")
    store, lifecycle = mem.store, mem.lifecycle
    turns = store.session_turns("u", "s", now=clock(), lifecycle=lifecycle)
    assert [r.id for r in turns] == [first[0].id, later[0].id]  # in time order, no temp
    of_b = Scope("u", session_id="s", agent_id="b")
    gone = store.transact(lambda t: store.delete_session_only(t, of_b))
    assert [g[1] for g in gone] == [other[0].id]
    gone = store.transact(lambda t: store.delete_session_only(t, Scope("u", session_id="s")))
    assert [g[1] for g in gone] == [temp[0].id]
    assert store.session_turns("u", "s", now=clock(), lifecycle=lifecycle) == turns


def test_active_records_and_current_pages(mem: Memory, clock: Any) -> None:
    [kept] = mem.add("kept note", user_id="u", agent_id="a")
    [pinned] = mem.add("pinned note", user_id="u", agent_id="a", pinned=True)
    [archived] = mem.add("archived note", user_id="u", agent_id="a")
    [temp] = mem.add("temporary note", user_id="u", agent_id="a", session_id="s",
                     session_only=True)  # fmt: skip
    [mine_b] = mem.add("agent b note", user_id="u", agent_id="b")
    mem.archive(archived.id, user_id="u")
    store = mem.store
    active = store.active_records(Scope("u", agent_id="a"), now=clock(), lifecycle=mem.lifecycle)
    assert [r.id for r in active] == sorted([kept.id, pinned.id, temp.id])
    page: list[str] = []
    last: str | None = None
    while batch := store.current_records_page("u", after=last, limit=2):
        page += [r.id for r in batch]
        last = batch[-1].id
    assert page == sorted([kept.id, pinned.id, mine_b.id])  # no archived, no session-only


def test_the_maintenance_statements(mem: Memory, clock: Any) -> None:
    store, lifecycle, now = mem.store, mem.lifecycle, clock()
    soon = now + timedelta(hours=1)
    [due] = mem.add("old locker code", user_id="u", expires_at=soon)
    [held] = mem.add("pinned locker code", user_id="u", expires_at=soon, pinned=True)
    [live] = mem.add("a lasting note", user_id="u", importance=0.05, timestamp="2020-01-01")
    [other] = mem.add("someone else's code", user_id="v", expires_at=soon)
    later = now + timedelta(days=1)
    assert store.expired_ids("u", now, lifecycle) == []
    assert store.expired_ids("u", later, lifecycle) == [due.id]  # pinned never expires
    deleted = store.transact(
        lambda t: store.delete_expired(t, "u", [due.id, held.id, live.id, other.id], later,
                                       lifecycle)
    )  # fmt: skip
    assert deleted == [due.id]
    assert store.expired_ids("v", later, lifecycle) == [other.id]
    # Decay's candidates: unpinned, low importance, old enough.
    found = store.forget_candidates("u", below_importance=0.1, happened_before=now)
    assert [r.id for r in found] == [live.id]
    assert store.forget_candidates("u", below_importance=0.01, happened_before=now) == []
    # Deleted only while unchanged: a record pinned since it was read stays.
    [kept] = mem.add("pinned since", user_id="u")
    read = store.records_by_id([live.id, kept.id])
    mem.pin(kept.id, user_id="u")
    assert store.transact(lambda t: store.delete_unchanged(t, "u", read)) == [live.id]
    assert store.transact(lambda t: store.delete_unchanged(t, "v", read)) == []


def test_delete_purge_due(mem: Memory, clock: Any) -> None:
    store = mem.store
    [old] = mem.add("archived long ago", user_id="u")
    [new] = mem.add("archived just now", user_id="u")
    mem.archive(old.id, user_id="u")
    cut = clock.advance(days=5)
    clock.advance(days=5)
    mem.archive(new.id, user_id="u")
    ids = [old.id, new.id]

    def purge(user_id: str, before: Any) -> list[str]:
        return store.transact(
            lambda t: store.delete_purge_due(
                t, user_id, ids, merged=False, merged_before=None, archived_before=before
            )
        )

    assert purge("u", None) == []  # purging off
    assert purge("v", cut) == []  # another user's ids
    assert purge("u", cut) == [old.id]  # archived at or before the cut
    assert [r.id for r in store.records_by_id(ids)] == [new.id]


def test_scope_where_needs_the_stores_compiler_for_a_filter() -> None:
    assert scope_where(Scope("u", agent_id="a", kinds=("episodic",))) == (
        "agent_id = ? AND kind IN (?)",
        ["a", "episodic"],
    )
    with pytest.raises(ValueError, match="compile_filter"):
        scope_where(Scope("u", filter=parse_filter({"city": "Porto"})))
    sql, params = scope_where(
        Scope("u", filter=parse_filter({"city": "Porto"})), "m.", lambda f, p: (f"{p}x = ?", [1])
    )
    assert (sql, params) == ("(m.x = ?)", [1])
