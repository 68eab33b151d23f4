"""One JSON ``POST`` to a model endpoint, retried within a time budget (standard library only).

Shared by the seams that speak plain HTTP: the ``/rerank`` reranker
(:mod:`mnemolayer.rerank.http`) and the ``/embeddings`` embedder
(:mod:`mnemolayer.embed.http`). The chat client (:mod:`mnemolayer.llm.client`) uses the
``openai`` SDK instead, which only its extra installs.

Retries: timeouts, connection errors and HTTP 408, 409, 429 and 5xx are tried again up to
``max_retries`` times after the server's ``Retry-After`` (seconds, or ``retry-after-ms``)
or an exponential backoff of 0.25 s, 0.5 s, 1 s … at most 4 s (:mod:`mnemolayer.llm.retry`),
within ``budget_s`` for the whole call; each attempt may take ``timeout_s`` and never more
than what is left of the budget. HTTP 401 and 403 are not retried.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnemolayer.llm.retry import backoff, retry_after, retryable
from mnemolayer.protocols import Deadline

__all__ = ["Endpoint", "clip"]

_BODY_CHARS = 200


def clip(data: bytes | str) -> str:
    """``data`` as one line of at most 200 characters (for error messages)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    flat = " ".join(text.split())
    return flat if len(flat) <= _BODY_CHARS else flat[: _BODY_CHARS - 1] + "…"


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ``POST``, and how its failures read.

    Attributes:
        url: the full URL, ``http://`` or ``https://``.
        what: the seam, first word of every message (``"reranker"``, ``"embedder"``).
        fail: builds the exception to raise from a message, the setting to fix, and
            whether the failure is an outage (``True``: unreachable, timed out, busy or
            failing past the retries, worth trying later) or a wrong setting or answer.
        setting: what to fix when the endpoint is wrong or unreachable (a parameter or
            an environment variable), passed to ``fail``.
        hint: the same for people, in messages (``"check <hint> and that the server runs"``).
        key_env: the environment variable of the bearer key, named when a key is refused.
        api_key: sent as ``Authorization: Bearer <key>``; ``None``: no header.
        timeout_s: seconds one attempt may take.
        max_retries: further attempts after a retryable failure.
        budget_s: seconds the whole call may take, waits included.
    """

    url: str
    what: str
    fail: Callable[[str, str, bool], Exception]
    setting: str
    hint: str
    key_env: str
    api_key: str | None
    timeout_s: float
    max_retries: int
    budget_s: float

    def post_json(self, body: Any) -> Any:
        """The decoded JSON answer of a successful ``POST`` of ``body``.

        Raises:
            Exception: what ``fail`` builds: unreachable, a refused key (setting
                ``key_env``), an HTTP error past the retries, the budget spent, or an
                answer that is not JSON.
        """
        payload = self._post(json.dumps(body).encode("utf-8"))
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise self.fail(
                f"{self.what} {self.url} answered with something that is not JSON: "
                f"{clip(payload)!r}; check {self.hint}",
                self.setting,
                False,
            ) from exc

    def _post(self, data: bytes) -> bytes:
        deadline = Deadline.after(self.budget_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key is not None:
            headers["Authorization"] = f"Bearer {self.api_key}"
        retries = 0
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise self.fail(
                    f"{self.what} {self.url} gave no answer within the {self.budget_s:g} s budget",
                    self.setting,
                    True,
                )
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(
                    request, timeout=min(self.timeout_s, remaining)
                ) as response:
                    body: bytes = response.read()
                    return body
            except urllib.error.HTTPError as exc:
                status, text = exc.code, clip(exc.read())
                if status in (401, 403):
                    raise self.fail(
                        f"{self.what} {self.url} refused the key (HTTP {status}): set "
                        f"{self.key_env} or pass api_key",
                        self.key_env,
                        False,
                    ) from exc
                if retries >= self.max_retries or not retryable(status):
                    raise self.fail(
                        f"{self.what} {self.url} answered HTTP {status}: {text!r}; check "
                        f"{self.hint} (URL and model)",
                        self.setting,
                        retryable(status),
                    ) from exc
                asked = retry_after(exc.headers)
                delay = asked if asked is not None else backoff(retries)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                if retries >= self.max_retries:
                    reason = getattr(exc, "reason", exc)
                    raise self.fail(
                        f"{self.what} {self.url} cannot be reached ({reason}); check "
                        f"{self.hint} and that the server runs",
                        self.setting,
                        True,
                    ) from exc
                delay = backoff(retries)
            retries += 1
            if delay >= deadline.remaining():
                raise self.fail(
                    f"{self.what} {self.url}: retrying after {delay:g} s would pass the "
                    f"{self.budget_s:g} s budget",
                    self.setting,
                    True,
                )
            time.sleep(delay)
