"""Reading records back: one by id, a page of a scope, the audit trail, store counts, and
hybrid search over a user's memories (:class:`EpisodicReader`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ScopeRequiredError, ValidationError
from mnemolayer.layers.episodic.model import EmbeddingGuard
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import TRUSTED_SOURCES, HistoryEvent, Hit, MemoryPage, MemoryRecord, to_utc
from mnemolayer.query import parse_filter
from mnemolayer.retrieval.search import Scope, Searcher, SearchRequest
from mnemolayer.store.base import SQLStore
from mnemolayer.store.graph import GraphStore

__all__ = ["EpisodicReader", "get_record"]


def get_record(store: SQLStore, memory_id: str, user_id: str | None = None) -> MemoryRecord:
    """One memory by id (the body of :meth:`mnemolayer.Memory.get`).

    Raises:
        ValidationError: a malformed ``memory_id``, or a ``user_id`` that is not an id
            (blank, too long, not valid Unicode).
        NotFoundError: no such memory, or it belongs to another user than ``user_id``.
    """
    memory_id = v.memory_id(memory_id)
    user_id = v.scope_id(user_id, "user_id")
    store.flush_access()  # the accesses this process counted, before they are read
    rec = store.get(memory_id, user_id=user_id)
    if rec is None or (user_id is not None and rec.user_id != user_id):
        raise NotFoundError(f"memory_id: no memory {memory_id!r}")
    return rec


class EpisodicReader:
    """Reads of the store: :meth:`get`, :meth:`list`, :meth:`history`, :meth:`stats` and
    :meth:`search`.

    Args:
        store: the open store.
        graph: the knowledge graph (its counts are part of :meth:`stats`).
        searcher: hybrid recall over the store.
        lifecycle: the settings recall applies (TTL, retention weight).
        clock: returns "now" (aware UTC).
        guard: refuses vector search while the store's vectors are another model's.
        path: the store's path as :meth:`stats` reports it.
    """

    def __init__(
        self,
        store: SQLStore,
        graph: GraphStore,
        searcher: Searcher,
        lifecycle: LifecycleConfig,
        clock: Callable[[], datetime],
        guard: EmbeddingGuard,
        path: str,
    ) -> None:
        self.store = store
        self.graph = graph
        self.searcher = searcher
        self.lifecycle = lifecycle
        self.clock = clock
        self.guard = guard
        self.path = path

    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        threshold: float | None = None,
        kinds: Sequence[str] | None = None,
        mode: Literal["hybrid", "vector", "keyword"] = "hybrid",
        include_history: bool = False,
        explain: bool = False,
        as_of: datetime | str | None = None,
        trusted_only: bool = False,
    ) -> builtins.list[Hit]:
        """Hybrid recall within one user's memories.

        Args:
            query: non-blank text, at most 10,000 characters (``_validate.MAX_QUERY_CHARS``).
            user_id: required; nothing outside this user is ever returned.
            agent_id, session_id, kinds: narrow the scope.
            limit: at most this many hits (0 → ``[]``).
            filters: metadata filter (see :mod:`mnemolayer.query`); ``None`` or
                ``{}`` for none.
            threshold: keep hits whose ``score`` ≥ threshold (> 1 returns nothing).
            mode: ``"hybrid"`` (vector + keyword), ``"vector"`` or ``"keyword"`` only.
                A hybrid search whose query the embedder fails on ranks on keywords
                alone (logged as a warning); memories stored while the embedder failed
                (``"embedding"`` in their ``pending``) are found by keyword until
                :meth:`maintain` embeds them.
            include_history: also return superseded memories (facts that are no longer
                true), ranked below current ones; by default only what is current.
            explain: attach to each hit why it ranks where it does
                (:attr:`Hit.explanation`: the score parts, retention and its parts).
            as_of: ask about the past: the versions of changed facts that held at
                that moment (``valid_from <= as_of < valid_to``) and their messages rank
                first, superseded records may be returned, and relative time in the
                query ("last week") counts back from it. A naive time is UTC.
            trusted_only: only memories of trusted sources (the user, the assistant:
                :attr:`MemoryRecord.trusted`); by default every source, each hit's
                ``memory.source`` and ``memory.flags`` telling where it came from and
                what the detector of instruction-like text found in it.

        Returns:
            Hits sorted by ``score`` in [0, 1], highest first, each with its breakdown.
            Messages are also found through the sentences of the facts extracted from
            them; a message whose facts have all been superseded ranks lower. Scores
            are scaled by retention (``score · (1 - w + w · retention)``, ``w`` =
            ``lifecycle.ranking_weight``), so a faded memory ranks below an equally
            relevant fresh, important or often-used one, and the sources that
            maintenance consolidated into a semantic record rank below it
            (``lifecycle.consolidated_weight``, when the search may return that record).
            Archived, merged and expired memories (past their own ``expires_at``, else
            their kind's ``lifecycle.ttl_days``; pinned ones never expire) are never
            returned. Each hit returned with a score above 0 counts as
            an access that reinforces it (unless ``RetrievalConfig.track_access`` is off or the store
            is read-only; best-effort, never failing the search).

        Raises:
            ScopeRequiredError: no ``user_id``.
            ValidationError: blank query, bad limit, threshold, mode or filter.
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: search needs a user_id scope")
        req = SearchRequest(
            query=v.query(query),
            scope=self.scope(user_id, agent_id, session_id, kinds, filters, trusted_only),
            limit=v.limit(limit),
            threshold=v.threshold(threshold),
            mode=v.mode(mode),
            now=self.clock(),
            include_history=bool(include_history) or as_of is not None,
            lifecycle=self.lifecycle,
            explain=bool(explain),
            as_of=None if as_of is None else to_utc(as_of, "as_of"),
        )
        if req.limit == 0 or (req.threshold is not None and req.threshold > 1.0):
            return []
        if req.mode != "keyword":
            self.guard.require()
        return self.searcher.search(req)

    @property
    def last_query_embed_seconds(self) -> float:
        """Seconds the last :meth:`search` spent embedding its query (for benchmarks)."""
        return self.searcher.last_embed_seconds

    def scope(
        self,
        user_id: str,
        agent_id: str | None,
        session_id: str | None,
        kinds: Sequence[str] | None,
        filters: dict[str, Any] | None,
        trusted_only: bool = False,
    ) -> Scope:
        """The validated scope of a read (``filters`` parsed)."""
        if not isinstance(trusted_only, bool):
            raise ValidationError(
                "trusted_only", f"must be True or False, got {type(trusted_only).__name__}"
            )
        return Scope(
            user_id=v.scope_id(user_id, "user_id", required=True),
            agent_id=v.scope_id(agent_id, "agent_id"),
            session_id=v.scope_id(session_id, "session_id"),
            kinds=tuple(v.kind(k, "kinds").value for k in kinds) if kinds else None,
            filter=parse_filter(filters) if filters else None,
            sources=tuple(sorted(TRUSTED_SOURCES)) if trusted_only else None,
        )

    def get(self, memory_id: str, *, user_id: str | None = None) -> MemoryRecord:
        """One memory by id.

        Raises:
            NotFoundError: no such memory, or it belongs to another user than ``user_id``.
        """
        return get_record(self.store, memory_id, user_id)

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        kinds: Sequence[str] | None = None,
        filters: dict[str, Any] | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> MemoryPage:
        """A user's memories, oldest first, a page at a time.

        Args:
            cursor: the ``next_cursor`` of the previous page.

        Returns:
            :class:`MemoryPage` with ``items`` and ``next_cursor`` (``None`` on the last page).
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: list needs a user_id scope")
        scope = self.scope(user_id, agent_id, session_id, kinds, filters)
        limit = v.limit(limit)
        after = v.cursor(cursor) if cursor is not None else None
        self.store.flush_access()
        items = self.store.records_page(scope, after=after, limit=limit + 1) if limit else []
        more = len(items) > limit
        items = items[:limit]
        return MemoryPage(items=items, next_cursor=items[-1].id if more and items else None)

    def history(self, memory_id: str, *, user_id: str | None = None) -> builtins.list[HistoryEvent]:
        """The audit trail of one memory, oldest first: ADD, UPDATE, DELETE; PIN, UNPIN,
        ARCHIVE, RESTORE (lifecycle); EXPIRE, MERGE and CONSOLIDATE (maintenance); and for
        facts SUPERSEDE and RETRACT.

        Works for deleted memories too (their ``DELETE`` event is kept).

        Raises:
            ValidationError: a malformed ``memory_id`` or ``user_id``.
            NotFoundError: no history for that id (for ``user_id`` when given).
        """
        memory_id = v.memory_id(memory_id)
        user_id = v.scope_id(user_id, "user_id")
        events = self.store.history(memory_id)
        if user_id is not None:
            events = [e for e in events if e.user_id == user_id]
        if not events:
            raise NotFoundError(f"memory_id: no memory {memory_id!r}")
        return events

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts (memories by kind, users, vectors, history events; entities, aliases,
        facts and current facts of the knowledge graph), the enrichment still pending
        (``"pending"``: records waiting for their ``embedding`` and their fact
        ``extraction``, which :meth:`maintain` completes), store size in bytes, schema
        version and the embedding model."""
        uid = v.scope_id(user_id, "user_id") if user_id else None
        counts = self.store.counts(uid)
        return {
            **counts,
            **self.graph.counts(uid),
            "pending": self.store.pending_counts(uid),
            "path": self.path,
            "bytes": self.store.file_size(),
            "schema_version": self.store.schema_version(),
            "embedding_model": self.store.get_meta("embedding_model"),
            "embedding_dim": int(self.store.get_meta("embedding_dim") or 0),
        }
