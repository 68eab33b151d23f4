"""What every part of the shared SQL stands on: the engine, the field cipher, the row
layout of a record, and the hooks through which each engine does what differs in kind.

The shared statements (:mod:`~mnemolayer.store.records`, :mod:`~mnemolayer.store.history`,
:mod:`~mnemolayer.store.index`, :mod:`~mnemolayer.store.states`,
:mod:`~mnemolayer.store.erase`) are written once in the SQLite dialect. Where the engines
cannot share a statement (the keyword index is FTS5 on one and a ``tsvector`` on the
other, vectors are blobs on one and pgvector on the other…) the shared code calls a hook
declared here, and :class:`~mnemolayer.store.sqlite.store.SQLiteStore` and
:class:`~mnemolayer.store.postgres.store.PostgresStore` implement it. The list, by kind:

- identity columns: :meth:`StoreCore._insert_row`;
- keyword index: :meth:`~StoreCore._index_terms`, :meth:`~StoreCore.keyword_matches`,
  :meth:`~StoreCore.term_doc_counts`, :meth:`~StoreCore.text_stats`;
- vectors: :meth:`~StoreCore._put_vectors`, :meth:`~StoreCore._drop_vectors`,
  :meth:`~StoreCore.load_vectors`, :meth:`~StoreCore.record_vectors`;
- batch inserts: :meth:`~mnemolayer.store.records.RecordsSQL.insert_many` (a default);
- access counting: :meth:`~StoreCore._write_briefly`;
- change detection: :meth:`~StoreCore.change_token`, :meth:`~StoreCore._index_changed`
  (a default);
- JSON in SQL: :meth:`~StoreCore.add_source`, :meth:`~StoreCore._sql_reads_outcomes`;
- metadata filters: :meth:`~StoreCore.compile_filter`;
- recursive queries: :meth:`~StoreCore.multi_arm_recursion`;
- erasure: :meth:`~StoreCore.user_tables`, :meth:`~StoreCore.unique_terms`,
  :meth:`~StoreCore.vocab_count`, :meth:`~StoreCore.secure_delete` and
  :meth:`~StoreCore.compact_keyword_index` (defaults); the counts that verify a deletion
  are shared SQL (:class:`~mnemolayer.store.erase.EraseSQL`);
- the engine itself: :meth:`~StoreCore.use_encryption`, :meth:`~StoreCore.file_size`, and
  :class:`~mnemolayer.store.engine.Engine`'s read, write, transact, truncate_log, close.
"""

from __future__ import annotations

import abc
import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.models import PENDING_KINDS, MemoryKind, MemoryRecord
from mnemolayer.query import Filter
from mnemolayer.store.engine import Engine
from mnemolayer.store.rows import COLUMN_NAMES, TIME_FIELDS, from_iso, iso
from mnemolayer.store.txn import Txn
from mnemolayer.text.terms import tag_terms, user_term_tag

__all__ = ["DOC_COUNT_TERMS", "StoreCore"]

#: Most terms whose document counts a store keeps between searches.
DOC_COUNT_TERMS = 50_000


