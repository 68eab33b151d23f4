"""A LangGraph long-term memory store (``BaseStore``) kept in a mnemolayer :class:`Memory`.

LangGraph graphs read and write their cross-thread memory through a store
(``graph.compile(store=...)``, ``get_store()`` in a node). :class:`MnemolayerStore` keeps
those items in mnemolayer, so they are searched with mnemolayer's hybrid recall (vectors
and keywords fused, facts mined from the text) and are visible to the rest of the
Python API (``mem.search``, ``mem.context``) under the same user.

How items map to memories
-------------------------
An item ``(namespace, key) → value`` is one episodic memory record:

* ``user_id``: the namespace label at ``user_level`` (default 0, the first label:
  ``("alice", "memories")`` → user ``alice``). A namespace too short to have that label
  cannot be written (``InvalidNamespaceError``).
* ``session_id``: ``"langgraph-"`` + the first 32 hex digits of the SHA-256 of the
  namespace and key. Each item is its own mnemolayer session: mnemolayer keeps one record
  per text and scope, so two items with the same text stay two records, and an item
  is looked up by an indexed column rather than by a scan.
* ``content`` (what is embedded and keyword-indexed): the text at the index fields
  (LangGraph's path syntax, ``["$"]`` = the whole value as JSON, the default), several
  texts joined by newlines. An item written with ``index=False``, or whose fields hold
  no text, is stored under its path (``alice/memories/key``) and marked unindexed: it
  is found by filters, never ranked by a query.
* ``metadata``: ``langgraph_namespace`` (the labels), ``langgraph_ns_<i>`` (label ``i``,
  for prefix filters), ``langgraph_depth``, ``langgraph_key``, ``langgraph_value`` (the
  value as JSON text, so any key LangGraph allows survives) and ``langgraph_indexed``.
  mnemolayer caps metadata at 64 KiB, so a value must encode to a little less.
* ``created_at`` / ``updated_at``: the record's; a second ``put`` of a key updates the
  record in place (its ``history`` keeps each earlier value).

With ``role="user"`` (the default) the Memory's fact extractor also mines the text, so
``mem.facts`` / ``mem.profile`` learn from what the graph stores; ``role="assistant"``
stores items without mining them.

Search
------
With a ``query``: :meth:`Memory.search` (hybrid) in each user the prefix reaches, the
namespace prefix applied as a metadata filter, hits merged by score (``SearchItem.score``
is mnemolayer's final score in [0, 1]); unindexed matches follow with ``score=None`` when
the page is not full, as in LangGraph's ``InMemoryStore``. Without a query: items in
creation order, user by user. A prefix shorter than the user label reaches every user
that holds items (found, like :meth:`~MnemolayerStore.list_namespaces`' answer, by one
read of the records table: mnemolayer's API reads one user at a time). ``filter`` is matched in Python against the value, with LangGraph's
syntax: ``{"field": value}`` (nested dicts match nested values, lists match whole
lists) and the operators ``$eq $ne $gt $gte $lt $lte``; ordering operators compare
numbers with numbers and strings with strings, anything else does not match.

Batches
-------
As in LangGraph's reference stores, the reads of a batch (get, search, list
namespaces) see the store as it was before the batch; its writes are applied after
them, in order, the last write of a key winning. TTLs are not supported
(``supports_ttl = False``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio.to_thread

from mnemolayer import _validate as v
from mnemolayer.errors import UsageError, ValidationError
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord, validate_content

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
    from langgraph.store.base.embed import get_text_at_path, tokenize_path
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise UsageError(
        "the LangGraph store needs LangGraph: pip install -e '.[langgraph]' in the mnemolayer checkout"
    ) from exc

from mnemolayer.integrations._langgraph_match import check_filter, matches, namespace_matches

__all__ = ["MnemolayerStore"]

_P = "langgraph_"  # prefix of every metadata key this store writes
_MAX_FETCH = 10_000  # mnemolayer's largest search limit
_PAGE = 500


@dataclass(frozen=True)
class _Write:
    """A checked write: ``text`` and ``metadata`` are ``None`` for a delete."""

    namespace: tuple[str, ...]
    key: str
    user: str
    text: str | None
    metadata: dict[str, Any] | None


class MnemolayerStore(BaseStore):
    """LangGraph ``BaseStore`` over a :class:`~mnemolayer.Memory` (see the module docs for
    the mapping).

    Args:
        memory: the store; it stays the caller's (this object never closes it).
        index: ``{"fields": [...]}``: the paths whose text is embedded (LangGraph's
            ``IndexConfig`` without ``dims`` / ``embed``: the Memory's embedder is
            used); ``None`` embeds the whole value (``["$"]``).
        user_level: which namespace label is the mnemolayer ``user_id``.
        role: the message role items are stored under (``"user"`` lets the fact
            extractor mine them).

    Raises:
        ValidationError: ``index`` with other keys than ``fields``, or an empty or
            non-string field list; ``user_level`` negative; blank ``role``.

    Example::

        mem = Memory("memory.db")
        store = MnemolayerStore(mem, index={"fields": ["text"]})
        store.put(("alice", "notes"), "n1", {"text": "I moved to Porto in March"})
        store.search(("alice",), query="where does she live?", limit=3)
    """

    supports_ttl = False

    def __init__(
        self,
        memory: Memory,
        *,
        index: Mapping[str, Any] | None = None,
        user_level: int = 0,
        role: str = "user",
    ) -> None:
        self.memory = memory
        self.fields = _index_fields(index)
        if isinstance(user_level, bool) or not isinstance(user_level, int) or user_level < 0:
            raise ValidationError("user_level", f"must be an integer ≥ 0, got {user_level!r}")
        if not isinstance(role, str) or not role.strip():
            raise ValidationError("role", "must be a non-blank string")
        self.user_level = user_level
        self.role = role
        # Writes look a key up, then add or update it: one writer at a time in this
        # process keeps a key to one record.
        self._write_lock = threading.Lock()

    # -- BaseStore ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops``; results in the same order (``None`` for writes).

        Raises:
            InvalidNamespaceError: a label is empty, not a string or holds ``.``; a
                write's namespace is empty or lacks the user label.
            ValidationError: a value that is not JSON or too large, a bad filter, or an
                unknown operation (nothing of the batch is written then).
        """
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        writes: dict[tuple[tuple[str, ...], str], _Write] = {}
        for i, op in enumerate(ops):
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results[i] = self._get(op.namespace, op.key)
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
            elif isinstance(op, PutOp):
                writes.pop((op.namespace, op.key), None)
                writes[(op.namespace, op.key)] = self._prepare(op)
            else:
                raise ValidationError("ops", f"unknown operation {type(op).__name__}")
        with self._write_lock:
            for write in writes.values():
                self._write(write)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (SQLite and the embedder never block the
        event loop)."""
        listed = list(ops)
        return await anyio.to_thread.run_sync(self.batch, listed)

    # -- items -------------------------------------------------------------------------

    def _user(self, namespace: tuple[str, ...]) -> str | None:
        return namespace[self.user_level] if len(namespace) > self.user_level else None

    def _records(self, namespace: tuple[str, ...], key: str) -> list[MemoryRecord]:
        user = self._user(namespace)
        if user is None or not user.strip():
            return []
        page = self.memory.list(
            user_id=user,
            session_id=_session_of(namespace, key),
            filters={f"{_P}key": key},
            limit=_PAGE,
        )
        return [r for r in page.items if _namespace(r) == namespace]

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        found = self._records(namespace, key)
        return _item(max(found, key=lambda r: r.updated_at)) if found else None

    def _prepare(self, op: PutOp) -> _Write:
        """Check a write and build its record fields, before anything is written."""
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        user = self._user(op.namespace)
        if user is None:
            raise InvalidNamespaceError(
                f"namespace {op.namespace} has no label {self.user_level} to use as the "
                "mnemolayer user_id (user_level)"
            )
        v.scope_id(user, f"namespace[{self.user_level}]", required=True)  # a valid user_id
        if op.value is None:
            return _Write(op.namespace, op.key, user, None, None)
        if not isinstance(op.value, Mapping):
            raise ValidationError("value", f"must be a mapping, got {type(op.value).__name__}")
        value = dict(op.value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError("value", f"must be JSON data: {exc}") from exc
        text, indexed = self._text(op.namespace, op.key, value, op.index)
        meta = v.metadata(_metadata(op.namespace, op.key, value, indexed), "value")
        return _Write(op.namespace, op.key, user, validate_content(text, "value"), meta)

    def _write(self, w: _Write) -> None:
        found = sorted(self._records(w.namespace, w.key), key=lambda r: r.updated_at)
        if w.text is None:
            for rec in found:
                self.memory.delete(rec.id, user_id=w.user)
            return
        if not found:
            self.memory.add(
                {"role": self.role, "content": w.text},
                user_id=w.user,
                session_id=_session_of(w.namespace, w.key),
                metadata=w.metadata,
                # An item is data the graph asked to keep until it deletes it: the
                # lifecycle never decays, archives or expires it.
                pinned=True,
            )
            return
        *extra, rec = found
        for old in extra:  # another process wrote the same new key at the same time
            self.memory.delete(old.id, user_id=w.user)
        self.memory.update(
            rec.id,
            content=w.text if w.text != rec.content else None,
            metadata=w.metadata,
            user_id=w.user,
        )

    def _text(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        index: Literal[False] | list[str] | None,
    ) -> tuple[str, bool]:
        """The text to embed and whether there is any (else the item's path stands in)."""
        fields = self.fields if index is None else index
        texts: list[str] = []
        if fields is not False:
            for path in fields:
                found = get_text_at_path(value, path if path == "$" else tokenize_path(path))
                texts.extend(t for t in found if t.strip())
        if texts:
            return "\n".join(texts), True
        return "/".join((*namespace, key)), False

    # -- search ------------------------------------------------------------------------

    def _users(self, prefix: tuple[str, ...]) -> list[str]:
        user = self._user(prefix)
        if user is not None:
            return [user] if user.strip() else []
        return sorted(
            {u for u, ns in _stored_namespaces(self.memory) if ns[: len(prefix)] == prefix}
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        flt = check_filter(op.filter)
        if op.limit <= 0:
            return []
        users = self._users(op.namespace_prefix)
        if op.query:
            ranked = self._ranked(op, users, flt)
            if len(ranked) >= op.limit:
                return ranked
            unranked = self._matching(op.namespace_prefix, users, flt, indexed=False)
            return ranked + [_item(r, None) for r in _take(unranked, 0, op.limit - len(ranked))]
        found = self._matching(op.namespace_prefix, users, flt, indexed=None)
        return [_item(r, None) for r in _take(found, op.offset, op.limit)]

    def _ranked(
        self, op: SearchOp, users: list[str], flt: dict[str, Any] | None
    ) -> list[SearchItem]:
        """The page of query hits: fetch more hits while the filter leaves too few."""
        assert op.query is not None
        want = max(op.offset, 0) + op.limit
        fetch = min(_MAX_FETCH, max(want * 2, 20))
        while True:
            hits: list[tuple[float, MemoryRecord]] = []
            full = False
            for user in users:
                found = self.memory.search(
                    op.query,
                    user_id=user,
                    limit=fetch,
                    filters=_prefix_filter(op.namespace_prefix, indexed=True),
                )
                full = full or len(found) == fetch
                hits.extend((h.score, h.memory) for h in found)
            hits.sort(key=lambda h: h[0], reverse=True)
            kept = [(s, r) for s, r in hits if flt is None or matches(_value(r), flt)]
            if len(kept) >= want or not full or fetch >= _MAX_FETCH:
                break
            fetch = min(_MAX_FETCH, fetch * 4)
        return [_item(r, s) for s, r in kept[max(op.offset, 0) : want]]

    def _matching(
        self,
        prefix: tuple[str, ...],
        users: list[str],
        flt: dict[str, Any] | None,
        *,
        indexed: bool | None,
    ) -> Iterator[MemoryRecord]:
        """Items under ``prefix`` whose value matches ``flt``, user by user, oldest first."""
        for user in users:
            cursor = None
            while True:
                page = self.memory.list(
                    user_id=user,
                    filters=_prefix_filter(prefix, indexed=indexed),
                    limit=_PAGE,
                    cursor=cursor,
                )
                yield from (r for r in page.items if flt is None or matches(_value(r), flt))
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = {ns for _user, ns in _stored_namespaces(self.memory)}
        for cond in op.match_conditions or ():
            found = {ns for ns in found if namespace_matches(cond, ns)}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset : op.offset + op.limit]


# -- helpers ---------------------------------------------------------------------------


def _index_fields(index: Mapping[str, Any] | None) -> list[str]:
    if index is None:
        return ["$"]
    if not isinstance(index, Mapping):
        raise ValidationError("index", f"must be a mapping, got {type(index).__name__}")
    for name in index:
        if name != "fields":
            raise ValidationError(
                f"index.{name}",
                "not supported: the Memory's own embedder embeds the text; give only 'fields'",
            )
    fields = index.get("fields") or ["$"]
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise ValidationError("index.fields", "must be a list of non-empty path strings")
    return list(fields)


def _session_of(namespace: tuple[str, ...], key: str) -> str:
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode("utf-8")).hexdigest()
    return f"langgraph-{digest[:32]}"


