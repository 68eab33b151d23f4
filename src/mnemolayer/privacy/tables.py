"""Row counts of a scope, table by table (what :mod:`mnemolayer.privacy.erasure` counts
before and checks after a deletion). Which tables hold a user's rows and which keyword
terms were the user's alone are the store's hooks (``user_tables``, ``unique_terms``,
``vocab_count``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemolayer.protocols import Txn
    from mnemolayer.store.base import SQLStore

__all__ = ["count_in", "ident", "scope_counts"]

CHUNK = 500


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


def count_in(store: SQLStore, head: str, values: Sequence[Any]) -> int:
    """``head IN (values)`` counted in chunks (``head`` ends with the column)."""
    total = 0
    for start in range(0, len(values), CHUNK):
        part = list(values[start : start + CHUNK])
        total += int(store.read(f"{head} IN ({','.join('?' * len(part))})", part)[0][0])
    return total
