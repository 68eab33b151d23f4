"""Which embedding model the store's vectors were made with, checked against the
configured embedder at open, before every write that embeds and before vector search."""

from __future__ import annotations

from mnemolayer.embed.base import Embedder
from mnemolayer.errors import EmbeddingModelMismatchError
from mnemolayer.store.base import SQLStore

__all__ = ["EmbeddingGuard"]


class EmbeddingGuard:
    """The store's recorded model against ``embedder``.

    Args:
        store: the open store; the first opener records its model in the store's meta.
        embedder: the configured embedder.
        path: the store's path as shown in errors.
    """

    def __init__(self, store: SQLStore, embedder: Embedder, path: str) -> None:
        self.store = store
        self.embedder = embedder
        self.path = path
        self.ok = False

    def label(self) -> str:
        """``"<model> (<dim>)"`` of the configured embedder."""
        return f"{self.embedder.name} ({self.embedder.dim})"

    def check(self, *, raise_on_mismatch: bool) -> bool:
        """Record the model if the store has none, else compare; sets and returns :attr:`ok`.

        Raises:
            EmbeddingModelMismatchError: another model, and ``raise_on_mismatch``.
        """
        # An endpoint model learns its dimension from a request; a store that recorded
        # it for the same model tells it instead, so opening needs no endpoint (it may
        # be down: adds are stored pending, searches fall back to keywords).
        assume = getattr(self.embedder, "assume_dim", None)
        if assume is not None and getattr(self.embedder, "known_dim", 0) is None:
            stored_dim = self.store.get_meta("embedding_dim")
            if self.store.get_meta("embedding_model") == self.embedder.name and stored_dim:
                assume(int(stored_dim))
        # First opener records its model; both keys in one transaction, so a concurrent
        # opener sees both or neither.
        meta = self.store.init_meta(
            {"embedding_model": self.embedder.name, "embedding_dim": str(self.embedder.dim)}
        )
        stored = f"{meta['embedding_model']} ({meta['embedding_dim']})"
        self.ok = stored == self.label()
        if not self.ok and not self.store.read_only and self._empty():
            # Nothing was embedded yet (a first add that failed, say, because its model
            # could not load): the store has no embedding space to protect, so it takes
            # this model's instead of refusing it.
            self.store.set_meta("embedding_model", self.embedder.name)
            self.store.set_meta("embedding_dim", str(self.embedder.dim))
            self.ok = True
        if not self.ok and raise_on_mismatch:
            raise EmbeddingModelMismatchError(self.path, stored, self.label())
        return self.ok

    def _empty(self) -> bool:
        """Whether the store holds no memory and no vector of any user."""
        counts = self.store.counts(None)
        return not counts["memories"] and not counts["vectors"]

    def require(self) -> None:
        """Raise unless the store's vectors are the configured model's.

        Raises:
            EmbeddingModelMismatchError: the store was embedded with another model.
        """
        if not self.ok:
            stored = (
                f"{self.store.get_meta('embedding_model')} ({self.store.get_meta('embedding_dim')})"
            )
            raise EmbeddingModelMismatchError(self.path, stored, self.label())
