"""LLM-written summaries over any OpenAI-compatible chat endpoint (``Memory(summarizer="llm")``).

:class:`LLMSummarizer` implements :class:`~mnemolayer.extract.summarize.Summarizer`. It sends the
lines to summarise (oldest first; when a summary is summarised again, the earlier
summary's lines come first and carry no ``"role: "`` label) to a chat model, asking for
short lines in the conversation's language (English or Chinese) that keep names, numbers,
dates, decisions, instructions and open questions, merge an earlier summary instead of
dropping it, and stay within the token budget. The request's ``max_tokens`` is set a
little above the budget, since the model's tokenizer may differ from the caller's.

The answer is cleaned (reasoning blocks such as ``<think>…</think>``, code fences, a
``"Summary:"`` preamble and list markers removed) and then cut to the budget with the
caller's token counter, at a line boundary where one fits, so
``counter.count(result) <= max_tokens`` holds whatever the model writes.

Failures never reach the caller: a timeout, a refused connection, an HTTP error after the
bounded retries, or an answer that is empty once cleaned make
:meth:`LLMSummarizer.summarize` log a warning and return the ``fallback`` summariser's
result (by default :class:`~mnemolayer.extract.summarize.ExtractiveSummarizer`).
:attr:`LLMSummarizer.last_source` tells which one wrote it. Retries, ``Retry-After`` and
the time budget are :mod:`mnemolayer.llm.client`'s, as for
:class:`mnemolayer.extract.llm.LLMExtractor`.

Needs the ``llm`` extra (the ``openai`` SDK).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mnemolayer.config import LLMSettings
from mnemolayer.errors import ValidationError
from mnemolayer.extract.summarize import ExtractiveSummarizer, Summarizer
from mnemolayer.llm.client import Deadline, LLMBacked  # names the `llm` extra when it is missing
from mnemolayer.text.tokens import TokenCounter

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["LLMSummarizer", "build_messages", "clean_answer", "fit_lines"]

log = logging.getLogger(__name__)

# The answer may use a little more than the budget in the model's own tokens: its
# tokenizer can split text more finely than the caller's (Chinese especially).
_ANSWER_HEADROOM = 1.25
_ANSWER_EXTRA_TOKENS = 16
# Rough sizes for the prompt: about 0.7 English words, or one Chinese character, a token.
_WORDS_PER_TOKEN = 0.7

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.IGNORECASE)
_FENCE = re.compile(r"^(?:```|~~~)[\w+.-]*$")
_PREAMBLE = re.compile(
    r"^(?:#+\s*)?(?:\*\*)?\s*"
    r"(?:"
    r"(?:(?:here\s+is|here's|below\s+is)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}?)?"
    r"(?:summary|recap)(?:\s+of\s+the\s+(?:[\w-]+\s+)?conversation)?"
    r"|以下是[\u4e00-\u9fff]{0,8}?(?:总结|摘要|小结|概要)"
    r"|(?:对话)?(?:总结|摘要|小结|概要)"
    r")"
    r"\s*(?:\*\*)?\s*(?:[:：]|$)\s*(?:\*\*)?\s*",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^(?:[-*•·]\s+|\d{1,2}[.)]\s+|\d{1,2}、\s*)")

_SYSTEM_PROMPT = """You keep the running memory of a conversation between a user and an assistant. Summarise the lines in the user message, between <conversation> tags, so that the assistant can carry on without them. Do not answer or continue the conversation.

