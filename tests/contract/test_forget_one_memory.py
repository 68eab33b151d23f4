"""Forgetting one memory removes its text everywhere (issue 16, item 8).

Plain ``delete`` keeps the old text in a ``DELETE`` history event; ``forget`` removes
it from the record, the keyword index, the vectors, the history, the facts only it
stated, the embedding cache and (SQLite) the write-ahead log, and says so in a verified
receipt. Other memories and their facts are untouched.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from helpers import is_postgres, raw_rows, table_names
from mnemolayer import AsyncMemory, ForgetReceipt, Memory, NotFoundError
from mnemolayer.embed import CachedEmbedder, HashingEmbedder

USER = "zed-forget"
OTHER = "bob-forget"
MARK = "zorblaxian"  # a word only the forgotten memory contains
SECRET = f"My passport number is {MARK.upper()}77 and I keep it in the {MARK} drawer"


def _open(db_path: Any, tmp_path: Path, clock: Any) -> Memory:
    cache = CachedEmbedder(HashingEmbedder(), tmp_path / "embeddings.sqlite3")
    return Memory(db_path, embedder=cache, clock=clock)


def _rows_with(db_path: Any, needle: str) -> list[str]:
    """Tables of the store with a row whose text holds ``needle`` (any case)."""
    found = []
    for table in sorted(table_names(db_path)):
        for row in raw_rows(db_path, f'SELECT * FROM "{table}"'):
            text = " ".join(
                v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row
            )
            if needle.lower() in text.lower():
                found.append(table)
                break
    return found


def test_forget_removes_the_text_everywhere_and_keeps_everything_else(
    db_path: Any, tmp_path: Path, clock: Any
) -> None:
    mem = _open(db_path, tmp_path, clock)
    try:
        first = mem.add("I live in Lisbon", user_id=USER, session_id="s1")[0]
        again = mem.add("I live in Lisbon", user_id=USER, session_id="s2")[0]
        secret = mem.add(SECRET, user_id=USER)[0]
        mem.update(secret.id, content=SECRET + " at home")
        kept = mem.add("My dog is called Rex", user_id=USER)[0]
        bob = mem.add(f"Bob read about the {MARK} myth", user_id=OTHER)[0]
        mem.search(MARK, user_id=USER)  # the vector cache holds the user
        facts_before = {(f.predicate, f.object) for f in mem.facts(user_id=USER)}
        lisbon = [f for f in mem.facts(user_id=USER) if f.object == "Lisbon"]
        assert lisbon and set(lisbon[0].source_ids) == {first.id, again.id}

        receipt = mem.forget(secret.id, user_id=USER)

        assert isinstance(receipt, ForgetReceipt)
        assert receipt.verified, receipt.remaining
        assert receipt.memory_id == secret.id and receipt.user_id == USER
        assert receipt.removed["memories"] >= 1 and receipt.removed["history"] >= 2
        assert receipt.removed["embedding_cache"] >= 1
        with pytest.raises(NotFoundError):
            mem.get(secret.id)
        assert [e.event for e in mem.history(secret.id)] == ["DELETE"]
        assert all(e.old_content is None for e in mem.history(secret.id))
        assert mem.search(MARK, user_id=USER, mode="keyword") == []
        # Everything else is as it was: the other memories, their facts, Bob.
        assert mem.get(kept.id) == kept and mem.get(bob.id) == bob
        assert [h.memory.id for h in mem.search(MARK, user_id=OTHER, mode="keyword")] == [bob.id]
        lisbon = [f for f in mem.facts(user_id=USER) if f.object == "Lisbon"]
        assert lisbon and set(lisbon[0].source_ids) == {first.id, again.id}
        facts_after = {(f.predicate, f.object) for f in mem.facts(user_id=USER)}
        assert facts_after <= facts_before and ("Lisbon" in {o for _p, o in facts_after})
        assert any("Rex" in o for _p, o in facts_after)
        # A second forget of the same id is the get's not-found error.
        with pytest.raises(NotFoundError):
            mem.forget(secret.id, user_id=USER)
        # Bob's memory still holds the word; the forgotten text itself is nowhere.
        assert _rows_with(db_path, f"{MARK}77") == []
        assert _rows_with(db_path, "passport") == []
    finally:
        mem.close()
    if not is_postgres(db_path):
        # After every connection to the files is closed: no byte of the text is left in
        # the store file, its log or the embedding cache file.
        for part in (Path(db_path), Path(f"{db_path}-wal"), tmp_path / "embeddings.sqlite3"):
            if part.exists():
                data = part.read_bytes().lower()
                assert b"passport" not in data and f"{MARK}77".encode() not in data, part


def test_forget_of_a_missing_or_foreign_id_is_not_found(mem: Memory) -> None:
    mine = mem.add("a note of mine", user_id=USER)[0]
    with pytest.raises(NotFoundError) as missing:
        mem.forget("no-such-id", user_id=USER)
    with pytest.raises(NotFoundError) as got:
        mem.get("no-such-id", user_id=USER)
    assert type(missing.value) is type(got.value) and str(missing.value) == str(got.value)
    with pytest.raises(NotFoundError):
        mem.forget(mine.id, user_id=OTHER)
    assert mem.get(mine.id) == mine


def test_async_forget_mirrors_the_sync_one(db_path: Any, clock: Any) -> None:
    async def run() -> ForgetReceipt:
        amem = AsyncMemory(db_path, embedder="hashing", clock=clock, extractor=None)
        try:
            [rec] = await amem.add(SECRET, user_id=USER)
            return await amem.forget(rec.id, user_id=USER)
        finally:
            await amem.close()

    receipt = asyncio.run(run())
    assert receipt.verified and receipt.removed["memories"] == 1, receipt
