"""Schema migrations of the PostgreSQL store (:mod:`mnemolayer.store.postgres.store`).

The tables have the columns of the SQLite schema (:mod:`mnemolayer.store.sqlite.migrations`) in
the same order, so the store's statements run on both (through
:func:`mnemolayer.store.postgres.translate.translate`). What differs:

* every table but ``schema_version`` and ``tenants`` holds one tenant's rows: a ``tenant``
  column, filled from the transaction's ``mnemolayer.tenant`` setting, leads every primary
  and unique key, and row-level security (``FORCE``d, so the tables' owner too) shows and
  takes only rows of the transaction's tenant (migration 12, docs/multi-tenant.md); a
  single store is tenant ``default``;
* after ``tenant``, every primary and unique key leads with ``user_id``, and every table
  has it, so that ``user_id`` can be the distribution column of a sharded PostgreSQL
  (Citus: ``SELECT create_distributed_table('memories', 'user_id')`` and so on, see
  docs/postgres.md);
* ``rowid`` is an identity column, where SQLite has its implicit row id;
* the keyword index is a table with a ``tsvector`` of the stored terms (already
  segmented by mnemolayer, Chinese included, so the ``simple`` configuration's parser is
  not involved: the lexemes are taken as they are) and a GIN index on it;
* vectors are pgvector ``vector`` values; an HNSW index (cosine) is added per
  dimension when the first vectors of that dimension are written;
* text columns sort byte-wise (``COLLATE "C"``), as SQLite's ``BINARY`` does;
* SQLite's JSON functions that the store's SQL uses exist as ``ms_json_*`` functions
  with SQLite's meaning.

Versions follow the SQLite store's numbering: version 6 here is the schema that SQLite
reaches at its version 6, so a store reports one schema version on either backend.
Migrations are append-only.
"""

from __future__ import annotations

import re

_FUNCTIONS = [
    # '$', '$.key' and '$."key"' (what the store's SQL uses) as a jsonb path array.
    r"""CREATE FUNCTION ms_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE
        PARALLEL SAFE AS $$
        SELECT CASE WHEN path = '$' THEN ARRAY[]::text[]
               ELSE ARRAY[regexp_replace(substr(path, 3), '^"(.*)"$', '\1')] END
    $$""",
    # SQLite's json_extract for a scalar, as text (NULL for JSON null or a missing key).
    """CREATE FUNCTION ms_json_extract(doc text, path text) RETURNS text LANGUAGE sql
        IMMUTABLE PARALLEL SAFE AS $$ SELECT doc::jsonb #>> ms_json_path(path) $$""",
    # SQLite's json_type names: null, true, false, integer, real, text, array, object.
    """CREATE FUNCTION ms_json_type(doc text, path text) RETURNS text LANGUAGE sql
        IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE jsonb_typeof(v)
            WHEN 'string' THEN 'text'
            WHEN 'number' THEN CASE WHEN v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END
            WHEN 'boolean' THEN v::text
            ELSE jsonb_typeof(v) END
        FROM (SELECT doc::jsonb #> ms_json_path(path) AS v) AS x
    $$""",
    # SQLite's json_each over a JSON array of strings (source ids): one row per element.
    """CREATE FUNCTION ms_json_each(doc text) RETURNS TABLE (value text) LANGUAGE sql
        IMMUTABLE PARALLEL SAFE AS $$ SELECT jsonb_array_elements_text(doc::jsonb) $$""",
    # The stored terms (space-separated, already segmented and lower-cased) as a
    # tsvector with positions, each term a lexeme as it is.
    r"""CREATE FUNCTION ms_terms_tsvector(terms text) RETURNS tsvector LANGUAGE sql
        IMMUTABLE PARALLEL SAFE AS $$
        SELECT COALESCE(string_agg(
            '''' || replace(replace(left(t, 500), '\', '\\'), '''', '''''') || ''':'
                || LEAST(n, 16383), ' '), '')::tsvector
        FROM unnest(regexp_split_to_array(btrim(terms), '\s+')) WITH ORDINALITY AS x (t, n)
        WHERE t <> ''
    $$""",
]

#: Every table that holds one tenant's rows (all but ``schema_version`` and the shared
#: ``tenants`` and ``api_keys``). Each gets a ``tenant`` column leading its keys and a policy.
TENANT_TABLES = (
    "meta", "memories", "memories_fts", "fts_totals", "vectors", "history",
    "user_generation", "entities", "entity_aliases", "facts", "fact_sources",
    "working_sessions", "working_messages", "tombstones",
)  # fmt: skip
#: The setting that names the tenant of a transaction (set with ``set_config(..., true)``,
#: so it ends with the transaction and a pooled connection never carries it on).
TENANT_SETTING = "mnemolayer.tenant"
_CURRENT = f"current_setting('{TENANT_SETTING}', true)"

