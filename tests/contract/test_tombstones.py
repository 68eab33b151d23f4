"""Deleted messages stay deleted when they are added again (issue 16, item 6).

Before: adding the same message again (same caller message id, same session, same
content) after the user deleted it brought the memory and its facts back, so a replayed
conversation or a sync retry undid the deletion. Now a deletion leaves a tombstone (a
keyed hash of the message's identity, no text); ``add`` skips a message whose identity
has one and says so in ``result.skipped``, while a new id or a new session is stored as
usual. ``delete_all`` of the user removes the tombstones and its receipt counts them.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers import is_postgres, raw_rows
from mnemolayer import AddResult, Memory, SkippedMessage, ValidationError

USER = "u-9c1e"
TEXT = "I live in Porto and my sister is called Ana"


def message(mid: str | None = "m-17", content: str = TEXT) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "user", "content": content, "timestamp": "2024-05-01"}
    if mid is not None:
        out["id"] = mid
    return out


def facts(mem: Memory) -> list[tuple[str, str | None, bool]]:
    """The user's facts, current and past: ``(predicate, object, current)``."""
    return sorted(
        (f.predicate, f.object, f.valid_to is None)
        for f in mem.facts(user_id=USER, include_history=True)
    )


def stored(mem: Memory) -> list[str]:
    """The contents of the user's message records (fact records left out)."""
    return sorted(r.content for r in mem.list(user_id=USER).items if r.kind.value == "episodic")


def added_and_deleted(mem: Memory, **scope: Any) -> str:
    """A message with facts added, then deleted; its record id."""
    [record] = mem.add([message()], user_id=USER, session_id="s1", **scope)
    assert facts(mem), "the message states facts"
    mem.delete(record.id)
    assert stored(mem) == [] and not any(current for *_, current in facts(mem))
    return record.id


def test_a_replayed_deleted_message_stays_deleted_with_its_facts(smem: Memory) -> None:
    added_and_deleted(smem)
    after_delete = facts(smem)

    result = smem.add([message()], user_id=USER, session_id="s1")

    assert isinstance(result, AddResult) and list(result) == []
    assert result.skipped == [SkippedMessage(index=0, message_id="m-17", reason="deleted")]
    assert result.per_message() == [None]
    assert stored(smem) == []
    assert facts(smem) == after_delete  # no fact came back, none was restated
    assert smem.search("Porto sister", user_id=USER) == []
    # Whitespace and Unicode normalisation do not make it another message.
    again = smem.add([message(content=f"  {TEXT}  ")], user_id=USER, session_id="s1")
    assert list(again) == [] and len(again.skipped) == 1


def test_a_replay_in_a_batch_skips_only_the_deleted_message(smem: Memory) -> None:
    added_and_deleted(smem)
    batch = [message(), message("m-18", "My dog is called Rex"), message(None, "Hello there")]

    result = smem.add(batch, user_id=USER, session_id="s1")

    assert [r.content for r in result] == ["My dog is called Rex", "Hello there"]
    assert [s.index for s in result.skipped] == [0]
    aligned = result.per_message()
    assert aligned[0] is None and [r.content for r in aligned[1:] if r] == [
        "My dog is called Rex",
        "Hello there",
    ]
    assert stored(smem) == ["Hello there", "My dog is called Rex"]


def test_a_new_message_id_is_a_new_statement_and_is_stored(smem: Memory) -> None:
    added_and_deleted(smem)
    result = smem.add([message("m-99")], user_id=USER, session_id="s1")
    assert [r.content for r in result] == [TEXT] and result.skipped == []
    assert stored(smem) == [TEXT]
    assert ("lives_in", "Porto", True) in facts(smem)


def test_the_same_message_in_a_new_session_is_stored(smem: Memory) -> None:
    added_and_deleted(smem)
    result = smem.add([message()], user_id=USER, session_id="s2")
    assert [r.session_id for r in result] == ["s2"] and result.skipped == []
    assert ("lives_in", "Porto", True) in facts(smem)


def test_a_message_without_an_id_is_stored_again(smem: Memory) -> None:
    # No caller id, no identity to replay: adding the words again is a new statement.
    [record] = smem.add([message(None)], user_id=USER, session_id="s1")
    smem.delete(record.id)
    result = smem.add([message(None)], user_id=USER, session_id="s1")
    assert [r.content for r in result] == [TEXT] and result.skipped == []


def test_another_users_deletion_does_not_skip_this_users_message(smem: Memory) -> None:
    added_and_deleted(smem)
    result = smem.add([message()], user_id="someone-else", session_id="s1")
    assert len(result) == 1 and result.skipped == []


