"""When and how long an HTTP client of a model endpoint waits before it tries again.

Shared by the chat client (:mod:`mnemolayer.llm.client`) and the reranker
(:mod:`mnemolayer.rerank.http`); standard library only, so that importing it loads no
client library.
"""

from __future__ import annotations

import math
from typing import Protocol

__all__ = [
    "BACKOFF_MAX_S",
    "BACKOFF_S",
    "RETRY_STATUS",
    "Headers",
    "backoff",
    "retry_after",
    "retryable",
]

#: First wait of the exponential backoff, seconds (doubled per retry).
BACKOFF_S = 0.25
#: Longest wait between two attempts, seconds.
BACKOFF_MAX_S = 4.0
#: Statuses below 500 worth another try: request timeout, conflict, too many requests.
RETRY_STATUS = frozenset({408, 409, 429})


def retryable(status: int) -> bool:
    """Whether an HTTP ``status`` is worth another attempt (408, 409, 429 and 5xx)."""
    return status in RETRY_STATUS or status >= 500


class Headers(Protocol):
    """What is read of response headers: a case-insensitive ``get`` (httpx's headers,
    :class:`email.message.Message` from urllib)."""

    def get(self, name: str, /) -> str | None: ...


def retry_after(headers: Headers | None) -> float | None:
    """Seconds from a ``retry-after-ms`` or numeric ``retry-after`` header, else ``None``
    (an HTTP date in ``retry-after`` counts as none, so does a negative or infinite one)."""
    if headers is None:
        return None
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


def backoff(retries: int) -> float:
    """Seconds to wait before attempt ``retries + 2``: ``BACKOFF_S · 2^retries``, at most
    :data:`BACKOFF_MAX_S`."""
    return float(min(BACKOFF_S * 2.0**retries, BACKOFF_MAX_S))
