"""Stemmed content words for in-process keyword rescoring (recall's conversation
features, :mod:`mnemolayer.retrieval.structure`).

English words are reduced with the Snowball English ("Porter2") stemmer (M. F. Porter,
"Snowball: A language for stemming algorithms", 2001; the ``snowballstemmer`` package),
so "hiking", "hiked" and "hikes" meet as ``hike``. Other scripts keep the tokens of
:func:`mnemolayer.text.terms.index_terms` (Chinese: jieba words plus bigrams), which
need no stemming. Stop words are dropped.
"""

from __future__ import annotations

import threading
from functools import lru_cache

import snowballstemmer

from mnemolayer.text.terms import index_terms, is_stop_term

__all__ = ["stem_word", "stemmed_terms"]

_LOCAL = threading.local()  # a Snowball stemmer object keeps state: one per thread


@lru_cache(maxsize=65536)
def stem_word(word: str) -> str:
    """The Snowball English stem of a lower-cased ``word``; words with a non-ASCII or
    non-letter character are returned as they are."""
    if not (word.isascii() and word.isalpha()) or len(word) < 3:
        return word
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def stemmed_terms(text: str) -> list[str]:
    """``text``'s content words, stemmed, with repeats (term frequency counts).

    Returns:
        Tokens in text order: stop words removed, English words stemmed; ``[]`` when the
        text has no content word.
    """
    return [stem_word(t) for t in index_terms(text).split() if not is_stop_term(t)]
