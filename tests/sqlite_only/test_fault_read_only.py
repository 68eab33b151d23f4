"""A store that becomes read-only (issue 16, item 11).

What this covers, honestly:

* Not root: the file and its directory are made read-only (chmod) while a ``Memory``
  has them open. Permissions are checked when a file is opened, so that ``Memory``, whose
  database and log are already open for writing, may keep writing: each of its calls must
  either succeed (and its write be kept) or raise a ``StoreError``, never a raw sqlite3
  error. A ``Memory`` opened on the read-only file is read-only: a write raises the
  store's read-only error, reads keep working. Once the file is writable again, a store
  opened on it writes again.
* Root: permissions do not apply to root, so chmod proves nothing; the same contract is
  checked on a store opened with ``read_only=True`` (which is what a read-only file
  gives: see ``SQLiteConnection._decide_read_only``). The part about a ``Memory`` that had
  the file open before is then not covered.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from helpers import index_problems, integrity_check
from mnemolayer import Memory
from mnemolayer.errors import StoreError


def _open(db: Path, **kwargs: object) -> Memory:
    return Memory(db, embedder="hashing", extractor=None, **kwargs)  # type: ignore[arg-type]


@pytest.mark.timeout(60)
def test_a_read_only_store_refuses_writes_clearly_keeps_reads_and_recovers(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "store"
    db = folder / "m.db"
    root = os.geteuid() == 0
    kept: list[str] = []
    writer = _open(db)
    kept.append(writer.add("I keep my bike in the garage", user_id="u")[0].id)
    try:
        if not root:
            db.chmod(0o444)
            folder.chmod(0o555)
            # Already open for writing: it may go on writing, but never fail rawly.
            with contextlib.suppress(StoreError):
                kept.append(
                    writer.add("written while the file turned read-only", user_id="u")[0].id
                )
        writer.close()

        with _open(db, read_only=True if root else None) as reader:
            with pytest.raises(StoreError, match=r"read-only"):
                reader.add("this cannot be written", user_id="u")
            hits = reader.search("bike garage", user_id="u")
            assert hits and hits[0].memory.id == kept[0]
            assert {r.id for r in reader.list(user_id="u").items} == set(kept)
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)

    with _open(db) as again:  # writable again: writes work, nothing was lost
        kept.append(again.add("the bike moved to the shed", user_id="u")[0].id)
        assert {r.id for r in again.list(user_id="u").items} == set(kept)
    assert integrity_check(db) == [("ok",)]
    assert index_problems(db) == {}
