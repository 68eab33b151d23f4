"""The structure of a user's conversations as recall's conversation features need it
(:mod:`mnemolayer.retrieval.structure`): each session's turns in order, who said each,
which turns ask a question, and each turn's stemmed words, with BM25 statistics over a
turn's window (previous, own and next turn) and over its whole session.

Built from what the store holds (``session_id``, ``speaker`` or ``name``/``role``,
content), once per user and store generation, next to the user's vectors
(:class:`~mnemolayer.retrieval.vectors.UserVectors`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from mnemolayer.store.base import SQLStore
from mnemolayer.text.speakers import is_transcript
from mnemolayer.text.stem import stemmed_terms

__all__ = ["ConversationIndex", "Corpus", "build_conversation_index"]


@dataclass
class Corpus:
    """Documents as term counts with their BM25 collection statistics (counted once at
    build time, so that scoring a query reads them and counts nothing)."""

    docs: list[Counter[str]] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    doc_freq: Counter[str] = field(default_factory=Counter)
    avg_len: float = 1.0
    #: term → {position: count}: the documents holding each term (scoring reads only
    #: those of the query's terms).
    postings: dict[str, dict[int, int]] = field(default_factory=dict)

    def add(self, terms: list[str]) -> int:
        """Add one document (its terms, with repeats); returns its position."""
        tf = Counter(terms)
        position = len(self.docs)
        self.docs.append(tf)
        self.lengths.append(len(terms))
        self.doc_freq.update(tf.keys())
        for term, count in tf.items():
            self.postings.setdefault(term, {})[position] = count
        return position

    def close(self) -> None:
        """Compute the mean document length (call after the last :meth:`add`)."""
        total = sum(self.lengths)
        self.avg_len = total / len(self.docs) if self.docs and total else 1.0


@dataclass
class ConversationIndex:
    """One user's sessions, by rowid.

    Attributes:
        session: rowid → session number (position in the store's session order).
        previous: rowid → the turn before it in its session.
        speaker: rowid → lower-cased speaker name ("" when unknown).
        asks: rowids whose text ends with a question mark.
        exchanges: rowids whose text is an exchange of several labelled lines
            (:func:`~mnemolayer.text.speakers.is_transcript`): a question and what
            answers it can be in one memory.
        window: per rowid, its position in :attr:`windows` (prev + turn + next).
        windows, sessions: BM25 corpora over turn windows and whole sessions.
        speakers: every speaker name that occurs, lower-cased.
        terms: rowid → the turn's own stemmed words.
        turns: per session number, its rowids in order.
        when: rowid → the turn's event time (``occurred_at``, else its creation time).
    """

    session: dict[int, int] = field(default_factory=dict)
    previous: dict[int, int] = field(default_factory=dict)
    speaker: dict[int, str] = field(default_factory=dict)
    asks: set[int] = field(default_factory=set)
    exchanges: set[int] = field(default_factory=set)
    window: dict[int, int] = field(default_factory=dict)
    windows: Corpus = field(default_factory=Corpus)
    sessions: Corpus = field(default_factory=Corpus)
    speakers: frozenset[str] = frozenset()
    terms: dict[int, list[str]] = field(default_factory=dict)
    turns: list[list[int]] = field(default_factory=list)
    when: dict[int, datetime] = field(default_factory=dict)
    #: What :func:`~mnemolayer.retrieval.structure.conversation_features` reads per turn,
    #: in one tuple (built there on first use; this index never changes once built).
    per_turn: dict[int, tuple[int, int, str, bool, bool, int]] | None = None


def _split_sessions(order: list[int]) -> list[list[int]]:
    out: list[list[int]] = [[]]
    for rid in order:
        if rid < 0:
            out.append([])
        else:
            out[-1].append(rid)
    return [s for s in out if s]


def build_conversation_index(store: SQLStore, user_id: str) -> ConversationIndex:
    """Read ``user_id``'s session turns from ``store`` and index their structure.

    Cost: one read of the user's session records (content decrypted on an encrypted
    store) and one stemming pass; about 30 ms for a 600-turn LoCoMo conversation.
    """
    sessions = _split_sessions(store.session_order(user_id))
    records = store.get_many_by_rowid([r for s in sessions for r in s], user_id=user_id)
    idx = ConversationIndex()
    names: set[str] = set()
    for number, turns in enumerate(sessions):
        turns = [r for r in turns if r in records]
        idx.turns.append(turns)
        texts = {r: records[r].content for r in turns}
        for r in turns:
            idx.terms[r] = stemmed_terms(texts[r])
        idx.sessions.add([t for r in turns for t in idx.terms[r]])
        for i, r in enumerate(turns):
            rec = records[r]
            idx.session[r] = number
            idx.when[r] = rec.occurred_at or rec.created_at
            if i:
                idx.previous[r] = turns[i - 1]
            who = (rec.speaker or "").strip().lower()
            idx.speaker[r] = who
            if who:
                names.add(who)
            if texts[r].rstrip().endswith(("?", "？")):
                idx.asks.add(r)
                if is_transcript(texts[r]):
                    idx.exchanges.add(r)
            around = turns[max(i - 1, 0) : i + 2]
            idx.window[r] = idx.windows.add([t for n in around for t in idx.terms[n]])
    idx.windows.close()
    idx.sessions.close()
    idx.speakers = frozenset(names)
    return idx
