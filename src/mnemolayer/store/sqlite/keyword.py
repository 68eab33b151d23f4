"""The SQLite keyword index: FTS5 (``memories_fts``, tokenizer ``unicode61
remove_diacritics 2``) with its vocabulary table ``memories_fts_vocab``; the hooks of
:class:`~mnemolayer.store.core.StoreCore` for keyword search and erasure."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from mnemolayer.store.core import StoreCore
from mnemolayer.store.txn import Txn

__all__ = ["FTS5Index"]

_CHUNK = 500
_TOKEN = re.compile(r"[^\W_]+")


class FTS5Index(StoreCore):
    """Keyword entries, matches and statistics from FTS5."""

    def _index_terms(self, c: Txn, rowid: int, user_id: str, terms: str, *, replace: bool) -> None:
        if replace:
            c.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
        c.execute("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)", (rowid, terms))

    def _unindex_terms(self, c: Txn, user_id: str, rowids: Sequence[int]) -> None:
        # FTS5 rows have no user column: by rowid (a rowid is one user's).
        c.execute(
            f"DELETE FROM memories_fts WHERE rowid IN ({','.join('?' * len(rowids))})",
            list(rowids),
        )

    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]:
        """Rows of a user matching an FTS5 expression, best first by FTS5's own BM25:
        ``[(rowid, indexed terms)]``; scores are computed by the caller.

        The index holds per-user terms, so the matches are (nearly always) the user's
        own. The best ``2 * limit`` of them are ranked in the index alone and checked
        against ``memories`` (user, ``where``) afterwards: when ``limit`` pass, or there
        are no more matches, these are the answer; otherwise (a narrow scope filtered
        most of them out) the ranking is redone joined with ``memories``. That joins
        ``2 * limit`` rows instead of every match (a big user's common word)."""
        n = max(int(limit), 0)
        head = [
            int(r[0])
            for r in self.read(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                f"ORDER BY bm25(memories_fts) LIMIT {2 * n}",
                [match],
            )
        ]
        if not head:
            return []
        # "+m.user_id": look the rows up by rowid; without ANALYZE statistics the planner
        # would rather scan the user's index (100k entries for a big user: 10 ms).
        ok = {
            int(r[0]): str(r[1])
            for r in self.read(
                "SELECT m.rowid, f.terms FROM memories m JOIN memories_fts f ON f.rowid = m.rowid "
                f"WHERE m.rowid IN ({','.join('?' * len(head))}) AND +m.user_id = ? AND {where}",
                [*head, user_id, *params],
            )
        }
        kept = [(r, ok[r]) for r in head if r in ok]
        if len(kept) >= n or len(head) < 2 * n:
            return kept[:n]
        rows = self.read(
            "SELECT m.rowid, memories_fts.terms FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND m.user_id = ? AND {where} "
            f"ORDER BY bm25(memories_fts) LIMIT {n}",
            [match, user_id, *params],
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def _count_term_docs(self, terms: Sequence[str], user_id: str | None) -> dict[str, int]:
        """From the FTS5 vocabulary (terms are per user, so ``user_id`` is not needed)."""
        rows = self.read(
            f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({','.join('?' * len(terms))})",
            list(terms),
        )
        return {str(t): int(d) for t, d in rows}

    def text_stats(self, user_id: str | None = None) -> tuple[int, float]:
        """``(records, mean indexed terms per record)`` for BM25: the records of
        ``user_id`` (of the store when ``None``) and the store's mean length.

        The mean comes from FTS5's own totals (rows and tokens, kept in the index's
        "averages" record, the figures its ``bm25()`` uses): one read, where summing the
        vocabulary scans every term (300 ms at 1M records). Falls back to that sum if the
        record cannot be read."""
        rows, tokens = -1, 0
        blob = self.read("SELECT block FROM memories_fts_data WHERE id = 1")
        if blob and isinstance(blob[0][0], bytes):
            data, at = blob[0][0], 0
            values: list[int] = []
            while at < len(data) and len(values) < 2:  # SQLite varints (1-9 bytes)
                value, used = 0, 0
                while used < 9 and at < len(data):
                    byte = data[at]
                    at, used = at + 1, used + 1
                    if used == 9:
                        value = (value << 8) | byte
                        break
                    value = (value << 7) | (byte & 0x7F)
                    if byte < 0x80:
                        break
                values.append(value)
            if len(values) == 2:
                rows, tokens = values
        if rows < 0:
            rows = int(self.read("SELECT COUNT(*) FROM memories_fts")[0][0])
            tokens = int(self.read("SELECT COALESCE(SUM(cnt), 0) FROM memories_fts_vocab")[0][0])
        mean = tokens / rows if rows > 0 else 0.0
        if user_id is None:
            return int(self.read("SELECT COUNT(*) FROM memories")[0][0]), mean
        n = self.read("SELECT COUNT(*) FROM memories WHERE user_id = ?", (user_id,))[0][0]
        return int(n), mean

    # -- erasure -------------------------------------------------------------------------

    def unique_terms(self, c: Txn, rowids: set[int]) -> set[str]:
        """Terms of the full-text index that occur only in ``rowids``' rows (found
        through FTS5's ``instance`` vocabulary)."""
        if not rowids:
            return set()
        c.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mnemolayer_fts_instances "
            "USING fts5vocab(main, memories_fts, instance)"
        )
        texts: list[str] = []
        ordered = sorted(rowids)
        for start in range(0, len(ordered), _CHUNK):
            part = ordered[start : start + _CHUNK]
            texts += [
                str(r[0])
                for r in c.execute(
                    f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})",
                    part,
                )
            ]
        unique: set[str] = set()
        for term in _candidate_terms(texts):
            docs = {
                int(r[0])
                for r in c.execute(
                    "SELECT DISTINCT doc FROM temp.mnemolayer_fts_instances WHERE term = ?", (term,)
                )
            }
            if docs and docs <= rowids:
                unique.add(term)
        return unique

    def vocab_count(self, c: Txn | None, terms: set[str]) -> int:
        found = 0
        ordered = sorted(terms)
        for start in range(0, len(ordered), _CHUNK):
            part = ordered[start : start + _CHUNK]
            found += int(
                self._rows(
                    c,
                    "SELECT count(*) FROM memories_fts_vocab WHERE term IN "
                    f"({','.join('?' * len(part))})",
                    part,
                )[0][0]
            )
        return found

    def compact_keyword_index(self, c: Txn) -> None:
        """Rewrite the full-text index without the deleted rows: FTS5 deletes leave
        tombstones while the old segments (holding the deleted terms) stay until a merge.
        The cost grows with the index (a whole-user delete is rare)."""
        c.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


def _candidate_terms(texts: Iterable[str]) -> set[str]:
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
