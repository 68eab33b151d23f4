"""The Mem0 importer (:mod:`mnemolayer.privacy.mem0`) on a real in-memory store: the
shapes mem0ai 2.2 writes (its OSS ``get_all`` item: ``metadata`` null, promoted ``role``;
the platform's: ``categories``, ``app_id``, a paginated envelope), ids and times kept,
idempotence, and one error per malformed item naming its field."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from mnemolayer import Memory
from mnemolayer.errors import ValidationError
from mnemolayer.privacy.mem0 import MEM0_KEY, Mem0ImportError, import_mem0

#: An item as mem0's OSS ``Memory.get_all`` returns it (mem0/memory/main.py).
OSS = {
    "id": "5519ac6a-7c80-42dd-8254-4b48fba782de", "memory": "I am vegan",
    "hash": "9281b1e164c2e8a0baae0677b8f0bca0", "metadata": None,
    "created_at": "2024-07-20T10:00:00.123456-07:00",
    "updated_at": "2024-07-21T09:30:00+00:00", "user_id": "ana", "role": "user",
}  # fmt: skip
#: An item as the platform's ``MemoryClient.get_all`` answers it.
PLATFORM = {
    "id": "0b7f4c58-0d1b-4d2e-9a53-1c1c2f6f3a10", "memory": "Plays tennis on weekends",
    "user_id": "ana", "agent_id": "coach", "app_id": "fitness", "run_id": "week-3",
    "metadata": {"source": "onboarding"}, "categories": ["sports", "hobbies"],
    "created_at": "2024-08-01T08:00:00Z", "updated_at": "2024-08-01T08:00:00Z",
    "expiration_date": "2030-01-01", "hash": "x",
}  # fmt: skip
HISTORY = {
    OSS["id"]: [
        {"id": "b98d33fb-9e87-46ba-be70-254679680083", "memory_id": OSS["id"],
         "old_memory": None, "new_memory": "I am vegetarian", "event": "ADD",
         "created_at": "2024-07-20T10:00:00.123456-07:00",
         "updated_at": "2024-07-20T10:00:00.123456-07:00", "is_deleted": False,
         "actor_id": None, "role": "user"},
        {"id": "0f468d9d-a0ac-431f-976c-846b5a9be322", "memory_id": OSS["id"],
         "old_memory": "I am vegetarian", "new_memory": "I am vegan", "event": "UPDATE",
         "created_at": "2024-07-20T10:00:00.123456-07:00",
         "updated_at": "2024-07-21T09:30:00+00:00", "is_deleted": False,
         "actor_id": None, "role": "user"},
    ]
}  # fmt: skip


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory(":memory:", embedder="hashing") as m:
        yield m


def test_ids_scopes_metadata_and_times_are_kept(mem: Memory) -> None:
    report = import_mem0(mem, {"count": 2, "next": None, "results": [OSS, PLATFORM]}, HISTORY)
    assert report.model_dump() == {
        "imported": 2, "skipped": 0, "history_imported": 2, "errors": []
    }  # fmt: skip
    vegan = mem.get(OSS["id"])
    assert (vegan.user_id, vegan.content, vegan.role, vegan.metadata) == (
        "ana", "I am vegan", "user", {}
    )  # fmt: skip
    assert vegan.created_at == vegan.occurred_at == datetime(2024, 7, 20, 17, 0, 0, 123456, UTC)
    assert vegan.updated_at == datetime(2024, 7, 21, 9, 30, tzinfo=UTC)
    tennis = mem.get(PLATFORM["id"])
    assert (tennis.agent_id, tennis.session_id) == ("coach", "week-3")
    assert tennis.metadata == {
        "source": "onboarding",
        MEM0_KEY: {"app_id": "fitness", "categories": ["sports", "hobbies"]},
    }
    assert tennis.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    trail = mem.history(OSS["id"])
    assert [(e.event, e.old_content, e.new_content) for e in trail] == [
        ("ADD", None, "I am vegetarian"),
        ("UPDATE", "I am vegetarian", "I am vegan"),
    ]
    assert [h.id for h in mem.search("tennis", user_id="ana", limit=1)] == [PLATFORM["id"]]


def test_importing_twice_changes_nothing(mem: Memory) -> None:
    import_mem0(mem, [OSS], HISTORY)
    again = import_mem0(mem, [OSS], HISTORY)
    assert (again.imported, again.skipped, again.history_imported) == (0, 1, 0)
    assert len(mem.history(OSS["id"])) == 2
    assert len(mem.list(user_id="ana")) == 1


def test_json_text_and_a_flat_history_list_are_read(mem: Memory) -> None:
    import json

    report = import_mem0(mem, json.dumps([OSS]), json.dumps(HISTORY[OSS["id"]]))
    assert (report.imported, report.history_imported) == (1, 2)


def test_malformed_items_are_reported_by_field_and_the_rest_imported(mem: Memory) -> None:
    bad = [
        {"id": "has space", "memory": "x", "user_id": "u"},
        {"memory": "no id", "user_id": "u"},
        {"id": "m1", "memory": 3, "user_id": "u"},
        {"id": "m2", "memory": "agent only", "agent_id": "a"},
        {"id": "m3", "memory": "bad time", "user_id": "u", "created_at": "yesterday"},
        {"id": "m4", "memory": "bad role", "user_id": "u", "role": "robot"},
        {**OSS},
        {**OSS, "memory": "the same id again"},
    ]
    report = import_mem0(mem, {"results": bad}, [{**HISTORY[OSS["id"]][0], "event": "MERGE"}])
    assert report.imported == 1
    assert [e.field for e in report.errors] == [
        "export.results[0].id",
        "export.results[1].id",
        "export.results[2].memory",
        "export.results[3].user_id",
        "export.results[4].created_at",
        "export.results[5].role",
        "export.results[7].id",
        "history[0].event",
    ]
    assert all(isinstance(e, Mem0ImportError) and e.message for e in report.errors)


def test_a_default_user_takes_items_without_one(mem: Memory) -> None:
    report = import_mem0(
        mem, [{"id": "m2", "memory": "agent only", "agent_id": "a"}], user_id="ops"
    )
    assert report.imported == 1 and mem.get("m2").user_id == "ops"


def test_history_of_a_memory_not_in_the_export_is_an_error(mem: Memory) -> None:
    report = import_mem0(mem, [], HISTORY)
    assert {e.field for e in report.errors} == {f"history.{OSS['id']}[0].memory_id",
                                                f"history.{OSS['id']}[1].memory_id"}  # fmt: skip


@pytest.mark.parametrize(
    ("export", "field"),
    [({"memories": []}, "export"), ({"results": {}}, "export.results"), (7, "export"),
     ("{not json", "export")],
)  # fmt: skip
def test_an_export_of_neither_shape_is_refused(mem: Memory, export: object, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        import_mem0(mem, export)
    assert info.value.field == field
    assert len(mem.list(user_id="ana")) == 0