def _metadata(
    namespace: tuple[str, ...], key: str, value: dict[str, Any], indexed: bool
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        f"{_P}namespace": list(namespace),
        f"{_P}depth": len(namespace),
        f"{_P}key": key,
        f"{_P}value": json.dumps(value, ensure_ascii=False, allow_nan=False),
        f"{_P}indexed": indexed,
    }
    meta.update({f"{_P}ns_{i}": label for i, label in enumerate(namespace)})
    return meta


def _prefix_filter(prefix: tuple[str, ...], *, indexed: bool | None) -> dict[str, Any]:
    """A mnemolayer metadata filter: items of this store under ``prefix``."""
    flt: dict[str, Any] = {f"{_P}depth": {"gte": max(len(prefix), 1)}}
    flt.update({f"{_P}ns_{i}": label for i, label in enumerate(prefix)})
    if indexed is not None:
        flt[f"{_P}indexed"] = indexed
    return flt


def _namespace(rec: MemoryRecord) -> tuple[str, ...]:
    return tuple(rec.metadata.get(f"{_P}namespace") or ())


def _value(rec: MemoryRecord) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(rec.metadata[f"{_P}value"])
    return value


def _item(rec: MemoryRecord, score: float | Literal[False] | None = False) -> Any:
    """An ``Item`` (``score`` not given) or a ``SearchItem`` of a stored record."""
    args: dict[str, Any] = {
        "namespace": _namespace(rec),
        "key": rec.metadata[f"{_P}key"],
        "value": _value(rec),
        "created_at": rec.created_at,
        "updated_at": rec.updated_at,
    }
    if score is False:
        return Item(**args)
    return SearchItem(**args, score=score)


