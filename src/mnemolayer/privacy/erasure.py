"""Deleting a user (or one agent or session of theirs) with a verified receipt.

:meth:`mnemolayer.Memory.delete_all` runs here. It deletes in one SQLite transaction and
counts what each table and index lost (row counts of the scope taken before and after
the deletes, inside that transaction). After the commit it removes what lives outside
the file (working-memory windows of a Redis session store, the user's data key when the
store is encrypted, in-process caches), then re-runs every check from scratch and
writes the result into a :class:`DeletionReceipt`.

What a whole-user deletion checks afterwards (``DeletionReceipt.remaining``, each must
be 0 for ``verified``):

* every table of the file that has a ``user_id`` column, discovered from
  ``sqlite_master`` (so a table added by a later migration is covered without a change
  here): rows of the user;
* the full-text index: rows left for the deleted records' rowids, rows whose record is
  gone (orphans), and the index's vocabulary (``memories_fts_vocab``): terms that only
  the user's records contained;
* vectors: rows left for the deleted records' rowids, and orphans;
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
event as before; ``remaining`` then checks the scope's records, their index rows and
vectors, and the vector cache.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from mnemolayer.layers.working.window import SQLiteSessionStore

if TYPE_CHECKING:
    from mnemolayer.memory import Memory

__all__ = ["DeletionReceipt", "check_remaining", "delete_scope", "user_tables"]

# Tables whose user rows are deleted by their owners' own code (store, graph, sessions);
# any other table with a user_id column is swept by delete_scope.
_KNOWN_TABLES = frozenset(
    {
        "memories", "vectors", "history", "entities", "entity_aliases", "facts",
        "fact_sources", "working_sessions", "working_messages", "user_generation",
    }
)  # fmt: skip
_CHUNK = 500
_TOKEN = re.compile(r"[^\W_]+")
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
            ``working_sessions``, ``working_messages``, ``user_generation``,
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


@dataclass
class _Evidence:
    """What the checks after the commit need to know about the deleted data (kept in
    memory only, never in the receipt: the terms are the user's words)."""

    rowids: set[int] = field(default_factory=set)
    memory_ids: set[str] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)


def user_tables(c: sqlite3.Connection | None, mem: Memory) -> list[str]:
    """Every table of the store's file with a ``user_id`` column, sorted.

    Args:
        c: an open transaction to read in, or ``None`` for a plain read.
    """

    def rows(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if c is not None:
            return c.execute(sql, params).fetchall()
        return mem.store.read(sql, params)

    if mem.store.dialect == "postgres":
        return [
            str(r[0])
            for r in rows(
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id' "
                "AND table_schema = current_schema() ORDER BY table_name"
            )
        ]
    names = [
        str(r[0]) for r in rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    return [
        name
        for name in names
        if any(col[1] == "user_id" for col in rows(f"PRAGMA table_info({_ident(name)})"))
    ]


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _scope_counts(
    c: sqlite3.Connection, tables: Iterable[str], where: str, params: Sequence[Any]
) -> dict[str, int]:
    """Rows of the scope: per table with a ``user_id`` column for a whole user (``where``
    is ``"1"``), only ``memories`` for a narrower scope; plus the full-text rows and
    vectors of the scope's records. ``params``: the user id, then ``where``'s."""
    counts: dict[str, int] = {}
    if where == "1":
        for table in tables:
            sql = f"SELECT count(*) FROM {_ident(table)} WHERE user_id = ?"
            counts[table] = int(c.execute(sql, params[:1]).fetchone()[0])
    else:
        counts["memories"] = int(
            c.execute(
                f"SELECT count(*) FROM memories WHERE user_id = ? AND {where}", params
            ).fetchone()[0]
        )
    mine = f"(SELECT rowid FROM memories WHERE user_id = ? AND {where})"
    counts["keyword_index"] = int(
        c.execute(f"SELECT count(*) FROM memories_fts WHERE rowid IN {mine}", params).fetchone()[0]
    )
    vectors = int(
        c.execute(f"SELECT count(*) FROM vectors WHERE memory_rowid IN {mine}", params).fetchone()[
            0
        ]
    )
    counts["vectors"] = vectors if where != "1" else counts.get("vectors", vectors)
    return counts


def _candidate_terms(texts: Iterable[str]) -> set[str]:
    """Tokens as FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes them (folded
    case, diacritics removed, split at anything but letters and digits); a candidate
    the index does not hold is simply not found."""
    out: set[str] = set()
    for text in texts:
        folded = "".join(
            ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn"
        )
        out.update(_TOKEN.findall(folded.lower()))
    return out


def _unique_terms(c: sqlite3.Connection, rowids: set[int], dialect: str) -> set[str]:
    """Terms of the full-text index that occur only in ``rowids``' rows."""
    if not rowids:
        return set()
    if dialect == "postgres":
        return _pg_unique_terms(c, rowids)
    c.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mnemolayer_fts_instances "
        "USING fts5vocab(main, memories_fts, instance)"
    )
    texts: list[str] = []
    ordered = sorted(rowids)
    for start in range(0, len(ordered), _CHUNK):
        part = ordered[start : start + _CHUNK]
        texts += [
            str(r[0])
            for r in c.execute(
                f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})",
                part,
            )
        ]
    unique: set[str] = set()
    for term in _candidate_terms(texts):
        docs = {
            int(r[0])
            for r in c.execute(
                "SELECT DISTINCT doc FROM temp.mnemolayer_fts_instances WHERE term = ?", (term,)
            )
        }
        if docs and docs <= rowids:
            unique.add(term)
    return unique


