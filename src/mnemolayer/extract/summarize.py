"""Summarisers: how working memory folds evicted turns and how a session's summary is
written (``Memory(summarizer=...)``; the names are in :data:`mnemolayer.registry.SUMMARIZERS`).

A :class:`Summarizer` turns lines of conversation (``"user: I moved to Porto."``), oldest
first, into a summary of at most ``max_tokens`` tokens of the given token counter. The
default, :class:`ExtractiveSummarizer`, is offline and deterministic
(:func:`summarize`: it keeps the sentences with names, numbers, dates,
decisions and instructions). ``"llm"`` writes summaries with the OpenAI-compatible
endpoint of the ``MNEMOLAYER_LLM_*`` settings and falls back to the extractive one on any
failure (:mod:`mnemolayer.extract.llm_summary`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemolayer.errors import ValidationError
from mnemolayer.protocols import Summarizer
from mnemolayer.text.tokens import TokenCounter, get_token_counter

__all__ = [
    "ExtractiveSummarizer",
    "Summarizer",
    "summarize",
]

# Roles a summariser line may be labelled with ("user: ...").
_LINE_ROLES = ("user", "assistant", "system", "tool")


class ExtractiveSummarizer:
    """Offline extractive summaries (:func:`summarize`)."""

    name = "extractive"

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        return summarize(lines, max_tokens, counter)

    def __repr__(self) -> str:
        return "ExtractiveSummarizer()"


# -- extractive summariser ---------------------------------------------------------------

# Sentence ends: Latin punctuation followed by space, CJK full stops, or line breaks.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；!?])|\n+")
_NUMBER = re.compile(r"\d|[零一二三四五六七八九十百千万亿两]+[点个岁元块号月日年天次]")
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:today|tomorrow|yesterday|tonight|next week|last week|next month|deadline)\b"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}[:/]\d{2}"
    r"|[今明昨前后]天|星期|周[一二三四五六日末]|[上下这本]个?月|\d+[年月日号点]",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decid\w*|agree\w*|chose|choose|chosen|will|won't|going to|let's|plan\w*|"
    r"confirm\w*|prefer\w*|always|never|must|should|need to|please|remember|don't|do not|"
    r"make sure|instead|allerg\w*|important)\b"
    r"|决定|同意|确定|选择|计划|打算|记住|请|必须|一定|不要|别|应该|需要|总是|从不|喜欢|讨厌|过敏|重要",
    re.IGNORECASE,
)
# A capitalised word that is not the first of its sentence (names, places, products).
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][a-zA-Z'-]+")
_CJK_NAME_HINT = re.compile(
    r"[叫是跟和与给][\u4e00-\u9fff]{2,3}|[\u4e00-\u9fff]{1,3}(?:先生|女士|老师|经理)"
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _score(sentence: str) -> float:
    """How much a sentence is worth keeping: names, numbers, dates, decisions, instructions."""
    score = 0.0
    if _NUMBER.search(sentence):
        score += 2.0
    if _DATE.search(sentence):
        score += 2.0
    if _DECISION.search(sentence):
        score += 2.0
    score += min(3, len(_NAME.findall(sentence)) + len(_CJK_NAME_HINT.findall(sentence))) * 1.5
    if len(sentence) < 12 and score == 0:
        score -= 1.0  # "ok", "thanks!", "好的"
    return score


def summarize(
    lines: Sequence[str], max_tokens: int, counter: TokenCounter | str | None = None
) -> str:
    """Extractive summary of lines of text, at most ``max_tokens`` tokens, offline.

    Each line is split into sentences (English and Chinese punctuation); a line may start
    with a ``"role: "`` label, which is kept on each of its sentences. Sentences are scored
    for names, numbers, dates, decisions and instructions; later sentences win ties.
    The best are kept greedily by score per token until the budget is spent, duplicates
    dropped, and returned in their original order, one per line.

    Args:
        lines: texts, oldest first (``"user: I moved to Porto on May 3."``).
        max_tokens: the summary's budget in tokens, ``>= 0``.
        counter: the tokenizer (anything :func:`mnemolayer.text.tokens.get_token_counter`
            accepts).

    Returns:
        The summary (``""`` when nothing fits); ``counter.count(result) <= max_tokens``.

    Raises:
        ValidationError: ``max_tokens`` is not a non-negative int (field ``"max_tokens"``).
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValidationError("max_tokens", f"expected an int >= 0, got {max_tokens!r}")
    tok = get_token_counter(counter)
    candidates: list[str] = []
    seen: set[str] = set()
    for line in lines:
        label, _, body = line.partition(": ")
        if not body or label not in _LINE_ROLES:
            label, body = "", line
        for sentence in _sentences(body):
            text = f"{label}: {sentence}" if label else sentence
            if text not in seen:
                seen.add(text)
                candidates.append(text)
    if not candidates or max_tokens == 0:
        return ""
    costs = tok.count_many(candidates)
    n = len(candidates)
    # Score per token, plus a small recency term so later sentences win ties.
    order = sorted(
        range(n),
        key=lambda i: ((_score(candidates[i]) + 1.0 + i / n) / max(costs[i], 1), i),
        reverse=True,
    )
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = costs[i] + 1  # the joining newline
        if used + cost <= max_tokens:
            chosen.add(i)
            used += cost
    if not chosen:  # every sentence is too long alone: cut the best one
        return tok.truncate(candidates[order[0]], max_tokens)
    text = "\n".join(candidates[i] for i in sorted(chosen))
    # Joining can merge tokens differently; cut if that ever tips it over.
    return text if tok.count(text) <= max_tokens else tok.truncate(text, max_tokens)
