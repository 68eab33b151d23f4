"""Checkpoints of the write-ahead log (store/wal.py): SQLite's own automatic checkpoints
are off on every file mnemolayer writes, and ours keep the log bounded."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from mnemolayer import Memory
from mnemolayer.embed.cache import CachedEmbedder
from mnemolayer.embed.hashing import HashingEmbedder
from mnemolayer.server.rest.keys import KeyStore
from mnemolayer.sqlitefile import WalCheckpointer, configure_wal


def wal_size(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_log_is_checkpointed_and_truncated_back_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path, isolation_level=None)
    configure_wal(conn, limit_bytes=256 * 1024)
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other = sqlite3.connect(path, isolation_level=None)  # keeps the log from closing
    other.execute("SELECT 1").fetchall()
    ckpt = WalCheckpointer(path, limit_bytes=256 * 1024)
    conn.execute("CREATE TABLE t (x BLOB)")
    sizes = []
    for _ in range(400):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES (randomblob(4000))")
        conn.execute("COMMIT")
        ckpt.after_commit(conn)
        sizes.append(wal_size(path))
    assert ckpt.runs >= 3 and ckpt.incomplete == 0
    # Never far past the limit: at most one commit's pages beyond it.
    assert max(sizes) < 256 * 1024 + 64 * 1024
    assert other.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 400
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    other.close()
    conn.close()


def test_a_checkpoint_inside_a_transaction_is_not_tried(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path, isolation_level=None)
    configure_wal(conn, limit_bytes=0)
    conn.execute("CREATE TABLE t (x)")
    ckpt = WalCheckpointer(path, limit_bytes=0)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t VALUES (1)")
    ckpt.after_commit(conn)  # still in the transaction: nothing happens, nothing raises
    assert ckpt.runs == 0
    conn.execute("COMMIT")
    ckpt.after_commit(conn)
    assert ckpt.runs == 1
    conn.close()


def test_memory_store_cache_and_key_store_turn_automatic_checkpoints_off(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder="hashing") as mem:
        conn = mem.store._conn
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        for i in range(30):
            mem.add(f"note {i}: " + "x" * 2000, user_id="u")
        assert mem.store._checkpointer.wal_path == f"{tmp_path / 'm.db'}-wal"
    cache = CachedEmbedder(HashingEmbedder(), tmp_path / "cache.db")
    try:
        assert cache._connect().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    finally:
        cache.close()
    keys = KeyStore(tmp_path / "keys.db")
    try:
        assert keys._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    finally:
        keys.close()


def test_memory_store_keeps_its_log_bounded(tmp_path: Path) -> None:
    """Two handles on one file (so closing one never checkpoints): the log stays near the
    limit however much is written."""
    path = tmp_path / "m.db"
    with Memory(path, embedder="hashing") as mem, Memory(path, embedder="hashing") as other:
        mem.store._checkpointer.limit_bytes = 128 * 1024
        sizes = []
        for i in range(60):
            mem.add(f"entry {i} " + " ".join(f"w{i}x{j}" for j in range(300)), user_id="u")
            sizes.append(os.path.getsize(f"{path}-wal"))
        assert mem.store._checkpointer.runs >= 2
        assert max(sizes) < 1024 * 1024
        assert len(other.list(user_id="u", limit=100).items) == 60
