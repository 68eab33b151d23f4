"""Export → import into a new file round-trips exactly; importing again changes nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import AsyncMemory, Memory, NotFoundError, ValidationError
from mnemolayer.embed import HashingEmbedder
from mnemolayer.privacy.export import EXPORT_VERSION


@pytest.fixture
def mem(smem: Memory) -> Memory:
    """This file tests the product default: facts are extracted."""
    return smem


def memories(rows: list[dict[str, Any]]) -> int:
    return sum(1 for r in rows if r["type"] == "memory")


def populate(mem: Memory, clock: Any) -> dict[str, Any]:
    """A store with two users, every kind of field set, an update, a delete and accesses."""
    made: dict[str, Any] = {}
    made["chat"] = mem.add(
        [
            {"role": "user", "content": "I bought a red bike 🚲", "id": "m-1", "name": "Ana",
             "timestamp": "2024-03-01T09:30:00+09:00", "metadata": {"price": 120}},
            {"role": "assistant", "content": "Red bikes are fast", "id": "m-2"},
        ],
        user_id="ana",
        agent_id="shop-bot",
        session_id="s1",
        metadata={"src": "chat", "tags": ["sport", "bike"], "nested": {"a": [1, 2.5, None]}},
    )  # fmt: skip
    clock.advance(hours=2)
    made["pref"] = mem.add(
        "Ana prefers green tea to coffee", user_id="ana", kind="preference", importance=0.9
    )[0]
    made["zh"] = mem.add("我每天早上喝榛子拿铁", user_id="ana", session_id="s2")[0]
    made["bob"] = mem.add("Bob lives in Porto", user_id="bob", timestamp="2023-12-31T23:00:00Z")[0]
    clock.advance(days=1)
    made["updated"] = mem.update(made["pref"].id, content="Ana prefers jasmine tea", importance=0.7)
    made["gone"] = mem.add("a memory that will be deleted", user_id="ana")[0]
    clock.advance(minutes=5)
    mem.delete(made["gone"].id)
    mem.search("tea", user_id="ana")  # access counts and times are part of the record
    return made


def export_jsonl(mem: Memory, path: Path, **kwargs: Any) -> list[dict[str, Any]]:
    rows = list(mem.export(**kwargs))
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return rows


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.fixture
def source(mem: Memory, clock: Any) -> Memory:
    populate(mem, clock)
    return mem


def test_export_rows_have_a_header_memories_and_history(source: Memory) -> None:
    rows = list(source.export())
    assert rows[0] == {
        "type": "header",
        "format": "mnemolayer-export",
        "version": EXPORT_VERSION,
        "embedding_model": "hashing-v1/256",
    }
    kinds = [r["type"] for r in rows[1:]]
    assert kinds == sorted(kinds, key=["memory", "entity", "fact", "session", "history"].index)
    assert "session" not in kinds  # no windows in this store
    # 5 messages and notes, plus the sentence record of each extracted fact.
    facts = [r for r in rows if r["type"] == "fact"]
    assert kinds.count("memory") == 5 + len(facts) and len(facts) >= 2
    assert {("Bob", "lives_in", "Porto")} <= {
        (f["subject"], f["predicate"], f["object"]) for f in facts
    }
    assert [r["event"] for r in rows if r["type"] == "history"].count("DELETE") == 1
    json.dumps(rows)  # JSON-ready as it is


def test_the_docs_name_the_version_export_writes() -> None:
    """Memory.export's docstring and the user docs say the version the header carries."""
    written = f'"version": {EXPORT_VERSION}'
    assert written in (Memory.export.__doc__ or "")
    docs = Path(__file__).resolve().parents[2] / "docs"
    assert f"format version {EXPORT_VERSION}" in (docs / "cli.md").read_text(encoding="utf-8")
    privacy = (docs / "privacy.md").read_text(encoding="utf-8")
    assert f"(version {EXPORT_VERSION}; 1–{EXPORT_VERSION - 1} are still read)" in privacy


