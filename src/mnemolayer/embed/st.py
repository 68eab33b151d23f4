"""A local sentence-transformers embedder (``embedder="sentence-transformers:NAME_OR_PATH"``,
the ``st`` extra).

The model loads from a local directory or the Hugging Face cache only
(``local_files_only=True``): nothing is downloaded at run time. Fetch it once beforehand
(``huggingface-cli download BAAI/bge-small-en-v1.5``) or point at a directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from mnemolayer._extras import require
from mnemolayer.embed.base import check_kind, check_texts, finish_vectors
from mnemolayer.errors import EmbedderError, ValidationError
from mnemolayer.protocols import EmbedKind

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """Embeds texts with a sentence-transformers ``SentenceTransformer`` on this machine.

    The model is loaded at construction, so a wrong name fails when the memory is opened.
    Queries and documents use the model's own prompts when it defines ``"query"`` and
    ``"document"`` (or ``"passage"``) prompts, else the prefixes given here.

    Args:
        model: a local path or a model name already in the Hugging Face cache.
        device: ``"cpu"``, ``"cuda"`` …; ``None``: the library's choice.
        batch_size: texts per forward pass, >= 1.
        query_prefix, document_prefix: text put before queries and documents when the
            model has no prompts of its own (``"query: "`` / ``"passage: "`` for E5).
        similarity_floor: the cosine at or below which the model's texts are unrelated,
            in [0, 1) (see :class:`~mnemolayer.embed.http.OpenAIEmbedder`).

    Attributes:
        name: ``"sentence-transformers:<model as given>"`` (what the store records; a
            path is recorded by its last component, so a moved model still matches).

    Raises:
        MissingExtraError: sentence-transformers is not installed (names the ``st`` extra).
        EmbedderError: the model is not on disk (the message says nothing is downloaded).
        ValidationError: (field ``"embedder"``) an empty name or a bad number.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        batch_size: int = 32,
        query_prefix: str = "",
        document_prefix: str = "",
        similarity_floor: float = 0.0,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValidationError(
                "embedder", "expected 'sentence-transformers:<model name or path>'"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError(
                "embedder", f"batch_size must be an integer >= 1, got {batch_size!r}"
            )
        if not 0.0 <= similarity_floor < 1.0:
            raise ValidationError(
                "embedder", f"similarity_floor must be in [0, 1), got {similarity_floor}"
            )
        st = require(
            "sentence_transformers", extra="st", purpose="the sentence-transformers embedder"
        )
        label = os.path.basename(model.rstrip("/\\")) if os.path.isdir(model) else model
        self.name = f"sentence-transformers:{label}"
        self.batch_size = batch_size
        self.similarity_floor = float(similarity_floor)
        try:
            self._model: Any = st.SentenceTransformer(model, device=device, local_files_only=True)
        except Exception as exc:
            raise EmbedderError(
                f"cannot load sentence-transformers model {model!r} from a local path or the "
                f"Hugging Face cache (nothing is downloaded): {type(exc).__name__}: {exc}"
            ) from exc
        dim = self._model.get_sentence_embedding_dimension()
        if not isinstance(dim, int) or dim < 1:
            raise EmbedderError(f"{self.name} does not say its embedding dimension")
        self.dim: int = dim
        self.max_tokens: int = int(getattr(self._model, "max_seq_length", None) or 512)
        prompts = dict(getattr(self._model, "prompts", None) or {})
        self._prompt = {
            "query": "query" if "query" in prompts else None,
            "document": next((p for p in ("document", "passage") if p in prompts), None),
        }
        self._prefix = {"query": query_prefix, "document": document_prefix}

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the model's own tokenizer (special tokens included)."""
        tokenizer = getattr(self._model, "tokenizer", None)
        if tokenizer is None:
            return max(1, len(text.encode("utf-8")) // 3)
        return len(tokenizer(text)["input_ids"])

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
        prompt = self._prompt[kind]
        inputs = items if prompt else [self._prefix[kind] + t for t in items]
        options: dict[str, Any] = {"batch_size": self.batch_size, "show_progress_bar": False}
        if prompt:
            options["prompt_name"] = prompt
        try:
            raw = self._model.encode(inputs, convert_to_numpy=True, **options)
        except Exception as exc:
            raise EmbedderError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc
        return finish_vectors(np.asarray(raw), len(items), self.dim, self.name)

    def close(self) -> None:
        """Drop the model (its memory is freed when nothing else holds it)."""
        self._model = None
