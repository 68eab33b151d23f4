"""Schema migrations for the SQLite store.

Each migration is a list of statements applied in one transaction; the version reached is
recorded in ``schema_version``. Migrations are append-only: never edit a released one.
"""

from __future__ import annotations

MIGRATIONS: list[list[str]] = [
    # 1: records, keyword index, vectors, audit history, per-user change counter.
    [
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            session_id TEXT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            role TEXT,
            speaker TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            importance REAL NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            occurred_at TEXT,
            valid_from TEXT,
            valid_to TEXT,
            expires_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TEXT,
            superseded_by TEXT,
            source_ids TEXT NOT NULL DEFAULT '[]',
            entities TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL,
            embedding_model TEXT
        )""",
        # The hash covers agent, session, kind and speaker, so (user, hash) is the dedup key.
        """CREATE UNIQUE INDEX memories_dedup ON memories (user_id, content_hash)""",
        """CREATE INDEX memories_user ON memories (user_id, id)""",
        """CREATE INDEX memories_user_session ON memories (user_id, session_id)""",
        """CREATE VIRTUAL TABLE memories_fts USING fts5 (
            terms, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE TABLE vectors (
            memory_rowid INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
            chunk INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (memory_rowid, chunk)
        )""",
        """CREATE INDEX vectors_user ON vectors (user_id)""",
        """CREATE TABLE history (
            id TEXT PRIMARY KEY,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event TEXT NOT NULL,
            old_content TEXT,
            new_content TEXT,
            old_metadata TEXT,
            new_metadata TEXT,
            created_at TEXT NOT NULL
        )""",
        # Few records expire or are superseded; this partial index finds them fast.
        """CREATE INDEX memories_inactive ON memories (user_id)
            WHERE expires_at IS NOT NULL OR superseded_by IS NOT NULL""",
        """CREATE INDEX history_memory ON history (memory_id, id)""",
        """CREATE INDEX history_user ON history (user_id)""",
        # Bumped whenever a user's vectors change, so in-process vector caches of every
        # process reading this file can tell when to reload.
        """CREATE TABLE user_generation (user_id TEXT PRIMARY KEY, generation INTEGER NOT NULL)""",
    ],
    # 2: per-term document counts of the keyword index, for memstrata's own BM25.
    [
        """CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row')""",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)
