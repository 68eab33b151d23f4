"""The embedded SQLite store: engine, write-ahead log, migrations."""
