"""Erasing one memory everywhere its text lives, with a verified receipt.

:meth:`mnemolayer.Memory.forget` runs here. Plain :meth:`~mnemolayer.Memory.delete`
removes a record from recall but keeps its text in the ``DELETE`` history event (and,
until the next checkpoint, in SQLite's write-ahead log). ``forget`` removes, in one
store transaction with secure deletion on:

* the record, its keyword-index rows and its vectors;
* every history event of it (one content-free ``DELETE`` event is written in their
  place, so the audit trail says that a memory was forgotten, and when);
* facts that only it stated, with their semantic records and those records' history;
  a fact with other sources keeps them and loses this one;
* the keyword index's vocabulary entries only it had (the index is compacted);

then, after the commit: the embedding cache's entries of its text (a
:class:`~mnemolayer.embed.cache.CachedEmbedder`), this process's vector cache of the
user and text caches, and the write-ahead log (checkpointed and truncated). A
tombstone of its message stays (a keyed hash, no text), so a replay stays deleted.

The receipt's ``remaining`` re-checks after the commit: ``memories`` (the record and the
deleted fact records), ``keyword_index`` / ``vectors_of_deleted`` (rows of their rowids,
never reused), ``keyword_terms``, ``history_contents`` (events of them still holding a
content or metadata), ``facts_citing_deleted``, ``embedding_cache``, ``vector_cache``
and ``write_ahead_log``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from mnemolayer import _validate as v
from mnemolayer.embed.chunking import chunk_text
from mnemolayer.layers.episodic.read import get_record
from mnemolayer.privacy.erasure import clear_text_caches
from mnemolayer.retrieval.index import index_text

if TYPE_CHECKING:
    from mnemolayer.layers.procedural.strategies import TaskVectors
    from mnemolayer.layers.semantic.apply import SemanticLayer
    from mnemolayer.models import MemoryRecord
    from mnemolayer.protocols import Embedder, Txn
    from mnemolayer.retrieval.search import Searcher
    from mnemolayer.store.base import SQLStore

__all__ = ["ForgetReceipt", "Forgetting"]


class ForgetReceipt(BaseModel):
    """What :meth:`mnemolayer.Memory.forget` removed, and the proof that none of the
    memory's text is left.

    Attributes:
        memory_id, user_id: the memory forgotten and its user.
        removed: count per table, index or cache: ``memories`` (the record and the
            semantic records of facts only it stated), ``keyword_index``, ``vectors``,
            ``keyword_terms`` (vocabulary terms only it had), ``history`` (events
            deleted), ``facts``, ``embedding_cache``, ``vector_cache``, ``task_cache``
            and ``text_caches`` (in-process entries dropped).
        remaining: the checks re-run after the commit (see
            :mod:`mnemolayer.privacy.forget`); every value is 0 when the memory is gone.
        verified: ``True`` when every value of ``remaining`` is 0.
        forgotten_at: when it ran (the memory's clock, UTC).
    """

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    user_id: str
    removed: dict[str, int]
    remaining: dict[str, int]
    verified: bool
    forgotten_at: datetime


class Forgetting:
    """``Memory.forget``: one memory's text erased from every table, index, cache and log.

    Args:
        store: the open store.
        semantic: the semantic layer (facts only this memory stated).
        embedder: the embedder (its cache, when it has ``forget(texts)``).
        searcher: hybrid recall (its in-process vector cache of the user).
        task_vectors: procedural memory's in-process cache of task vectors.
        clock: returns "now" (aware UTC), the receipt's time.
    """

    def __init__(
        self,
        store: SQLStore,
        semantic: SemanticLayer,
        embedder: Embedder,
        searcher: Searcher,
        task_vectors: TaskVectors,
        clock: Callable[[], datetime],
    ) -> None:
        self.store = store
        self.semantic = semantic
        self.embedder = embedder
        self.searcher = searcher
        self.task_vectors = task_vectors
        self.clock = clock

    def forget(self, memory_id: str, *, user_id: str | None = None) -> ForgetReceipt:
        """Erase one memory's text from records, keyword index, vectors, history, the
        facts only it stated, the embedding cache and the write-ahead log, and return a
        verified :class:`~mnemolayer.privacy.forget.ForgetReceipt`.

        Args:
            memory_id: the memory's id.
            user_id: its user; when given, another user's memory is not found.

        Returns:
            The receipt: ``removed`` per table and index, ``remaining`` (all 0) and
            ``verified``.

        Raises:
            NotFoundError: no such memory (for ``user_id`` when given), as for ``get``.
            StoreError: the store failed (nothing was removed).
            EmbedderError: the embedding cache file could not be written (the store's
                removal is committed by then).
        """
        memory_id = v.scope_id(memory_id, "memory_id", required=True)
        if user_id is not None:
            user_id = v.scope_id(user_id, "user_id", required=True)
        old = get_record(self.store, memory_id, user_id)
        now = self.clock()
        removed: dict[str, int] = {}
        done: list[list[str]] = []  # the ids removed
        evidence: list[set[int]] = []  # their rowids
        unique: list[set[str]] = []  # the terms only they had

        def write(c: Txn) -> None:
            store = self.store
            store.bury(c, [old], now)  # a replay of the message stays deleted
            rowids = store.rowids_of(c, [old.id])
            terms = store.unique_terms(c, rowids)
            terms_before = store.vocab_count(c, terms)
            gone = store.delete_ids(c, [old.id])
            facts_before = store.fact_count(c, old.user_id)
            records = self.semantic.forget(c, old.user_id, [old.id], now)
            facts_after = store.fact_count(c, old.user_id)
            ids = [old.id, *records]
            removed["history"] = store.delete_memory_history(c, ids)
            for mid in ids:  # the audit trail keeps that they went, not what they said
                store.add_history(c, mid, old.user_id, "DELETE", None, None, now)
            store.compact_keyword_index(c)
            removed["memories"] = len(gone) + len(records)
            removed["facts"] = max(0, facts_before - facts_after)
            removed["keyword_terms"] = terms_before - store.vocab_count(c, terms)
            done[:], evidence[:], unique[:] = [ids], [rowids], [terms]

        with self.store.secure_delete():
            self.store.transact(write)
        ids, rowids = done[0], evidence[0]
        texts = _embedded_texts(self.embedder, old)
        removed["embedding_cache"] = _forget_cached(self.embedder, texts)
        with self.searcher.vectors._lock:
            removed["vector_cache"] = int(
                self.searcher.vectors._users.pop(old.user_id, None) is not None
            )
        removed["task_cache"] = self.task_vectors.clear()
        removed["text_caches"] = clear_text_caches()
        log_emptied = self.store.truncate_log()
        remaining = self._remaining(old.user_id, ids, rowids, unique[0], texts)
        remaining["write_ahead_log"] = 0 if log_emptied else 1
        return ForgetReceipt(
            memory_id=old.id,
            user_id=old.user_id,
            removed=dict(sorted(removed.items())),
            remaining=dict(sorted(remaining.items())),
            verified=not any(remaining.values()),
            forgotten_at=now,
        )

    def _remaining(
        self, user_id: str, ids: list[str], rowids: set[int], terms: set[str], texts: list[str]
    ) -> dict[str, int]:
        store = self.store
        left = {"memories": store.count_ids(ids)}
        index = store.index_leftovers(rowids)
        left["keyword_index"] = index["keyword_index"]
        left["vectors_of_deleted"] = index["vectors_of_deleted"]
        left["keyword_terms"] = store.vocab_count(None, terms)
        left["history_contents"] = store.history_contents(ids)
        left["facts_citing_deleted"] = store.citations_left(ids)["facts_citing_deleted"]
        cached = getattr(self.embedder, "cached", None)
        left["embedding_cache"] = int(cached(texts)) if callable(cached) else 0
        with self.searcher.vectors._lock:
            cached_user = self.searcher.vectors._users.get(user_id)
        held = set(cached_user.rowids.tolist()) if cached_user is not None else set()
        left["vector_cache"] = len(held & rowids)
        return left


def _embedded_texts(embedder: Embedder, record: MemoryRecord) -> list[str]:
    """The texts the embedder saw for ``record``: the chunks of its index text."""
    text = index_text(record)
    try:
        return list(chunk_text(text, embedder.count_tokens, embedder.max_tokens, 32))
    except Exception:  # a model that cannot count tokens: the whole text was embedded
        return [text]


def _forget_cached(embedder: Embedder, texts: list[str]) -> int:
    """Drop ``texts`` from the embedder's cache, when it has one (``forget(texts)``)."""
    forget = getattr(embedder, "forget", None)
    return int(forget(texts)) if callable(forget) else 0