def test_export_then_import_into_a_new_file_round_trips_exactly(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    original = export_jsonl(source, tmp_path / "dump.jsonl")
    with Memory(new_db("copy"), embedder="hashing") as copy:
        assert copy.import_rows(read_jsonl(tmp_path / "dump.jsonl")) == memories(original)
        assert list(copy.export()) == original
        for user in ("ana", "bob"):  # the knowledge graph came along
            assert copy.facts(user_id=user, include_history=True) == source.facts(
                user_id=user, include_history=True
            )
            assert copy.profile(user_id=user) == source.profile(user_id=user)

        for user in ("ana", "bob"):
            assert list(copy.list(user_id=user)) == list(source.list(user_id=user))
            for rec in source.list(user_id=user):
                assert copy.get(rec.id) == rec
                assert copy.history(rec.id) == source.history(rec.id)
        gone = next(r for r in original if r["type"] == "history" and r["event"] == "DELETE")
        assert copy.history(gone["memory_id"]) == source.history(gone["memory_id"])
        with pytest.raises(NotFoundError):
            copy.get(gone["memory_id"])
        assert copy.stats()["history_events"] == source.stats()["history_events"]


def test_the_imported_store_searches_like_the_original(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path, clock: Any
) -> None:
    # The same clock as the source: retention (a ranking signal) depends on "now".
    with Memory(new_db("copy"), embedder="hashing", clock=clock) as copy:
        copy.import_rows(source.export())
        for query in ("jasmine tea", "红 拿铁", "bike", "Porto"):
            for mode in ("hybrid", "vector", "keyword"):
                for user in ("ana", "bob"):
                    a = source.search(query, user_id=user, mode=mode)  # type: ignore[arg-type]
                    b = copy.search(query, user_id=user, mode=mode)  # type: ignore[arg-type]
                    assert [h.id for h in b] == [h.id for h in a], (query, mode, user)
        assert [h.content for h in copy.search("拿铁", user_id="ana", mode="keyword")] == [
            "我每天早上喝榛子拿铁"
        ]


def test_importing_twice_changes_nothing(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export())
    with Memory(new_db("copy"), embedder="hashing") as copy:
        assert copy.import_rows(rows) == memories(rows)
        first = list(copy.export())
        stats = copy.stats()
        assert copy.import_rows(rows) == 0
        assert list(copy.export()) == first
        assert {k: v for k, v in copy.stats().items() if k != "bytes"} == {
            k: v for k, v in stats.items() if k != "bytes"
        }
    assert source.import_rows(rows) == 0  # into the store it came from
    assert list(source.export()) == rows


def test_one_users_export_imports_only_that_user(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = export_jsonl(source, tmp_path / "bob.jsonl", user_id="bob")
    assert {r["user_id"] for r in rows if r["type"] != "header"} == {"bob"}
    with Memory(new_db("copy"), embedder="hashing") as copy:
        assert copy.import_rows(read_jsonl(tmp_path / "bob.jsonl")) == memories(rows) == 2
        assert list(copy.export()) == rows
        assert list(copy.list(user_id="ana")) == []


def test_import_with_another_model_re_embeds(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export())
    with Memory(new_db("copy"), embedder=HashingEmbedder(dim=64)) as copy:
        assert copy.import_rows(rows) == memories(rows)
        for rec in copy.list(user_id="ana"):
            assert rec.embedding_model == "hashing-v1/64"
        strip = [{k: v for k, v in r.items() if k != "embedding_model"} for r in rows]
        again = [{k: v for k, v in r.items() if k != "embedding_model"} for r in copy.export()]
        assert again == strip
        got = copy.search("Ana prefers jasmine tea", user_id="ana", mode="vector")
        assert got[0].content == "Ana prefers jasmine tea"


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"type": "memo"}, "rows[1].type"),
        ({"type": "memory", "id": "x"}, "rows[1]."),
        ("not a row", "rows[1].type"),
    ],
)
def test_a_malformed_row_is_rejected_and_nothing_is_written(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path, bad: Any, field: str
) -> None:
    rows = list(source.export())
    with Memory(new_db("copy"), embedder="hashing") as copy:
        with pytest.raises(ValidationError) as err:
            copy.import_rows([rows[0], bad, *rows[1:]])
        assert err.value.field is not None and err.value.field.startswith(field)
        assert copy.stats()["memories"] == 0
        assert copy.stats()["history_events"] == 0


def test_a_row_with_blank_content_is_rejected(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export())
    memory = next(i for i, r in enumerate(rows) if r["type"] == "memory")
    rows[memory] = {**rows[memory], "content": "   "}
    with Memory(new_db("copy"), embedder="hashing") as copy:
        with pytest.raises(ValidationError) as err:
            copy.import_rows(rows)
        assert err.value.field == f"rows[{memory}].content"
        assert copy.stats()["memories"] == 0


