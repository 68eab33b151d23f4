"""An SQLite file written by an older version of the schema is upgraded in place when
opened: here one from before session-only memories (migrations 1-4), built with plain
``sqlite3``."""

from __future__ import annotations

import re
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


# Migration 10: rowids of deleted records are never handed out again (issue 16, item 1).
def test_migration_10_keeps_rowids_index_rows_and_vectors_and_stops_reuse(
    db_path: Path,
) -> None:
    # A schema-9 file: written by the current code, then taken back (below) to what
    # migrations 1-9 made, since today's code cannot run on a schema-9 table.
    with Memory(db_path, embedder="hashing", extractor=None) as m:
        kept = m.add(
            ["the quokka smiles", "a wombat digs", "the numbat eats termites"], user_id="u1"
        )
        newest = m.add("an emu runs", user_id="u2")[0]
        m.delete(newest.id)
    _as_schema_9(db_path)

    def snapshot() -> tuple[list[tuple[object, ...]], ...]:
        db = sqlite3.connect(db_path)
        try:
            return (
                db.execute("SELECT rowid, id FROM memories ORDER BY rowid").fetchall(),
                db.execute("SELECT rowid, terms FROM memories_fts ORDER BY rowid").fetchall(),
                db.execute("SELECT * FROM vectors ORDER BY memory_rowid, chunk").fetchall(),
            )
        finally:
            db.close()

    before = snapshot()
    assert "AUTOINCREMENT" not in _memories_sql(db_path)
    with Memory(db_path, embedder="hashing", extractor=None) as m:
        assert m.stats()["schema_version"] == SCHEMA_VERSION >= 10
        assert snapshot() == before and len(before[2]) == 3
        assert [h.memory.id for h in m.search("wombat digs", user_id="u1", limit=1)] == [kept[1].id]
        last = m.add("a platypus swims", user_id="u1")[0]
        m.delete(last.id)
        again = m.add("a bilby burrows", user_id="u1")[0]
    assert "AUTOINCREMENT" in _memories_sql(db_path)
    rowids = {mid: rowid for rowid, mid in snapshot()[0]}
    # The migrated table continues after the largest rowid it holds; from then on a
    # deleted record's rowid is never given to a new one.
    assert rowids[again.id] == max(r for r, _ in before[0]) + 2
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def _memories_sql(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(
            db.execute("SELECT sql FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
        )
    finally:
        db.close()


def _as_schema_9(path: Path) -> None:
    """Undo migrations 10 (AUTOINCREMENT) and 11 (trust's columns) of the store at
    ``path``: its memories table rebuilt as migrations 1-9 left it, same rowids and rows."""
    db = sqlite3.connect(path)
    try:
        for column in ("source", "flags"):
            db.execute(f"ALTER TABLE memories DROP COLUMN {column}")
        table = str(
            db.execute("SELECT sql FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
        )
        indexes = [
            str(r[0])
            for r in db.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories' "
                "AND sql IS NOT NULL"
            )
        ]
        plain = re.sub(r'^CREATE TABLE "?memories"?', "CREATE TABLE memories_9", table)
        plain = plain.replace("AUTOINCREMENT", "")
        db.execute(plain)
        db.execute("INSERT INTO memories_9 SELECT * FROM memories ORDER BY rowid")
        db.execute("DROP TABLE memories")  # foreign keys are off here: vectors stay
        db.execute("ALTER TABLE memories_9 RENAME TO memories")
        for sql in indexes:
            db.execute(sql)
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'memories'")
        db.execute("DELETE FROM schema_version WHERE version >= 10")
        db.commit()
    finally:
        db.close()
