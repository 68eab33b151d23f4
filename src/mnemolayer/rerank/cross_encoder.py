"""A local cross-encoder reranker through sentence-transformers (the ``st`` extra).

The model loads from a local directory or the Hugging Face cache only
(``local_files_only=True``): nothing is downloaded at search time. Fetch it once
beforehand (``huggingface-cli download cross-encoder/ms-marco-MiniLM-L6-v2``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mnemolayer._extras import require
from mnemolayer.errors import RerankerError, ValidationError

__all__ = ["CrossEncoderReranker"]


class CrossEncoderReranker:
    """Scores (query, text) pairs with a sentence-transformers ``CrossEncoder``.

    The model is loaded at construction, so a wrong name fails when the memory is opened,
    not at the first search.

    Args:
        model: a local path or a model name already in the Hugging Face cache.
        device: ``"cpu"``, ``"cuda"`` …; ``None``: the library's choice.
        batch_size: pairs per forward pass, >= 1.

    Raises:
        MissingExtraError: sentence-transformers is not installed (names the ``st`` extra).
        RerankerError: the model is not on disk (the message says nothing is downloaded).
        ValidationError: (field ``"reranker"``) an empty name or a bad batch size.
    """

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 32) -> None:
        if not model.strip() or batch_size < 1:
            raise ValidationError(
                "reranker", "expected 'cross-encoder:<model name or path>' and batch_size >= 1"
            )
        st = require("sentence_transformers", extra="st", purpose="the cross-encoder reranker")
        self.name = f"cross-encoder:{model}"
        self.batch_size = batch_size
        try:
            self._model: Any = st.CrossEncoder(model, device=device, local_files_only=True)
        except Exception as exc:
            raise RerankerError(
                f"cannot load cross-encoder {model!r} from a local path or the Hugging Face "
                f"cache (nothing is downloaded): {type(exc).__name__}: {exc}"
            ) from exc

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text (the model's scale; higher is better).

        Raises:
            RerankerError: the model failed, or did not give one finite score per text.
        """
        if not texts:
            return []
        try:
            raw = self._model.predict(
                [(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False
            )
            scores = [float(x) for x in _flat(raw)]
        except Exception as exc:
            raise RerankerError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc
        if len(scores) != len(texts) or not all(math.isfinite(s) for s in scores):
            raise RerankerError(
                f"{self.name} gave {len(scores)} scores for {len(texts)} texts, or a "
                "non-finite one (a model with several labels is not a reranker)"
            )
        return scores

    def close(self) -> None:
        """Drop the model (its memory is freed when nothing else holds it)."""
        self._model = None


def _flat(raw: Any) -> list[Any]:
    """The scores of ``predict`` (an array, a tensor or a list) as a flat list."""
    values = raw.tolist() if hasattr(raw, "tolist") else list(raw)
    return [v for row in values for v in (row if isinstance(row, list) else [row])]
