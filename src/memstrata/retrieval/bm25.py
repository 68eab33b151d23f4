"""Okapi BM25 over one user's memories, with a non-negative IDF.

SQLite FTS5's built-in ``bm25()`` uses the classic IDF ``log((N - n + 0.5) / (n + 0.5))``,
floored at 1e-6: a term found in half or more of the documents weighs nothing. On a new
user's small store that makes an exact keyword match score ~0 ("Lisbon" among two
memories). memstrata uses FTS5 only to find the matching rows and scores them here with
the IDF of Lucene's BM25, ``log(1 + (N - n + 0.5) / (n + 0.5))``, which is always
positive (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009, eq. 3.3 and §3.5).

Collection statistics (N, n, average length) are the store's, as FTS5's own are: they
come from the FTS5 vocabulary in one lookup, where per-user counts would cost one
full-text query per term.
"""

from __future__ import annotations

import math
from collections import Counter
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
        tf = Counter(doc)
        norm = k1 * (1.0 - b + b * len(doc) / avg)
        out.append(
            sum(w * tf[t] * (k1 + 1.0) / (tf[t] + norm) for t, w in weights.items() if tf[t])
        )
    return out
