"""The entry point of the English rule extractor: :func:`extract_en`, which reads a
message sentence by sentence and clause by clause (see :mod:`mnemolayer.extract.rules.en`).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import datetime

from mnemolayer.extract.base import SELF, Extraction, ResolvedDate
from mnemolayer.extract.dates import find_date_spans, find_dates
from mnemolayer.extract.rules.en.message import _Message, _Subject
from mnemolayer.extract.rules.en.phrases import _BEEN_START
from mnemolayer.extract.rules.en.subjects import (
    _NAME_MY_PET,
    _PRO_DROP,
    _is_name,
    _named_anywhere,
    _pet,
    _strip_lead,
    _subject,
)
from mnemolayer.extract.rules.en.table import _apply_rules, _clause_rules
from mnemolayer.extract.rules.en.text import (
    _ASKS,
    _HYPOTHETICAL,
    _NAME_TOKEN,
    _QUESTION_TAIL,
    _Clause,
    _clauses,
    _mask_times,
    _normalise,
    _Sentence,
    _SentenceInfo,
    _sentences,
)

__all__ = ["extract_en"]


log = logging.getLogger(__name__)

#: Sentences longer than this (in characters) are not chat sentences; they are skipped.
_MAX_SENTENCE_CHARS = 600


def extract_en(
    text: str, *, speaker: str | None = None, timestamp: datetime | None = None
) -> Extraction:
    """The facts an English chat message states, with their entities and dates.

    Args:
        text: one message, any length (a "sentence" of over 600 characters is no chat
            and is skipped).
        speaker: the speaker's name; first person ("I", "we", "my") resolves to it, or to
            :data:`~.types.SELF` when ``None`` or blank.
        timestamp: when the message was said (aware or naive). Relative dates ("yesterday",
            "next Friday") resolve against it; ``None`` → only dates with their own year
            resolve.

    Returns:
        An :class:`~.types.Extraction`: ``facts`` (predicates from
        :data:`~.predicates.PREDICATES`; events and plans carry the date of their clause),
        ``entities`` (the third parties, places, organisations, projects and pets the facts
        name) and ``dates`` (every date phrase and its ISO date, from
        :func:`~.dates.find_dates`). Questions, hypotheticals, statements about the
        assistant and small talk give no facts.

    Never raises: any failure (including non-string input) yields an empty
    :class:`~.types.Extraction`, logged at DEBUG.
    """
    try:
        return _extract(text, speaker, timestamp)
    except Exception:  # a rule bug must never cost the caller its message
        log.debug("English rule extraction failed", exc_info=True)
        return Extraction()


def _extract(text: str, speaker: str | None, timestamp: datetime | None) -> Extraction:
    if not isinstance(text, str) or not text.strip():
        return Extraction()
    name = speaker.strip() if isinstance(speaker, str) and speaker.strip() else SELF
    msg = _Message(speaker=name, timestamp=timestamp)
    plain = unicodedata.normalize("NFKC", text)
    normalised = _normalise(text)
    for sentence in _sentences(normalised):
        if len(sentence.text) > _MAX_SENTENCE_CHARS or _HYPOTHETICAL.search(sentence.text):
            continue
        _sentence_facts(msg, sentence)
    dates: list[ResolvedDate] = (
        find_dates(plain, timestamp, "en") if find_date_spans(plain, "en") else []
    )
    used = {f.subject for f in msg.facts} | {f.object for f in msg.facts}
    entities = [e for e in msg.entities.values() if e.name in used]
    return Extraction(facts=msg.facts, entities=entities, dates=dates)


_ASKS_AGREEMENT = re.compile(
    r"\b(?:agree|think\s+so|(?:do|would|don't|do\s+not|wouldn't|would\s+not)\s+you\s+(?:think|say))\b",
    re.I,
)


def _sentence_facts(msg: _Message, sentence: _Sentence) -> None:
    text = sentence.text
    if _ASKS.match(_strip_lead(text)):
        return  # "Do you like tea?", "Where do you live" (with or without the "?")
    if sentence.question:
        tail = _QUESTION_TAIL.search(text)
        if tail is None:
            return  # "You live in Lisbon?": asked, not stated
        if _ASKS_AGREEMENT.search(tail.group()):
            return  # "X is overrated, don't you think?": an opinion put up for discussion
        text = text[: tail.start()]  # "I love hiking, do you?" states "I love hiking"
    text = _WHO_ASIDE.sub(r"\1 ", text)
    masked, marks = _mask_times(text.replace("|", "/"))
    info = _SentenceInfo(dates=[mark.phrase for mark in marks if mark.is_date])
    clauses = _clauses(masked, marks, info)
    previous: _Subject | None = None
    if clauses:
        clauses[0].first = True
    for m in _NAME_MY_PET.finditer(masked):  # "Meet Ziggy, my new kitten" spans two clauses
        where = next((c for c in clauses if m.group("name") in c.text), None)
        if where is not None and _is_name(m.group("name")) and m.group("pet")[:1].islower():
            _pet(msg, where, msg.speaker, m.group("pet"), m.group("name"))
    for clause in clauses:
        clause.decision = msg.decision_next
        content = _strip_lead(clause.text)
        if content:  # a filler alone ("Anyway,") passes the announcement on
            msg.decision_next = _DECISION_MARKER.match(content) is not None
        if clause.subordinate:
            previous = None
            continue
        previous = _clause_facts(msg, clause, previous)


#: A relative clause between a name and its verb: "Priya, who I met at yoga, is a
#: pediatrician" reads "Priya is a pediatrician".
_WHO_ASIDE = re.compile(
    rf"\b({_NAME_TOKEN}),\s+(?:who|whom)\s+[^,]{{1,60}},\s+(?=(?:is|was|has|had|works|worked|lives|"
    r"lived|studies|just|also|recently|moved|got|loves|likes|hates|speaks|teaches|runs|owns|"
    r"turned|turns)\b)"
)


#: A clause that only announces a decision; the next clause says what it is ("I've made up
#: my mind: I'm moving", "Decision made - we're selling the car").
_DECISION_MARKER = re.compile(
    r"^(?:(?:(?:I|we)\s+)?(?:(?:have|had)\s+)?(?:(?:finally|just|officially|now|already|"
    r"totally|completely)\s+)*(?:made\s+up\s+(?:my|our)\s+minds?|decided|"
    r"made\s+(?:a|my|our|the)\s+(?:final\s+|big\s+)?(?:decision|call|choice))"
    r"|(?:it|that)\s+is\s+(?:decided|settled|final)"
    r"|(?:the\s+)?(?:final\s+)?decision(?:\s+(?:is|has\s+been|was))?\s+made"
    r"|(?:my|our|the)\s+(?:final\s+)?decision(?:\s+is\s+made)?)\s*[.!:,-]*\s*$",
    re.I,
)


def _clause_facts(msg: _Message, clause: _Clause, previous: _Subject | None) -> _Subject | None:
    """The facts of one clause; returns its subject (for a next clause without one)."""
    _named_anywhere(msg, clause)
    text = _strip_lead(clause.text)
    if not text:
        return previous
    if _clause_rules(msg, clause, text):
        return None
    found = _subject(msg, clause, text)
    if found is None:
        if clause.inherit and previous is not None:
            if clause.copula:
                text = ("am " if previous.kind == "self" else "is ") + text
            _apply_rules(msg, clause, previous, text)
            return previous
        if clause.first and _PRO_DROP.match(text):
            # chat drops the "I": "Just started at Spotify!", "Finished my first 10k."
            subject = _Subject(msg.speaker, "self", 0.85)
            if _BEEN_START.match(text):
                text = "have " + text  # "Been living in Austin for years"
            _apply_rules(msg, clause, subject, text)
            return subject
        return None
    subj, rest = found
    _apply_rules(msg, clause, subj, rest)
    return subj
