"""The SQL store's named statements for code above the store, in one mixin: what the
maintenance passes (:mod:`.states`), recall (:mod:`.recall`) and the integrations
(:mod:`.metadata`) read and delete, so that none of them writes SQL.

Written once in the SQLite dialect; the PostgreSQL store inherits them and translates.
"""

from __future__ import annotations

from mnemolayer.store.metadata import MetadataStatements
from mnemolayer.store.passes import LifecycleStatements
from mnemolayer.store.recall import RecallStatements

__all__ = ["Statements"]


class Statements(LifecycleStatements, RecallStatements, MetadataStatements):
    """The named statements, mixed into :class:`~mnemolayer.store.sqlite.store.SQLiteStore`."""