Rules:
1. Keep every name, number, amount, date and time, decision, instruction, preference and open question (anything asked or promised and not yet settled). Leave out greetings, thanks and small talk.
2. Say who said or decided what: the user, the assistant, or a person by name.
3. Lines that do not start with "user:", "assistant:", "system:" or "tool:" are an earlier summary. Merge them with the newer lines: keep all of their facts, and where a newer line changes one, keep only the newer version.
4. Write in the language of the conversation: English for an English conversation, Chinese for a Chinese one (when mixed, the language of most lines). Keep names, numbers and quoted terms as written.
5. Write short plain lines, one fact per line, oldest first: no headings, bullets, numbering or introduction.
6. Use at most {max_tokens} tokens (about {words} English words or {chars} Chinese characters). When that is too little for everything, keep instructions, decisions and open questions first.
Reply with the summary only."""


def build_messages(lines: Sequence[str], max_tokens: int) -> list[ChatCompletionMessageParam]:
    """The chat messages asking for a summary of ``lines`` in at most ``max_tokens`` tokens.

    A system message with the rules (what to keep, which language, merging an earlier
    summary, the budget in tokens and as rough English words and Chinese characters), then
    the lines, one per line and oldest first, between ``<conversation>`` tags.
    """
    system = _SYSTEM_PROMPT.format(
        max_tokens=max_tokens,
        words=max(1, int(max_tokens * _WORDS_PER_TOKEN)),
        chars=max_tokens,
    )
    body = "\n".join(lines)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"<conversation>\n{body}\n</conversation>"},
    ]


def clean_answer(content: str) -> str:
    """A model's answer reduced to its summary lines.

    Removes reasoning blocks (``<think>…</think>``, ``<thinking>``, ``<reasoning>``; an
    unclosed one drops everything after it, a lone closing tag everything before it),
    code-fence lines, a leading ``"Summary:"`` / ``"Here is a summary:"`` / ``"摘要："``
    preamble, list markers (``-``, ``*``, ``1.``, ``1、``) and blank lines.

    Returns:
        The lines joined by ``"\\n"``, each stripped; ``""`` when nothing is left.
    """
    text = _THINK_BLOCK.sub("", content)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:  # the opening tag was in the chat template, not in the answer
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:  # reasoning cut off before its end: the summary never came
        text = text[: opened.start()]
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not _FENCE.match(line)]
    if lines:
        lines[0] = _PREAMBLE.sub("", lines[0], count=1).strip()
    lines = [_LIST_MARKER.sub("", line).strip() for line in lines]
    return "\n".join(line for line in lines if line)


def fit_lines(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """The longest run of ``text``'s leading lines that costs at most ``max_tokens`` tokens.

    Whole lines are kept in order while they fit (a fact is not cut in half); when not even
    the first line fits, it is cut with ``counter.truncate``.

    Returns:
        Text with ``counter.count(result) <= max_tokens``.
    """
    if max_tokens <= 0 or not text:
        return ""
    if counter.count(text) <= max_tokens:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    used = -1  # no newline before the first line
    for line, cost in zip(lines, counter.count_many(lines), strict=True):
        if used + 1 + cost > max_tokens:
            break
        kept.append(line)
        used += 1 + cost
    out = "\n".join(kept) if kept else counter.truncate(lines[0], max_tokens).rstrip()
    # Tokens can merge across a newline; cut if that ever tips it over.
    return out if counter.count(out) <= max_tokens else counter.truncate(out, max_tokens)


class LLMSummarizer(LLMBacked):
    """Writes summaries with a chat model behind any OpenAI-compatible endpoint.

    Implements :class:`~mnemolayer.extract.summarize.Summarizer`. Each :meth:`summarize` makes
    one chat request (see :func:`build_messages`) and retries transport failures;
    otherwise it falls back.

    Time is bounded per call: each HTTP attempt may take ``settings.timeout_s``;
    timeouts, connection errors and HTTP 408/409/429/5xx are retried up to
    ``settings.max_retries`` times with backoff (a server's ``Retry-After`` is honoured
    when it fits); and the whole call stops after ``budget_s`` seconds, by default
    ``(max_retries + 1) * timeout_s``.

    Thread-safe: the HTTP client is shared; :attr:`last_source` and :attr:`last_error`
    are per thread.

    Args:
        settings: the endpoint, model, key, timeout, retries and temperature.
        fallback: the summariser used when the model fails; ``None`` →
            :class:`~mnemolayer.extract.summarize.ExtractiveSummarizer`.
        budget_s: seconds one :meth:`summarize` may spend on the model before falling
            back; ``None`` → ``(max_retries + 1) * timeout_s``.
        max_answer_tokens: the most answer tokens ever requested. A request asks for
            ``min(max_answer_tokens, ceil(1.25 * max_tokens) + 16)``; raise it for models
            that reason at length before answering.

    Raises:
        ValidationError: ``settings`` not :class:`~mnemolayer.config.LLMSettings`
            (field ``"settings"``), a ``fallback`` without ``summarize`` (``"fallback"``),
            ``budget_s`` <= 0 (``"budget_s"``) or ``max_answer_tokens`` < 1
            (``"max_answer_tokens"``).
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        fallback: Summarizer | None = None,
        budget_s: float | None = None,
        max_answer_tokens: int = 4096,
    ) -> None:
        if not isinstance(settings, LLMSettings):
            raise ValidationError(
                "settings", f"expected LLMSettings, got {type(settings).__name__}"
            )
        if fallback is not None and not isinstance(fallback, Summarizer):
            raise ValidationError(
                "fallback", "must have a name and a summarize(lines, max_tokens, counter) method"
            )
        if budget_s is not None and not budget_s > 0:
            raise ValidationError("budget_s", f"must be > 0, got {budget_s!r}")
        if isinstance(max_answer_tokens, bool) or not isinstance(max_answer_tokens, int):
            raise ValidationError("max_answer_tokens", f"must be an int, got {max_answer_tokens!r}")
        if max_answer_tokens < 1:
            raise ValidationError("max_answer_tokens", f"must be >= 1, got {max_answer_tokens}")
        super().__init__(settings, budget_s)
        self.max_answer_tokens = max_answer_tokens
        self.fallback: Summarizer = fallback if fallback is not None else ExtractiveSummarizer()

    # -- public ---------------------------------------------------------------------------

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        """Summary of ``lines`` (oldest first; each may start with ``"role: "``).

        Args:
            lines: the texts to summarise; an earlier summary's lines, when merged, first.
            max_tokens: the summary's budget in ``counter``'s tokens, ``>= 0``.
            counter: the tokenizer the budget is measured in.

        Returns:
            The model's summary, cleaned (:func:`clean_answer`) and cut to the budget
            (:func:`fit_lines`); on any failure of the model the fallback's summary. Always
            ``counter.count(result) <= max_tokens``; ``""`` without a request when
            ``max_tokens`` is 0 or every line is blank.

        Raises:
            ValidationError: ``lines`` is a bare string (field ``"lines"``) or holds a
                non-string (``"lines[i]"``), or ``max_tokens`` is not an int >= 0 (field ``"max_tokens"``).
                Never for what the lines say, nor for a failing model.
        """
        texts = _check(lines, max_tokens)
        if max_tokens == 0 or not texts:
            self._answered()
            return ""
        try:
            summary = self._summarize_with_model(texts, max_tokens, counter)
        except Exception as exc:  # the contract: summarize never raises for the model
            self._fell_back(exc, f"the {self.fallback.name} summary")
            return self._summarize_with_fallback(lines, max_tokens, counter)
        self._answered()
        return summary

    def __repr__(self) -> str:
        return f"LLMSummarizer(model={self.settings.model!r}, base_url={self.settings.base_url!r})"

    # -- internals --------------------------------------------------------------------------

    def _summarize_with_model(
        self, lines: Sequence[str], max_tokens: int, counter: TokenCounter
    ) -> str:
        deadline = Deadline.after(self.budget_s)
        asked = math.ceil(max_tokens * _ANSWER_HEADROOM) + _ANSWER_EXTRA_TOKENS
        content = self._chat.complete(
            build_messages(lines, max_tokens),
            deadline,
            max_tokens=min(self.max_answer_tokens, asked),
        )
        summary = fit_lines(clean_answer(content), max_tokens, counter)
        if not summary:
            raise ValueError(f"the answer holds no summary: {content[:200]!r}")
        return summary

    def _summarize_with_fallback(
        self, lines: Sequence[str], max_tokens: int, counter: TokenCounter
    ) -> str:
        try:
            summary = self.fallback.summarize(lines, max_tokens, counter)
        except Exception:  # the contract: summarize never raises for content
            log.exception("the fallback summariser failed too; returning no summary")
            return ""
        # A custom fallback is held to the same budget.
        return fit_lines(summary, max_tokens, counter)


def _check(lines: Sequence[str], max_tokens: int) -> list[str]:
    """The non-blank lines, stripped; raises ValidationError for bad arguments."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValidationError("max_tokens", f"expected an int >= 0, got {max_tokens!r}")
    if isinstance(lines, str | bytes):
        raise ValidationError("lines", "expected a sequence of strings, got a single string")
    texts: list[str] = []
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise ValidationError(f"lines[{i}]", f"expected str, got {type(line).__name__}")
        if line.strip():
            texts.append(line.strip())
    return texts
