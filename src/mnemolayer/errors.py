"""Errors raised by mnemolayer.

Every error derives from one root, so callers can catch everything mnemolayer raises
with a single ``except MnemolayerError``. Usage errors (the caller passed something
wrong) are kept apart from runtime errors (the store or a model failed)::

    MnemolayerError
    ├── UsageError                  bad input; the message names the field
    │   ├── ValidationError         a value failed validation (``.field`` names it)
    │   ├── NotFoundError           no memory with that id (in that scope)
    │   ├── ScopeRequiredError      a read or delete without ``user_id``
    │   └── MissingExtraError       an optional dependency is not installed (names the extra)
    └── MnemolayerRuntimeError       the operation could not be carried out
        ├── StoreError              the database failed
        │   ├── StoreCorruptError   the file is not a healthy database ("database corrupt: <path>")
        │   └── StoreBusyError      the database stayed locked past the retry budget
        ├── EmbeddingModelMismatchError   the store was built with another embedding model
        ├── EmbedderError           the embedding model failed
        │   └── EmbedderUnavailableError  ... for now (an endpoint down): add defers
        └── RerankerError           the optional reranker failed or cannot be reached

Foreign exceptions (``sqlite3.Error``, ``pydantic.ValidationError``) are mapped at the
boundary with ``raise ... from``, so the original stays in ``__cause__``.
"""

from __future__ import annotations

__all__ = [
    "EmbedderError",
    "EmbedderUnavailableError",
    "EmbeddingModelMismatchError",
    "MissingExtraError",
    "MnemolayerError",
    "MnemolayerRuntimeError",
    "NotFoundError",
    "RerankerError",
    "ScopeRequiredError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "UsageError",
    "ValidationError",
]


class MnemolayerError(Exception):
    """Root of every error mnemolayer raises."""


class UsageError(MnemolayerError, ValueError):
    """The caller passed something wrong; fix the call, retrying will not help."""


class ValidationError(UsageError):
    """A value failed validation.

    Attributes:
        field: dotted name of the offending field (``"content"``, ``"metadata.tags"``,
            ``"filters.and[0].price"``), or ``None`` when the whole input is wrong.
    """

    def __init__(self, field: str | None, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class NotFoundError(UsageError, LookupError):
    """No memory with the given id exists (in the caller's scope)."""


class ScopeRequiredError(UsageError):
    """A read or delete was attempted without the ``user_id`` scope it needs."""


class MissingExtraError(UsageError, ImportError):
    """An optional feature was asked for without the package it needs.

    Also an :class:`ImportError`, so code that guarded the import keeps working.

    Attributes:
        extra: the pip extra that installs it (``"llm"``).
        module: the module that could not be imported (``"openai"``).
    """

    def __init__(self, message: str, *, extra: str, module: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.module = module
        self.name = module  # ImportError's own attribute


class MnemolayerRuntimeError(MnemolayerError, RuntimeError):
    """An operation was valid but could not be carried out."""


class StoreError(MnemolayerRuntimeError):
    """The backing store failed."""


class StoreCorruptError(StoreError):
    """The database file is damaged or not a database; it is never overwritten."""

    def __init__(self, path: str, detail: str = "") -> None:
        self.path = path
        self.detail = detail  # SQLite's full report (integrity checks can list hundreds)
        brief = " ".join(detail.split())
        if len(brief) > 200:
            brief = brief[:200] + "…"
        super().__init__(f"database corrupt: {path}" + (f" ({brief})" if brief else ""))


class StoreBusyError(StoreError):
    """The database stayed locked by other writers for longer than the retry budget."""


class EmbeddingModelMismatchError(MnemolayerRuntimeError):
    """The store's vectors were made by another embedding model than the one configured.

    Attributes:
        stored: ``"name (dim)"`` recorded in the store.
        configured: ``"name (dim)"`` of the embedder passed in.
    """

    def __init__(self, path: str, stored: str, configured: str) -> None:
        self.path = path
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"{path} was embedded with {stored}, but the configured embedder is {configured}; "
            f"run `mnemolayer --db {path} --embedder <name> reindex` (in Python: "
            "`Memory(path, embedder=..., check_embedder=False).reindex()`) to re-embed every "
            "memory with the new model, or open it with the model it was built with"
        )


class EmbedderError(MnemolayerRuntimeError):
    """The embedding model could not be loaded or failed to embed.

    Attributes:
        setting: what to fix, when one setting is to blame (an endpoint embedder's
            ``"MNEMOLAYER_EMBED_BASE_URL"`` or ``"MNEMOLAYER_EMBED_API_KEY"``); else ``None``.
    """

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class EmbedderUnavailableError(EmbedderError):
    """The embedding model could not answer now (an endpoint unreachable, timing out, busy
    or failing past its retries): worth trying later. ``add`` stores the memory with its
    embedding pending instead of failing; ``maintain`` embeds it once the model is back."""


class RerankerError(MnemolayerRuntimeError):
    """The optional reranker (``Memory(reranker=...)``) could not be loaded or reached,
    or answered something unusable. Recall catches it and keeps its own order.

    Attributes:
        setting: what to fix: ``"reranker"`` (the URL or model name) or
            ``"MNEMOLAYER_RERANK_API_KEY"``.
    """

    def __init__(self, message: str, *, setting: str = "reranker") -> None:
        super().__init__(message)
        self.setting = setting
