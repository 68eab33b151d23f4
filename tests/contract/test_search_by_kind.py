"""A search narrowed by kind (``kinds=[...]``) returns records of those kinds only, in
every mode, and follows the store: a record added, deleted, archived or expired since the
last search counts at once (recall keeps the user's records by kind in process, read
again when the user's generation changes)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mnemolayer import Memory
from mnemolayer.testing import FakeClock

MODES = ["hybrid", "vector", "keyword"]


def _kinds(mem: Memory, query: str, kinds: list[str], mode: str) -> set[str]:
    return {h.memory.kind for h in mem.search(query, user_id="u", kinds=kinds, mode=mode)}


def _ids(mem: Memory, query: str, kinds: list[str], mode: str = "hybrid") -> set[str]:
    return {h.memory.id for h in mem.search(query, user_id="u", kinds=kinds, mode=mode)}


@pytest.mark.parametrize("mode", MODES)
def test_only_the_kinds_asked_for_are_returned(smem: Memory, mode: str) -> None:
    smem.add("I live in Lisbon with my sister.", user_id="u")
    smem.add("We talked about Lisbon and the river.", user_id="u", kind="procedural")
    assert _kinds(smem, "Lisbon", ["semantic"], mode) == {"semantic"}
    assert _kinds(smem, "Lisbon", ["episodic"], mode) == {"episodic"}
    assert _kinds(smem, "Lisbon", ["procedural"], mode) == {"procedural"}
    assert _kinds(smem, "Lisbon", ["episodic", "procedural"], mode) == {"episodic", "procedural"}
    assert _kinds(smem, "Lisbon", ["preference"], mode) == set()


def test_records_added_and_deleted_since_the_last_search_count(mem: Memory) -> None:
    first = mem.add("The red bike is in the garage.", user_id="u")[0]
    assert _ids(mem, "red bike", ["episodic"]) == {first.id}
    second = mem.add("I sold the red bike yesterday.", user_id="u")[0]
    assert _ids(mem, "red bike", ["episodic"]) == {first.id, second.id}
    mem.delete(first.id, user_id="u")
    assert _ids(mem, "red bike", ["episodic"]) == {second.id}
    # Another user's records of the same kind never join.
    mem.add("My red bike is blue now.", user_id="other")
    assert _ids(mem, "red bike", ["episodic"]) == {second.id}


@pytest.mark.parametrize("mode", MODES)
def test_archived_and_expired_records_stay_out(mem: Memory, clock: FakeClock, mode: str) -> None:
    kept = mem.add("The garden gate is green.", user_id="u")[0]
    archived = mem.add("The garden shed is green.", user_id="u")[0]
    fleeting = mem.add(
        "The garden bench is green.", user_id="u", expires_at=clock.now + timedelta(hours=1)
    )[0]
    assert _ids(mem, "green garden", ["episodic"], mode) == {kept.id, archived.id, fleeting.id}
    mem.archive(archived.id, user_id="u")
    assert _ids(mem, "green garden", ["episodic"], mode) == {kept.id, fleeting.id}
    clock.advance(hours=2)
    assert _ids(mem, "green garden", ["episodic"], mode) == {kept.id}
    mem.restore(archived.id, user_id="u")
    assert _ids(mem, "green garden", ["episodic"], mode) == {kept.id, archived.id}
