"""The hooks of the store (mnemolayer.store.core.StoreCore) that callers outside store/
use instead of branching on the engine: metadata filters and erasure. Each runs on both
engines and is checked by what it does, not by the SQL it writes."""

from __future__ import annotations

from typing import Any

from filter_cases import check_filters as _check_filters
from filter_cases import fill as _fill
from mnemolayer import Memory
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
