"""Rebuilding what the write path derives from stored records: vectors and keyword
terms for another embedder (:meth:`Reindexer.reindex`), and facts for messages no fact
cites yet (:meth:`Reindexer.extract_facts`). Both write only onto the text they read
(:mod:`~mnemolayer.layers.episodic.enrich`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mnemolayer import _validate as v
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import ValidationError
from mnemolayer.layers.episodic.enrich import Enricher
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.layers.episodic.write import EpisodicWriter
from mnemolayer.layers.semantic.apply import SemanticLayer
from mnemolayer.models import MemoryRecord
from mnemolayer.protocols import Progress, Txn
from mnemolayer.retrieval.index import embed_records, keyword_terms
from mnemolayer.store.base import SQLStore

__all__ = ["Reindexer"]


class Reindexer:
    """Re-embedding and re-mining of a whole store, in batches.

    Args:
        store: the open store.
        embedder: the configured embedder (its model is recorded after a reindex).
        semantic: the semantic layer (its extractor and graph).
        writer: the write path whose extraction and indexing steps are reused.
        clock: returns "now" (aware UTC).
        guard: marked healthy once the store holds this embedder's vectors.
        enricher: mines messages for facts, writing only onto the text it read.
    """

    def __init__(
        self,
        store: SQLStore,
        embedder: Embedder,
        semantic: SemanticLayer,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        guard: EmbeddingGuard,
        enricher: Enricher,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.semantic = semantic
        self.writer = writer
        self.clock = clock
        self.guard = guard
        self.enricher = enricher

    def reindex(self, *, progress: Progress | None = None, batch_size: int = 64) -> int:
        """Re-embed and re-index every memory with the configured embedder, then record
        that model in the store.

        Each batch is embedded, and its vectors checked, before its transaction opens.
        A memory edited while its batch was being embedded keeps the vectors its edit
        wrote (those made from its old words are discarded). A memory whose embedding
        was pending has it done.

        Returns:
            How many memories were re-indexed.

        Raises:
            ValidationError: ``batch_size`` is not an int >= 1 (field ``"batch_size"``).
            EmbedderError: the embedder failed, or returned the wrong number of vectors,
                vectors of another dimension than its ``dim`` or non-finite values. The
                failing batch writes nothing; batches before it stay re-indexed, and the
                store keeps recording its old model until a reindex completes (run it
                again once the embedder is fixed).
        """
        batch_size = v.batch_size(batch_size)
        ids = self.store.ids()
        total = len(ids)
        model = self.embedder.name
        for start in range(0, total, batch_size):
            part = ids[start : start + batch_size]
            pairs = self.store.records_with_revision(part)
            vectors = embed_records(self.embedder, [r for r, _ in pairs])
            extra = self.store.fact_sentences(part)

            def write(c: Txn, pairs=pairs, vectors=vectors, extra=extra) -> None:
                for (r, rev), vec in zip(pairs, vectors, strict=True):
                    if self.store.write_vectors(c, r.id, rev, vec, model=model):
                        self.store.replace_terms(c, r.id, keyword_terms(r, extra.get(r.id, "")))

            self.store.transact(write)
            if progress:
                progress(min(start + batch_size, total), total)
        self.store.set_meta("embedding_model", self.embedder.name)
        self.store.set_meta("embedding_dim", str(self.embedder.dim))
        self.guard.ok = True  # the vector cache reloads by itself: the generation moved
        return total

    def extract_facts(
        self,
        *,
        user_id: str | None = None,
        progress: Progress | None = None,
        batch_size: int = 64,
    ) -> int:
        """Mine stored messages that no fact cites yet (a store made before semantic
        memory, with extraction off, imported without facts, or whose extraction is
        pending) with the configured extractor, in conversation order per user, as
        :meth:`add` would have.

        Running it again finds nothing new to do. Messages are not re-embedded. A
        message edited while the extractor read it keeps what its edit derived: the
        facts and keyword terms of its old words are discarded, and its new words are
        mined once more if the edit left them unmined. A message the extractor raises on
        is marked pending extraction (:meth:`maintain` retries it).

        Returns:
            How many facts were added.

        Raises:
            ValidationError: no extractor is configured (``extractor=None``).
        """
        batch_size = v.batch_size(batch_size)
        if self.semantic.extractor is None:
            raise ValidationError("extractor", "extract_facts needs an extractor (e.g. 'rules')")
        self.guard.require()
        uid = v.scope_id(user_id, "user_id") if user_id is not None else None
        todo = [mid for _u, mid in self.semantic.graph.unmined_messages(uid)]
        added = 0
        for start in range(0, len(todo), batch_size):
            part = todo[start : start + batch_size]
            mined = self.enricher.mine(self._turns(part), pending_only=False)
            added += mined.facts
            if mined.stale:  # edited while the model read them: their new words, once
                still = {mid for _u, mid in self.semantic.graph.unmined_messages(uid)}
                again = [mid for mid in part if mid in still and mid in set(mined.stale)]
                if again:
                    added += self.enricher.mine(self._turns(again), pending_only=False).facts
            if progress:
                progress(min(start + batch_size, len(todo)), len(todo))
        return added

    def _turns(self, ids: list[str]) -> list[tuple[MemoryRecord, int]]:
        """The stored records among ``ids`` with their revisions, in the order of ``ids``."""
        order = {mid: i for i, mid in enumerate(ids)}
        return sorted(self.store.records_with_revision(ids), key=lambda x: order[x[0].id])
