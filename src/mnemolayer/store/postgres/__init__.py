"""The PostgreSQL (pgvector) store: engine, SQL translation, migrations."""