def _take(records: Iterable[MemoryRecord], offset: int, limit: int) -> list[MemoryRecord]:
    out: list[MemoryRecord] = []
    for n, rec in enumerate(records):
        if n >= offset + limit:
            break
        if n >= offset:
            out.append(rec)
    return out


def _stored_namespaces(memory: Memory) -> set[tuple[str, tuple[str, ...]]]:
    """``(user_id, namespace)`` of every item in the store.

    mnemolayer's API reads one user at a time; listing namespaces (and searching a prefix
    that names no user) needs them all, so this reads the records table directly. On an
    encrypted store the metadata is sealed, so the records are read (and decrypted)
    through the store instead of with SQLite's JSON functions.
    """
    if memory.store.crypto is not None:
        found: set[tuple[str, tuple[str, ...]]] = set()
        for rec in memory.store.select("1", []):
            ns = rec.metadata.get(f"{_P}namespace")
            if ns and f"{_P}key" in rec.metadata:
                found.add((rec.user_id, tuple(ns)))
        return found
    rows = memory.store.read(
        "SELECT DISTINCT user_id, json_extract(metadata, ?) FROM memories "
        "WHERE json_extract(metadata, ?) IS NOT NULL",
        [f"$.{_P}namespace", f"$.{_P}key"],
    )
    return {(user, tuple(json.loads(ns))) for user, ns in rows if ns}
