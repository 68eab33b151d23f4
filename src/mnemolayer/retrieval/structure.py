"""Conversation features: a turn's relevance lifted by the structure of the conversation
it belongs to (its session, the question it answers, who said it, its words stemmed).

Each feature is a number in [0, 1] per candidate (:func:`conversation_features`);
:func:`lift` adds them to the fused relevance with the weights of
:class:`~mnemolayer.config.RetrievalConfig` and rescales:
``rel' = (rel + Σ w_f · f) / (1 + Σ_{w_f > 0} w_f)`` (a negative weight lowers).

* ``session``: the best relevance among the candidates of the turn's session (a soft
  session prior; hard session-first retrieval measured worse).
* ``reply``: the relevance of the previous turn of the session when that turn asks a
  question (a reply that answers a matching question).
* ``speaker``: the turn is by the only speaker the query names.
* ``question``: the turn itself ends with a question mark (questions rarely answer);
  not a memory that holds an exchange of several labelled lines ("Linda: ...\nAI:
  ...?"), whose other lines can state or answer.
* ``window_keyword``, ``session_keyword``: Okapi BM25 (Robertson & Zaragoza 2009) of the
  query's Snowball-stemmed words over the turn with its neighbours and over its whole
  session, each divided by the best candidate's (:mod:`mnemolayer.text.stem`).
* ``time_word``: a "when" question and a turn that names a time ("yesterday", "last
  week", "Friday").

The weights were chosen by cross-validation across LoCoMo dev conversations
(``python -m bench tune``, docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from mnemolayer.config import RetrievalConfig
from mnemolayer.retrieval.bm25 import idf
from mnemolayer.retrieval.conversation import ConversationIndex, Corpus
from mnemolayer.text.months import MONTHS
from mnemolayer.text.stem import stem_word, stemmed_terms

__all__ = ["FEATURES", "conversation_features", "feature_weights", "lift", "named_speakers"]

#: The features, in breakdown order (``Hit.scores`` keys).
FEATURES: tuple[str, ...] = (
    "session",
    "reply",
    "speaker",
    "question",
    "window_keyword",
    "session_keyword",
    "time_word",
    "entity",
    "pivot",
)

_WHEN = re.compile(r"^\s*(when|what (date|day|time|year|month))\b|什么时候|哪天|何时", re.I)
_TIME_WORDS = frozenset(
    stem_word(w)
    for w in [
        "yesterday",
        "today",
        "tonight",
        "tomorrow",
        "ago",
        "recently",
        "last",
        "week",
        "weekend",
        "month",
        "year",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "morning",
        "evening",
        *MONTHS,
    ]
) | frozenset({"昨天", "今天", "上周", "上个月", "去年", "前天", "周末"})


def feature_weights(cfg: RetrievalConfig) -> dict[str, float]:
    """The weight of each feature in ``cfg`` (``question`` is negative: a penalty)."""
    return {
        "session": cfg.session_weight,
        "reply": cfg.reply_weight,
        "speaker": cfg.speaker_weight,
        "question": -cfg.question_penalty,
        "window_keyword": cfg.window_keyword_weight,
        "session_keyword": cfg.session_keyword_weight,
        "time_word": cfg.time_word_weight,
        "entity": cfg.entity_weight,
        "pivot": cfg.pivot_weight,
    }


def named_speakers(query: str, speakers: frozenset[str]) -> set[str]:
    """The speakers (lower-cased names) that ``query`` names as whole words."""
    q = query.lower()
    return {s for s in speakers if s and re.search(rf"(?<!\w){re.escape(s)}(?!\w)", q)}


def _keyword(query: list[str], corpus: Corpus, positions: Sequence[int]) -> np.ndarray:
    """Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's IDF as in :mod:`.bm25`) of ``query``
    over the corpus documents at ``positions``, divided by the best."""
    out = np.zeros(len(positions))
    if not query or not positions:
        return out
    n_docs = max(len(corpus.docs), 1)
    weights = {t: idf(n_docs, min(corpus.doc_freq.get(t, 0), n_docs)) for t in query}
    weights = {t: w for t, w in weights.items() if corpus.doc_freq.get(t)}
    if not weights:
        return out
    k1, b, avg = 1.2, 0.75, corpus.avg_len
    at: dict[int, list[int]] = {}
    for i, p in enumerate(positions):
        at.setdefault(p, []).append(i)
    # Term by term in query order, as the sum over a document's terms would add them;
    # each term visits only the candidates' documents that hold it.
    sums = [0.0] * len(positions)
    for t, w in weights.items():
        posting = corpus.postings[t]
        held = (
            [(p, posting[p]) for p in at if p in posting]
            if len(at) < len(posting)
            else [(p, f) for p, f in posting.items() if p in at]
        )
        for p, f in held:
            v = w * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * corpus.lengths[p] / avg))
            for i in at[p]:
                sums[i] += v
    out[:] = sums
    top = float(out.max())
    return out / top if top > 0 else out


def conversation_features(
    query: str, rowids: list[int], relevance: np.ndarray, conv: ConversationIndex
) -> dict[str, np.ndarray]:
    """Each feature of :data:`FEATURES` for each candidate, as arrays in ``rowids`` order.

    Args:
        query: the search text.
        rowids: the candidates.
        relevance: their fused relevance, shape ``(len(rowids),)``, in [0, 1].
        conv: the user's :class:`ConversationIndex`; turns outside a session score 0.

    Returns:
        ``{feature: array of shape (len(rowids),) in [0, 1]}``, plus ``"in_session"``
        (1 for a turn of a session, 0 for a memory outside any).
    """
    n = len(rowids)
    pos = {rid: i for i, rid in enumerate(rowids)}
    per_turn = _per_turn(conv)
    rows = [per_turn.get(rid, _OUTSIDE) for rid in rowids]
    session_of = [r[0] for r in rows]
    sess = np.array(session_of, dtype=np.int64)
    rel = relevance.tolist()
    best: dict[int, float] = {}
    for s, r in zip(session_of, rel, strict=True):
        if s >= 0 and r > best.get(s, -1.0):
            best[s] = r
    out = {f: np.zeros(n) for f in FEATURES}
    out["in_session"] = (sess >= 0).astype(np.float64)
    out["session"] = np.array([best.get(s, 0.0) for s in session_of])
    named = named_speakers(query, conv.speakers)
    only = next(iter(named)) if len(named) == 1 else None
    when = bool(_WHEN.search(query))
    reply, speaker, question, time_word = [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
    for i, (_, asked, who, asks, timed, _) in enumerate(rows):
        if asked >= 0 and asked in pos:
            reply[i] = rel[pos[asked]]
        if only is not None and who == only:
            speaker[i] = 1.0
        if asks:
            question[i] = 1.0
        if when and timed:
            time_word[i] = 1.0
    out["reply"][:], out["speaker"][:] = reply, speaker
    out["question"][:], out["time_word"][:] = question, time_word
    terms = list(dict.fromkeys(stemmed_terms(query)))
    inside = [i for i, r in enumerate(rows) if r[5] >= 0]
    if inside:
        windows = [rows[i][5] for i in inside]
        out["window_keyword"][inside] = _keyword(terms, conv.windows, windows)
        sessions = sorted({int(sess[i]) for i in inside})
        by_session = dict(zip(sessions, _keyword(terms, conv.sessions, sessions), strict=True))
        out["session_keyword"][inside] = [by_session[int(sess[i])] for i in inside]
    return out


#: :func:`_per_turn`'s answer for a memory outside any session.
_OUTSIDE: tuple[int, int, str, bool, bool, int] = (-1, -1, "", False, False, -1)


def _per_turn(conv: ConversationIndex) -> dict[int, tuple[int, int, str, bool, bool, int]]:
    """Per turn of ``conv`` (by rowid), what :func:`conversation_features` reads, built
    once per index: ``(session number, the previous turn when it asks a question else
    -1, speaker, asks a question (not an exchange), names a time, window position)``."""
    if conv.per_turn is None:
        conv.per_turn = {
            rid: (
                number,
                prev if (prev := conv.previous.get(rid)) is not None and prev in conv.asks else -1,
                conv.speaker.get(rid, ""),
                rid in conv.asks and rid not in conv.exchanges,
                bool(_TIME_WORDS.intersection(conv.terms.get(rid, ()))),
                conv.window.get(rid, -1),
            )
            for rid, number in conv.session.items()
        }
    return conv.per_turn


def lift(
    cfg: RetrievalConfig, relevance: np.ndarray, features: dict[str, np.ndarray]
) -> np.ndarray:
    """``(rel + Σ w_f · f) / (1 + Σ_{w_f > 0} w_f)`` clipped to [0, 1], with the weights of
    :func:`feature_weights`, for the turns of a session; a memory outside any session
    (``features["in_session"]`` 0) keeps its relevance, neither lifted nor scaled down."""
    weights = feature_weights(cfg)
    total = relevance.copy()
    for name, w in weights.items():
        if w and name in features:
            total += w * features[name]
    scale = 1.0 + sum(w for w in weights.values() if w > 0)
    lifted = np.clip(total / scale, 0.0, 1.0)
    inside = features.get("in_session")
    return lifted if inside is None else np.where(inside > 0, lifted, relevance)
