"""Reads of record metadata across users, for integrations that keep their own keys in
it (:mod:`mnemolayer.integrations.langgraph`), as a store method.

A mixin of the SQL store (:class:`~mnemolayer.store.sqlite.store.SQLiteStore`, and so of
the PostgreSQL store, which translates ``json_extract``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.models import MemoryRecord

__all__ = ["MetadataStatements"]


class _Store(Protocol):
    """What :class:`MetadataStatements` uses of the store it is mixed into."""

    crypto: FieldCipher | None

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def select(
        self, where: str, params: Sequence[Any], *, order: str = "id", limit: int | None = None
    ) -> list[MemoryRecord]: ...


class MetadataStatements:
    """Metadata reads across users (mixed into the SQL store)."""

    def metadata_values(self: _Store, key: str, *, present: str) -> list[tuple[str, Any]]:
        """``(user_id, metadata[key])`` of every record, of every user, whose metadata
        holds ``present`` and a non-empty value at ``key`` (repeats possible). The value
        at ``key`` must be a JSON array or object (``json_extract`` returns those as JSON
        text, which is parsed here).

        On an encrypted store the metadata is sealed, so the records are read (and
        decrypted) through the store instead of with SQLite's JSON functions."""
        if self.crypto is not None:
            return [
                (rec.user_id, rec.metadata[key])
                for rec in self.select("1", [])
                if rec.metadata.get(key) and present in rec.metadata
            ]
        rows = self.read(
            "SELECT DISTINCT user_id, json_extract(metadata, ?) FROM memories "
            "WHERE json_extract(metadata, ?) IS NOT NULL",
            [f"$.{key}", f"$.{present}"],
        )
        return [(user, json.loads(value)) for user, value in rows if value]
