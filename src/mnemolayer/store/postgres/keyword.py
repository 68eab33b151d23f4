"""The PostgreSQL keyword index: ``memories_fts`` rows of terms with a generated
``tsvector`` under a GIN index, and row and token totals that a trigger keeps
(``fts_totals``); the hooks of :class:`~mnemolayer.store.core.StoreCore` for keyword
search, change detection and erasure.

Term document counts are cached in the process until :meth:`TsvectorIndex.change_token`
reads a new index version (``meta.index_version``, bumped with every user generation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mnemolayer.store.core import StoreCore
from mnemolayer.store.txn import Txn

__all__ = ["TsvectorIndex"]

_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_CHUNK = 500
#: PostgreSQL's longest lexeme in bytes (MAXSTRLEN): to_tsvector leaves a longer word out
#: of the index, and a tsquery naming one is an error ("word is too long in tsquery").
_MAX_LEXEME_BYTES = 2047


class TsvectorIndex(StoreCore):
    """Keyword entries, matches and statistics from a ``tsvector`` GIN index."""

    def _index_terms(self, c: Txn, rowid: int, user_id: str, terms: str, *, replace: bool) -> None:
        if replace:
            # An update, then an insert when there was no row: not ON CONFLICT DO UPDATE,
            # which a foreign partition cannot run (sharding.py); writers run one at a
            # time, so nothing comes between the two.
            c.execute(
                "UPDATE memories_fts SET terms = ? WHERE user_id = ? AND rowid = ?",
                (terms, user_id, rowid),
            )
            c.execute(
                "INSERT INTO memories_fts (user_id, rowid, terms) SELECT ?, ?, ? WHERE NOT "
                "EXISTS (SELECT 1 FROM memories_fts WHERE user_id = ? AND rowid = ?)",
                (user_id, rowid, terms, user_id, rowid),
            )
        else:
            c.execute(
                "INSERT INTO memories_fts (user_id, rowid, terms) VALUES (?, ?, ?)",
                (user_id, rowid, terms),
            )

    def _unindex_terms(self, c: Txn, user_id: str, rowids: Sequence[int]) -> None:
        c.execute(  # by user too: one shard when sharded by user
            f"DELETE FROM memories_fts WHERE user_id = ? AND rowid IN ({','.join('?' * len(rowids))})",
            [user_id, *rowids],
        )

    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]:
        """Rows of a user matching an FTS5-style expression (quoted terms joined by OR,
        :func:`mnemolayer.text.terms.fts_match_expression`), best first by ``ts_rank``:
        ``[(rowid, indexed terms)]``; scores are computed by the caller.

        In two steps, as the SQLite store: the best ``2 * limit`` matches are ranked in
        the keyword index alone (its terms carry the user's tag, so the GIN index yields
        only this user's rows), then checked against ``memories`` (user and ``where``);
        only when fewer than ``limit`` pass is the joined query run."""
        query = _tsquery(match)
        if query is None:
            return []
        limit = int(limit)
        ranked = self.read(  # the user's rows (its tags already say so): one shard
            "SELECT rowid, terms FROM memories_fts WHERE user_id = ? AND tsv @@ CAST(? AS tsquery) "
            f"ORDER BY ts_rank(tsv, CAST(? AS tsquery)) DESC, rowid LIMIT {2 * limit}",
            [user_id, query, query],
        )
        if ranked:
            marks = ",".join("?" * len(ranked))
            ok = {
                int(r[0])
                for r in self.read(
                    f"SELECT m.rowid FROM memories m WHERE m.user_id = ? AND m.rowid IN ({marks}) "
                    f"AND {where}",
                    [user_id, *(r[0] for r in ranked), *params],
                )
            }
            kept = [(int(r[0]), str(r[1])) for r in ranked if int(r[0]) in ok]
            if len(kept) >= limit or len(ranked) < 2 * limit:
                return kept[:limit]
        rows = self.read(
            "SELECT m.rowid, t.terms FROM memories_fts t "
            "JOIN memories m ON m.user_id = t.user_id AND m.rowid = t.rowid "
            f"WHERE t.tsv @@ CAST(? AS tsquery) AND m.user_id = ? AND {where} "
            f"ORDER BY ts_rank(t.tsv, CAST(? AS tsquery)) DESC, m.rowid LIMIT {limit}",
            [query, user_id, *params, query],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def _count_term_docs(self, terms: Sequence[str], user_id: str | None) -> dict[str, int]:
        """From the GIN index, one round trip for every term; with ``user_id``, only that
        user's rows are read (one shard when sharded by user)."""
        mine, user = ("user_id = ? AND ", [user_id]) if user_id is not None else ("", [])
        counted = self.read(
            " UNION ALL ".join(
                f"SELECT {i}, COUNT(*) FROM memories_fts WHERE {mine}tsv @@ CAST(? AS tsquery)"
                for i in range(len(terms))
            ),
            [p for t in terms for p in (*user, _lexeme(t))],
        )
        return {terms[int(i)]: int(n) for i, n in counted}

    def text_stats(self, user_id: str | None = None) -> tuple[int, float]:
        """``(records, mean indexed terms per record)`` for BM25: the records of
        ``user_id`` (of the store when ``None``) and the store's mean length, from the
        totals a trigger keeps (``fts_totals``: one row read, no scan)."""
        # The tenant's row (row-level security), made by its first keyword row.
        rows, tokens = self.read(
            "SELECT COALESCE(SUM(rows), 0), COALESCE(SUM(tokens), 0) FROM fts_totals WHERE id = 1"
        )[0]
        rows, tokens = int(rows), int(tokens)
        if user_id is None:
            n = int(rows)
        else:
            n = int(self.read("SELECT COUNT(*) FROM memories WHERE user_id = ?", (user_id,))[0][0])
        return n, (float(tokens) / rows if rows else 0.0)

    def change_token(self) -> tuple[int, int]:
        """Changes when the indexed data changes, by any process: the store's index
        version (bumped with every user generation) and this process's own index writes."""
        rows = self.read("SELECT value FROM meta WHERE key = 'index_version'")
        return self._token_seen(((int(rows[0][0]) if rows else 0), self._index_writes))

    def _index_changed(self, c: Txn) -> None:
        """Advance the store's index version (read by :meth:`change_token`), so that
        every process sees that the keyword index changed."""
        self._doc_counts.clear()
        c.execute(
            "INSERT INTO meta VALUES ('index_version', '1') ON CONFLICT (key) DO UPDATE "
            "SET value = CAST(CAST(meta.value AS BIGINT) + 1 AS TEXT)"
        )

    # -- erasure -------------------------------------------------------------------------

    def unique_terms(self, c: Txn, rowids: set[int]) -> set[str]:
        """The stored terms are the lexemes; the rows holding one are found through the
        GIN index."""
        if not rowids:
            return set()
        ordered = sorted(rowids)
        terms: set[str] = set()
        for start in range(0, len(ordered), _CHUNK):
            part = ordered[start : start + _CHUNK]
            for r in c.execute(
                f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})",
                part,
            ):
                terms.update(str(r[0]).split())
        unique: set[str] = set()
        for term in terms:
            if not _indexable(term):
                continue  # never in the index, so on no row of it
            docs = {
                int(r[0])
                for r in c.execute(
                    "SELECT rowid FROM memories_fts WHERE tsv @@ CAST(? AS tsquery)",
                    (_lexeme(term),),
                )
            }
            if docs and docs <= rowids:
                unique.add(term)
        return unique

    def vocab_count(self, c: Txn | None, terms: set[str]) -> int:
        return sum(
            int(
                self._rows(
                    c,
                    "SELECT EXISTS (SELECT 1 FROM memories_fts WHERE tsv @@ CAST(? AS tsquery))",
                    (_lexeme(t),),
                )[0][0]
            )
            for t in sorted(terms)
            if _indexable(t)  # a longer word is in no row of the index
        )


def _indexable(term: str) -> bool:
    """Whether ``term`` can be a lexeme of the index (see :data:`_MAX_LEXEME_BYTES`)."""
    return len(term.encode("utf-8")) <= _MAX_LEXEME_BYTES


def _lexeme(term: str) -> str:
    """``term`` as one tsquery lexeme, taken as it is (no dictionary)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def _tsquery(match: str) -> str | None:
    """An FTS5 expression of quoted terms joined by OR as tsquery text: each term's
    whitespace-separated tokens as a phrase, the terms joined by ``|``."""
    parts: list[str] = []
    for quoted in _QUOTED.findall(match):
        tokens = quoted.replace('""', '"').split()
        # A phrase with a word too long for the index matches no row: leave it out
        # (naming the word would make the whole query an error).
        if tokens and all(_indexable(t) for t in tokens):
            parts.append(" <-> ".join(_lexeme(t) for t in tokens))
    if not parts:
        return None
    return " | ".join(f"({p})" if " " in p else p for p in parts)
