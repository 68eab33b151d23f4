"""What every part of the graph store stands on: name normalisation, the fact and
entity row layouts, the field cipher of an encrypted store, and row decoding."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from mnemolayer.extract.base import SELF
from mnemolayer.models import Entity, Fact
from mnemolayer.store.base import SQLStore
from mnemolayer.store.rows import from_iso
from mnemolayer.store.txn import Txn

__all__ = ["GraphBase", "normalize_name"]

# Entity types that carry no information; a specific type given later replaces them.
_GENERIC_TYPES = frozenset({"", "thing", "unknown"})
# Punctuation that is part of a name when it ends one ("C#", "AT&T", "100%", "@home").
_KEEP_PUNCT = frozenset("#%&@*")
_CHUNK = 400  # ids per IN (...) list, well under SQLite's parameter limit

_FACT_COLUMNS = (
    "f.id, f.user_id, e.name, f.subject_id, f.predicate, f.object, f.object_id, "
    "f.object_type, f.date, f.valid_from, f.valid_to, f.created_at, f.expired_at, "
    "f.superseded_by, f.confidence, f.source_ids, f.speaker, f.memory_id"
)
#: Joined on the user too: both are sharded by it (one shard on Citus, docs/postgres.md).
_FACT_FROM = "facts f JOIN entities e ON e.user_id = f.user_id AND e.id = f.subject_id"
_FACT_ORDER = "f.valid_from, f.created_at, f.rowid"
_ENTITY_COLUMNS = "id, user_id, name, type, created_at, updated_at"


def _strip_char(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P") and ch not in _KEEP_PUNCT


def normalize_name(text: str) -> str:
    """The key two names must share to be the same entity (or two objects the same value).

    NFKC (full-width and compatibility forms fold: ``"Ｌｅｎａ"`` → ``"Lena"``), then
    case-folding (``"STRASSE"`` and ``"Straße"`` meet), whitespace runs collapsed to one
    space, and punctuation stripped from both ends (quotes, brackets, ``。``, ``,``…, but
    not ``#%&@*``, which end names such as ``"C#"``). Returns ``""`` for text with nothing
    else in it. Idempotent: ``normalize_name(normalize_name(x)) == normalize_name(x)``.
    """
    # NFKC again after folding: folding can leave text that NFKC recomposes ("ǰ").
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = " ".join(folded.split())
    start, end = 0, len(text)
    while start < end and (_strip_char(text[start]) or text[start].isspace()):
        start += 1
    while end > start and (_strip_char(text[end - 1]) or text[end - 1].isspace()):
        end -= 1
    return text[start:end]


_SELF_NORM = normalize_name(SELF)


def _chunks(items: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), _CHUNK):
        yield list(items[start : start + _CHUNK])


def _marks(n: int) -> str:
    return ",".join("?" * n)


class GraphBase:
    """The store under the graph, and the plumbing its parts share."""

    def __init__(self, store: SQLStore) -> None:
        self.store = store

    # -- encryption (an encrypted store: mnemolayer.crypto) -----------------------------
    # Names, aliases, fact objects and speakers are sealed with the user's data key;
    # the normalised forms that rows are looked up by (entities.norm, entity_aliases.norm,
    # facts.object_norm) are keyed hashes, so equality look-ups still work in SQL.

    def _key(self, user_id: str, norm: str, *, create: bool = False) -> str:
        """A normalised name as stored: as is, or its keyed hash in an encrypted store
        (``create``: for a write, which may make the user's data key)."""
        crypto = self.store.crypto
        if crypto is None:
            return norm
        return crypto.keyed_hash(user_id, "graph.norm", norm, create=create)

    def _seal(self, user_id: str, field: str, row_id: str, text: str | None) -> str | None:
        crypto = self.store.crypto
        if crypto is None or text is None:
            return text
        return crypto.encrypt(user_id, field, row_id, text)

    def _open(self, user_id: str, field: str, row_id: str, value: str | None) -> str | None:
        crypto = self.store.crypto
        if crypto is None or value is None:
            return value
        return crypto.decrypt(user_id, field, row_id, value)

    # -- plumbing --------------------------------------------------------------------

    def _rows(self, c: Txn | None, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if c is not None:
            return c.execute(sql, params).fetchall()
        return self.store.read(sql, params)

    def _fact(self, row: Sequence[Any]) -> Fact:
        if self.store.crypto is not None:
            u = row[1]
            row = (
                *row[:2], self._open(u, "entities.name", row[3], row[2]), *row[3:5],
                self._open(u, "facts.object", row[0], row[5]), *row[6:16],
                self._open(u, "facts.speaker", row[0], row[16]), row[17],
            )  # fmt: skip
        return Fact.model_construct(
            id=row[0], user_id=row[1], subject=row[2], subject_id=row[3], predicate=row[4],
            object=row[5], object_id=row[6], object_type=row[7],
            date=date.fromisoformat(row[8]) if row[8] else None,
            valid_from=datetime.fromisoformat(row[9]), valid_to=from_iso(row[10]),
            created_at=datetime.fromisoformat(row[11]), expired_at=from_iso(row[12]),
            superseded_by=row[13], confidence=float(row[14]),
            source_ids=json.loads(row[15]), speaker=row[16], memory_id=row[17],
        )  # fmt: skip

    def _select_facts(
        self,
        c: Txn | None,
        where: str,
        params: Sequence[Any],
        *,
        order: str = _FACT_ORDER,
    ) -> list[Fact]:
        sql = f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {where} ORDER BY {order}"
        return [self._fact(r) for r in self._rows(c, sql, params)]

    def _entities_from_rows(self, c: Txn | None, rows: Sequence[Sequence[Any]]) -> list[Entity]:
        if not rows:
            return []
        user_id = rows[0][1]
        ids = [r[0] for r in rows]
        aliases: dict[str, list[str]] = {}
        for part in _chunks(ids):
            for entity_id, alias, norm in self._rows(
                c,
                f"SELECT entity_id, alias, norm FROM entity_aliases WHERE user_id = ? "
                f"AND entity_id IN ({_marks(len(part))}) ORDER BY alias",
                [user_id, *part],
            ):
                text = self._open(user_id, "entity_aliases.alias", norm, alias)
                aliases.setdefault(entity_id, []).append(text or "")
        if self.store.crypto is not None:  # sealed aliases sort at random: sort the text
            for names in aliases.values():
                names.sort()
        return [
            Entity.model_construct(
                id=r[0],
                user_id=r[1],
                name=self._open(r[1], "entities.name", r[0], r[2]) or "",
                type=r[3],
                aliases=aliases.get(r[0], []),
                created_at=datetime.fromisoformat(r[4]),
                updated_at=datetime.fromisoformat(r[5]),
            )
            for r in rows
        ]

    def _find_entity(self, c: Txn | None, user_id: str, norm: str) -> Entity | None:
        """By normalised name, then by alias; the user's own entity only by name."""
        rows = self._rows(
            c, f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? AND norm = ?",
            (user_id, self._key(user_id, norm)),
        )  # fmt: skip
        if not rows and norm != _SELF_NORM:
            rows = self._rows(
                c,
                f"SELECT {', '.join('e.' + n.strip() for n in _ENTITY_COLUMNS.split(','))} "
                "FROM entity_aliases a JOIN entities e ON e.user_id = a.user_id AND e.id = a.entity_id "
                "WHERE a.user_id = ? AND a.norm = ?",
                (user_id, self._key(user_id, norm)),
            )
        found = self._entities_from_rows(c, rows)
        return found[0] if found else None
