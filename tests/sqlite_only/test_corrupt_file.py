"""A damaged SQLite file (random pages overwritten, not a database at all, truncated) is
reported as :class:`~mnemolayer.errors.StoreCorruptError` naming the file, and never
overwritten or repaired behind the caller's back."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import pytest

from helpers import all_records
from mnemolayer import Memory
from mnemolayer.errors import StoreCorruptError


def _build(path: Path, n: int = 200) -> list[Any]:
    with Memory(path, embedder="hashing") as mem:
        return mem.add(
            [f"memory {i} about topic {i % 7} with some filler words" for i in range(n)],
            user_id="u",
        )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _open_and_use(path: Path) -> None:
    """Open the store and run the first operations; one of them must fail."""
    with Memory(path, embedder="hashing") as mem:
        mem.stats()
        all_records(mem, "u")
        mem.search("topic", user_id="u")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_corrupt_file_is_reported_and_never_overwritten(db_path: Path, seed: int) -> None:
    _build(db_path)
    size = db_path.stat().st_size
    page = 4096
    data = bytearray(db_path.read_bytes())
    start = (size // 2) // page * page
    data[start : start + 2 * page] = random.Random(seed).randbytes(2 * page)
    db_path.write_bytes(bytes(data))
    before = _sha(db_path)

    with pytest.raises(StoreCorruptError) as err:
        _open_and_use(db_path)
    assert str(err.value).startswith("database corrupt:")
    assert str(db_path) in str(err.value)
    assert err.value.path == str(db_path)
    assert _sha(db_path) == before
    assert db_path.stat().st_size == size


@pytest.mark.parametrize(
    "content",
    [b"hello, this is not a database\n" * 20, b"SQLite format 2\x00" + b"\x00" * 100, b"\xff" * 5],
    ids=["text", "wrong-header", "short"],
)
def test_a_file_that_is_not_sqlite_is_reported_and_left_alone(
    db_path: Path, content: bytes
) -> None:
    db_path.write_bytes(content)
    with pytest.raises(StoreCorruptError) as err:
        _open_and_use(db_path)
    assert str(err.value).startswith(f"database corrupt: {db_path}")
    assert db_path.read_bytes() == content
    assert sorted(p.name for p in db_path.parent.iterdir()) == [db_path.name]


def test_a_truncated_file_is_reported_and_left_alone(db_path: Path) -> None:
    _build(db_path)
    half = db_path.read_bytes()[: db_path.stat().st_size // 2]
    db_path.write_bytes(half)
    with pytest.raises(StoreCorruptError, match=r"^database corrupt:"):
        _open_and_use(db_path)
    assert db_path.read_bytes() == half