def _pg_unique_terms(c: Any, rowids: set[int]) -> set[str]:
    """:func:`_unique_terms` on PostgreSQL: the stored terms are the lexemes, and the
    rows holding one are found through the GIN index."""
    from mnemolayer.store.postgres.store import _lexeme

    ordered = sorted(rowids)
    terms: set[str] = set()
    for start in range(0, len(ordered), _CHUNK):
        part = ordered[start : start + _CHUNK]
        for r in c.execute(
            f"SELECT terms FROM memories_fts WHERE rowid IN ({','.join('?' * len(part))})", part
        ):
            terms.update(str(r[0]).split())
    unique: set[str] = set()
    for term in terms:
        docs = {
            int(r[0])
            for r in c.execute(
                "SELECT rowid FROM memories_fts WHERE tsv @@ CAST(? AS tsquery)", (_lexeme(term),)
            )
        }
        if docs and docs <= rowids:
            unique.add(term)
    return unique


def _pg_vocab_count(rows: Any, terms: Sequence[str]) -> int:
    """How many of ``terms`` the PostgreSQL keyword index still holds."""
    from mnemolayer.store.postgres.store import _lexeme

    return sum(
        int(
            rows(
                "SELECT EXISTS (SELECT 1 FROM memories_fts WHERE tsv @@ CAST(? AS tsquery))",
                (_lexeme(t),),
            )[0][0]
        )
        for t in terms
    )


