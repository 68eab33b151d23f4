"""A deterministic, dependency-free embedder for tests and offline demos.

``HashingEmbedder`` is to mnemolayer what a test model is to an LLM library: it has the
``Embedder`` shape, needs no weights, gives the same vectors on every machine and every
Python process, and still behaves like an embedding (texts sharing words score high,
unrelated texts score near 0). It knows nothing about meaning: synonyms do not match.

Algorithm: signed feature hashing ("the hashing trick", Weinberger et al., *Feature Hashing
for Large Scale Multitask Learning*, ICML 2009) over

* lowercase word tokens (runs of letters and digits outside the CJK scripts), and
* for CJK text, which has no spaces, character unigrams and bigrams,

each token adding ``+1`` or ``-1`` to one of ``dim`` buckets, both chosen from a BLAKE2b
digest of the token (Python's ``hash`` is salted per process, so it would not be stable).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from mnemolayer.embed.base import EmbedKind, check_kind, check_texts, finish_vectors
from mnemolayer.errors import ValidationError

__all__ = ["HashingEmbedder", "hashing_tokens"]

# Han (incl. extension A and compatibility ideographs), Hiragana and Katakana: scripts
# written without spaces between words. Hangul is spaced, so it stays with the words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")


def hashing_tokens(text: str) -> list[str]:
    """Split ``text`` into the tokens ``HashingEmbedder`` hashes.

    Args:
        text: any string.

    Returns:
        Lowercase word tokens in order; each CJK run contributes its characters and its
        adjacent character pairs (``"拿铁"`` → ``["拿", "铁", "拿铁"]``). Text with neither
        (only punctuation or emoji) falls back to its non-space characters, so every
        non-blank text has at least one token.
    """
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        run = match.group("cjk")
        if run is None:
            tokens.append(match.group("word"))
        else:
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    if not tokens:
        tokens = [ch for ch in text if not ch.isspace()]
    return tokens


@lru_cache(maxsize=1 << 16)
def _bucket(token: str, dim: int) -> tuple[int, float]:
    """(bucket index, sign) for ``token``; stable across processes and platforms."""
    digest = hashlib.blake2b(
        token.encode("utf-8", "surrogatepass"), digest_size=8, person=b"mnemolayer"
    ).digest()
    value = int.from_bytes(digest, "little")
    # The low bit picks the sign and the remaining bits the bucket, so the two are independent.
    return (value >> 1) % dim, 1.0 if value & 1 else -1.0


class HashingEmbedder:
    """Deterministic feature-hashing embedder (no model, no dependencies).

    Queries and documents are embedded the same way (``kind`` is validated, then ignored).
    Vectors are term-frequency weighted; a text of ``k`` distinct tokens and another
    sharing ``j`` of them score roughly ``j / k`` (plus hash-collision noise of order
    ``1 / sqrt(dim)``).

    Args:
        dim: vector dimension (>= 8). More buckets mean fewer collisions.

    Raises:
        ValidationError: ``dim`` is not an integer >= 8.

    Example:
        >>> e = HashingEmbedder(dim=64)
        >>> v = e.embed(["coffee every morning", "morning coffee"])
        >>> v.shape, bool(v[0] @ v[1] > 0.5)
        ((2, 64), True)
    """

    max_tokens: int = 8192
    similarity_floor: float = 0.0

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValidationError("dim", f"expected an integer >= 8, got {dim!r}")
        self.dim = dim
        self.name = f"hashing-v1/{dim}"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: n non-blank strings.
            kind: ``"query"`` or ``"document"``; both give the same vectors.

        Returns:
            float32 array of shape ``(n, dim)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is a bare string or holds a blank item, or ``kind``
                is unknown.
        """
        check_kind(kind)
        items = check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            for token, count in Counter(hashing_tokens(text)).items():
                index, sign = _bucket(token, self.dim)
                out[row, index] += sign * count
        # A text whose tokens all cancel out in the buckets would be a zero row; give it
        # a fixed direction instead so the output stays unit-length (vanishingly rare).
        zero = ~out.any(axis=1)
        out[zero, 0] = 1.0
        return finish_vectors(out, len(items), self.dim, self.name)

    def count_tokens(self, text: str) -> int:
        """Number of tokens ``embed`` hashes for ``text`` (words, CJK unigrams and bigrams)."""
        return len(hashing_tokens(text))
