"""The chat-model client behind the LLM extractor and summariser: bounded retries, a deadline.

What the LLM fact extractor (:class:`mnemolayer.extract.llm.LLMExtractor`) and the LLM
summariser (:class:`mnemolayer.extract.llm_summary.LLMSummarizer`) share: both derive from
:class:`LLMBacked` (the client, the time budget, the per-thread record of who answered,
closing) and ask through :meth:`ChatClient.complete`.

:class:`ChatClient` holds the ``openai`` SDK client built from
:class:`~mnemolayer.config.LLMSettings`, with the SDK's own retries off so that these are
the only ones:

* each HTTP attempt may take ``settings.timeout_s``, and never more than what is left of
  the caller's :class:`Deadline`;
* timeouts, connection errors and HTTP 408, 409, 429 and 5xx are retried, up to
  ``settings.max_retries`` times, after the server's ``Retry-After`` (``retry-after-ms``,
  or a number of seconds in ``retry-after``) or else an exponential backoff of 0.25 s,
  0.5 s, 1 s … at most 4 s;
* a wait that would pass the deadline is not waited: :class:`TimeoutError` at once.

Other failures (HTTP 400, 401, 404 …) reach the caller unchanged, which decides what
they mean: the extractor drops ``response_format`` after a 400, and both fall back on
anything else, logging :func:`error_summary`'s line.

Needs the ``llm`` extra (the ``openai`` SDK).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Literal, Self

from mnemolayer._extras import require
from mnemolayer.config import LLMSettings
from mnemolayer.llm.retry import backoff, retry_after, retryable
from mnemolayer.protocols import Deadline

require("openai", extra="llm", purpose="LLM features")  # names the extra when it is missing
import openai  # noqa: E402

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

    from mnemolayer.protocols import ChatModel

__all__ = ["ChatClient", "Deadline", "LLMBacked", "Source", "default_budget_s", "error_summary"]

log = logging.getLogger(__name__)

#: Who answered a call: the model, or the fallback after the model failed.
Source = Literal["llm", "fallback"]

_ERROR_CHARS = 200


def default_budget_s(settings: LLMSettings) -> float:
    """Seconds one call may spend by default: every attempt at its full timeout,
    ``(settings.max_retries + 1) * settings.timeout_s``."""
    return (settings.max_retries + 1) * settings.timeout_s


def error_summary(exc: BaseException) -> str:
    """``"ErrorType: message"`` on one line, the message's white space folded and cut to
    200 characters (``…`` marks a cut)."""
    flat = " ".join(str(exc).split())
    if len(flat) > _ERROR_CHARS:
        flat = flat[: _ERROR_CHARS - 1] + "…"
    return f"{type(exc).__name__}: {flat}"


class ChatClient:
    """Chat completions from ``settings``' endpoint, retried as the module says.

    Thread-safe: one HTTP connection pool, shared by the threads.

    Args:
        settings: the endpoint, model, key, timeout, retries and temperature. A server
            that takes no key still gets a placeholder one (the SDK wants one).
    """

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=key or "no-key",
            timeout=settings.timeout_s,
            max_retries=0,
        )

    def complete(
        self,
        messages: list[ChatCompletionMessageParam],
        deadline: Deadline,
        *,
        max_tokens: int | None = None,
        response_format: ResponseFormat | None = None,
    ) -> str:
        """The first choice's text for ``messages``, after at most ``max_retries`` retries.

        Args:
            messages: the chat, oldest first.
            deadline: when to give up, waits and attempts included.
            max_tokens: cap on the answer's tokens; ``None`` leaves it to the server.
            response_format: sent as is (e.g. ``{"type": "json_object"}``); ``None``
                sends none.

        Returns:
            The answer's text; ``""`` when the server sends no choice or no content.

        Raises:
            TimeoutError: the deadline passed, or a retry's wait would pass it.
            openai.APIError: a failure that is not retried (e.g. ``BadRequestError``),
                or the last retry's failure.
        """
        retries = 0
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise TimeoutError(f"no answer within the {deadline.budget_s:g} s budget")
            try:
                response = self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=messages,
                    temperature=self.settings.temperature,
                    max_tokens=max_tokens if max_tokens is not None else openai.omit,
                    response_format=response_format if response_format is not None else openai.omit,
                    timeout=min(self.settings.timeout_s, remaining),
                )
            except openai.APIStatusError as exc:
                if retries >= self.settings.max_retries or not retryable(exc.status_code):
                    raise
                asked = retry_after(exc.response.headers)
                delay = asked if asked is not None else backoff(retries)
            except openai.APIConnectionError:  # includes APITimeoutError
                if retries >= self.settings.max_retries:
                    raise
                delay = backoff(retries)
            else:
                if not response.choices:
                    return ""
                return response.choices[0].message.content or ""
            retries += 1
            if delay >= deadline.remaining():
                raise TimeoutError(
                    f"retrying after {delay:g} s would pass the {deadline.budget_s:g} s budget"
                )
            log.debug("retry %d of %d in %.2f s", retries, self.settings.max_retries, delay)
            time.sleep(delay)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()


class LLMBacked:
    """Base of the components that ask a chat model and fall back when it fails.

    Holds :attr:`settings`, :attr:`name` (``"llm:<model>"``), :attr:`budget_s` and the
    :class:`ChatClient`; records per thread who answered the last call
    (:attr:`last_source`, :attr:`last_error`); closes the client, also as a context
    manager. Subclasses check their own arguments before calling ``__init__``.

    Args:
        settings: the endpoint, model, key, timeout, retries and temperature.
        budget_s: seconds one call may spend on the model, waits and retries included;
            ``None`` → :func:`default_budget_s`.
        chat: the chat model to ask (:class:`mnemolayer.protocols.ChatModel`); ``None``
            → a :class:`ChatClient` of ``settings``' endpoint. Tests pass a
            :class:`mnemolayer.testing.ScriptedChatModel`.
    """

    def __init__(
        self, settings: LLMSettings, budget_s: float | None, chat: ChatModel | None = None
    ) -> None:
        self.settings = settings
        self.name = f"llm:{settings.model}"
        self.budget_s = budget_s if budget_s is not None else default_budget_s(settings)
        self._chat: ChatModel = chat if chat is not None else ChatClient(settings)
        self._local = threading.local()

    @property
    def last_source(self) -> Source | None:
        """Who answered this thread's last call: ``"llm"``, ``"fallback"``, or ``None``
        before the first call."""
        source: Source | None = getattr(self._local, "source", None)
        return source

    @property
    def last_error(self) -> str | None:
        """Why this thread's last call fell back (``"ErrorType: message"``, see
        :func:`error_summary`), or ``None`` when the model answered."""
        error: str | None = getattr(self._local, "error", None)
        return error

    def close(self) -> None:
        """Close the HTTP connections."""
        self._chat.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _answered(self) -> None:
        """Record that the model answered this thread's call."""
        self._local.source = "llm"
        self._local.error = None

    def _fell_back(self, exc: BaseException, instead: str) -> None:
        """Log (in the subclass's module) and record that the model failed with ``exc``
        and ``instead`` answers this thread's call."""
        reason = error_summary(exc)
        logging.getLogger(type(self).__module__).warning(
            "%s failed (%s); using %s", self.name, reason, instead
        )
        self._local.source = "fallback"
        self._local.error = reason
