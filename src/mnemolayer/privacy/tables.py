"""Where a user's data is in the store's file: the tables with a ``user_id`` column, the
rows of a scope, and the keyword-index terms that only the user's records contained
(what :mod:`mnemolayer.privacy.erasure` counts before and checks after a deletion)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemolayer.protocols import Txn
    from mnemolayer.store.base import SQLStore

__all__ = [
    "candidate_terms",
    "count_in",
    "ident",
    "pg_vocab_count",
    "scope_counts",
    "unique_terms",
    "user_tables",
    "vocab_count",
]

CHUNK = 500
_TOKEN = re.compile(r"[^\W_]+")


def user_tables(c: Txn | None, store: SQLStore) -> list[str]:
    """Every table of the store's file with a ``user_id`` column, sorted.

    Args:
        c: an open transaction to read in, or ``None`` for a plain read.
    """

    def rows(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if c is not None:
            return c.execute(sql, params).fetchall()
        return store.read(sql, params)

    if store.dialect == "postgres":
        return [
            str(r[0])
            for r in rows(
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
                "AND table_schema = current_schema() ORDER BY table_name"
            )
        ]
    names = [
        str(r[0]) for r in rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    return [
        name
        for name in names
        if any(col[1] == "user_id" for col in rows(f"PRAGMA table_info({ident(name)})"))
    ]


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def scope_counts(
    c: Txn, tables: Iterable[str], where: str, params: Sequence[Any]
) -> dict[str, int]:
    """Rows of the scope: per table with a ``user_id`` column for a whole user (``where``
    is ``"1"``), only ``memories`` for a narrower scope; plus the full-text rows and
    vectors of the scope's records. ``params``: the user id, then ``where``'s."""
    counts: dict[str, int] = {}
    if where == "1":
        for table in tables:
            sql = f"SELECT count(*) FROM {ident(table)} WHERE user_id = ?"
            counts[table] = int(c.execute(sql, params[:1]).fetchone()[0])
    else:
        counts["memories"] = int(
            c.execute(
                f"SELECT count(*) FROM memories WHERE user_id = ? AND {where}", params
            ).fetchone()[0]
        )
    mine = f"(SELECT rowid FROM memories WHERE user_id = ? AND {where})"
    counts["keyword_index"] = int(
        c.execute(f"SELECT count(*) FROM memories_fts WHERE rowid IN {mine}", params).fetchone()[0]
    )
    vectors = int(
        c.execute(f"SELECT count(*) FROM vectors WHERE memory_rowid IN {mine}", params).fetchone()[
            0
        ]
    )
    counts["vectors"] = vectors if where != "1" else counts.get("vectors", vectors)
    return counts


def candidate_terms(texts: Iterable[str]) -> set[str]:
    """Tokens as FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes them (folded
    case, diacritics removed, split at anything but letters and digits); a candidate
    the index does not hold is simply not found."""
    out: set[str] = set()
    for text in texts:
        folded = "".join(
            ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn"
        )
        out.update(_TOKEN.findall(folded.lower()))
    return out


def unique_terms(c: Txn, rowids: set[int], dialect: str) -> set[str]:
    """Terms of the full-text index that occur only in ``rowids``' rows."""
    if not rowids:
        return set()
    if dialect == "postgres":
        return _pg_unique_terms(c, rowids)
    c.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mnemolayer_fts_instances "
        "USING fts5vocab(main, memories_fts, instance)"
    )
    texts: list[str] = []
    ordered = sorted(rowids)
    for start in range(0, len(ordered), CHUNK):
        part = ordered[start : start + CHUNK]
        texts += [
            str(r[0])
            for r in c.execute(
                f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})",
                part,
            )
        ]
    unique: set[str] = set()
    for term in candidate_terms(texts):
        docs = {
            int(r[0])
            for r in c.execute(
                "SELECT DISTINCT doc FROM temp.mnemolayer_fts_instances WHERE term = ?", (term,)
            )
        }
        if docs and docs <= rowids:
            unique.add(term)
    return unique


def _pg_unique_terms(c: Any, rowids: set[int]) -> set[str]:
    """:func:`unique_terms` on PostgreSQL: the stored terms are the lexemes, and the
    rows holding one are found through the GIN index."""
    from mnemolayer.store.postgres.store import _lexeme

    ordered = sorted(rowids)
    terms: set[str] = set()
    for start in range(0, len(ordered), CHUNK):
        part = ordered[start : start + CHUNK]
        for r in c.execute(
            f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})", part
        ):
            terms.update(str(r[0]).split())
    unique: set[str] = set()
    for term in terms:
        docs = {
            int(r[0])
            for r in c.execute(
                "SELECT rowid FROM memories_fts WHERE tsv @@ CAST(? AS tsquery)", (_lexeme(term),)
            )
        }
        if docs and docs <= rowids:
            unique.add(term)
    return unique


def pg_vocab_count(rows: Any, terms: Sequence[str]) -> int:
    """How many of ``terms`` the PostgreSQL keyword index still holds."""
    from mnemolayer.store.postgres.store import _lexeme

    return sum(
        int(
            rows(
                "SELECT EXISTS (SELECT 1 FROM memories_fts WHERE tsv @@ CAST(? AS tsquery))",
                (_lexeme(t),),
            )[0][0]
        )
        for t in terms
    )


def vocab_count(c: Txn, terms: set[str], dialect: str) -> int:
    if dialect == "postgres":
        return pg_vocab_count(lambda sql, p: c.execute(sql, p).fetchall(), sorted(terms))
    found = 0
    ordered = sorted(terms)
    for start in range(0, len(ordered), CHUNK):
        part = ordered[start : start + CHUNK]
        found += int(
            c.execute(
                "SELECT count(*) FROM memories_fts_vocab WHERE term IN "
                f"({','.join('?' * len(part))})",
                part,
            ).fetchone()[0]
        )
    return found


def count_in(store: SQLStore, head: str, values: Sequence[Any]) -> int:
    """``head IN (values)`` counted in chunks (``head`` ends with the column)."""
    total = 0
    for start in range(0, len(values), CHUNK):
        part = list(values[start : start + CHUNK])
        total += int(store.read(f"{head} IN ({','.join('?' * len(part))})", part)[0][0])
    return total
