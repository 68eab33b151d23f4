"""Summarisers: how working memory folds evicted turns and how a session's summary is
written (``Memory(summarizer=...)``).

A :class:`Summarizer` turns lines of conversation (``"user: I moved to Porto."``), oldest
first, into a summary of at most ``max_tokens`` tokens of the given token counter. The
default, :class:`ExtractiveSummarizer`, is offline and deterministic
(:func:`mnemolayer.layers.working.window.summarize`: it keeps the sentences with names, numbers, dates,
decisions and instructions). ``"llm"`` writes summaries with the OpenAI-compatible
endpoint of the ``MNEMOLAYER_LLM_*`` settings and falls back to the extractive one on any
failure (:mod:`mnemolayer.extract.llm_summary`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from mnemolayer.errors import ValidationError
from mnemolayer.text.tokens import TokenCounter

__all__ = ["SUMMARIZERS", "ExtractiveSummarizer", "Summarizer", "get_summarizer"]

#: Names accepted by :func:`get_summarizer`.
SUMMARIZERS = ("auto", "extractive", "llm")


@runtime_checkable
class Summarizer(Protocol):
    """Writes a summary of conversation lines under a token budget.

    Attributes:
        name: a short label (``"extractive"``, ``"llm:<model>"``), recorded with session
            summaries.
    """

    name: str

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        """Summary of ``lines`` (oldest first; each may start with ``"role: "``).

        Returns:
            Text with ``counter.count(result) <= max_tokens`` (``""`` when nothing fits).
            Implementations must never raise for content reasons; the caller relies on a
            summary to keep the window within its budget.
        """
        ...


class ExtractiveSummarizer:
    """Offline extractive summaries (:func:`mnemolayer.layers.working.window.summarize`)."""

    name = "extractive"

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        from mnemolayer.layers.working.window import summarize

        return summarize(lines, max_tokens, counter)

    def __repr__(self) -> str:
        return "ExtractiveSummarizer()"


def get_summarizer(spec: Summarizer | str | None, *, extractor: object = None) -> Summarizer:
    """Resolve ``Memory(summarizer=...)``.

    Args:
        spec: ``"auto"`` (default: LLM-written when the memory's fact extractor is the LLM
            one, i.e. an LLM is configured; else extractive), ``"extractive"``, ``"llm"``
            (needs ``MNEMOLAYER_LLM_BASE_URL`` and ``MNEMOLAYER_LLM_MODEL``), ``None`` (same
            as ``"extractive"``), or a :class:`Summarizer`.
        extractor: the memory's resolved extractor (consulted by ``"auto"``).

    Raises:
        ValidationError: an unknown name, ``"llm"`` without LLM settings, or an object
            without ``summarize`` (field ``"summarizer"``).
    """
    if spec is None or spec == "extractive":
        return ExtractiveSummarizer()
    if isinstance(spec, str):
        if spec == "auto":
            # Without the module loaded there is no LLMExtractor (and the optional
            # ``openai`` package is not imported just to find that out).
            llm = sys.modules.get("mnemolayer.extract.llm")
            if llm is not None and isinstance(extractor, llm.LLMExtractor):
                return _llm_summarizer(extractor)
            return ExtractiveSummarizer()
        if spec == "llm":
            return _llm_summarizer(None)
        raise ValidationError(
            "summarizer", f"unknown summarizer {spec!r}; choose one of {', '.join(SUMMARIZERS)}"
        )
    if isinstance(spec, type) or not isinstance(spec, Summarizer):
        raise ValidationError(
            "summarizer", "must have a name and a summarize(lines, max_tokens, counter) method"
        )
    return spec


def _llm_summarizer(extractor: object) -> Summarizer:
    from mnemolayer.config import settings_from_env
    from mnemolayer.extract.llm_summary import LLMSummarizer

    settings = getattr(extractor, "settings", None) or settings_from_env().llm
    if settings is None:
        raise ValidationError(
            "summarizer",
            "'llm' needs MNEMOLAYER_LLM_BASE_URL and MNEMOLAYER_LLM_MODEL (an "
            "OpenAI-compatible endpoint); or pass a Summarizer",
        )
    return LLMSummarizer(settings)
