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

Requests and retries are :class:`mnemolayer.llm.http.Endpoint`'s: timeouts, connection
errors and HTTP 408, 409, 429 and 5xx are retried up to ``max_retries`` times after the
server's ``Retry-After`` or an exponential backoff, within ``budget_s`` for the whole call.
"""

from __future__ import annotations

import json
import math
import os
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from mnemolayer.errors import RerankerError, ValidationError
from mnemolayer.llm.http import Endpoint, clip

__all__ = ["API_KEY_ENV", "MODEL_ENV", "HttpReranker", "parse_scores"]

#: The environment variable holding the endpoint's bearer key (when no ``api_key`` is given).
API_KEY_ENV = "MNEMOLAYER_RERANK_API_KEY"
#: The environment variable naming the model for Jina / Cohere-style endpoints.
MODEL_ENV = "MNEMOLAYER_RERANK_MODEL"


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
        self._endpoint = Endpoint(
            url=self.url,
            what="reranker",
            fail=lambda message, setting, _outage: RerankerError(message, setting=setting),
            setting="reranker",
            hint="the reranker setting",
            key_env=API_KEY_ENV,
            api_key=self._key,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            budget_s=self.budget_s,
        )

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
        answer = self._endpoint.post_json(body)
        return parse_scores(answer, len(texts), where=self.url)

    def close(self) -> None:
        """Nothing to release (no connection is kept); for symmetry with the other seams."""


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
            f"reranker {where} answered an unknown shape {clip(json.dumps(answer))!r}: "
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
