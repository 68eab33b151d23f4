"""Deletion receipts stay true while other users write (issue 16, item 1).

The checks after a ``delete_all`` look the deleted records' row identities up in the
keyword index and the vectors. A store that handed those identities to new records
(SQLite's rowid without AUTOINCREMENT) made another user's new rows count as leftovers,
and a complete deletion came back unverified. Here another user's adds land between the
deletion's commit and its checks: once at a fixed point, then from a thread.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from mnemolayer import Memory

A = "alice-erase"
B = "bob-writes"
ROUNDS = 40


def ids_of(mem: Memory, user_id: str) -> list[str]:
    """Every memory id of ``user_id``, oldest first (all pages of ``list``)."""
    ids: list[str] = []
    cursor = None
    while True:
        page = mem.list(user_id=user_id, limit=100, cursor=cursor)
        ids += [m.id for m in page.items]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def test_adds_of_another_user_after_the_commit_leave_the_receipt_verified(
    db_path: Path, clock: Any, monkeypatch: Any
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        mem.add([f"alice note {i} about quokkas" for i in range(5)], user_id=A)
        store = mem._erasure.store
        truncate = store.truncate_log

        def b_writes_then_truncate() -> bool:
            # Right after delete_all's commit and before its checks: B's new records
            # are what would take the freed row identities.
            mem.add([f"bob note {i} about wombats" for i in range(5)], user_id=B)
            return truncate()

        monkeypatch.setattr(store, "truncate_log", b_writes_then_truncate)
        receipt = mem.delete_all(user_id=A)
        monkeypatch.setattr(store, "truncate_log", truncate)

        assert receipt.verified, receipt.remaining
        assert receipt.memories == 5 and receipt.removed["memories"] == 5
        assert ids_of(mem, A) == []
        assert len(ids_of(mem, B)) == 5
        # And the same again, now that B's records are the newest ones.
        mem.add([f"alice again {i}" for i in range(3)], user_id=A)
        mem.delete(ids_of(mem, B)[-1])
        mem.add("bob once more", user_id=B)
        again = mem.delete_all(user_id=A)
        assert again.verified and again.memories == 3, again.remaining
        assert [h.memory.user_id for h in mem.search("wombats", user_id=B, mode="keyword")] == [
            B
        ] * 4


def test_every_receipt_is_verified_while_another_user_adds_from_a_thread(
    db_path: Path, clock: Any
) -> None:
    stop, writing = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    added: list[str] = []

    def writer() -> None:
        try:
            with Memory(db_path, embedder="hashing", extractor=None) as other:
                i = 0
                while not stop.is_set():
                    added.append(other.add(f"bob writes line {i}", user_id=B)[0].id)
                    writing.set()
                    i += 1
                    # A writer that pauses now and then: A's records are then often
                    # the newest when deleted, and B's next add follows the deletion
                    # (writing without pause, B's records are always above A's).
                    time.sleep(0.003)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        mem.add("warm up the schema", user_id=B)
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        receipts = []
        try:
            assert writing.wait(timeout=60), errors
            before = len(added)
            for round_ in range(ROUNDS):
                mem.add([f"alice round {round_} item {i}" for i in range(6)], user_id=A)
                receipts.append(mem.delete_all(user_id=A))
        finally:
            stop.set()
            thread.join(timeout=60)
        assert not thread.is_alive() and not errors, errors
        assert [r.memories for r in receipts] == [6] * ROUNDS
        bad = [{k: v for k, v in r.remaining.items() if v} for r in receipts if not r.verified]
        assert not bad, bad
        assert len(added) > before  # B wrote while A's deletions ran
        # B lost nothing: every acknowledged add is there.
        held = set(ids_of(mem, B))
        assert set(added) <= held