def test_times_survive_the_round_trip_as_utc(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export())
    with Memory(new_db("copy"), embedder="hashing") as copy:
        copy.import_rows(rows)
        [bike, _reply, *_] = copy.list(user_id="ana")
        assert bike.occurred_at is not None
        assert bike.occurred_at.isoformat() == "2024-03-01T00:30:00+00:00"
        assert bike.occurred_at.utcoffset() == timedelta(0)
        assert bike.created_at == source.get(bike.id).created_at


def test_async_export_import_round_trip(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export())

    async def main() -> list[dict[str, Any]]:
        async with AsyncMemory(new_db("copy"), embedder="hashing") as copy:
            assert await copy.import_rows(rows) == memories(rows)
            assert await copy.import_rows(rows) == 0
            return await copy.export()

    assert asyncio.run(main()) == rows


def test_a_skipped_duplicate_brings_no_orphan_history(
    new_db: Callable[[str], Any], source: Memory, tmp_path: Path
) -> None:
    rows = list(source.export(user_id="bob"))
    [bob] = [r for r in rows if r["type"] == "memory" and r["kind"] == "episodic"]
    with Memory(new_db("copy"), embedder="hashing") as copy:
        [mine] = copy.add(bob["content"], user_id="bob", timestamp=bob["occurred_at"])
        before = [r.id for r in copy.list(user_id="bob")]
        assert mine.id != bob["id"]
        # The same content is already there, and so is the fact drawn from it.
        assert copy.import_rows(rows) == 0
        assert [r.id for r in copy.list(user_id="bob")] == before
        assert len(copy.facts(user_id="bob")) == 1
        with pytest.raises(NotFoundError):
            copy.history(bob["id"])


# -- working-memory windows and session-only memories -----------------------------------


def populate_sessions(mem: Memory, clock: Any) -> None:
    """Windows of two users (one compacted, with a pin; one of an agent) and a
    session-only memory."""
    wm = mem.working(session_id="s1", user_id="ana", budget_tokens=120)
    pinned = wm.add("system", "You are Ana's cycling coach.", pin=True)
    for i in range(8):
        clock.advance(minutes=1)
        wm.add("user", f"Ride {i}: 40 km with Marta on the coast road, average 25 km/h.")
        wm.add("assistant", f"Logged ride {i}.")
    assert wm.evicted_count > 0 and wm.summary and pinned.id in [m.id for m in wm.window()]
    bot = mem.working(session_id="s9", user_id="bob", agent_id="helper", budget_tokens=500)
    bot.add("user", "Remind me to call the plumber on Friday at 9.")
    # A whole-store export finds users by what the file holds; a Redis session store
    # cannot list its users, so bob needs a memory for his window to be exported.
    mem.add("Bob lives in Porto", user_id="bob")
    mem.add("My gym locker code is 4711", user_id="ana", session_id="s1", session_only=True)


def windows(mem: Memory, user: str) -> list[Any]:
    infos = sorted(mem.list_sessions(user), key=lambda i: (i.session_id, i.agent_id or ""))
    return [mem.sessions.load(user, i.session_id, i.agent_id) for i in infos]


def test_windows_and_session_only_memories_round_trip(
    new_db: Callable[[str], Any], wsmem: Memory, clock: Any, tmp_path: Path
) -> None:
    populate_sessions(wsmem, clock)
    rows = export_jsonl(wsmem, tmp_path / "dump.jsonl")
    sessions = [r for r in rows if r["type"] == "session"]
    assert [(r["user_id"], r["session_id"], r["agent_id"]) for r in sessions] == [
        ("ana", "s1", None),
        ("bob", "s9", "helper"),
    ]
    assert sessions[0]["messages"][0]["pinned"] is True
    [temp] = [r for r in rows if r["type"] == "memory" and r["session_only"]]
    assert temp["content"] == "My gym locker code is 4711"
    with Memory(new_db("copy"), embedder="hashing") as copy:
        copy.import_rows(read_jsonl(tmp_path / "dump.jsonl"))
        assert list(copy.export()) == rows
        for user in ("ana", "bob"):
            assert windows(copy, user) == windows(wsmem, user)  # ids, pins, summary, counters
        assert copy.get(temp["id"]).session_only
        # The restored window resumes exactly and ends like the original.
        resumed = copy.working(session_id="s1", user_id="ana", budget_tokens=120)
        original = wsmem.working(session_id="s1", user_id="ana", budget_tokens=120)
        assert resumed.messages() == original.messages()
        assert resumed.tokens == original.tokens
        assert copy.end_session("s1", "ana").cleared == 1


