"""An SQLite file written by an older version of the schema is upgraded in place when
opened: here one from before session-only memories (migrations 1-4), built with plain
``sqlite3``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemolayer import Memory
from mnemolayer.store.sqlite.migrations import SCHEMA_VERSION


# An upgrade of an old SQLite file (written with SQLite's migrations 1-4).
def test_a_store_from_before_session_only_memories_is_upgraded(db_path: Path) -> None:
    # A real schema-4 file (before session-only memories), with one memory in it.
    from mnemolayer.store.sqlite.migrations import MIGRATIONS

    with Memory(":memory:", embedder="hashing", extractor=None) as m:
        [old] = m.add("an old memory", user_id="u1", session_id="s1")
        row = m.store.read("SELECT * FROM memories")[0]
        vector = m.store.read("SELECT chunk, user_id, vector FROM vectors")[0]
        meta = m.store.read("SELECT key, value FROM meta")
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)")
    for version in range(1, 5):
        for stmt in MIGRATIONS[version - 1]:
            db.execute(stmt)
        db.execute("INSERT INTO schema_version VALUES (?, '2024-01-01T00:00:00+00:00')", (version,))
    width = len(db.execute("SELECT * FROM memories").description)
    db.execute(f"INSERT INTO memories VALUES ({', '.join('?' * width)})", row[:width])
    db.execute("INSERT INTO vectors VALUES (?, ?, ?, ?)", (row[0], *vector))
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta)
    db.commit()
    db.close()
    with Memory(db_path, embedder="hashing", extractor=None) as m:
        assert m.stats()["schema_version"] == SCHEMA_VERSION >= 5
        assert m.get(old.id) == old and not old.session_only
        end = m.end_session("s1", "u1")
        assert end.cleared == 0 and end.summary is not None and end.summary.source_ids == [old.id]
