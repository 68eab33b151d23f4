"""What the SQLite store accepts as its address: an ``sqlite:///`` URL, a file that must
exist when opened read-only, and the refusals (an empty URL); and the corruption error's
message for a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreError, ValidationError


def test_sqlite_url_is_accepted(tmp_path: Path) -> None:
    with Memory(f"sqlite:///{tmp_path}/m.db", embedder="hashing") as mem:
        mem.add("hello there", user_id="u")
    assert (tmp_path / "m.db").exists()


def test_read_only_needs_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such database file"):
        Memory(tmp_path / "missing.db", embedder="hashing", read_only=True)


def test_an_empty_sqlite_url_is_refused(tmp_path: Path) -> None:
    for url in ("sqlite:///", "sqlite://"):
        with pytest.raises(ValidationError, match="db"):
            Memory(url, embedder="hashing")


def test_corruption_messages_stay_short(tmp_path: Path) -> None:
    from mnemolayer import StoreCorruptError

    err = StoreCorruptError(str(tmp_path / "x.db"), "*** in database main *** " * 500)
    assert len(str(err)) < 400 and len(err.detail) > 5000
