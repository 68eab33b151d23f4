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
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Self

from mnemolayer.config import LLMSettings

try:
    import openai
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "LLM features need the optional dependencies: pip install -e '.[llm]' in the mnemolayer checkout"
    ) from exc

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

__all__ = ["ChatClient", "Deadline", "LLMBacked", "Source", "default_budget_s", "error_summary"]

log = logging.getLogger(__name__)

#: Who answered a call: the model, or the fallback after the model failed.
Source = Literal["llm", "fallback"]

_BACKOFF_S = 0.25
_BACKOFF_MAX_S = 4.0
_RETRY_STATUS = frozenset({408, 409, 429})
_ERROR_CHARS = 200


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a call to the model must have its answer.

    Attributes:
        at: the end, in :func:`time.monotonic` seconds.
        budget_s: the seconds the call was given, for error messages.
    """

    at: float
    budget_s: float

    @classmethod
    def after(cls, budget_s: float) -> Deadline:
        """The deadline ``budget_s`` seconds from now."""
        return cls(time.monotonic() + budget_s, budget_s)

    def remaining(self) -> float:
        """Seconds left until :attr:`at`; ``<= 0`` once it has passed."""
        return self.at - time.monotonic()


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
                if retries >= self.settings.max_retries or not _retryable(exc.status_code):
                    raise
                asked = _retry_after(exc.response.headers)
                delay = asked if asked is not None else _backoff(retries)
            except openai.APIConnectionError:  # includes APITimeoutError
                if retries >= self.settings.max_retries:
                    raise
                delay = _backoff(retries)
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


def _retryable(status: int) -> bool:
    return status in _RETRY_STATUS or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or a numeric ``retry-after`` header, else ``None``
    (an HTTP date in ``retry-after`` counts as none)."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _backoff(retries: int) -> float:
    return float(min(_BACKOFF_S * 2.0**retries, _BACKOFF_MAX_S))


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
    """

    def __init__(self, settings: LLMSettings, budget_s: float | None) -> None:
        self.settings = settings
        self.name = f"llm:{settings.model}"
        self.budget_s = budget_s if budget_s is not None else default_budget_s(settings)
        self._chat = ChatClient(settings)
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
