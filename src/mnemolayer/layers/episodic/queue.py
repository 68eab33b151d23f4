"""The background embedding queue: capture now, embed at the model's own pace.

With ``Memory(embed_queue=True)`` an :meth:`~mnemolayer.Memory.add` (and an
:meth:`~mnemolayer.Memory.update` of the content, and the sentence records of extracted
facts) does not wait for the embedder: the records are stored in the write transaction
as always (durable, keyword-indexed, returned to the caller) with ``"embedding"`` in
their :attr:`~mnemolayer.models.MemoryRecord.pending`, the mark a failed embedder leaves
(:mod:`~mnemolayer.layers.episodic.capture`). One worker thread per :class:`Memory`
then reads the oldest records pending embedding, of any user
(:meth:`~mnemolayer.store.pending.PendingSQL.pending_embeddings`), embeds up to
:attr:`EmbedQueueConfig.batch` of them in one model call, and writes their vectors with
the revision-conditional statement
(:meth:`~mnemolayer.store.pending.PendingSQL.write_vectors`, ``pending_only``): a record
edited, deleted or embedded by another writer while the model ran is left alone, so a
stale vector never overwrites an edit.

**Batching across calls.** The queue is the store's pending set, so the messages of many
single-message adds that arrived while the model was busy go to the model together: the
batch grows with the load, and the caller pays the model only through the CPU it shares.

**Durable.** Nothing is held in memory: a record stays marked in the store until its
vectors are written. :meth:`EmbedQueue.close` waits up to ``close_wait_s`` for the queue
to empty and leaves the rest pending; the next ``Memory`` opened on the store with the
queue (any process) embeds them first, and without the queue :meth:`Memory.maintain
<mnemolayer.Memory.maintain>` or :meth:`Memory.flush <mnemolayer.Memory.flush>` does.

**Failures.** An embedder that raises (an outage) or answers wrongly
(:class:`~mnemolayer.errors.EmbedderError`) leaves the batch pending; the worker logs it
and tries again after ``retry_s``. The worker also looks for work every ``retry_s`` when
idle, so records another process left pending are picked up.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer import _validate as v
from mnemolayer.errors import ValidationError
from mnemolayer.layers.episodic.capture import embed_or_defer
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.protocols import Txn
from mnemolayer.store.base import SQLStore

__all__ = ["Backlog", "EmbedQueue", "EmbedQueueConfig", "embed_pending_batch", "resolve_queue"]

log = logging.getLogger(__name__)


class EmbedQueueConfig(BaseModel):
    """Settings of the background embedding queue (``Memory(embed_queue=...)``).

    Attributes:
        batch: most records embedded in one model call (the embedder splits it into its
            own batches), >= 1.
        close_wait_s: seconds :meth:`Memory.close <mnemolayer.Memory.close>` waits for
            the queue to empty before it leaves the rest pending in the store, >= 0.
        retry_s: seconds between tries while the embedder fails, and between looks for
            records other processes left pending while idle, > 0.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    batch: int = Field(128, ge=1, le=10_000)
    close_wait_s: float = Field(10.0, ge=0.0)
    retry_s: float = Field(5.0, gt=0.0)


def resolve_queue(spec: EmbedQueueConfig | bool | None) -> EmbedQueueConfig | None:
    """``Memory``'s ``embed_queue`` argument as a config, or ``None`` for no queue.

    Raises:
        ValidationError: (``embed_queue``) neither a bool, ``None`` nor an
            :class:`EmbedQueueConfig`.
    """
    if spec is None or spec is False:
        return None
    if spec is True:
        return EmbedQueueConfig()
    if isinstance(spec, EmbedQueueConfig):
        return spec
    raise ValidationError(
        "embed_queue", f"expected True, False or an EmbedQueueConfig, got {type(spec).__name__}"
    )


def embed_pending_batch(
    store: SQLStore, guard: EmbeddingGuard, clock: Callable[[], datetime], limit: int
) -> tuple[int, int] | None:
    """Embed the ``limit`` oldest records pending embedding (any user) in one model
    call and write their vectors where each is still at the revision read.

    Returns:
        ``(read, written)``: records read and records whose vectors were written
        (``(0, 0)``: nothing waits); ``None`` when the embedder could not answer (the
        records stay pending).

    Raises:
        EmbedderError: the embedder answered wrongly (the records stay pending).
    """
    page = store.pending_embeddings(limit)
    if not page:
        return 0, 0
    embedder = guard.embedder
    vectors = embed_or_defer(embedder, [r for r, _ in page])
    if vectors is None:
        return None
    now = clock()

    def write(c: Txn) -> int:
        return sum(
            store.write_vectors(c, r.id, rev, vec, model=embedder.name, at=now, pending_only=True)
            for (r, rev), vec in zip(page, vectors, strict=True)
        )

    return len(page), store.transact(write)