def test_export_delete_all_import_brings_a_users_windows_back(
    wsmem: Memory, clock: Any, tmp_path: Path
) -> None:
    populate_sessions(wsmem, clock)
    before = windows(wsmem, "ana")
    rows = list(wsmem.export(user_id="ana"))
    wsmem.delete_all(user_id="ana")
    assert wsmem.list_sessions("ana") == [] and len(windows(wsmem, "bob")) == 1
    wsmem.import_rows(rows)
    assert windows(wsmem, "ana") == before
    assert list(wsmem.export(user_id="ana")) == rows


def test_importing_skips_a_window_that_exists(
    new_db: Callable[[str], Any], smem: Memory, clock: Any, tmp_path: Path
) -> None:
    populate_sessions(smem, clock)
    rows = list(smem.export())
    with Memory(new_db("copy"), embedder="hashing") as copy:
        mine = copy.working(session_id="s1", user_id="ana", budget_tokens=300)
        mine.add("user", "A different conversation.")
        kept = windows(copy, "ana")
        copy.import_rows(rows)
        assert windows(copy, "ana") == kept
        assert windows(copy, "bob") == windows(smem, "bob")
        copy.import_rows(rows)  # twice: still nothing changes
        assert windows(copy, "ana") == kept


def test_a_version_2_file_is_still_read(
    new_db: Callable[[str], Any], smem: Memory, clock: Any, tmp_path: Path
) -> None:
    populate(smem, clock)
    rows = [{k: v for k, v in r.items() if k != "session_only"} for r in smem.export()]
    rows[0]["version"] = 2
    with Memory(new_db("copy"), embedder="hashing") as copy:
        assert copy.import_rows(rows) == memories(rows)
        assert not any(r.session_only for r in copy.list(user_id="ana"))
        assert [r for r in copy.export() if r["type"] != "header"] == [
            {**r, "session_only": False} if r["type"] == "memory" else r for r in rows[1:]
        ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"budget_tokens": 10}, "budget_tokens"),
        ({"encoding": "no-such-encoding"}, "encoding"),
        ({"session_id": " "}, "session_id"),
        ({"evicted_count": -1}, "evicted_count"),
        ({"messages": [{"id": "m1", "role": "robot", "content": "hi",
                        "created_at": "2024-05-08T12:00:00+00:00"}]}, "messages[0].role"),
        ({"messages": [{"id": "m1", "role": "user", "content": "  ",
                        "created_at": "2024-05-08T12:00:00+00:00"}]}, "messages[0].content"),
        ({"unknown": 1}, "unknown"),
    ],
)  # fmt: skip
def test_a_malformed_session_row_is_rejected_and_nothing_is_written(
    new_db: Callable[[str], Any],
    smem: Memory,
    clock: Any,
    tmp_path: Path,
    change: dict[str, Any],
    field: str,
) -> None:
    populate_sessions(smem, clock)
    rows = list(smem.export())
    n = next(i for i, r in enumerate(rows) if r["type"] == "session")
    rows[n] = {**rows[n], **change}
    with Memory(new_db("copy"), embedder="hashing") as copy:
        with pytest.raises(ValidationError) as err:
            copy.import_rows(rows)
        assert err.value.field == f"rows[{n}].{field}"
        assert copy.stats()["memories"] == 0
        assert copy.list_sessions("ana") == []


def test_a_session_only_row_without_a_session_is_rejected(
    new_db: Callable[[str], Any], smem: Memory, tmp_path: Path
) -> None:
    smem.add("a note", user_id="ana")
    rows = list(smem.export())
    rows[1] = {**rows[1], "session_only": True}
    with Memory(new_db("copy"), embedder="hashing") as copy:
        with pytest.raises(ValidationError) as err:
            copy.import_rows(rows)
        assert err.value.field == "rows[1].session_only"