# Keys: every primary key, unique constraint and unique index of a tenant table gets
# ``tenant`` in front (two tenants may hold the same user ids and identical content), and
# each foreign key follows its referenced key. Read from the catalog, so the statements
# hold whatever names PostgreSQL gave the constraints.
_REKEY = rf"""DO $$
DECLARE
    tables text[] := ARRAY[{", ".join(f"'{t}'" for t in TENANT_TABLES)}];
    r record;
    foreign_keys text[] := ARRAY[]::text[];
    stmt text;
BEGIN
    FOR r IN SELECT t.relname, c.conname, pg_get_constraintdef(c.oid) AS def
        FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
        WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ANY (tables)
          AND c.contype = 'f'
    LOOP
        foreign_keys := foreign_keys || format('ALTER TABLE %I ADD CONSTRAINT %I %s',
            r.relname, r.conname, regexp_replace(r.def, '\(', '(tenant, ', 'g'));
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', r.relname, r.conname);
    END LOOP;
    FOR r IN SELECT t.relname, c.conname, pg_get_constraintdef(c.oid) AS def
        FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
        WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ANY (tables)
          AND c.contype IN ('p', 'u')
    LOOP
        EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', r.relname, r.conname);
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', r.relname, r.conname,
            regexp_replace(r.def, '\(', '(tenant, '));
    END LOOP;
    FOR r IN SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
        FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
        WHERE t.relnamespace = current_schema()::regnamespace AND t.relname = ANY (tables)
          AND i.indisunique
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
    LOOP
        EXECUTE format('DROP INDEX %s', r.name);
        EXECUTE regexp_replace(r.def, '\(', '(tenant, ');
    END LOOP;
    FOREACH stmt IN ARRAY foreign_keys LOOP
        EXECUTE stmt;
    END LOOP;
END $$"""

_TENANTS: list[str] = [
    # Existing rows are tenant 'default' (what a single store is served as); later rows
    # name the tenant of their transaction, and a statement without one fails.
    *(f"ALTER TABLE {t} ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default'" for t in TENANT_TABLES),
    *(
        f"ALTER TABLE {t} ALTER COLUMN tenant SET DEFAULT current_setting('{TENANT_SETTING}')"
        for t in TENANT_TABLES
    ),
    _REKEY,
    # The keyword totals: one row per tenant, made by its first keyword row.
    """CREATE OR REPLACE FUNCTION ms_fts_totals() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        d_rows bigint := 0;
        d_tokens bigint := 0;
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            d_rows := d_rows - 1;
            d_tokens := d_tokens - ms_term_count(OLD.terms);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            d_rows := d_rows + 1;
            d_tokens := d_tokens + ms_term_count(NEW.terms);
        END IF;
        INSERT INTO fts_totals (id, rows, tokens) VALUES (1, d_rows, d_tokens)
        ON CONFLICT (tenant, id) DO UPDATE
        SET rows = fts_totals.rows + excluded.rows, tokens = fts_totals.tokens + excluded.tokens;
        RETURN NULL;
    END $$""",
    # Row-level security: FORCE, so that the tables' owner (the application's role) is
    # held to it too. Superusers and BYPASSRLS roles skip every policy: the multi-tenant
    # server refuses to run as one (PostgresDatabase.check_row_security).
    *(
        stmt
        for t in TENANT_TABLES
        for stmt in (
            f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {t} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY tenant_isolation ON {t} USING (tenant = {_CURRENT}) "
            f"WITH CHECK (tenant = {_CURRENT})",
        )
    ),
    # Shared by every tenant, no policy: the names of the tenants (for listings; no
    # tenant's data). A store registers its tenant when it is opened for writing.
    """CREATE TABLE tenants (name TEXT PRIMARY KEY, created_at TEXT NOT NULL)""",
    # Shared too: the REST server's API keys when it serves tenants from this database
    # (mnemolayer.server.rest.pgkeys; the columns of the SQLite key file's schema 2). A
    # key names its tenant, and is looked up before any tenant is known.
    """CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL,
        tenant TEXT,
        users TEXT NOT NULL,
        admin INTEGER NOT NULL,
        operator INTEGER NOT NULL DEFAULT 0,
        name TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT,
        CHECK ((operator = 1) = (tenant IS NULL)),
        CHECK (operator = 0 OR (admin = 1 AND users = '[]'))
    )""",
    """CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at)""",
]

