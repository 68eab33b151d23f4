"""A fastembed embedder (``embedder="fastembed:MODEL"``, the ``fastembed`` extra).

fastembed runs ONNX text models on onnxruntime. The model loads from fastembed's cache
or from a directory only (``local_files_only=True``): nothing is downloaded at run time.
Fill the cache once beforehand (``TextEmbedding("BAAI/bge-small-en-v1.5")`` on a machine
with network, then copy ``FASTEMBED_CACHE_PATH``), or point ``model_path=`` at a
directory holding the model's ONNX file, ``tokenizer.json`` and ``tokenizer_config.json``.

The model is named by its fastembed id (``TextEmbedding.list_supported_models()``); a
model fastembed does not list is registered first with
``TextEmbedding.add_custom_model(...)`` (its pooling and normalisation), then loaded
from ``model_path=``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mnemolayer._extras import require
from mnemolayer.embed.base import (
    check_kind,
    check_run_options,
    check_texts,
    finish_vectors,
    scrub_text,
)
from mnemolayer.errors import EmbedderError, ValidationError
from mnemolayer.protocols import EmbedKind

__all__ = ["FastEmbedEmbedder"]

#: fastembed's own variable for its cache directory (read by fastembed when
#: ``cache_dir`` is not given); named in the error when a model is not cached.
CACHE_ENV = "FASTEMBED_CACHE_PATH"


class FastEmbedEmbedder:
    """Embeds texts with a fastembed ``TextEmbedding`` on this machine.

    The model is loaded at construction, so a model missing from the cache fails when
    the memory is opened. Queries and documents go through fastembed's ``query_embed``
    and ``passage_embed`` (the model's own handling), after the prefixes given here
    (``"query: "`` / ``"passage: "`` for E5 models, which fastembed does not add).

    Args:
        model: the fastembed model id (``"BAAI/bge-small-en-v1.5"``).
        model_path: a directory with the model's files, loaded instead of the cache.
        cache_dir: fastembed's cache directory; ``None``: ``$FASTEMBED_CACHE_PATH``, else
            fastembed's default (``<temp dir>/fastembed_cache``).
        threads: onnxruntime threads per call, >= 1; ``None``: onnxruntime's default.
        batch_size: texts per forward pass, >= 1.
        query_prefix, document_prefix: text put before queries and documents.
        similarity_floor: the cosine at or below which the model's texts are unrelated,
            in [0, 1) (see :class:`~mnemolayer.embed.http.OpenAIEmbedder`).

    Attributes:
        name: ``"fastembed:<model id>"`` (what the store records, wherever the files are).
        dim: the model's vector dimension.
        max_tokens: the tokenizer's truncation length (longer input is chunked first).

    Raises:
        MissingExtraError: fastembed is not installed (names the ``fastembed`` extra).
        EmbedderError: the model is neither in the cache nor in ``model_path`` (the
            message names ``cache_dir`` / ``FASTEMBED_CACHE_PATH`` and ``model_path``).
        ValidationError: (field ``"embedder"``) an empty or unknown model id, a
            ``similarity_floor`` out of range, or a ``model_path`` that is not a
            directory; (field ``"batch_size"`` / ``"threads"``) not a positive integer.
    """

    def __init__(
        self,
        model: str,
        *,
        model_path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        similarity_floor: float = 0.0,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValidationError("embedder", "expected 'fastembed:<fastembed model id>'")
        batch_size, threads = check_run_options(batch_size, threads)
        if not 0.0 <= similarity_floor < 1.0:
            raise ValidationError(
                "embedder", f"similarity_floor must be in [0, 1), got {similarity_floor}"
            )
        if model_path is not None and not Path(model_path).is_dir():
            raise ValidationError("embedder", f"model_path {str(model_path)!r} is not a directory")
        fastembed = require("fastembed", extra="fastembed", purpose="the fastembed embedder")
        text_embedding = fastembed.TextEmbedding
        model = model.strip()
        known = {m["model"].lower() for m in text_embedding.list_supported_models()}
        if model.lower() not in known:
            raise ValidationError(
                "embedder",
                f"fastembed does not know the model {model!r} (TextEmbedding."
                "list_supported_models()); register it first with "
                "TextEmbedding.add_custom_model(...)",
            )
        self.name = f"fastembed:{model}"
        self.batch_size = batch_size
        self.similarity_floor = float(similarity_floor)
        self._prefix = {"query": query_prefix, "document": document_prefix}
        options: dict[str, Any] = {"local_files_only": True}
        if model_path is not None:
            options["specific_model_path"] = os.fspath(model_path)
        where = (
            f"model_path {os.fspath(model_path)!r}"
            if model_path is not None
            else f"the fastembed cache ({_cache_label(cache_dir)})"
        )
        try:
            self._model: Any = text_embedding(
                model_name=model,
                cache_dir=os.fspath(cache_dir) if cache_dir is not None else None,
                threads=threads,
                **options,
            )
        except Exception as exc:
            raise EmbedderError(
                f"cannot load fastembed model {model!r} from {where}; nothing is downloaded: "
                f"fill the cache beforehand (set cache_dir= or {CACHE_ENV} to a cache that "
                f"holds it) or pass model_path= with its files ({type(exc).__name__}: {exc})"
            ) from exc
        self.dim: int = int(self._model.embedding_size)
        self._counter, self.max_tokens = _token_counter(self._model)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's own tokenizer, special tokens included and
        without truncation (so long input can be seen to need chunking)."""
        if self._counter is None:
            return max(1, len(text.encode("utf-8")) // 3)
        return len(self._counter.encode(scrub_text(text)).ids)

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts``.

        Returns:
            float32 array of shape ``(len(texts), dim)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is not a sequence of non-blank strings, or ``kind``
                is not ``"query"`` or ``"document"``.
            EmbedderError: the model failed, or answered another shape.
        """
        items = check_texts(texts)
        kind = check_kind(kind)
        if not items:
            return np.empty((0, self.dim), dtype=np.float32)
        inputs = [scrub_text(self._prefix[kind] + t) for t in items]
        run = self._model.query_embed if kind == "query" else self._model.passage_embed
        try:
            raw = np.asarray(list(run(inputs, batch_size=self.batch_size)))
        except Exception as exc:
            raise EmbedderError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc
        return finish_vectors(raw, len(items), self.dim, self.name)

    def close(self) -> None:
        """Drop the model (its memory is freed when nothing else holds it)."""
        self._model = None
        self._counter = None


def _cache_label(cache_dir: str | os.PathLike[str] | None) -> str:
    """Which cache fastembed reads, in the words of its settings."""
    if cache_dir is not None:
        return f"cache_dir {os.fspath(cache_dir)!r}"
    if os.environ.get(CACHE_ENV):
        return f"{CACHE_ENV}={os.environ[CACHE_ENV]!r}"
    return f"fastembed's default; set cache_dir= or {CACHE_ENV}"


def _token_counter(model: Any) -> tuple[Any, int]:
    """A copy of the loaded model's tokenizer without truncation or padding, and the
    truncation length (512 when the model does not say)."""
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if tokenizer is None:
        return None, 512
    limit = int((tokenizer.truncation or {}).get("max_length") or 512)
    counter = type(tokenizer).from_str(tokenizer.to_str())
    counter.no_truncation()
    counter.no_padding()
    return counter, limit