class EmbedQueue:
    """The worker thread that embeds a store's pending records in batches.

    Args:
        store: the open (writable) store.
        guard: the store's embedding model check; its embedder is the one used, and
            nothing is embedded while the store's vectors are another model's.
        clock: returns "now" (aware UTC): the records' ``updated_at`` when embedded.
        config: batch size and timings.
    """

    def __init__(
        self,
        store: SQLStore,
        guard: EmbeddingGuard,
        clock: Callable[[], datetime],
        config: EmbedQueueConfig,
    ) -> None:
        self.store, self.guard, self.clock, self.config = store, guard, clock, config
        self._cond = threading.Condition()
        self._woken = False
        self._stopping = False
        self._scans = 0  # reads of the pending set begun
        self._settled = 0  # the last scan that found nothing left, or failed
        self._thread = threading.Thread(target=self._run, name="mnemolayer-embed", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Tell the worker that records were stored pending (it looks at once)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Wait until the worker has found nothing left to embed, by a look begun after
        this call (or the embedder failed on that look).

        Returns:
            ``False`` when ``timeout_s`` passed first.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            target = self._scans + 1
            self._woken = True
            self._cond.notify_all()
            while self._settled < target and self._thread.is_alive():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> bool:
        """Wait up to ``close_wait_s`` for the queue to empty, then stop the worker
        after the batch it is on (what is left stays pending in the store).

        Returns:
            Whether the worker stopped in time (``False``: it is still inside a model
            call that outlasted the wait; it writes nothing once the store is closed).
        """
        self.wait_idle(self.config.close_wait_s)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(max(1.0, self.config.retry_s))
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._scans += 1
                scan = self._scans
            idle = self._one_batch()
            if idle is None:
                continue  # records were embedded: look again at once
            with self._cond:
                self._settled = scan
                self._cond.notify_all()
                if idle:  # nothing waits: until an add wakes it, or a look now and then
                    self._cond.wait_for(lambda: self._woken or self._stopping, self.config.retry_s)
                else:  # the embedder failed: no retry before retry_s, whatever wakes it
                    self._cond.wait_for(lambda: self._stopping, self.config.retry_s)
                self._woken = False

    def _one_batch(self) -> bool | None:
        """One batch: ``None`` when records were embedded (look again at once),
        ``True`` when nothing waits, ``False`` when the embedder failed."""
        if not self.guard.ok:  # another model's vectors: reindex first
            return True
        try:
            done = embed_pending_batch(self.store, self.guard, self.clock, self.config.batch)
        except Exception as exc:  # never let the worker die: the records stay pending
            with self._cond:
                stopping = self._stopping
            if not stopping:
                log.error("background embedding failed; retrying in %gs", self.config.retry_s,
                          exc_info=exc)  # fmt: skip
            return False
        if done is None:
            return False
        return True if done == (0, 0) else None


class Backlog:
    """What waits for the embedder in one store, and waiting for it: the service behind
    :meth:`Memory.flush <mnemolayer.Memory.flush>` and :meth:`Memory.pending
    <mnemolayer.Memory.pending>`, owning the :class:`EmbedQueue` when there is one.

    Args:
        store: the open store.
        guard: the store's embedding model check (its embedder embeds).
        clock: returns "now" (aware UTC).
        config: the queue's settings; ``None``: no queue (records are embedded by the
            write itself, and :meth:`flush` embeds what an outage left pending).
    """

    def __init__(
        self,
        store: SQLStore,
        guard: EmbeddingGuard,
        clock: Callable[[], datetime],
        config: EmbedQueueConfig | None,
    ) -> None:
        self.store, self.guard, self.clock = store, guard, clock
        self.config = config or EmbedQueueConfig()
        self.queue = (
            EmbedQueue(store, guard, clock, config)
            if config is not None and not store.read_only
            else None
        )

    def flush(self, timeout_s: float | None = None) -> int:
        """Wait until the records stored pending embedding (of every user) are embedded:
        by the background queue when it runs (``Memory(embed_queue=True)``), else in
        this call, a batch at a time. Records an outage left pending are embedded too.

        Args:
            timeout_s: the most seconds to wait (> 0); ``None``: until the queue is
                empty or the embedder fails.

        Returns:
            How many records still wait for their embedding: 0 when all are embedded;
            more when the embedder failed (it is not raised: the records stay pending
            and are tried again), the time ran out, other writers keep adding, or the
            store is read-only or holds another model's vectors.

        Raises:
            ValidationError: (``timeout_s``) not a positive number.
        """
        if timeout_s is not None and (
            isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or timeout_s <= 0
        ):
            raise ValidationError(
                "timeout_s", f"must be a positive number of seconds, got {timeout_s!r}"
            )
        if self.queue is not None:
            self.queue.wait_idle(timeout_s)
        elif not self.store.read_only and self.guard.ok:
            self._embed_here(timeout_s)
        return self.store.pending_counts()["embedding"]

    def _embed_here(self, timeout_s: float | None) -> None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while deadline is None or time.monotonic() < deadline:
            try:
                done = embed_pending_batch(self.store, self.guard, self.clock, self.config.batch)
            except Exception as exc:  # as the queue does: logged, the records stay pending
                log.error("embedding pending records failed", exc_info=exc)
                return
            if done is None or done == (0, 0):
                return

    def pending(self, user_id: str | None = None) -> dict[str, int]:
        """How many records wait for each kind of enrichment, of ``user_id`` or of the
        whole store (``None``): ``{"embedding": n, "extraction": m}``. With the
        background queue, ``"embedding"`` is its depth (the queue is these records)."""
        uid = v.scope_id(user_id, "user_id") if user_id is not None else None
        return self.store.pending_counts(uid)

    def wake(self) -> None:
        """Tell the queue (if any) that records were stored pending embedding."""
        if self.queue is not None:
            self.queue.wake()

    def close(self) -> None:
        """Stop the queue (if any): see :meth:`EmbedQueue.close`."""
        if self.queue is not None:
            self.queue.close()