def test_tombstones_last_across_handles_and_restarts(db_path: Path, clock: Any) -> None:
    first = Memory(db_path, embedder="hashing", clock=clock)
    other = Memory(db_path, embedder="hashing", clock=clock)  # another process
    try:
        added_and_deleted(first)
        assert other.add([message()], user_id=USER, session_id="s1").skipped
    finally:
        first.close()
        other.close()
    with Memory(db_path, embedder="hashing", clock=clock) as again:
        assert list(again.add([message()], user_id=USER, session_id="s1")) == []
        assert stored(again) == []


def test_a_deletion_between_the_check_and_the_write_still_holds(
    db_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The replay's first look finds no tombstone; the user's deletion commits before its
    # write transaction opens. The look inside the transaction sees the tombstone.
    replayer = Memory(db_path, embedder="hashing", clock=clock)
    deleter = Memory(db_path, embedder="hashing", clock=clock)
    try:
        [record] = deleter.add([message()], user_id=USER, session_id="s1")
        find = replayer.store.find_by_hash
        calls: list[int] = []

        def find_after_a_deletion(c: Any, user_id: str, hashes: Any) -> Any:
            if not calls:
                calls.append(1)
                deleter.delete(record.id)
            return find(c, user_id, hashes)

        monkeypatch.setattr(replayer.store, "find_by_hash", find_after_a_deletion)
        result = replayer.add([message()], user_id=USER, session_id="s1")
        assert calls and list(result) == [] and [s.index for s in result.skipped] == [0]
        assert stored(deleter) == [] and not any(c for *_, c in facts(deleter))
    finally:
        replayer.close()
        deleter.close()


def test_delete_all_of_a_session_keeps_its_messages_deleted(smem: Memory) -> None:
    smem.add([message(), message("m-18", "My dog is called Rex")], user_id=USER, session_id="s1")
    kept = smem.add([message("m-30", "I work at Acme")], user_id=USER, session_id="s2")
    receipt = smem.delete_all(user_id=USER, session_id="s1")
    assert receipt.memories >= 2 and receipt.verified

    result = smem.add(
        [message(), message("m-18", "My dog is called Rex")], user_id=USER, session_id="s1"
    )

    assert list(result) == [] and [s.message_id for s in result.skipped] == ["m-17", "m-18"]
    assert stored(smem) == [kept[0].content]


def test_delete_all_of_the_user_removes_and_counts_the_tombstones(
    smem: Memory, db_path: Path
) -> None:
    added_and_deleted(smem)
    [dog] = smem.add([message("m-18", "My dog is called Rex")], user_id=USER, session_id="s1")
    smem.delete(dog.id)
    [bob] = smem.add([message("m-5", "Bob lives in Lisbon")], user_id="bob", session_id="s1")
    smem.delete(bob.id)
    count = "SELECT count(*) FROM tombstones WHERE user_id = ?"
    assert raw_rows(db_path, count, (USER,)) == [(2,)]

    receipt = smem.delete_all(user_id=USER)

    assert receipt.removed["tombstones"] == 2
    assert receipt.remaining["tombstones"] == 0 and receipt.verified
    assert raw_rows(db_path, count, (USER,)) == [(0,)]
    assert raw_rows(db_path, count, ("bob",)) == [(1,)]  # another user's are kept
    # Nothing is left that remembers the deletion: the replay is a new message now.
    result = smem.add([message()], user_id=USER, session_id="s1")
    assert [r.content for r in result] == [TEXT] and result.skipped == []
    assert smem.add([message("m-5", "Bob lives in Lisbon")], user_id="bob", session_id="s1").skipped


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_tombstone_rows_hold_no_content_bytes(
    new_db: Callable[[str], Any], clock: Any, request: pytest.FixtureRequest, encrypted: bool
) -> None:
    db = new_db("store")
    options: dict[str, Any] = {}
    if encrypted:
        crypto = pytest.importorskip("mnemolayer.crypto")
        options["encryption"] = crypto.EncryptionConfig(master_key=base64.b64encode(b"k" * 32))
        if is_postgres(db):
            request.applymarker(
                pytest.mark.xfail(
                    strict=True,
                    raises=ValidationError,
                    reason="encryption at rest is SQLite-only: PostgreSQL refuses it",
                )
            )
    with Memory(db, embedder="hashing", clock=clock, **options) as mem:
        mid = "msg-porto-0001"
        [record] = mem.add([message(mid)], user_id=USER, session_id="s1")
        plain_hash = mem.store.as_stored(record).content_hash
        mem.delete(record.id)
        rows = raw_rows(db, "SELECT user_id, key, deleted_at FROM tombstones")
        assert len(rows) == 1 and rows[0][0] == USER
        cells = " ".join(str(cell) for cell in rows[0][1:]).lower()
        for needle in (TEXT, "porto", "sister", "ana", mid, "s1", record.id, plain_hash):
            assert needle.lower() not in cells, needle
        assert mem.add([message(mid)], user_id=USER, session_id="s1").skipped