MIGRATIONS: list[list[str]] = [
    # 1: records, keyword index, vectors, audit history, per-user change counter.
    [
        "CREATE EXTENSION IF NOT EXISTS vector",
        *_FUNCTIONS,
        """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
        """CREATE TABLE memories (
            rowid BIGINT GENERATED BY DEFAULT AS IDENTITY,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            session_id TEXT,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            role TEXT,
            speaker TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            importance DOUBLE PRECISION NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            occurred_at TEXT,
            valid_from TEXT,
            valid_to TEXT,
            expires_at TEXT,
            access_count BIGINT NOT NULL DEFAULT 0,
            last_accessed_at TEXT,
            superseded_by TEXT,
            source_ids TEXT NOT NULL DEFAULT '[]',
            entities TEXT NOT NULL DEFAULT '[]',
            content_hash TEXT NOT NULL,
            embedding_model TEXT,
            PRIMARY KEY (user_id, rowid),
            UNIQUE (user_id, id)
        )""",
        """CREATE UNIQUE INDEX memories_dedup ON memories (user_id, content_hash)""",
        # Look-ups by id alone (get, update, delete by id) and by rowid (search).
        """CREATE INDEX memories_id ON memories (id)""",
        """CREATE INDEX memories_rowid ON memories (rowid)""",
        """CREATE INDEX memories_user_session ON memories (user_id, session_id)""",
        """CREATE TABLE memories_fts (
            user_id TEXT NOT NULL,
            rowid BIGINT NOT NULL,
            terms TEXT NOT NULL,
            tsv TSVECTOR GENERATED ALWAYS AS (ms_terms_tsvector(terms)) STORED,
            PRIMARY KEY (user_id, rowid)
        )""",
        """CREATE INDEX memories_fts_rowid ON memories_fts (rowid)""",
        # Rows and terms of the keyword index, kept by a trigger, for BM25's mean length
        # (one row read, where summing every row's terms is a scan).
        """CREATE TABLE fts_totals (id INTEGER PRIMARY KEY, rows BIGINT NOT NULL,
            tokens BIGINT NOT NULL)""",
        """INSERT INTO fts_totals VALUES (1, 0, 0)""",
        r"""CREATE FUNCTION ms_term_count(terms text) RETURNS bigint LANGUAGE sql IMMUTABLE
            PARALLEL SAFE AS $$
            SELECT COALESCE(array_length(regexp_split_to_array(btrim(terms), '\s+'), 1), 0)
                   - CASE WHEN btrim(terms) = '' THEN 1 ELSE 0 END
        $$""",
        """CREATE FUNCTION ms_fts_totals() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE fts_totals SET rows = rows - 1, tokens = tokens - ms_term_count(OLD.terms)
                WHERE id = 1;
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                UPDATE fts_totals SET rows = rows + 1, tokens = tokens + ms_term_count(NEW.terms)
                WHERE id = 1;
            END IF;
            RETURN NULL;
        END $$""",
        """CREATE TRIGGER memories_fts_totals AFTER INSERT OR UPDATE OR DELETE ON memories_fts
            FOR EACH ROW EXECUTE FUNCTION ms_fts_totals()""",
        """CREATE INDEX memories_fts_tsv ON memories_fts USING gin (tsv)""",
        """CREATE TABLE vectors (
            user_id TEXT NOT NULL,
            memory_rowid BIGINT NOT NULL,
            chunk INTEGER NOT NULL,
            vector VECTOR NOT NULL,
            PRIMARY KEY (user_id, memory_rowid, chunk),
            FOREIGN KEY (user_id, memory_rowid) REFERENCES memories (user_id, rowid)
                ON DELETE CASCADE
        )""",
        """CREATE INDEX vectors_rowid ON vectors (memory_rowid)""",
        """CREATE TABLE history (
            id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event TEXT NOT NULL,
            old_content TEXT,
            new_content TEXT,
            old_metadata TEXT,
            new_metadata TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (user_id, id)
        )""",
        """CREATE INDEX history_memory ON history (memory_id, id)""",
        """CREATE TABLE user_generation (user_id TEXT PRIMARY KEY, generation BIGINT NOT NULL)""",
    ],
    # 2: SQLite's fts5vocab table; here term counts come from the GIN index.
    [],
    # 3: the knowledge graph of semantic memory (store/graph/).
    [
        """CREATE TABLE entities (
            rowid BIGINT GENERATED BY DEFAULT AS IDENTITY,
            id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            name TEXT NOT NULL,
            norm TEXT NOT NULL,
            type TEXT NOT NULL DEFAULT 'thing',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, rowid),
            UNIQUE (user_id, id),
            UNIQUE (user_id, norm)
        )""",
        """CREATE INDEX entities_id ON entities (id)""",
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
            rowid BIGINT GENERATED BY DEFAULT AS IDENTITY,
            id TEXT NOT NULL,
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
            confidence DOUBLE PRECISION NOT NULL,
            source_ids TEXT NOT NULL DEFAULT '[]',
            speaker TEXT,
            memory_id TEXT,
            PRIMARY KEY (user_id, rowid),
            UNIQUE (user_id, id)
        )""",
        """CREATE INDEX facts_id ON facts (id)""",
        """CREATE INDEX facts_subject ON facts (user_id, subject_id, predicate, valid_from)""",
        """CREATE INDEX facts_current ON facts (user_id, subject_id, predicate)
            WHERE valid_to IS NULL""",
        """CREATE INDEX facts_object ON facts (user_id, object_id) WHERE object_id IS NOT NULL""",
        """CREATE INDEX facts_memory ON facts (user_id, memory_id) WHERE memory_id IS NOT NULL""",
        """CREATE INDEX facts_superseded ON facts (user_id, superseded_by)
            WHERE superseded_by IS NOT NULL""",
        """CREATE TABLE fact_sources (
            user_id TEXT NOT NULL,
            fact_id TEXT NOT NULL,
            source_id TEXT NOT NULL,
            stated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, fact_id, source_id)
        )""",
        """CREATE INDEX fact_sources_source ON fact_sources (user_id, source_id)""",
    ],
    # 4: working memory (working.py).
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
        )""",
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
        )""",
    ],
    # 5: session-only memories.
    ["""ALTER TABLE memories ADD COLUMN session_only INTEGER NOT NULL DEFAULT 0"""],
    # 6: the lifecycle: pinned, archived, merged and consolidated records.
    [
        """ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN archived_at TEXT""",
        """ALTER TABLE memories ADD COLUMN merged_into TEXT""",
        """ALTER TABLE memories ADD COLUMN consolidated_into TEXT""",
        """CREATE INDEX memories_inactive ON memories (user_id)
            WHERE expires_at IS NOT NULL OR superseded_by IS NOT NULL
               OR archived_at IS NOT NULL OR merged_into IS NOT NULL""",
    ],
    # 7: per-user keyword terms (each term prefixed with its user's tag, as SQLite's
    # migration 7 does): nothing to convert, no PostgreSQL store predates them.
    [],
    # 8: tombstones of deleted messages (keyed hashes of their identities; see SQLite's
    # migration 8).
    [
        """CREATE TABLE tombstones (
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            deleted_at TEXT NOT NULL,
            PRIMARY KEY (user_id, key)
        )""",
    ],
    # 9: capture before enrichment: pending enrichment per record, and the revision of
    # its content (as SQLite's migration 9).
    [
        """ALTER TABLE memories ADD COLUMN pending_embedding INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN pending_extraction INTEGER NOT NULL DEFAULT 0""",
        """ALTER TABLE memories ADD COLUMN revision INTEGER NOT NULL DEFAULT 0""",
        """CREATE INDEX memories_pending ON memories (user_id, id)
            WHERE pending_embedding = 1 OR pending_extraction = 1""",
    ],
    # 10: record rowids are never reused (SQLite's migration 10 makes its rowid
    # AUTOINCREMENT): an identity column never hands out a value twice already.
    [],
    # 11: trust: each memory's source and its flags (as SQLite's migration 11).
    [
        """ALTER TABLE memories ADD COLUMN source TEXT NOT NULL DEFAULT 'user'""",
        """ALTER TABLE memories ADD COLUMN flags TEXT NOT NULL DEFAULT '[]'""",
        """UPDATE memories SET source = CASE role WHEN 'tool' THEN 'tool'
            WHEN 'assistant' THEN 'assistant' WHEN 'system' THEN 'assistant'
            ELSE 'user' END""",
    ],
    # 12: tenants in one database (docs/multi-tenant.md), enforced by row-level security.
    _TENANTS,
]


def _binary_text(stmt: str) -> str:
    """Text columns compare and sort byte-wise (``COLLATE "C"``), as SQLite's do: the
    order of ids, times and names must not depend on the server's locale."""
    if not stmt.lstrip().upper().startswith(("CREATE TABLE", "ALTER TABLE")):
        return stmt
    return re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', stmt)


MIGRATIONS = [[_binary_text(stmt) for stmt in step] for step in MIGRATIONS]

SCHEMA_VERSION = len(MIGRATIONS)
