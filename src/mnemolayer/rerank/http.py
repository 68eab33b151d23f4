"""A reranker behind any ``/rerank`` HTTP endpoint of the common shape (standard library only).

Two request and response shapes are spoken:

* **TEI** (Hugging Face text-embeddings-inference): ``POST {"query", "texts"}`` →
  ``[{"index", "score"}, ...]``; sent when no model is named.
* **Jina / Cohere** (and the servers that copy them: vLLM, Infinity, LocalAI):
  ``POST {"model", "query", "documents", "top_n"}`` →
  ``{"results": [{"index", "relevance_score"}, ...]}``; sent when a model is named.

The response's shape is detected, whatever was sent: a list of ``{"index", "score"}``, or an
object with ``results`` (``relevance_score``, or ``score``). Every text must get exactly one
finite score, else :class:`~mnemolayer.errors.RerankerError`.

Retries as the LLM client's (:mod:`mnemolayer.llm.client`, which needs the ``openai`` SDK and
is not reused for that reason): timeouts, connection errors and HTTP 408, 409, 429 and 5xx
are retried up to ``max_retries`` times after the server's ``Retry-After`` (seconds, or
``retry-after-ms``) or an exponential backoff of 0.25 s, 0.5 s, 1 s … at most 4 s, within
``budget_s`` for the whole call; each attempt may take ``timeout_s`` and never more than
what is left of the budget.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from mnemolayer.errors import RerankerError, ValidationError
from mnemolayer.llm.retry import backoff, retry_after, retryable
from mnemolayer.protocols import Deadline

__all__ = ["API_KEY_ENV", "MODEL_ENV", "HttpReranker", "parse_scores"]

#: The environment variable holding the endpoint's bearer key (when no ``api_key`` is given).
API_KEY_ENV = "MNEMOLAYER_RERANK_API_KEY"
#: The environment variable naming the model for Jina / Cohere-style endpoints.
MODEL_ENV = "MNEMOLAYER_RERANK_MODEL"

_BODY_CHARS = 200


class HttpReranker:
    """Scores texts against a query at a ``/rerank`` endpoint (the module gives the shapes).

    Nothing is sent at construction: the first :meth:`rerank` is the first request.
    Thread-safe (each call opens its own connection).

    Args:
        url: the endpoint, ``http://`` or ``https://``; ``/rerank`` is appended when the
            path does not already end with it (``http://127.0.0.1:8080`` →
            ``http://127.0.0.1:8080/rerank``).
        model: the model name Jina / Cohere-style endpoints want; ``None`` →
            ``MNEMOLAYER_RERANK_MODEL``, and when that is unset too, the TEI shape (no model).
        api_key: sent as ``Authorization: Bearer <key>``; ``None`` →
            ``MNEMOLAYER_RERANK_API_KEY``; no header when neither is set.
        timeout_s: seconds one attempt may take, > 0. Short by default (2 s): the
            reranker sits on the search path, and a search falls back to recall's own
            order when it fails, so a hanging endpoint should cost little.
        max_retries: further attempts after a retryable failure, >= 0 (1 by default).
        budget_s: seconds a whole :meth:`rerank` may take, waits included; ``None`` →
            ``(max_retries + 1) * timeout_s``.

    Raises:
        ValidationError: (field ``"reranker"``) not an http(s) URL, or a bad number.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 2.0,
        max_retries: int = 1,
        budget_s: float | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValidationError(
                "reranker", f"expected 'http:<http(s) URL of a /rerank endpoint>', got {url!r}"
            )
        if not timeout_s > 0 or max_retries < 0 or (budget_s is not None and not budget_s > 0):
            raise ValidationError(
                "reranker", "timeout_s and budget_s must be > 0 and max_retries >= 0"
            )
        path = parts.path.rstrip("/")
        if not path.endswith("/rerank"):
            path += "/rerank"
        self.url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
        self.name = f"http:{self.url}"
        self.model = model if model is not None else (os.environ.get(MODEL_ENV) or None)
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        self._key = key or None
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.budget_s = float(budget_s) if budget_s is not None else (max_retries + 1) * timeout_s

    def __repr__(self) -> str:  # never the key
        return f"HttpReranker({self.url!r}, model={self.model!r})"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in ``texts`` order (the endpoint's scale; higher is better).

        Raises:
            RerankerError: the endpoint is unreachable, refuses the key (``setting`` is
                ``"MNEMOLAYER_RERANK_API_KEY"``), fails past the retries or the budget, or
                answers something that is not one score per text.
        """
        if not texts:
            return []
        body: dict[str, Any]
        if self.model is None:
            body = {"query": query, "texts": list(texts)}
        else:
            body = {
                "model": self.model,
                "query": query,
                "documents": list(texts),
                "top_n": len(texts),
            }
        payload = self._post(json.dumps(body).encode("utf-8"))
        try:
            answer = json.loads(payload)
        except ValueError as exc:
            raise RerankerError(
                f"reranker {self.url} answered with something that is not JSON: "
                f"{_clip(payload)!r}; check the reranker URL"
            ) from exc
        return parse_scores(answer, len(texts), where=self.url)

    def close(self) -> None:
        """Nothing to release (no connection is kept); for symmetry with the other seams."""

    def _post(self, data: bytes) -> bytes:
        """The response body of a successful POST, retried as the module says."""
        deadline = Deadline.after(self.budget_s)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key}"
        retries = 0
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise RerankerError(
                    f"reranker {self.url} gave no answer within the {self.budget_s:g} s budget"
                )
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(
                    request, timeout=min(self.timeout_s, remaining)
                ) as response:
                    body: bytes = response.read()
                    return body
            except urllib.error.HTTPError as exc:
                status, text = exc.code, _clip(exc.read())
                if status in (401, 403):
                    raise RerankerError(
                        f"reranker {self.url} refused the key (HTTP {status}): set "
                        f"{API_KEY_ENV} or pass api_key",
                        setting=API_KEY_ENV,
                    ) from exc
                if retries >= self.max_retries or not retryable(status):
                    raise RerankerError(
                        f"reranker {self.url} answered HTTP {status}: {text!r}; check the "
                        "reranker setting (URL and model)"
                    ) from exc
                asked = retry_after(exc.headers)
                delay = asked if asked is not None else backoff(retries)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                if retries >= self.max_retries:
                    reason = getattr(exc, "reason", exc)
                    raise RerankerError(
                        f"reranker {self.url} cannot be reached ({reason}); check the "
                        "reranker setting and that the server runs"
                    ) from exc
                delay = backoff(retries)
            retries += 1
            if delay >= deadline.remaining():
                raise RerankerError(
                    f"reranker {self.url}: retrying after {delay:g} s would pass the "
                    f"{self.budget_s:g} s budget"
                )
            time.sleep(delay)


def parse_scores(answer: Any, n: int, *, where: str = "the reranker") -> list[float]:
    """The scores of a ``/rerank`` response for ``n`` texts, in text order.

    Args:
        answer: the decoded JSON: a TEI list ``[{"index", "score"}]``, or a Jina / Cohere
            object ``{"results": [{"index", "relevance_score"}]}`` (``score`` accepted too).
        n: how many texts were sent.
        where: the endpoint, for messages.

    Returns:
        ``n`` floats, ``out[i]`` the score of text ``i``.

    Raises:
        RerankerError: another shape, an index out of range or repeated, a text without a
            score, or a score that is not a finite number.
    """
    items = answer.get("results") if isinstance(answer, Mapping) else answer
    if not isinstance(items, list):
        raise RerankerError(
            f"reranker {where} answered an unknown shape {_clip(json.dumps(answer))!r}: "
            'expected [{"index", "score"}] (TEI) or {"results": [{"index", '
            '"relevance_score"}]} (Jina / Cohere); check the reranker setting'
        )
    out: list[float | None] = [None] * n
    for item in items:
        if not isinstance(item, Mapping):
            raise RerankerError(f"reranker {where} answered a result that is not an object")
        index = item.get("index")
        value = item.get("relevance_score", item.get("score"))
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise RerankerError(f"reranker {where} answered index {index!r} for {n} texts")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RerankerError(f"reranker {where} answered score {value!r} for text {index}")
        if not math.isfinite(value) or out[index] is not None:
            raise RerankerError(
                f"reranker {where} answered a non-finite or repeated score for text {index}"
            )
        out[index] = float(value)
    missing = [i for i, s in enumerate(out) if s is None]
    if missing:
        raise RerankerError(
            f"reranker {where} scored {n - len(missing)} of {n} texts (none for {missing[:5]})"
        )
    return [s for s in out if s is not None]


def _clip(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    flat = " ".join(text.split())
    return flat if len(flat) <= _BODY_CHARS else flat[: _BODY_CHARS - 1] + "…"
