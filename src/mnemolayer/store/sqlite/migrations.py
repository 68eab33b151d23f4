"""Schema migrations for the SQLite store.

Each migration is a list of statements applied in one transaction; the version reached is
recorded in ``schema_version``. Migrations are append-only: never edit a released one.
"""

from __future__ import annotations

# The columns of ``memories`` as migration 9 left them, in table order (migration 10).
_V10_COLUMNS = (
    "rowid, id, user_id, agent_id, session_id, kind, content, role, speaker, metadata, "
    "importance, created_at, updated_at, occurred_at, valid_from, valid_to, expires_at, "
    "access_count, last_accessed_at, superseded_by, source_ids, entities, content_hash, "
    "embedding_model, session_only, pinned, archived_at, merged_into, consolidated_into, "
    "pending_embedding, pending_extraction, revision"
)

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
    # 2: per-term document counts of the keyword index, for mnemolayer's own BM25.
    [
        """CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row')""",
    ],
    # 3: the knowledge graph of semantic memory (store/graph/): entities, their aliases,
    # and bi-temporal facts between them. Every table leads with user_id so it can become
    # the distribution column of a sharded backend.
    [
        """CREATE TABLE entities (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            norm TEXT NOT NULL,
            type TEXT NOT NULL DEFAULT 'thing',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (user_id, norm)
        )""",
        # alias: the alias as written (for display); norm: its normalised form (the key).
        """CREATE TABLE entity_aliases (
            user_id TEXT NOT NULL,
            norm TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            alias TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (user_id, norm)
        )""",
        """CREATE INDEX entity_aliases_entity ON entity_aliases (user_id, entity_id)""",
        """CREATE TABLE facts (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            subject_id TEXT NOT NULL,
            predicate TEXT NOT NULL,
            object TEXT NOT NULL,
            object_norm TEXT NOT NULL,
            object_id TEXT,
            object_type TEXT,
            date TEXT,
            valid_from TEXT NOT NULL,
            valid_to TEXT,
            created_at TEXT NOT NULL,
            expired_at TEXT,
            superseded_by TEXT,
            confidence REAL NOT NULL,
            source_ids TEXT NOT NULL DEFAULT '[]',
            speaker TEXT,
            memory_id TEXT
        )""",
        # A subject's facts by predicate in valid-time order (conflict resolution, history).
        """CREATE INDEX facts_subject ON facts (user_id, subject_id, predicate, valid_from)""",
        # Current facts only: profile, search candidates, traversal of the present graph.
        """CREATE INDEX facts_current ON facts (user_id, subject_id, predicate)
            WHERE valid_to IS NULL""",
        """CREATE INDEX facts_object ON facts (user_id, object_id) WHERE object_id IS NOT NULL""",
        """CREATE INDEX facts_memory ON facts (user_id, memory_id) WHERE memory_id IS NOT NULL""",
        # What a fact replaced (relinking when a fact is deleted).
        """CREATE INDEX facts_superseded ON facts (user_id, superseded_by)
            WHERE superseded_by IS NOT NULL""",
        # facts.source_ids as rows: which facts came from a memory, by index (search
        # explanations, deleting a memory), and the time each source stated the fact for
        # (its valid_from as that source put it), which places late-arriving facts.
        """CREATE TABLE fact_sources (
            user_id TEXT NOT NULL,
            fact_id TEXT NOT NULL,
            source_id TEXT NOT NULL,
            stated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, fact_id, source_id)
        ) WITHOUT ROWID""",
        """CREATE INDEX fact_sources_source ON fact_sources (user_id, source_id)""",
    ],
    # 4: working memory (working.py): one row per session window and its messages in
    # window order. agent_key is the agent id or '' (primary keys cannot hold NULL).
    [
        """CREATE TABLE working_sessions (
            user_id TEXT NOT NULL,
            agent_key TEXT NOT NULL,
            session_id TEXT NOT NULL,
            budget_tokens INTEGER NOT NULL,
            encoding TEXT NOT NULL,
            summary TEXT NOT NULL,
            summary_rounds INTEGER NOT NULL,
            evicted_count INTEGER NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, agent_key, session_id)
        ) WITHOUT ROWID""",
        """CREATE TABLE working_messages (
            user_id TEXT NOT NULL,
            agent_key TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            id TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            pinned INTEGER NOT NULL,
            archived_id TEXT,
            PRIMARY KEY (user_id, agent_key, session_id, seq)
        ) WITHOUT ROWID""",
    ],
    # 5: session-only memories (session_api.py): 1 marks a record that Memory.end_session
    # deletes. Found through memories_user_session, so no index of its own.
    [
        """ALTER TABLE memories ADD COLUMN session_only INTEGER NOT NULL DEFAULT 0""",
    ],
    # 6: the lifecycle (lifecycle/): pinned records never decay; archived ones (archived_at)
    # are out of recall but restorable; merged ones (merged_into: the surviving
    # near-duplicate) are out of recall; consolidated ones (consolidated_into: the
    # semantic record they became) stay, downweighted. The partial index of inactive
    # records now covers archived and merged ones too.
    [
        """ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN archived_at TEXT""",
        """ALTER TABLE memories ADD COLUMN merged_into TEXT""",
        """ALTER TABLE memories ADD COLUMN consolidated_into TEXT""",
        """DROP INDEX memories_inactive""",
        """CREATE INDEX memories_inactive ON memories (user_id)
            WHERE expires_at IS NOT NULL OR superseded_by IS NOT NULL
               OR archived_at IS NOT NULL OR merged_into IS NOT NULL""",
    ],
    # 7: per-user keyword terms. A plain store prefixes each indexed term with its user's
    # tag (textproc.user_term_tag: a polynomial hash of the user id, base 31 modulo
    # 2**48 - 59, as 12 hex digits, computed here in SQL the same way), so that a keyword
    # search reads its user's posting lists only, not every user's. Encrypted stores
    # already index per-user blind terms and keep them. The full-text index (and its
    # vocabulary table) is rebuilt from the converted terms, which leaves it compact.
    [
        """CREATE TEMP TABLE ms_user_tags (user_id TEXT PRIMARY KEY, tag TEXT NOT NULL)""",
        """INSERT INTO temp.ms_user_tags
            WITH RECURSIVE h (user_id, i, v) AS (
                SELECT DISTINCT user_id, 1, 0 FROM memories
                UNION ALL
                SELECT user_id, i + 1,
                       (v * 31 + unicode(substr(user_id, i, 1))) % 281474976710597
                FROM h WHERE i <= length(user_id)
            )
            SELECT user_id, printf('%012x', v) FROM h WHERE i = length(user_id) + 1""",
        """CREATE TEMP TABLE ms_terms AS
            SELECT f.rowid AS rowid, CASE
                WHEN t.tag IS NULL OR f.terms = ''
                     OR EXISTS (SELECT 1 FROM meta WHERE key = 'encryption') THEN f.terms
                ELSE t.tag || replace(f.terms, ' ', ' ' || t.tag) END AS terms
            FROM memories_fts f
            LEFT JOIN memories m ON m.rowid = f.rowid
            LEFT JOIN temp.ms_user_tags t ON t.user_id = m.user_id""",
        """DROP TABLE memories_fts_vocab""",
        """DROP TABLE memories_fts""",
        """CREATE VIRTUAL TABLE memories_fts USING fts5 (
            terms, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row')""",
        """INSERT INTO memories_fts (rowid, terms)
            SELECT rowid, terms FROM temp.ms_terms ORDER BY rowid""",
        """DROP TABLE temp.ms_terms""",
        """DROP TABLE temp.ms_user_tags""",
    ],
    # 8: tombstones of deleted messages (store/tombstones.py): a replayed add of a
    # deleted message (same caller message id, same content and scope) is skipped. Only
    # a keyed hash of that identity is kept, never the text or the id; the user_id
    # column makes delete_all sweep and count them with the user's other rows.
    [
        """CREATE TABLE tombstones (
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            deleted_at TEXT NOT NULL,
            PRIMARY KEY (user_id, key)
        ) WITHOUT ROWID""",
    ],
    # 9: capture before enrichment (layers/episodic/enrich.py). pending_embedding and
    # pending_extraction mark a record stored while its embedder or extractor failed (1:
    # still to do; maintenance completes it). revision counts the edits of a record's
    # content, so that what is derived from its text after a slow model call (vectors,
    # facts, keyword terms) is written only if the text is still the one it was read at.
    # Few records are pending; the partial index finds them, in id order per user.
    [
        """ALTER TABLE memories ADD COLUMN pending_embedding INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN pending_extraction INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN revision INTEGER NOT NULL DEFAULT 0""",
        """CREATE INDEX memories_pending ON memories (user_id, id)
            WHERE pending_embedding = 1 OR pending_extraction = 1""",
    ],
    # 10: record rowids are never reused (AUTOINCREMENT). Without it SQLite hands a new
    # record the rowid of the newest deleted one, so a check after a deletion that looks
    # up the deleted rowids in the keyword index and vectors (privacy/erasure.py) found
    # another user's new rows and reported the deletion incomplete. The table is rebuilt
    # with the same rowids and columns, so the keyword rows (keyed by rowid) stay valid;
    # its vectors are set aside first, because dropping the old table cascades to them
    # (foreign keys are on), and put back once the new table has its name.
    [
        """CREATE TABLE memories_autoinc (
            rowid INTEGER PRIMARY KEY AUTOINCREMENT,
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
            embedding_model TEXT,
            session_only INTEGER NOT NULL DEFAULT 0,
            pinned INTEGER NOT NULL DEFAULT 0,
            archived_at TEXT,
            merged_into TEXT,
            consolidated_into TEXT,
            pending_embedding INTEGER NOT NULL DEFAULT 0,
            pending_extraction INTEGER NOT NULL DEFAULT 0,
            revision INTEGER NOT NULL DEFAULT 0
        )""",
        f"""INSERT INTO memories_autoinc ({_V10_COLUMNS})
            SELECT {_V10_COLUMNS} FROM memories ORDER BY rowid""",
        """CREATE TEMP TABLE ms_vectors AS SELECT * FROM vectors""",
        """DROP TABLE memories""",
        """ALTER TABLE memories_autoinc RENAME TO memories""",
        """INSERT INTO vectors SELECT * FROM temp.ms_vectors""",
        """DROP TABLE temp.ms_vectors""",
        """CREATE UNIQUE INDEX memories_dedup ON memories (user_id, content_hash)""",
        """CREATE INDEX memories_user ON memories (user_id, id)""",
        """CREATE INDEX memories_user_session ON memories (user_id, session_id)""",
        """CREATE INDEX memories_inactive ON memories (user_id)
            WHERE expires_at IS NOT NULL OR superseded_by IS NOT NULL
               OR archived_at IS NOT NULL OR merged_into IS NOT NULL""",
        """CREATE INDEX memories_pending ON memories (user_id, id)
            WHERE pending_embedding = 1 OR pending_extraction = 1""",
    ],
    # 11: trust (mnemolayer.trust): where each memory came from and what the detector of
    # instruction-like text flagged at write (a JSON list). Records stored before it
    # take their source from their role: tool messages were tool output, assistant and
    # system ones the assistant's side, everything else the user's.
    [
        """ALTER TABLE memories ADD COLUMN source TEXT NOT NULL DEFAULT 'user'""",
        """ALTER TABLE memories ADD COLUMN flags TEXT NOT NULL DEFAULT '[]'""",
        """UPDATE memories SET source = CASE role WHEN 'tool' THEN 'tool'
            WHEN 'assistant' THEN 'assistant' WHEN 'system' THEN 'assistant'
            ELSE 'user' END""",
    ],
    # 12: PostgreSQL's tenants in one database (its migration 12); a file is one tenant's.
    [],
]

SCHEMA_VERSION = len(MIGRATIONS)
