"""The embedding seam: a small protocol every embedding model implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mnemolayer.errors import EmbedderError, EmbedderUnavailableError, ValidationError
from mnemolayer.protocols import Embedder, EmbedKind

__all__ = [
    "EmbedKind",
    "Embedder",
    "check_kind",
    "check_run_options",
    "check_texts",
    "check_vectors",
    "embed_checked",
    "finish_vectors",
    "is_outage",
    "scrub_text",
]


def check_texts(texts: Sequence[str], field: str = "texts") -> list[str]:
    """Validate an ``embed`` argument and return it as a list.

    Args:
        texts: the caller's sequence of strings.
        field: name used in the error message.

    Returns:
        ``list(texts)``.

    Raises:
        ValidationError: ``texts`` is a bare ``str`` (which would embed each character),
            or an item is not a string or is blank.
    """
    if isinstance(texts, str | bytes):
        raise ValidationError(field, "expected a sequence of strings, got a single string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise ValidationError(f"{field}[{i}]", f"expected str, got {type(text).__name__}")
        if not text.strip():
            raise ValidationError(f"{field}[{i}]", "must not be empty or whitespace only")
    return items


def check_kind(kind: str) -> EmbedKind:
    """Return ``kind`` if it is ``"query"`` or ``"document"``; raise ``ValidationError`` if not."""
    if kind not in ("query", "document"):
        raise ValidationError("kind", f"expected 'query' or 'document', got {kind!r}")
    return kind  # type: ignore[return-value]


def check_run_options(batch_size: Any, threads: Any) -> tuple[int, int | None]:
    """A local model's run options, checked: ``(batch_size, threads)``.

    Args:
        batch_size: texts per engine call, an int ``>= 1``.
        threads: CPU threads per engine call, an int ``>= 1``, or ``None`` for the
            engine's default.

    Raises:
        ValidationError: either is not a positive integer (``bool`` included), naming
            ``"batch_size"`` or ``"threads"``.
    """
    for field, value in (("batch_size", batch_size), ("threads", threads)):
        if field == "threads" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValidationError(field, f"expected a positive integer, got {value!r}")
    return batch_size, threads


def finish_vectors(vectors: np.ndarray, n: int, dim: int, model: str) -> np.ndarray:
    """Check a backend's output and return it as contiguous, L2-normalised float32 rows.

    Re-normalising costs O(n * dim) and guards against backends that return rows whose
    length drifts from 1 (quantised engines, float16 outputs).

    Args:
        vectors: array the backend produced, expected shape ``(n, dim)``.
        n: number of input texts.
        dim: model dimension.
        model: model name for error messages.

    Returns:
        float32 array of shape ``(n, dim)``, each row of unit L2 norm.

    Raises:
        EmbedderError: wrong shape, non-finite values or an all-zero row.
    """
    out = np.ascontiguousarray(vectors, dtype=np.float32)
    if out.shape != (n, dim):
        raise EmbedderError(f"{model} returned shape {out.shape}, expected {(n, dim)}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms < 1e-12):
        raise EmbedderError(f"{model} returned a zero or non-finite vector")
    out /= norms
    return out


def check_vectors(vectors: Any, n: int, embedder: Embedder) -> np.ndarray:
    """An embedder's answer for ``n`` texts, checked before anything uses or stores it.

    A custom or remote embedder can be misconfigured (another model behind the same
    name, a truncating proxy, a batch that lost an item): its vectors would be stored and
    fail only at the next search, or poison similarities silently. Checking here, at the
    seam, lets every write fail before its transaction opens, so nothing is stored.

    Args:
        vectors: what ``embedder.embed`` returned for ``n`` texts.
        n: how many texts were embedded.
        embedder: the model, named in errors; ``embedder.dim`` is the expected width.

    Returns:
        The vectors as a float32 array of shape ``(n, embedder.dim)``.

    Raises:
        EmbedderError: not a 2-D numeric array, not ``n`` rows, rows of another
            dimension than ``embedder.dim``, or a NaN or infinite value; the message
            names the embedder and the expected and actual shape.
    """
    name = getattr(embedder, "name", type(embedder).__name__)
    try:
        out = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbedderError(
            f"embedder {name!r} returned {type(vectors).__name__}, not an array of vectors"
        ) from exc
    if out.ndim != 2:
        raise EmbedderError(
            f"embedder {name!r} returned an array of shape {out.shape} for {n} texts, "
            f"expected ({n}, {embedder.dim})"
        )
    if out.shape[0] != n:
        raise EmbedderError(
            f"embedder {name!r} returned {out.shape[0]} vectors for {n} texts "
            "(one vector per text is expected)"
        )
    if out.shape[1] != embedder.dim:
        raise EmbedderError(
            f"embedder {name!r} returned vectors of dimension {out.shape[1]}, expected "
            f"{embedder.dim} (its dim): the embedder is misconfigured"
        )
    finite = np.isfinite(out).all(axis=1)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise EmbedderError(
            f"embedder {name!r} returned NaN or infinite values (vector {bad} of {n})"
        )
    return out


def embed_checked(
    embedder: Embedder, texts: Sequence[str], kind: EmbedKind = "document"
) -> np.ndarray:
    """``embedder.embed(texts, kind)`` with its answer held to :func:`check_vectors`.

    Every embedding the library stores or ranks with goes through here.

    Returns:
        float32 array of shape ``(len(texts), embedder.dim)``.

    Raises:
        EmbedderError: the model failed or answered wrongly (:func:`check_vectors`).
    """
    return check_vectors(embedder.embed(texts, kind), len(texts), embedder)


def scrub_text(text: str) -> str:
    """Make ``text`` safe for native tokenizers and C engines.

    NUL characters (which end a C string early) become spaces, and lone surrogates (left by
    a broken decode, and not encodable as UTF-8) become U+FFFD. Other text is unchanged.
    """
    text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def is_outage(exc: BaseException) -> bool:
    """Whether an embedder's exception means it could not answer now (an endpoint down,
    a crash: :class:`~mnemolayer.errors.EmbedderUnavailableError` or anything but an
    :class:`~mnemolayer.errors.EmbedderError`), rather than that it answered wrongly (an
    ``EmbedderError``: another dimension, NaN), a misconfiguration a retry would not mend.
    Capture stores the words pending on an outage; a hybrid search ranks on keywords."""
    return not isinstance(exc, EmbedderError) or isinstance(exc, EmbedderUnavailableError)
