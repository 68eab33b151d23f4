"""Enrichment after capture: completing what the models could not do when a record was
stored, and writing what is derived from a record's text only onto that same text.

**Capture first.** :meth:`Memory.add <mnemolayer.Memory.add>` keeps the user's words
whatever the models do (:mod:`~mnemolayer.layers.episodic.write`): when the embedder
raises, the records are stored and keyword-indexed without vectors, marked
``"embedding"`` pending; when the extractor raises on a message, the message is stored
marked ``"extraction"`` pending (:attr:`~mnemolayer.models.MemoryRecord.pending`; one
mark per record and kind, never a second copy of the record).

**Completion.** :meth:`Enricher.complete` (run by :meth:`Memory.maintain
<mnemolayer.Memory.maintain>` for each user) embeds the records pending embedding, then
mines the messages pending extraction, a batch at a time. Each completion is one
conditional write (:meth:`~mnemolayer.store.pending.PendingSQL.write_vectors`,
:meth:`~mnemolayer.store.pending.PendingSQL.claim`): it takes effect only while the
record still waits for it and its content is still the one read, so two passes in two
processes, or a pass racing an edit, never write twice or write stale results. A model
still failing leaves the records pending for the next pass; nothing is raised.

**Derived from the text it was read at.** A slow model call (an LLM extractor, a remote
embedder) may outlast an edit of the record it reads. Every edit counts a revision of the
record's content (:meth:`~mnemolayer.store.records.RecordsSQL.update_record`), read
together with the text, and what was derived from it (facts and their sentence records,
the message's keyword terms, vectors) is written in a transaction that first checks the
revision: a result computed from the old words is discarded (the edit wrote its own),
and :meth:`~mnemolayer.layers.episodic.reindex.Reindexer.extract_facts` mines the new
words once more when the edit left them unmined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from mnemolayer.layers.episodic.capture import embed_or_defer
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.layers.episodic.write import EpisodicWriter
from mnemolayer.models import MemoryRecord
from mnemolayer.protocols import Txn
from mnemolayer.retrieval.index import keyword_terms
from mnemolayer.store.base import SQLStore

__all__ = ["Enricher", "Mined"]


@dataclass
class Mined:
    """What one :meth:`Enricher.mine` did.

    Attributes:
        facts: facts added.
        done: ids of the messages mined and written (their extraction is no longer
            pending).
        stale: ids of the messages whose result was discarded: edited, deleted or
            (pending only) completed by another writer since they were read.
        failed: ids of the messages the extractor raised on (marked pending).
    """

    facts: int = 0
    done: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class Enricher:
    """Completes pending enrichment, and mines stored messages for facts.

    Args:
        store: the open store.
        writer: the write path whose extraction (privacy applied) and indexing steps
            are reused; its embedder and semantic layer are the ones used.
        clock: returns "now" (aware UTC).
        guard: nothing is embedded while the store's vectors are another model's.
    """

    #: Records read, embedded or mined per batch (one transaction each).
    BATCH = 64

    def __init__(
        self,
        store: SQLStore,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        guard: EmbeddingGuard,
    ) -> None:
        self.store = store
        self.writer = writer
        self.semantic = writer.semantic
        self.embedder = writer.embedder
        self.clock = clock
        self.guard = guard

    def complete(self, user_id: str) -> tuple[int, int]:
        """Embed the user's records pending embedding, then mine those pending
        extraction (with an extractor configured), stopping at the first batch the
        model still fails on.

        Returns:
            ``(embedded, extracted)``: how many records each completion finished.
        """
        if not self.guard.ok:  # vectors of another model: reindex first
            return 0, 0
        embedded = self._embed_pending(user_id)
        extracted = self._extract_pending(user_id) if self.semantic.extractor is not None else 0
        return embedded, extracted

    def _embed_pending(self, user_id: str) -> int:
        done, after = 0, None
        while page := self.store.pending_records(
            user_id, "embedding", after=after, limit=self.BATCH
        ):
            after = page[-1][0].id
            vectors = embed_or_defer(self.embedder, [r for r, _ in page])
            if vectors is None:
                return done  # still failing: they wait for the next pass
            now = self.clock()

            def write(c: Txn, page=page, vectors=vectors, now=now) -> int:
                return sum(
                    self.store.write_vectors(
                        c, r.id, rev, vec, model=self.embedder.name, at=now, pending_only=True
                    )
                    for (r, rev), vec in zip(page, vectors, strict=True)
                )

            done += self.store.transact(write)
        return done

    def _extract_pending(self, user_id: str) -> int:
        done, after = 0, None
        while page := self.store.pending_records(
            user_id, "extraction", after=after, limit=self.BATCH
        ):
            after = page[-1][0].id
            # In conversation order, so that later words supersede earlier ones.
            page.sort(key=lambda x: (x[0].occurred_at or x[0].created_at, x[0].id))
            mined = self.mine(page, pending_only=True)
            done += len(mined.done)
            if mined.failed and not mined.done:
                break  # the extractor still fails: the rest waits for the next pass
        return done

    def mine(self, turns: Sequence[tuple[MemoryRecord, int]], *, pending_only: bool) -> Mined:
        """Extract the facts of ``turns`` (records with the content revision they were
        read at) outside the write lock, then, in one transaction, write the facts,
        their sentence records and each message's keyword terms for the messages still
        at that revision (and, with ``pending_only``, still pending extraction), whose
        extraction is then marked done; the messages the extractor raised on are marked
        pending. Messages are not re-embedded."""
        now = self.clock()
        records = [t for t, _ in turns]
        revision = {t.id: rev for t, rev in turns}
        pending = self.writer.prepare(records, now)
        failed = {p.turn.id for p in pending if p.failed}
        mined = [p for p in pending if not p.failed]
        vec_of, terms, _ = self.writer.index([], mined)  # the messages keep their vectors
        at = now if pending_only else None

        def write(c: Txn) -> tuple[int, list[str]]:
            done = [
                t.id
                for t in records
                if t.id not in failed
                and self.store.claim(
                    c, t.id, "extraction", revision[t.id], at=at, pending_only=pending_only
                )
            ]
            ok = set(done)
            fresh = [p for p in mined if p.turn.id in ok]
            facts = self.semantic.apply(c, fresh, ok, vec_of, terms, now)
            for p in fresh:
                self.store.replace_terms(c, p.turn.id, keyword_terms(p.turn, p.keyword_text()))
            for mid in failed:
                self.store.mark_pending(c, mid, "extraction", revision[mid])
            return len(facts), done

        count, done = self.store.transact(write)
        self.writer.wake_queue()  # the facts' sentence records, when embedding is deferred
        stale = [t.id for t in records if t.id not in failed and t.id not in set(done)]
        return Mined(facts=count, done=done, stale=stale, failed=sorted(failed))
