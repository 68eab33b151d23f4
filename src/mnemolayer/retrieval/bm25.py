"""Okapi BM25 over one user's memories, with a non-negative IDF.

SQLite FTS5's built-in ``bm25()`` uses the classic IDF ``log((N - n + 0.5) / (n + 0.5))``,
floored at 1e-6: a term found in half or more of the documents weighs nothing. On a new
user's small store that makes an exact keyword match score ~0 ("Lisbon" among two
memories). mnemolayer uses FTS5 only to find the matching rows and scores them here with
the IDF of Lucene's BM25, ``log(1 + (N - n + 0.5) / (n + 0.5))``, which is always
positive (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009, eq. 3.3 and §3.5).

Collection statistics on SQLite are per user for N and n: the keyword index holds each
user's terms apart (prefixed with the user's tag, or blinded under the user's key in an
encrypted store; :func:`mnemolayer.text.terms.user_term_tag`), so a term's document count in
the FTS5 vocabulary is the user's, found in one lookup, and N is the user's record
count to match: the IDF says how specific a word is among this user's memories, which
is what their search ranks, and no other user's words move it (a word in every memory
of this user weighs little, whatever other users write). The average length, only the
pivot of length normalisation, is the store's (FTS5's own total, one read; a per-user
sum would read every document length of the user, ~70 ms for 100k memories, after
each change).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["bm25_scores", "idf"]


def idf(n_docs: int, doc_freq: int) -> float:
    """Lucene's BM25 IDF, ``log(1 + (N - n + 0.5) / (n + 0.5))`` (> 0 for n ≤ N)."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_scores(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    doc_freq: Mapping[str, int],
    n_docs: int,
    avg_len: float,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[float]:
    """BM25 of each document for ``query``.

    Args:
        query: distinct query terms.
        documents: each document's terms (tokens, in any order).
        doc_freq: per query term, how many of the collection's documents contain it.
        n_docs: documents in the collection (N).
        avg_len: mean document length in terms.
        k1, b: the usual saturation and length-normalisation constants.

    Returns:
        One score ≥ 0 per document (0 when it contains no query term).
    """
    weights = {t: idf(max(n_docs, 1), min(doc_freq.get(t, 0), max(n_docs, 1))) for t in query}
    avg = avg_len if avg_len > 0 else 1.0
    out: list[float] = []
    for doc in documents:
        # Only the query's few terms are counted (not the whole document's).
        norm = k1 * (1.0 - b + b * len(doc) / avg)
        score = 0.0
        for t, w in weights.items():
            tf = doc.count(t)
            if tf:
                score += w * tf * (k1 + 1.0) / (tf + norm)
        out.append(score)
    return out
