"""The schema migration runner of both engines.

Each engine lists its migrations (:mod:`mnemolayer.store.sqlite.migrations`,
:mod:`mnemolayer.store.postgres.migrations`): version ``n`` is ``migrations[n - 1]``, a
list of statements in the engine's own SQL. The engine opens the transaction (and takes
its writer lock); :func:`upgrade` applies what is missing inside it and records each
version reached in ``schema_version``, so a failed migration leaves the schema as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from mnemolayer.errors import StoreError
from mnemolayer.store.rows import iso

__all__ = ["check_current", "upgrade"]


def upgrade(
    c: Any, migrations: Sequence[Sequence[str]], *, path: str, placeholder: str = "?"
) -> None:
    """Bring the schema up to ``len(migrations)`` inside ``c``'s open transaction.

    Args:
        c: the transaction's connection; ``c.execute(sql)`` runs a statement as written
            and ``c.execute(sql, params)`` one with ``placeholder`` marks.
        placeholder: the driver's parameter mark (``?`` for sqlite3, ``%s`` for psycopg).

    Raises:
        StoreError: the schema is newer than this mnemolayer.
    """
    target = len(migrations)
    c.execute(
        "CREATE TABLE IF NOT EXISTS schema_version "
        "(version INTEGER NOT NULL, applied_at TEXT NOT NULL)"
    )
    current = c.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0
    if current > target:
        raise StoreError(
            f"{path} has schema version {current}, newer than this mnemolayer "
            f"({target}); upgrade mnemolayer"
        )
    now = iso(datetime.now(UTC))
    for version in range(current + 1, target + 1):
        for stmt in migrations[version - 1]:
            c.execute(stmt)
        c.execute(
            f"INSERT INTO schema_version VALUES ({placeholder}, {placeholder})", (version, now)
        )


def check_current(current: int | None, target: int, path: str) -> None:
    """A store opened read-only cannot be upgraded: its schema must be ``target``.

    Raises:
        StoreError: it is not.
    """
    if current != target:
        raise StoreError(
            f"{path} has schema version {current}, this mnemolayer needs "
            f"{target}: open it once with write access to upgrade it"
        )
