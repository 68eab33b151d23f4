"""Condensing a long message to the sentences that a query asks about.

A context that must fit a token budget can show more of the memories a search found when
the less relevant ones appear as *snippets*, the way a search engine's result page
shows a few words around the match instead of each page. :func:`condense` keeps a
message's sentences that share a word with the query, in their order, and marks each
left-out run with ``…``; a message where no sentence (or every sentence) shares a word
is not condensed (nothing tells which part matters, or nothing would be saved).

Words are the keyword index's terms (:func:`mnemolayer.text.terms.query_terms` for the
query, :func:`mnemolayer.text.terms.index_terms` for a sentence), so Chinese is segmented
the same way on both sides. Two alphabetic words are the same word when they differ only
in an ending: they share a prefix of at least :data:`STEM_MIN` letters that leaves at
most :data:`ENDING_MAX` letters of the shorter one (``join``/``joined``,
``research``/``researching``), a light stand-in for a stemmer that needs no language
data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemolayer.text.terms import index_terms, is_cjk

__all__ = ["ELLIPSIS", "ENDING_MAX", "STEM_MIN", "condense", "sentences"]

#: Marks a run of left-out sentences.
ELLIPSIS = "…"
#: Shortest shared prefix for two words to count as one (shorter words match exactly).
STEM_MIN = 4
#: Most letters of the shorter word left after the shared prefix (an inflected ending).
ENDING_MAX = 3

# A sentence ends at . ! ? … (then any closing quotes or brackets) before a space, or at
# Chinese 。！？ (then any closing marks).
_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|[。！？]+[」』”’）)\]]*\s*")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, stripped (punctuation kept); ``[]`` for blank."""
    out = []
    start = 0
    for end in _END.finditer(text):
        out.append(text[start : end.end()].strip())
        start = end.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short = min(len(a), len(b))
    if short < STEM_MIN or not (a.isalpha() and b.isalpha()) or is_cjk(a[0]) or is_cjk(b[0]):
        return False
    shared = 0
    while shared < short and a[shared] == b[shared]:
        shared += 1
    return shared >= STEM_MIN and short - shared <= ENDING_MAX


def _mentions(sentence: str, terms: Sequence[str]) -> bool:
    words = set(index_terms(sentence).split())
    return any(t in words or any(_same_word(t, w) for w in words) for t in terms)


def condense(text: str, terms: Sequence[str]) -> str | None:
    """``text`` reduced to its sentences that share a word with ``terms``.

    Args:
        text: a message (whitespace is normalised).
        terms: the query's words, as :func:`mnemolayer.text.terms.query_terms` gives them.

    Returns:
        The kept sentences in their order, with ``…`` wherever sentences were left out
        (start, middle or end); ``None`` when the text has one sentence, or no sentence
        or every sentence shares a word with ``terms``.
    """
    parts = sentences(" ".join(text.split()))
    if len(parts) < 2 or not terms:
        return None
    keep = [_mentions(s, terms) for s in parts]
    if not any(keep) or all(keep):
        return None
    out: list[str] = []
    for i, (sentence, kept) in enumerate(zip(parts, keep, strict=True)):
        if kept:
            out.append(sentence)
        elif i == 0 or keep[i - 1]:
            out.append(ELLIPSIS)
    return " ".join(out)
