"""Deleting a user (or one agent or session of theirs) with a verified receipt.

:meth:`mnemolayer.Memory.delete_all` runs here. It deletes in one store transaction and
counts what each table and index lost (row counts of the scope taken before and after
the deletes, inside that transaction; the counts are the store's, ``scope_counts`` and
friends in :mod:`mnemolayer.store.erase`). After the commit it removes what lives outside
the file (working-memory windows of a Redis session store, the user's data key when the
store is encrypted, in-process caches), then re-runs every check from scratch and
writes the result into a :class:`DeletionReceipt`.

What a whole-user deletion checks afterwards (``DeletionReceipt.remaining``, each must
be 0 for ``verified``):

* every table of the store that has a ``user_id`` column, discovered from the
  database's own catalogue (``store.user_tables()``: ``sqlite_master`` on SQLite,
  ``information_schema`` on PostgreSQL, so a table added by a later migration is covered
  without a change here): rows of the user, ``tombstones`` (of deleted messages)
  included;
* the full-text index: rows left for the deleted records' rowids, rows whose record is
  gone (orphans), and the index's vocabulary (``memories_fts_vocab``): terms that only
  the user's records contained;
* vectors: rows left for the deleted records' rowids, and orphans (a rowid is never
  given to a new record: SQLite's is AUTOINCREMENT since schema 10, PostgreSQL's an
  identity column, so another user's records written meanwhile never count here);
* history: events of the user's memory ids under any user (audit texts carry content);
* the knowledge graph: facts of any user that cite one of the deleted memories;
* the session store: the user's windows (``SessionStore.list_sessions``) and, for Redis,
  a ``SCAN`` of the user's window keys and index key;
* in-process caches of this :class:`~mnemolayer.Memory`: the search vector cache (it also
  holds entity names) and the procedural task-vector cache;
* the data key of an encrypted store (``Memory.keyring.has_key``);
* the write-ahead log (``write_ahead_log``, any scope): the log keeps the pages as they
  were before the delete, so it is checkpointed into the file and truncated to zero
  bytes; 1 when a reader held an older snapshot for longer than the checkpoint waits
  (the text then stays in the log until the next checkpoint).

Derived summaries (session summaries, consolidated semantic records) are records of the
user, so the ``memories`` table check covers them; a window's running summary lives in
``working_sessions`` or the Redis window.

With a narrower scope (an agent or a session) deleted memories get a ``DELETE`` history
event as before, and their messages tombstones (:mod:`mnemolayer.store.tombstones`: a
replay of them is skipped by ``add``); ``remaining`` then checks the scope's records,
their index rows and vectors, and the vector cache.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from mnemolayer import _validate as v
from mnemolayer.errors import ScopeRequiredError
from mnemolayer.layers.working.window import SQLiteSessionStore
from mnemolayer.query import Scope

if TYPE_CHECKING:
    from mnemolayer.crypto import KeyRing
    from mnemolayer.layers.procedural.strategies import TaskVectors
    from mnemolayer.layers.semantic.apply import SemanticLayer
    from mnemolayer.layers.working.window import SessionStore
    from mnemolayer.protocols import Txn
    from mnemolayer.retrieval.search import Searcher
    from mnemolayer.store.base import SQLStore

__all__ = ["DeletionReceipt", "Erasure", "check_remaining", "clear_text_caches", "delete_scope"]

# Tables whose user rows are deleted by their owners' own code (store, graph, sessions);
# any other table with a user_id column is swept by delete_scope.
_KNOWN_TABLES = frozenset(
    {
        "memories", "vectors", "history", "entities", "entity_aliases", "facts",
        "fact_sources", "working_sessions", "working_messages", "user_generation",
    }
)  # fmt: skip
# Process-wide caches keyed by text fragments (module, attribute), cleared on a whole-user
# delete; only modules already imported are touched.
_TEXT_CACHES = (
    ("mnemolayer.embed.hashing", "_bucket"),
    ("mnemolayer.extract.dates", "_dateparser"),
    ("mnemolayer.extract.rules.zh.text", "pos_tags"),
    ("mnemolayer.extract.rules.zh.context", "parse_head"),
    ("mnemolayer.lifecycle._features", "analyse"),
)


class DeletionReceipt(BaseModel):
    """What :meth:`mnemolayer.Memory.delete_all` removed, and the proof that nothing
    of the scope is left.

    Attributes:
        user_id, agent_id, session_id: the scope deleted (``agent_id`` / ``session_id``
            ``None`` for a whole user).
        whole_user: ``True`` when the whole user was deleted.
        memories: records removed (what ``delete_all`` returned before receipts; with a
            narrower scope it includes the records of facts only the deleted messages
            stated).
        removed: count per table or index: ``memories``, ``vectors``, ``keyword_index``
            (full-text rows), ``keyword_terms`` (vocabulary terms only the user had),
            ``history``, ``entities``, ``entity_aliases``, ``facts``, ``fact_sources``,
            ``tombstones`` (of messages deleted before), ``working_sessions``,
            ``working_messages``, ``user_generation``,
            ``session_windows`` (a non-SQLite session store: Redis windows),
            ``data_keys`` (encrypted stores), ``vector_cache``, ``task_cache`` and
            ``text_caches`` (in-process entries dropped), and any other table with a
            ``user_id`` column under its own name.
        remaining: the checks re-run after the commit (see :mod:`mnemolayer.privacy.erasure`);
            every value is 0 when the deletion is complete.
        verified: ``True`` when every value of ``remaining`` is 0.
        deleted_at: when the deletion ran (the memory's clock, UTC).
    """

    model_config = ConfigDict(extra="forbid")

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    whole_user: bool
    memories: int
    removed: dict[str, int]
    remaining: dict[str, int]
    verified: bool
    deleted_at: datetime


class Erasure:
    """``Memory.delete_all``: a scope deleted everywhere it lives, with a verified receipt.

    Args:
        store: the open store.
        semantic: the semantic layer (the user's graph; facts only deleted messages stated).
        sessions: the session store (its windows of the user).
        searcher: hybrid recall (its in-process vector cache of the user).
        task_vectors: procedural memory's in-process cache of task vectors.
        keyring: an encrypted store's keyring (the user's data key), else ``None``.
        clock: returns "now" (aware UTC), the receipt's time.
    """

    def __init__(
        self,
        store: SQLStore,
        semantic: SemanticLayer,
        sessions: SessionStore,
        searcher: Searcher,
        task_vectors: TaskVectors,
        keyring: KeyRing | None,
        clock: Callable[[], datetime],
    ) -> None:
        self.store = store
        self.semantic = semantic
        self.sessions = sessions
        self.searcher = searcher
        self.task_vectors = task_vectors
        self.keyring = keyring
        self.clock = clock

    def delete_all(
        self, *, user_id: str, agent_id: str | None = None, session_id: str | None = None
    ) -> DeletionReceipt:
        """Delete every memory in a scope from records, vectors and keyword index, and
        return a verified :class:`~mnemolayer.privacy.erasure.DeletionReceipt`.

        With only ``user_id``, everything of the user goes: records, vectors, keyword
        index rows, history, knowledge graph, working-memory windows (SQLite or Redis),
        any other table with a ``user_id`` column, this object's caches and, on an
        encrypted store, the user's data key. The receipt counts what each table and
        index lost and re-checks all of them after the commit (:mod:`mnemolayer.privacy.erasure`
        lists the checks); ``receipt.verified`` is ``True`` when nothing of the user is
        left: tombstones of messages deleted before included, so afterwards a replay of
        them is stored again. With a narrower scope, each deleted memory gets a
        ``DELETE`` history event and a tombstone of its message (a replay stays deleted).

        Returns:
            The receipt; ``receipt.memories`` is how many memories were removed (with a
            narrower scope, this includes the records of facts that only the deleted
            messages stated).

        Raises:
            ScopeRequiredError: ``user_id`` missing (a store-wide wipe is never implied).
            StoreError: the store or the session store failed.
        """
        if user_id is None:
            raise ScopeRequiredError("user_id: delete_all needs a user_id scope")
        user_id = v.scope_id(user_id, "user_id", required=True)
        return delete_scope(
            self,
            user_id,
            v.scope_id(agent_id, "agent_id"),
            v.scope_id(session_id, "session_id"),
            self.clock(),
        )


@dataclass
class _Evidence:
    """What the checks after the commit need to know about the deleted data (kept in
    memory only, never in the receipt: the terms are the user's words)."""

    rowids: set[int] = field(default_factory=set)
    memory_ids: set[str] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)


def delete_scope(
    erasure: Erasure, user_id: str, agent_id: str | None, session_id: str | None, now: datetime
) -> DeletionReceipt:
    """Delete a validated scope and return its verified receipt (the body of
    :meth:`mnemolayer.Memory.delete_all`; the arguments are checked there).

    Raises:
        StoreError: the store failed (nothing was deleted), or a Redis session store
            failed after the file's deletion was committed.
    """
    scope = Scope(user_id, agent_id=agent_id, session_id=session_id)
    whole = agent_id is None and session_id is None
    evidence = _Evidence()

    def write(c: Txn) -> tuple[int, dict[str, int]]:
        store = erasure.store
        tables = store.user_tables(c)
        before = store.scope_counts(c, scope, tables)
        evidence.rowids = store.scope_rowids(c, scope)
        removed: dict[str, int] = {}
        if whole:
            evidence.memory_ids = store.user_memory_ids(c, user_id)
            evidence.terms = erasure.store.unique_terms(c, evidence.rowids)
            terms_before = erasure.store.vocab_count(c, evidence.terms)
        else:
            # A replay of a deleted message stays deleted; a whole user's tombstones go
            # below with the user's other rows.
            store.bury_scope(c, scope, now)
        gone = store.delete_scope(c, scope)
        count = len(gone)
        if whole:
            # The generation row names the user, so it goes too; drop_generation keeps
            # a floor so other processes' vector caches still see the change.
            erasure.store.delete_user_history(c, user_id)
            erasure.semantic.graph.delete_user(c, user_id)
            if isinstance(erasure.sessions, SQLiteSessionStore):
                erasure.sessions.delete_user(user_id, c)
            store.delete_user_rows(c, user_id, [t for t in tables if t not in _KNOWN_TABLES])
            erasure.store.drop_generation(c, user_id)
            # No deleted term may linger in the keyword index's old segments.
            erasure.store.compact_keyword_index(c)
            removed["keyword_terms"] = terms_before - erasure.store.vocab_count(c, evidence.terms)
        else:
            for _rowid, mid, uid in gone:
                erasure.store.add_history(c, mid, uid, "DELETE", None, None, now)
            # Facts only these messages stated go with them (their records too).
            count += len(erasure.semantic.forget(c, user_id, [mid for _r, mid, _u in gone], now))
        after = store.scope_counts(c, scope, tables)
        for key, was in before.items():
            if key not in ("memories", "vectors", "keyword_index") and not whole:
                continue  # only records and their indexes shrink in a narrower scope
            removed[key] = max(0, was - after.get(key, 0))
        if not whole:
            # The records of forgotten facts are outside the scope's condition.
            removed["memories"] = count
        return count, removed

    # Freed pages are zeroed where the engine can, so deleted text does not linger in
    # the file's free space.
    with erasure.store.secure_delete():
        count, removed = erasure.store.transact(write)
    if whole:
        if not isinstance(erasure.sessions, SQLiteSessionStore):
            # Another server: after the store's commit.
            removed["session_windows"] = int(erasure.sessions.delete_user(user_id))
        keyring = erasure.keyring
        if keyring is not None:
            removed["data_keys"] = int(keyring.destroy(user_id))
    removed.update(_drop_caches(erasure, user_id, whole))
    # The log still holds the pages as they were before the delete: copy it into the
    # file (whose deleted cells secure_delete zeroed) and truncate it.
    log_emptied = erasure.store.truncate_log()
    remaining = check_remaining(
        erasure,
        user_id,
        agent_id=agent_id,
        session_id=session_id,
        rowids=evidence.rowids,
        memory_ids=evidence.memory_ids,
        terms=evidence.terms,
    )
    remaining["write_ahead_log"] = 0 if log_emptied else 1
    return DeletionReceipt(
        user_id=user_id,
        agent_id=agent_id,
        session_id=session_id,
        whole_user=whole,
        memories=count,
        removed=dict(sorted(removed.items())),
        remaining=dict(sorted(remaining.items())),
        verified=not any(remaining.values()),
        deleted_at=now,
    )


def _drop_caches(erasure: Erasure, user_id: str, whole: bool) -> dict[str, int]:
    """Forget the user in this process's caches; entries dropped per cache."""
    dropped: dict[str, int] = {}
    cache = erasure.searcher.vectors
    with cache._lock:
        dropped["vector_cache"] = int(cache._users.pop(user_id, None) is not None)
    if not whole:
        return dropped
    dropped["task_cache"] = erasure.task_vectors.clear()
    dropped["text_caches"] = clear_text_caches()
    return dropped


def clear_text_caches() -> int:
    """Empty this process's caches keyed by text fragments (``_TEXT_CACHES``, of the
    modules already imported); the entries dropped."""
    texts = 0
    for module_name, attr in _TEXT_CACHES:
        module = sys.modules.get(module_name)
        fn = getattr(module, attr, None) if module is not None else None
        if fn is not None and hasattr(fn, "cache_clear"):
            texts += int(fn.cache_info().currsize)
            fn.cache_clear()
    return texts


def check_remaining(
    erasure: Erasure,
    user_id: str,
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    rowids: Iterable[int] = (),
    memory_ids: Iterable[str] = (),
    terms: Iterable[str] = (),
) -> dict[str, int]:
    """What of a deleted scope is still anywhere (each value must be 0); the checks
    are listed in :mod:`mnemolayer.privacy.erasure`.

    Args:
        user_id, agent_id, session_id: the scope (a whole user when both narrower ids
            are ``None``).
        rowids: store rowids the deleted records had (their index rows and vectors are
            looked up).
        memory_ids: the user's memory ids (history under any user is looked up).
        terms: full-text terms that only the user's records contained.

    Returns:
        ``{check: count}``; tables of the file with a ``user_id`` column appear under
        their own names.

    Raises:
        StoreError: the store (or a Redis session store) failed.
    """
    whole = agent_id is None and session_id is None
    store = erasure.store
    ids = sorted(set(rowids))
    if whole:
        left = store.user_row_counts(None, user_id, store.user_tables())
    else:
        scope = Scope(user_id, agent_id=agent_id, session_id=session_id)
        left = {"memories": store.scope_counts(None, scope, ())["memories"]}
    left.update(store.index_leftovers(ids))
    cache = erasure.searcher.vectors
    with cache._lock:
        cached = cache._users.get(user_id)
    if whole:
        left["vector_cache"] = int(cached is not None)
    else:
        held = set(cached.rowids.tolist()) if cached is not None else set()
        left["vector_cache"] = len(held & set(ids))
    if not whole:
        return left
    left["keyword_terms"] = erasure.store.vocab_count(None, set(terms))
    left.update(store.citations_left(memory_ids))
    left["session_windows"] = len(erasure.sessions.list_sessions(user_id))
    left.update(_redis_left(erasure, user_id))
    left["task_cache"] = int(len(erasure.task_vectors) > 0)
    keyring = erasure.keyring
    if keyring is not None:
        left["data_keys"] = int(bool(keyring.has_key(user_id)))
    return left


def _redis_left(erasure: Erasure, user_id: str) -> dict[str, int]:
    """Keys of the user left in a Redis session store: windows (found by ``SCAN``, not
    through the index) and the index itself."""
    from mnemolayer.store.redis_sessions import RedisSessionStore

    store = erasure.sessions
    if not isinstance(store, RedisSessionStore):
        return {}
    with store._redis_errors():
        windows = sum(1 for _ in store.client.scan_iter(match=store.window_pattern(user_id)))
        index = int(store.client.exists(store.user_key(user_id)))
    return {"redis_window_keys": windows, "redis_user_index": index}
