"""Rebuilding what the write path derives from stored records: vectors and keyword
terms for another embedder (:meth:`Reindexer.reindex`), and facts for messages no fact
cites yet (:meth:`Reindexer.extract_facts`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mnemolayer import _validate as v
from mnemolayer.embed.base import Embedder
from mnemolayer.errors import ValidationError
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.layers.episodic.write import EpisodicWriter
from mnemolayer.layers.semantic.apply import SemanticLayer
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
    """

    def __init__(
        self,
        store: SQLStore,
        embedder: Embedder,
        semantic: SemanticLayer,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        guard: EmbeddingGuard,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.semantic = semantic
        self.writer = writer
        self.clock = clock
        self.guard = guard

    def reindex(self, *, progress: Progress | None = None, batch_size: int = 64) -> int:
        """Re-embed and re-index every memory with the configured embedder, then record
        that model in the store.

        Each batch is embedded, and its vectors checked, before its transaction opens.

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
        for start in range(0, total, batch_size):
            part = ids[start : start + batch_size]
            recs = self.store.records_by_id(part)
            vectors = embed_records(self.embedder, recs)
            extra = self.store.fact_sentences(part)

            def write(c: Txn, recs=recs, vectors=vectors, extra=extra) -> None:
                for r, vec in zip(recs, vectors, strict=True):
                    self.store.replace_index(c, r.id, keyword_terms(r, extra.get(r.id, "")), vec)
                    self.store.update_record(
                        c, r.model_copy(update={"embedding_model": self.embedder.name})
                    )

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
        memory, with extraction off, or imported without facts) with the configured
        extractor, in conversation order per user, as :meth:`add` would have.

        Running it again finds nothing new to do. Messages are not re-embedded.

        Returns:
            How many facts were added.

        Raises:
            ValidationError: no extractor is configured (``extractor=None``).
        """
        batch_size = v.batch_size(batch_size)
        if self.semantic.extractor is None:
            raise ValidationError("extractor", "extract_facts needs an extractor (e.g. 'rules')")
        self.guard.require()
        todo = self.semantic.graph.unmined_messages(
            v.scope_id(user_id, "user_id") if user_id is not None else None
        )
        added = 0
        for start in range(0, len(todo), batch_size):
            ids = [mid for _u, mid in todo[start : start + batch_size]]
            by_id = {r.id: r for r in self.store.records_by_id(ids)}
            turns = [by_id[i] for i in ids if i in by_id]
            now = self.clock()
            pending = self.writer.prepare(turns, now)
            vec_of, terms = self.writer.index([], pending)  # the messages keep their vectors

            def write(c: Txn, pending=pending, vec_of=vec_of, terms=terms, now=now) -> int:
                facts = self.semantic.apply(
                    c, pending, {p.turn.id for p in pending}, vec_of, terms, now
                )
                for p in pending:
                    self.store.replace_terms(c, p.turn.id, keyword_terms(p.turn, p.keyword_text()))
                return len(facts)

            added += self.store.transact(write)
            if progress:
                progress(min(start + batch_size, len(todo)), len(todo))
        return added