class StoreCore(Engine):
    """The engine plus the cipher and the row layout; the hooks are abstract here.

    Attributes:
        crypto: the field cipher when the store is encrypted (:meth:`use_encryption`),
            else ``None``. Encrypted: ``memories.content``, ``metadata``, ``speaker``,
            ``entities``; history contents and metadata; the keyword index holds blind
            terms and ``content_hash`` is a keyed hash (:mod:`mnemolayer.crypto.cipher`).
    """

    crypto: FieldCipher | None = None
    _index_writes: int
    #: Document counts per term (:meth:`term_doc_counts`) and the token they hold for.
    _doc_counts: dict[str, int]
    _doc_counts_token: tuple[int, int] | None

    # -- encryption ----------------------------------------------------------------------

    def _enc(self, user_id: str, field: str, row_id: str, text: str | None) -> str | None:
        if self.crypto is None or text is None:
            return text
        return self.crypto.encrypt(user_id, field, row_id, text)

    def _dec(self, user_id: str, field: str, row_id: str, value: str | None) -> str | None:
        if self.crypto is None or value is None:
            return value
        return self.crypto.decrypt(user_id, field, row_id, value)

    def _hash(self, user_id: str, content_hash: str, *, create: bool = True) -> str:
        if self.crypto is None:
            return content_hash
        return self.crypto.keyed_hash(user_id, "content_hash", content_hash, create=create)

    def _terms(self, user_id: str, terms: str) -> str:
        # Per-user terms: tagged by user in a plain store (textproc.user_term_tag),
        # blinded under the user's key in an encrypted one.
        if self.crypto is None:
            return tag_terms(user_term_tag(user_id), terms)
        return self.crypto.blind_terms(user_id, terms)

    def blind_query_terms(self, user_id: str, terms: Sequence[str]) -> list[str]:
        """Query terms as the keyword index holds them, per user: prefixed with the
        user's tag (:func:`~mnemolayer.text.terms.user_term_tag`) for a plain store, their
        blind forms for an encrypted one."""
        if self.crypto is None:
            tag = user_term_tag(user_id)
            return [tag + t for t in terms]
        return self.crypto.blind_query(user_id, list(terms))

    def encryption_mark(self) -> str | None:
        """The keyring id an encrypted store is paired with, or ``None`` for a plain store."""
        return self.get_meta("encryption_keyring")

    def is_empty(self) -> bool:
        """Whether nothing of any user is stored yet (records, history, windows, graph)."""
        rows = self.read(
            "SELECT EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM history) "
            "OR EXISTS (SELECT 1 FROM working_sessions) OR EXISTS (SELECT 1 FROM entities) "
            "OR EXISTS (SELECT 1 FROM facts)"
        )
        return not rows[0][0]

    # -- records as rows -----------------------------------------------------------------

    def record_row(self, r: MemoryRecord) -> tuple[Any, ...]:
        """A record as the row of ``memories`` (encrypted fields sealed)."""
        u, i = r.user_id, r.id
        return (
            r.id, r.user_id, r.agent_id, r.session_id, r.kind.value,
            self._enc(u, "memories.content", i, r.content), r.role,
            self._enc(u, "memories.speaker", i, r.speaker),
            self._enc(u, "memories.metadata", i,
                      json.dumps(r.metadata, ensure_ascii=False, allow_nan=False)),
            r.importance, iso(r.created_at), iso(r.updated_at), iso(r.occurred_at),
            iso(r.valid_from), iso(r.valid_to), iso(r.expires_at), r.access_count,
            iso(r.last_accessed_at), r.superseded_by, json.dumps(r.source_ids, ensure_ascii=False),
            self._enc(u, "memories.entities", i, json.dumps(r.entities, ensure_ascii=False)),
            self._hash(u, r.content_hash), r.embedding_model,
            int(r.session_only), int(r.pinned), iso(r.archived_at), r.merged_into,
            r.consolidated_into, int("embedding" in r.pending), int("extraction" in r.pending),
            r.source, json.dumps(r.flags),
        )  # fmt: skip

    def row_record(self, row: Sequence[Any]) -> MemoryRecord:
        """A ``memories`` row (in :data:`~mnemolayer.store.rows.COLUMNS` order) as a
        record (decrypted)."""
        data = dict(zip(COLUMN_NAMES, row, strict=True))
        for key in TIME_FIELDS:
            data[key] = from_iso(data[key])
        if self.crypto is not None:
            u, i = data["user_id"], data["id"]
            for col in ("content", "speaker", "metadata", "entities"):
                data[col] = self._dec(u, f"memories.{col}", i, data[col])
        data["metadata"] = json.loads(data["metadata"])
        data["source_ids"] = json.loads(data["source_ids"])
        data["entities"] = json.loads(data["entities"])
        data["flags"] = json.loads(data["flags"])
        data["kind"] = MemoryKind(data["kind"])
        data["session_only"] = bool(data["session_only"])
        data["pinned"] = bool(data["pinned"])
        flags = (data.pop("pending_embedding"), data.pop("pending_extraction"))
        data["pending"] = [k for k, on in zip(PENDING_KINDS, flags, strict=True) if on]
        return MemoryRecord.model_construct(**data)

    def as_stored(self, record: MemoryRecord) -> MemoryRecord:
        """``record`` as reads return it: on an encrypted store its dedup key is the keyed
        hash that is stored, never the plain SHA-256 of the text (which would let anyone
        holding the record confirm a guessed text)."""
        if self.crypto is None:
            return record
        return record.model_copy(
            update={"content_hash": self._hash(record.user_id, record.content_hash)}
        )

    def _outcomes(self, user_id: str, memory_id: str, metadata: str) -> int | None:
        """``metadata["outcome_count"]`` when an integer (not a bool), from sealed metadata."""
        value = json.loads(self._dec(user_id, "memories.metadata", memory_id, metadata) or "{}")
        count = value.get("outcome_count") if isinstance(value, dict) else None
        return count if isinstance(count, int) and not isinstance(count, bool) else None

    # -- hooks: the engine ---------------------------------------------------------------

    @abc.abstractmethod
    def use_encryption(self, cipher: FieldCipher, keyring_id: str) -> None:
        """Encrypt from now on with ``cipher`` (a new store is paired with keyring
        ``keyring_id``), or refuse with :class:`StoreError`."""

    @abc.abstractmethod
    def file_size(self) -> int:
        """Bytes the store takes on disk (or on the server)."""

    # -- hooks: identity columns ---------------------------------------------------------

    @abc.abstractmethod
    def _insert_row(self, c: Txn, record: MemoryRecord) -> int | None:
        """Insert ``record``'s row into ``memories`` unless its user already has its
        content hash: the new row's rowid (the key of the keyword and vector indexes),
        or ``None`` when nothing was inserted."""

    # -- hooks: keyword index ------------------------------------------------------------

    @abc.abstractmethod
    def _index_terms(self, c: Txn, rowid: int, user_id: str, terms: str, *, replace: bool) -> None:
        """Make ``terms`` (as stored: tagged or blinded, :meth:`_terms`) the keyword
        entry of record ``rowid``; ``replace``: the record has one already."""

    @abc.abstractmethod
    def _unindex_terms(self, c: Txn, user_id: str, rowids: Sequence[int]) -> None:
        """Remove the keyword entries of ``user_id``'s records ``rowids`` (at most 500)."""

    @abc.abstractmethod
    def keyword_matches(
        self, user_id: str, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[tuple[int, str]]:
        """Rows of a user matching an FTS5-style expression of quoted terms joined by OR,
        best first by the engine's own ranking: ``[(rowid, indexed terms)]``; only those
        whose record also satisfies ``where`` (over ``memories m``)."""

    def term_doc_counts(
        self, terms: Sequence[str], *, user_id: str | None = None
    ) -> dict[str, int]:
        """How many records hold each term (terms as :meth:`blind_query_terms` gives
        them: a user's own); terms no record holds are absent. ``user_id``: whose terms
        they are, so that an engine may read that user's rows only (the counts are the
        same: the terms carry the user's tag).

        Counted by the engine (:meth:`_count_term_docs`) and kept until
        :meth:`change_token` reads a new value: the searcher reads it before every
        keyword search, so a count never outlives a change to the index, by this process
        or another. At most :data:`DOC_COUNT_TERMS` terms are kept (all are dropped at
        once past that)."""
        cache = self._doc_counts  # this search's dict, even if a new token replaces it
        wanted = [t for t in dict.fromkeys(terms) if t not in cache]
        if wanted:
            if len(cache) > DOC_COUNT_TERMS:
                cache.clear()
            counted = self._count_term_docs(wanted, user_id)
            cache.update({t: counted.get(t, 0) for t in wanted})
        return {t: n for t in dict.fromkeys(terms) if (n := cache.get(t, 0))}

    def _token_seen(self, token: tuple[int, int]) -> tuple[int, int]:
        """``token``, after dropping the cached document counts when it is new (each
        engine's :meth:`change_token` returns through this)."""
        if token != self._doc_counts_token:
            self._doc_counts, self._doc_counts_token = {}, token
        return token

    @abc.abstractmethod
    def _count_term_docs(self, terms: Sequence[str], user_id: str | None) -> dict[str, int]:
        """:meth:`term_doc_counts` read from the index, uncached (terms no record holds
        may be absent or 0)."""

    @abc.abstractmethod
    def text_stats(self, user_id: str | None = None) -> tuple[int, float]:
        """``(records, mean indexed terms per record)`` for BM25: the records of
        ``user_id`` (of the store when ``None``) and the store's mean length."""

    # -- hooks: vectors ------------------------------------------------------------------

    @abc.abstractmethod
    def _put_vectors(self, c: Txn, rowid: int | None, user_id: str, vectors: np.ndarray) -> None:
        """Store the chunk vectors of record ``rowid`` and bump the user's generation."""

    @abc.abstractmethod
    def _drop_vectors(self, c: Txn, rowid: int, user_id: str) -> None:
        """Delete the chunk vectors of record ``rowid`` (of ``user_id``)."""

    @abc.abstractmethod
    def load_vectors(self, user_id: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All chunk vectors of a user: ``(rowids (m,) int64, matrix (m, dim) float32)``.

        Raises:
            StoreError: the stored vectors do not have dimension ``dim``.
        """

    @abc.abstractmethod
    def record_vectors(self, c: Txn, memory_id: str) -> np.ndarray:
        """A record's chunk vectors, ``(chunks, dim)`` float32, read inside ``c``."""

    # -- hooks: access counting and change detection -------------------------------------

    @abc.abstractmethod
    def _write_briefly(self, wait_s: float, fn: Callable[[Txn], None]) -> bool:
        """Run ``fn(conn)`` in one short write transaction if the writer lock can be had
        within ``wait_s`` seconds, trying once: ``True`` when committed, ``False`` when
        busy or the database failed (nothing written; no store error escapes)."""

    @abc.abstractmethod
    def change_token(self) -> tuple[int, int]:
        """A value that changes when the indexed data changes, by any process."""

    def _index_changed(self, c: Txn) -> None:
        """Called inside ``c`` whenever a user's generation is bumped (a keyword or
        vector change); by default nothing more is needed."""

    # -- hooks: JSON in SQL --------------------------------------------------------------

    @abc.abstractmethod
    def add_source(self, c: Txn, memory_id: str, source_id: str) -> None:
        """Append ``source_id`` to a record's provenance (``source_ids``, once)."""

    @abc.abstractmethod
    def _sql_reads_outcomes(self) -> bool:
        """Whether SQL can read ``metadata.outcome_count`` itself; else the metadata is
        read back and decoded (sealed, or an engine without SQLite's JSON functions)."""

    # -- hooks: metadata filters and recursive queries -----------------------------------

    @abc.abstractmethod
    def compile_filter(self, f: Filter, prefix: str = "") -> tuple[str, list[Any]]:
        """A metadata filter as SQL over ``{prefix}metadata`` (``prefix``: ``"m."`` or
        ``""``) and its parameters, in this store's terms (JSON functions, or a Python
        function inside SQL for sealed metadata)."""

    @abc.abstractmethod
    def multi_arm_recursion(self) -> bool:
        """Whether a recursive CTE may have several recursive SELECTs (SQLite 3.34+;
        PostgreSQL allows one reference to the recursive table)."""

    # -- hooks: erasure (privacy/erasure.py) ---------------------------------------------

    @abc.abstractmethod
    def user_tables(self, c: Txn | None = None) -> list[str]:
        """Every table of the store with a ``user_id`` column, sorted (``c``: read inside
        that transaction)."""

    @abc.abstractmethod
    def unique_terms(self, c: Txn, rowids: set[int]) -> set[str]:
        """Terms of the keyword index that occur only in records ``rowids``."""

    @abc.abstractmethod
    def vocab_count(self, c: Txn | None, terms: set[str]) -> int:
        """How many of ``terms`` the keyword index still holds (``c``: inside that
        transaction, ``None``: a plain read)."""

    @contextlib.contextmanager
    def secure_delete(self) -> Iterator[None]:
        """Around a deleting transaction: deleted content is overwritten, not just
        unlinked, where the engine can promise that. Default: nothing to do."""
        yield

    def compact_keyword_index(self, c: Txn) -> None:
        """Inside a deleting transaction: rewrite the keyword index so that deleted terms
        leave its storage. Default: nothing to do."""
