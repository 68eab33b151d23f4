"""The public API: what ``mnemolayer`` exports and what each ``Memory`` call does, on a real
SQLite file with the deterministic hashing embedder."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

import mnemolayer
from mnemolayer import AsyncMemory, Memory
from mnemolayer.config import default_db_path
from mnemolayer.errors import (
    MnemolayerError,
    MnemolayerRuntimeError,
    NotFoundError,
    ScopeRequiredError,
    UsageError,
    ValidationError,
)
from mnemolayer.models import HistoryEvent, MemoryPage, MemoryRecord, Message

EXPECTED_EXPORTS = {
    "AddResult",
    "AsyncMemory",
    "DeletionReceipt",
    "EmbedderError",
    "EmbedderUnavailableError",
    "ForgetReceipt",
    "EmbeddingModelMismatchError",
    "Hit",
    "HistoryEvent",
    "MarkdownImport",
    "Memory",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "MissingExtraError",
    "MnemolayerError",
    "MnemolayerRuntimeError",
    "Message",
    "NotFoundError",
    "RetrievalConfig",
    "ScopeRequiredError",
    "SessionEnd",
    "SkippedMessage",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
}


# -- exported names -----------------------------------------------------------------------


def test_all_is_exactly_the_public_api() -> None:
    assert set(mnemolayer.__all__) == EXPECTED_EXPORTS
    assert len(mnemolayer.__all__) == len(EXPECTED_EXPORTS), "duplicate names in __all__"


def test_every_public_attribute_is_exported_and_every_export_exists() -> None:
    public = {
        name
        for name, value in vars(mnemolayer).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public == set(mnemolayer.__all__)
    for name in mnemolayer.__all__:
        assert getattr(mnemolayer, name).__module__.startswith("mnemolayer.")


def test_every_error_has_one_root_and_usage_is_apart_from_runtime() -> None:
    errors = [getattr(mnemolayer, n) for n in mnemolayer.__all__ if n.endswith("Error")]
    for err in errors:
        assert issubclass(err, MnemolayerError), err
        if err is MnemolayerError:
            continue
        assert issubclass(err, UsageError) != issubclass(err, MnemolayerRuntimeError), err


# -- the test guards from conftest ---------------------------------------------------------


def test_default_store_lives_under_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp().resolve()
    assert default_db_path().resolve().is_relative_to(base)
    assert Path.cwd().resolve().is_relative_to(base)


def test_network_is_blocked_but_loopback_is_not() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s,
        pytest.raises(OSError, match="blocked"),
    ):
        s.connect(("203.0.113.7", 443))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.connect(server.getsockname())


# -- add / get ------------------------------------------------------------------------------


def test_add_returns_the_stored_record(mem: Memory, clock: Any) -> None:
    [rec] = mem.add(
        "I moved to Porto",
        user_id="alice",
        agent_id="travel-bot",
        session_id="s1",
        metadata={"topic": "home", "tags": ["move"]},
        importance=0.8,
    )
    assert isinstance(rec, MemoryRecord)
    assert (rec.user_id, rec.agent_id, rec.session_id) == ("alice", "travel-bot", "s1")
    assert rec.content == "I moved to Porto"
    assert rec.role == "user"
    assert rec.metadata == {"topic": "home", "tags": ["move"]}
    assert rec.importance == 0.8
    assert rec.created_at == rec.updated_at == rec.occurred_at == clock.now
    assert rec.embedding_model == "hashing-v1/256"
    assert mem.get(rec.id) == rec
    assert mem.get(rec.id, user_id="alice") == rec


def test_get_is_scoped_to_the_user(mem: Memory) -> None:
    [rec] = mem.add("I moved to Porto", user_id="alice")
    with pytest.raises(NotFoundError, match="memory_id"):
        mem.get(rec.id, user_id="bob")
    with pytest.raises(NotFoundError):
        mem.get("0" * 32)
    with pytest.raises(ValidationError) as err:
        mem.get("not an id!")
    assert err.value.field == "memory_id"


def test_metadata_given_to_add_is_copied(mem: Memory) -> None:
    meta: dict[str, Any] = {"tags": ["a"]}
    [rec] = mem.add("I moved to Porto", user_id="alice", metadata=meta)
    meta["tags"].append("b")
    assert mem.get(rec.id).metadata == {"tags": ["a"]}


# -- search ---------------------------------------------------------------------------------


def test_search_finds_the_matching_memory_first(mem: Memory) -> None:
    mem.add(["I moved to Porto last spring", "My sister plays the cello"], user_id="alice")
    hits = mem.search("cello", user_id="alice")
    assert hits[0].content == "My sister plays the cello"
    assert hits[0].id == hits[0].memory.id
    assert {"relevance", "final"} <= hits[0].scores.keys()
    assert hits[0].score == hits[0].scores["final"]


def test_search_never_returns_another_users_memories(mem: Memory) -> None:
    mem.add("I moved to Porto", user_id="alice")
    [bob] = mem.add("I moved to Lisbon", user_id="bob")
    for mode in ("hybrid", "vector", "keyword"):
        hits = mem.search("moved", user_id="bob", mode=mode)  # type: ignore[arg-type]
        assert [h.id for h in hits] == [bob.id]


def test_search_limit_caps_the_hits(mem: Memory) -> None:
    mem.add([f"note {i} about tea" for i in range(5)], user_id="alice")
    assert len(mem.search("tea", user_id="alice", limit=2)) == 2
    assert len(mem.search("tea", user_id="alice", limit=100)) == 5


def test_limit_zero_returns_nothing(mem: Memory) -> None:
    mem.add("I moved to Porto", user_id="alice")
    assert mem.search("Porto", user_id="alice", limit=0) == []
    page = mem.list(user_id="alice", limit=0)
    assert page.items == [] and page.next_cursor is None


@pytest.mark.parametrize("limit", [-1, 1.5, 2.0, True, False, "3", None])
def test_bad_limits_are_rejected_naming_limit(mem: Memory, limit: Any) -> None:
    mem.add("I moved to Porto", user_id="alice")
    for call in (
        lambda: mem.search("Porto", user_id="alice", limit=limit),
        lambda: mem.list(user_id="alice", limit=limit),
    ):
        with pytest.raises(ValidationError, match="limit") as err:
            call()
        assert err.value.field == "limit"


def test_search_needs_a_user(mem: Memory) -> None:
    mem.add("I moved to Porto", user_id="alice")
    with pytest.raises(TypeError):
        mem.search("Porto")  # type: ignore[call-arg]
    with pytest.raises(ScopeRequiredError, match="user_id"):
        mem.search("Porto", user_id=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as err:
        mem.search("Porto", user_id="  ")
    assert err.value.field == "user_id"
    with pytest.raises(ScopeRequiredError, match="user_id"):
        mem.list(user_id=None)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["semantic", "", None, "HYBRID"])
def test_unknown_search_mode_is_rejected(mem: Memory, mode: Any) -> None:
    with pytest.raises(ValidationError) as err:
        mem.search("Porto", user_id="alice", mode=mode)
    assert err.value.field == "mode"


# -- list -----------------------------------------------------------------------------------


def test_list_pages_through_every_record_once_in_insertion_order(mem: Memory, clock: Any) -> None:
    added = []
    for i in range(25):
        clock.advance(seconds=1)
        added += mem.add(f"memory number {i}", user_id="alice")
    mem.add("someone else's memory", user_id="bob")

    seen: list[MemoryRecord] = []
    cursor = None
    pages = 0
    while True:
        page = mem.list(user_id="alice", limit=7, cursor=cursor)
        assert isinstance(page, MemoryPage)
        assert len(page) <= 7
        seen += page.items
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 4
    assert [r.id for r in seen] == [r.id for r in added]
    assert [r.content for r in seen] == [f"memory number {i}" for i in range(25)]
    assert list(mem.list(user_id="alice", limit=100)) == seen


def test_list_with_an_exact_multiple_ends_with_an_empty_cursor(mem: Memory) -> None:
    mem.add([f"memory number {i}" for i in range(10)], user_id="alice")
    first = mem.list(user_id="alice", limit=5)
    second = mem.list(user_id="alice", limit=5, cursor=first.next_cursor)
    assert len(first) == len(second) == 5
    assert second.next_cursor is None
    with pytest.raises(ValidationError) as err:
        mem.list(user_id="alice", cursor="' OR 1=1 --")
    assert err.value.field == "cursor"


# -- update / delete / history --------------------------------------------------------------


def test_update_keeps_the_old_version_in_history(mem: Memory, clock: Any) -> None:
    [rec] = mem.add("I live in Porto", user_id="alice", metadata={"v": 1})
    later = clock.advance(days=3)
    new = mem.update(rec.id, content="I live in Lisbon", metadata={"v": 2}, importance=0.9)
    assert new.id == rec.id
    assert (new.content, new.metadata, new.importance) == ("I live in Lisbon", {"v": 2}, 0.9)
    assert new.created_at == rec.created_at
    assert new.updated_at == later
    assert mem.get(rec.id) == new

    history = mem.history(rec.id)
    assert all(isinstance(e, HistoryEvent) for e in history)
    assert [e.event for e in history] == ["ADD", "UPDATE"]
    add, update = history
    assert (add.old_content, add.new_content) == (None, "I live in Porto")
    assert (update.old_content, update.new_content) == ("I live in Porto", "I live in Lisbon")
    assert (update.old_metadata, update.new_metadata) == ({"v": 1}, {"v": 2})
    assert update.created_at == later


def test_update_metadata_only_keeps_content(mem: Memory) -> None:
    [rec] = mem.add("I live in Porto", user_id="alice", metadata={"v": 1})
    new = mem.update(rec.id, metadata={"v": 2})
    assert new.content == "I live in Porto"
    assert mem.search("Porto", user_id="alice", mode="keyword")[0].id == rec.id


def test_update_errors(mem: Memory) -> None:
    [rec] = mem.add("I live in Porto", user_id="alice")
    [other] = mem.add("I like tea", user_id="alice")
    with pytest.raises(ValidationError):
        mem.update(rec.id)
    with pytest.raises(NotFoundError):
        mem.update(rec.id, content="x y z", user_id="bob")
    with pytest.raises(ValidationError) as err:
        mem.update(rec.id, content="I like tea")  # would duplicate `other`
    assert err.value.field == "content"
    assert mem.get(rec.id).content == "I live in Porto"
    assert mem.get(other.id).content == "I like tea"


def test_delete_removes_the_memory_but_keeps_its_history(mem: Memory) -> None:
    [keep, gone] = mem.add(["I like tea", "I like coffee"], user_id="alice")
    mem.delete(gone.id, user_id="alice")
    with pytest.raises(NotFoundError):
        mem.get(gone.id)
    assert [h.id for h in mem.search("coffee", user_id="alice")] == [keep.id]
    assert [e.event for e in mem.history(gone.id)] == ["ADD", "DELETE"]
    with pytest.raises(NotFoundError):
        mem.delete(gone.id)
    with pytest.raises(NotFoundError):
        mem.delete(keep.id, user_id="bob")
    assert mem.get(keep.id).content == "I like tea"


def test_delete_all_is_scoped(mem: Memory) -> None:
    mem.add(["a one", "a two"], user_id="a", session_id="s1")
    [a3] = mem.add("a three", user_id="a", session_id="s2")
    [b1] = mem.add("b one", user_id="b")
    assert mem.delete_all(user_id="a", session_id="s1").memories == 2
    assert [r.id for r in mem.list(user_id="a")] == [a3.id]
    assert [e.event for e in mem.history(a3.id)] == ["ADD"]
    assert mem.delete_all(user_id="a").memories == 1
    assert list(mem.list(user_id="a")) == []
    with pytest.raises(NotFoundError):
        mem.history(a3.id)  # a whole-user wipe takes the user's history too
    assert [r.id for r in mem.list(user_id="b")] == [b1.id]


def test_delete_all_never_means_everything(mem: Memory) -> None:
    mem.add("I like tea", user_id="alice")
    with pytest.raises(TypeError):
        mem.delete_all()  # type: ignore[call-arg]
    with pytest.raises(ScopeRequiredError, match="user_id"):
        mem.delete_all(user_id=None)  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as err:
        mem.delete_all(user_id="")
    assert err.value.field == "user_id"
    assert mem.stats()["memories"] == 1


def test_history_of_an_unknown_id_is_not_found(mem: Memory) -> None:
    [rec] = mem.add("I like tea", user_id="alice")
    with pytest.raises(NotFoundError):
        mem.history("0" * 32)
    with pytest.raises(NotFoundError):
        mem.history(rec.id, user_id="bob")


def test_stats_counts_what_is_stored(mem: Memory, db_path: Path) -> None:
    mem.add(["I like tea", "I like coffee"], user_id="alice")
    mem.add("I like rain", user_id="bob", kind="preference")
    [gone] = mem.add("short-lived", user_id="bob")
    mem.delete(gone.id)
    stats = mem.stats()
    assert stats["memories"] == 3
    assert stats["by_kind"] == {"episodic": 2, "preference": 1}
    assert stats["users"] == 2
    assert stats["vectors"] == 3
    assert stats["history_events"] == 5  # four ADDs and one DELETE
    assert stats["embedding_model"] == "hashing-v1/256"
    assert stats["embedding_dim"] == 256
    assert stats["schema_version"] >= 1
    assert stats["path"] == str(db_path)
    assert stats["bytes"] > 0
    alice = mem.stats(user_id="alice")
    assert (alice["memories"], alice["users"], alice["history_events"]) == (2, 1, 2)


# -- messages -------------------------------------------------------------------------------


def test_messages_become_one_record_each_with_provenance_and_merged_metadata(mem: Memory) -> None:
    records = mem.add(
        [
            {"role": "user", "content": "I bought a red bike", "id": "msg-1",
             "metadata": {"src": "chat", "price": 120}},
            {"role": "assistant", "content": "Red bikes are fast", "id": "msg-2"},
            {"role": "user", "content": "It was a gift", "metadata": {"gift": True}},
        ],
        user_id="alice",
        session_id="s1",
        metadata={"src": "import", "batch": 7},
    )  # fmt: skip
    assert [r.content for r in records] == [
        "I bought a red bike",
        "Red bikes are fast",
        "It was a gift",
    ]
    assert [r.role for r in records] == ["user", "assistant", "user"]
    assert records[0].source_ids == ["msg-1"]
    assert records[1].source_ids == ["msg-2"]
    assert len(records[2].source_ids) == 1 and records[2].source_ids[0] not in ("msg-1", "msg-2")
    assert records[0].metadata == {"src": "chat", "batch": 7, "price": 120}
    assert records[1].metadata == {"src": "import", "batch": 7}
    assert records[2].metadata == {"src": "import", "batch": 7, "gift": True}
    assert len({r.id for r in records}) == 3
    assert [r.id for r in mem.list(user_id="alice")] == [r.id for r in records]
    for r in records:
        assert mem.get(r.id) == r


def test_message_objects_and_per_message_times(mem: Memory) -> None:
    records = mem.add(
        [
            Message(role="user", content="We met in Kyoto", name="Caroline",
                    timestamp="2023-05-08T10:00:00+09:00"),
            Message(role="assistant", content="Kyoto is lovely"),
        ],
        user_id="alice",
        timestamp="2023-05-09T00:00:00Z",
    )  # fmt: skip
    assert records[0].speaker == "Caroline"
    assert records[0].occurred_at is not None and records[1].occurred_at is not None
    assert records[0].occurred_at.isoformat() == "2023-05-08T01:00:00+00:00"
    assert records[1].occurred_at.isoformat() == "2023-05-09T00:00:00+00:00"


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([], "messages"),
        (
            [{"role": "user", "content": "ok"}, {"role": "robot", "content": "hi"}],
            "messages[1].role",
        ),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": "hi", "metadata": {"bad key!": 1}}], "messages[0].metadata"),
        (42, "messages"),
    ],
)
def test_bad_messages_are_rejected_naming_the_field(mem: Memory, messages: Any, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        mem.add(messages, user_id="alice")
    assert err.value.field is not None and err.value.field.startswith(field)
    assert mem.stats()["memories"] == 0


# -- async ----------------------------------------------------------------------------------


async def _async_round_trip(path: Path) -> None:
    async with AsyncMemory(path, embedder="hashing", extractor=None) as am:
        [rec] = await am.add("I moved to Porto", user_id="alice", metadata={"v": 1})
        await am.add(["My sister plays the cello", "I like tea"], user_id="alice")
        hits = await am.search("Porto", user_id="alice")
        assert hits[0].id == rec.id
        got = await am.get(rec.id)
        assert (got.id, got.content, got.metadata) == (rec.id, rec.content, rec.metadata)
        assert got.access_count == 1  # the search above counted as an access
        page = await am.list(user_id="alice", limit=2)
        assert page.items[0].id == rec.id and page.next_cursor is not None
        new = await am.update(rec.id, content="I moved to Lisbon")
        assert new.content == "I moved to Lisbon"
        assert [e.event for e in await am.history(rec.id)] == ["ADD", "UPDATE"]
        await am.delete(rec.id)
        with pytest.raises(NotFoundError):
            await am.get(rec.id)
        assert (await am.stats())["memories"] == 2
        with pytest.raises(ValidationError):
            await am.search("   ", user_id="alice")
        rows = await am.export()
        assert sum(r["type"] == "memory" for r in rows) == 2
        assert (await am.delete_all(user_id="alice")).memories == 2


def test_async_memory_round_trip_under_asyncio(db_path: Path) -> None:
    asyncio.run(_async_round_trip(db_path))
    with Memory(db_path, embedder="hashing") as mem:
        assert mem.stats()["memories"] == 0


def test_async_memory_round_trip_under_anyio(db_path: Path) -> None:
    anyio.run(_async_round_trip, db_path)


def test_async_memory_runs_calls_concurrently(db_path: Path) -> None:
    async def main() -> set[str]:
        async with AsyncMemory(db_path, embedder="hashing") as am:
            results: list[Any] = []

            async def add(i: int) -> None:
                results.extend(await am.add(f"fact number {i}", user_id="alice"))

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(add, i)
            listed = await am.list(user_id="alice")
            assert {r.id for r in listed} == {r.id for r in results}
            return {r.content for r in listed}

    assert anyio.run(main) == {f"fact number {i}" for i in range(20)}
