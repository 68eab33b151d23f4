"""The store's metadata filter hook on sealed (encrypted) metadata: encryption at rest is
an SQLite-file feature (PostgreSQL refuses ``Memory(encryption=...)``), so this runs on a
file only; the same cases on both engines, unsealed, are in contract/test_store_hooks.py."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from filter_cases import check_filters, fill
from mnemolayer import Memory
from mnemolayer.crypto import EncryptionConfig


def test_compile_filter_on_sealed_metadata(tmp_path: Path) -> None:
    key = base64.b64encode(os.urandom(32)).decode()
    path = tmp_path / "e.db"
    with Memory(path, embedder="hashing", encryption=EncryptionConfig(master_key=key)) as mem:
        assert mem.store.crypto is not None
        check_filters(mem, fill(mem))