def delete_scope(
    mem: Memory, user_id: str, agent_id: str | None, session_id: str | None, now: datetime
) -> DeletionReceipt:
    """Delete a validated scope and return its verified receipt (the body of
    :meth:`mnemolayer.Memory.delete_all`; the arguments are checked there).

    Raises:
        StoreError: the store failed (nothing was deleted), or a Redis session store
            failed after the file's deletion was committed.
    """
    from mnemolayer.retrieval.search import Scope, scope_where

    scope = Scope(user_id, agent_id=agent_id, session_id=session_id)
    where, params = scope_where(scope)
    whole = agent_id is None and session_id is None
    evidence = _Evidence()
    sqlite = mem.store.dialect == "sqlite"

    def write(c: sqlite3.Connection) -> tuple[int, dict[str, int]]:
        if sqlite:
            # Freed pages are zeroed, so deleted text does not linger in the file's free space.
            c.execute("PRAGMA secure_delete = ON")
        tables = user_tables(c, mem)
        scope_params = [user_id, *params]
        before = _scope_counts(c, tables, where, scope_params)
        evidence.rowids = {
            int(r[0])
            for r in c.execute(
                f"SELECT rowid FROM memories WHERE user_id = ? AND {where}", scope_params
            )
        }
        removed: dict[str, int] = {}
        if whole:
            evidence.memory_ids = {
                str(r[0])
                for r in c.execute(
                    "SELECT id FROM memories WHERE user_id = ? UNION "
                    "SELECT memory_id FROM history WHERE user_id = ?",
                    (user_id, user_id),
                )
            }
            evidence.terms = _unique_terms(c, evidence.rowids, mem.store.dialect)
            terms_before = _vocab_count(c, evidence.terms, mem.store.dialect)
        gone = mem.store.delete_where(c, f"user_id = ? AND {where}", scope_params)
        count = len(gone)
        if whole:
            # The generation row names the user, so it goes too; drop_generation keeps
            # a floor so other processes' vector caches still see the change.
            mem.store.delete_user_history(c, user_id)
            mem.semantic.graph.delete_user(c, user_id)
            if isinstance(mem.sessions, SQLiteSessionStore):
                mem.sessions.delete_user(user_id, c)
            for table in tables:
                if table not in _KNOWN_TABLES:
                    c.execute(f"DELETE FROM {_ident(table)} WHERE user_id = ?", (user_id,))
            mem.store.drop_generation(c, user_id)
            # Rewrite the full-text index without the deleted rows: FTS5 deletes leave
            # tombstones while the old segments (holding the user's terms) stay until a
            # merge. The cost grows with the index (a whole-user delete is rare).
            if sqlite:
                c.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            removed["keyword_terms"] = terms_before - _vocab_count(
                c, evidence.terms, mem.store.dialect
            )
        else:
            for _rowid, mid, uid in gone:
                mem.store.add_history(c, mid, uid, "DELETE", None, None, now)
            # Facts only these messages stated go with them (their records too).
            count += len(mem.semantic.forget(c, user_id, [mid for _r, mid, _u in gone], now))
        after = _scope_counts(c, tables, where, scope_params)
        for key, was in before.items():
            if key not in ("memories", "vectors", "keyword_index") and not whole:
                continue  # only records and their indexes shrink in a narrower scope
            removed[key] = max(0, was - after.get(key, 0))
        if not whole:
            # The records of forgotten facts are outside the scope's condition.
            removed["memories"] = count
        return count, removed

    if sqlite:
        previous = int(mem.store.read("PRAGMA secure_delete")[0][0])
        try:
            count, removed = mem.store.transact(write)
        finally:
            mem.store.read(f"PRAGMA secure_delete = {previous}")
    else:
        count, removed = mem.store.transact(write)
    if whole:
        if not isinstance(mem.sessions, SQLiteSessionStore):
            # Another server: after the store's commit.
            removed["session_windows"] = int(mem.sessions.delete_user(user_id))
        keyring = getattr(mem, "keyring", None)
        if keyring is not None:
            removed["data_keys"] = int(keyring.destroy(user_id))
    removed.update(_drop_caches(mem, user_id, whole))
    # The log still holds the pages as they were before the delete: copy it into the
    # file (whose deleted cells secure_delete zeroed) and truncate it.
    log_emptied = mem.store.truncate_log()
    remaining = check_remaining(
        mem,
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


def _vocab_count(c: sqlite3.Connection, terms: set[str], dialect: str) -> int:
    if dialect == "postgres":
        return _pg_vocab_count(lambda sql, p: c.execute(sql, p).fetchall(), sorted(terms))
    found = 0
    ordered = sorted(terms)
    for start in range(0, len(ordered), _CHUNK):
        part = ordered[start : start + _CHUNK]
        found += int(
            c.execute(
                "SELECT count(*) FROM memories_fts_vocab WHERE term IN "
                f"({','.join('?' * len(part))})",
                part,
            ).fetchone()[0]
        )
    return found


def _drop_caches(mem: Memory, user_id: str, whole: bool) -> dict[str, int]:
    """Forget the user in this process's caches; entries dropped per cache."""
    dropped: dict[str, int] = {}
    cache = mem._searcher.vectors
    with cache._lock:
        dropped["vector_cache"] = int(cache._users.pop(user_id, None) is not None)
    if not whole:
        return dropped
    tasks = mem.__dict__.pop("_procedural_vectors", None)
    dropped["task_cache"] = len(getattr(tasks, "_vectors", ())) if tasks is not None else 0
    texts = 0
    for module_name, attr in _TEXT_CACHES:
        module = sys.modules.get(module_name)
        fn = getattr(module, attr, None) if module is not None else None
        if fn is not None and hasattr(fn, "cache_clear"):
            texts += int(fn.cache_info().currsize)
            fn.cache_clear()
    dropped["text_caches"] = texts
    return dropped


def check_remaining(
    mem: Memory,
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
    from mnemolayer.retrieval.search import Scope, scope_where

    whole = agent_id is None and session_id is None
    read = mem.store.read
    left: dict[str, int] = {}
    ids = sorted(set(rowids))
    if whole:
        for table in user_tables(None, mem):
            sql = f"SELECT count(*) FROM {_ident(table)} WHERE user_id = ?"
            left[table] = int(read(sql, (user_id,))[0][0])
    else:
        where, params = scope_where(Scope(user_id, agent_id=agent_id, session_id=session_id))
        left["memories"] = int(
            read(f"SELECT count(*) FROM memories WHERE user_id = ? AND {where}",
                 [user_id, *params])[0][0]
        )  # fmt: skip
    left["keyword_index"] = _count_in(mem, "SELECT count(*) FROM memories_fts WHERE rowid", ids)
    left["keyword_index_orphans"] = int(
        read("SELECT count(*) FROM memories_fts WHERE rowid NOT IN (SELECT rowid FROM memories)")[
            0
        ][0]
    )
    left["vectors_of_deleted"] = _count_in(
        mem, "SELECT count(*) FROM vectors WHERE memory_rowid", ids
    )
    left["vector_orphans"] = int(
        read("SELECT count(*) FROM vectors WHERE memory_rowid NOT IN (SELECT rowid FROM memories)")[
            0
        ][0]
    )
    cache = mem._searcher.vectors
    with cache._lock:
        cached = cache._users.get(user_id)
    if whole:
        left["vector_cache"] = int(cached is not None)
    else:
        held = set(cached.rowids.tolist()) if cached is not None else set()
        left["vector_cache"] = len(held & set(ids))
    if not whole:
        return left
    left["keyword_terms"] = (
        _pg_vocab_count(read, sorted(set(terms)))
        if mem.store.dialect == "postgres"
        else _count_in(
            mem, "SELECT count(*) FROM memories_fts_vocab WHERE term", sorted(set(terms))
        )
    )
    mids = sorted(set(memory_ids))
    left["history_of_deleted"] = _count_in(
        mem, "SELECT count(*) FROM history WHERE memory_id", mids
    )
    left["facts_citing_deleted"] = _count_in(
        mem, "SELECT count(*) FROM fact_sources WHERE source_id", mids
    ) + _count_in(mem, "SELECT count(*) FROM facts WHERE memory_id", mids)
    left["session_windows"] = len(mem.sessions.list_sessions(user_id))
    left.update(_redis_left(mem, user_id))
    left["task_cache"] = int("_procedural_vectors" in mem.__dict__ and _task_cache_used(mem))
    keyring = getattr(mem, "keyring", None)
    if keyring is not None:
        left["data_keys"] = int(bool(keyring.has_key(user_id)))
    return left


def _task_cache_used(mem: Memory) -> bool:
    tasks = mem.__dict__.get("_procedural_vectors")
    return bool(getattr(tasks, "_vectors", None))


def _count_in(mem: Memory, head: str, values: Sequence[Any]) -> int:
    """``head IN (values)`` counted in chunks (``head`` ends with the column)."""
    total = 0
    for start in range(0, len(values), _CHUNK):
        part = list(values[start : start + _CHUNK])
        total += int(mem.store.read(f"{head} IN ({','.join('?' * len(part))})", part)[0][0])
    return total


def _redis_left(mem: Memory, user_id: str) -> dict[str, int]:
    """Keys of the user left in a Redis session store: windows (found by ``SCAN``, not
    through the index) and the index itself."""
    from mnemolayer.store.redis_sessions import RedisSessionStore

    store = mem.sessions
    if not isinstance(store, RedisSessionStore):
        return {}
    part = quote(user_id, safe="")
    with store._redis_errors():
        windows = sum(1 for _ in store.client.scan_iter(match=f"{store.prefix}:window:{part}:*"))
        index = int(store.client.exists(store.user_key(user_id)))
    return {"redis_window_keys": windows, "redis_user_index": index}
