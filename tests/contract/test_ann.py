"""The ANN vector index (mnemolayer.retrieval.ann): recall against exact search, exact
agreement of the scope filtering, and consistency with the store as it changes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.scale import ScaleData
from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.errors import ValidationError
from mnemolayer.retrieval.ann import (
    AnnConfig,
    LazyCosines,
    UserAnn,
    ann_candidates,
    chunk_keys,
    fingerprints,
    record_sims,
)
from mnemolayer.retrieval.candidates import Candidates
from mnemolayer.retrieval.search import SearchRequest
from mnemolayer.retrieval.vectors import UserVectors

NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)
EXACT = AnnConfig(threshold=10**9)
#: The shipped settings, every user on the index, built inside the search that needs it
#: (not in the background, so that each search below is served by the index): what the
#: recall tests measure.
DEFAULT_ANN = AnnConfig(threshold=0, background=False)
#: Every user on the index (the store tests below also make its search exhaustive).
ANN = AnnConfig(threshold=0, background=False)


def _user_vectors(matrix: np.ndarray, rowids: np.ndarray | None = None) -> UserVectors:
    rowids = np.arange(1, matrix.shape[0] + 1) if rowids is None else rowids
    unique, starts = np.unique(rowids, return_index=True)
    empty = np.zeros(0, dtype=np.int64)
    return UserVectors(
        1, rowids, matrix, unique, starts, {}, empty, empty, np.zeros(0, bool), frozenset(), []
    )


def _exact_top(uv: UserVectors, q: np.ndarray, k: int = 10) -> set[int]:
    sims = record_sims(uv, np.arange(uv.unique.size), q)
    return set(uv.unique[np.argsort(-sims, kind="stable")[:k]].tolist())


@pytest.mark.slow  # 20,000 vectors: several seconds
def test_recall_at_10_on_20k_structured_vectors() -> None:
    data = ScaleData(20_000, seed=3)
    uv = _user_vectors(data.vectors(np.arange(data.n)))
    index = UserAnn(DEFAULT_ANN, data.dim)
    assert index.sync(uv) and len(index) == data.n
    rng = np.random.default_rng(5)
    found = 0
    queries = 100
    for j in range(queries):
        _, q = data.query(j, int(rng.integers(data.n)))
        got = ann_candidates(uv, index, q, 10, None)
        assert got is not None
        found += len(_exact_top(uv, q) & set(got[0]))
    assert found / (10 * queries) >= 0.95


def test_multi_chunk_records_use_their_best_chunk() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    rowids = np.repeat(np.arange(1, 101), 3)  # three chunks per record
    uv = _user_vectors(matrix, rowids)
    keys = chunk_keys(uv.rowids, uv.starts)
    assert keys is not None and np.all(np.diff(keys.astype(np.float64)) > 0)
    index = UserAnn(DEFAULT_ANN, 16)
    q = matrix[7]  # chunk 1 of record 3
    ranked, cosines = ann_candidates(uv, index, q, 5, None) or ([], {})
    assert ranked[0] == 3 and cosines[3] == pytest.approx(1.0, abs=1e-5)
    sims = record_sims(uv, np.arange(100), q)
    assert sims[2] == pytest.approx(1.0, abs=1e-5)
    assert cosines[50] == pytest.approx(float(sims[49]))  # computed on demand


def test_filters_never_let_an_excluded_record_through() -> None:
    data = ScaleData(2_000, dim=32, seed=1)
    uv = _user_vectors(data.vectors(np.arange(data.n)))
    index = UserAnn(DEFAULT_ANN, 32)
    rng = np.random.default_rng(2)
    for j in range(20):
        _, q = data.query(j, int(rng.integers(data.n)))
        for include in (True, False):
            listed = rng.choice(uv.unique, 40 if include else 600, replace=False)
            got = ann_candidates(uv, index, q, 10, (include, listed))
            assert got is not None
            ranked, cosines = got
            assert (set(ranked) <= set(listed.tolist())) == include or not ranked
            assert not include or set(ranked) <= set(listed.tolist())
            assert include or not set(ranked) & set(listed.tolist())
            # Membership of the lazy cosines is exactly the allowed set.
            allowed = (
                set(listed.tolist()) if include else set(uv.unique.tolist()) - set(listed.tolist())
            )
            assert {int(r) for r in uv.unique if int(r) in cosines} == allowed
            if include:  # a short include list is ranked exactly
                sims = record_sims(uv, np.searchsorted(uv.unique, np.sort(listed)), q)
                best = np.sort(listed)[np.argsort(-sims, kind="stable")[:10]]
                assert ranked == best.tolist()


def test_config_is_validated() -> None:
    with pytest.raises(ValidationError, match="connectivity"):
        AnnConfig(connectivity=0)
    with pytest.raises(ValidationError, match="dtype"):
        AnnConfig(dtype="f64")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="max_candidates"):
        AnnConfig(min_candidates=10, max_candidates=5)


def test_fingerprints_tell_changed_rows() -> None:
    rng = np.random.default_rng(0)
    m = rng.standard_normal((50, 384)).astype(np.float32)
    before = fingerprints(m)
    m[7, 100] += 1e-6
    after = fingerprints(m)
    assert np.flatnonzero(before != after).tolist() == [7]


# -- on a real store ---------------------------------------------------------------------


@pytest.fixture
def exhaustive(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index proposes the true nearest chunks (usearch's brute-force search over the
    same index): HNSW can leave a node unreachable, which the recall tests above measure;
    the store tests check filtering and consistency, which must hold exactly."""
    from usearch.index import Index

    real = Index.search

    def search(self: Any, *args: Any, **kwargs: Any) -> Any:
        return real(self, *args, **{**kwargs, "exact": True})

    monkeypatch.setattr(Index, "search", search)


def _memory(path: Path) -> Memory:
    return Memory(
        path,
        embedder="hashing",
        clock=lambda: NOW,
        retrieval=RetrievalConfig(track_access=False),
    )


WORDS = (
    "garden",
    "piano",
    "hiking",
    "coffee",
    "python",
    "lisbon",
    "chess",
    "cooking",
    "river",
    "tennis",
    "violin",
    "bread",
    "novel",
    "castle",
    "winter",
    "market",
    "sister",
    "train",
    "museum",
    "bicycle",
    "kayak",
    "opera",
    "tulip",
    "mango",
    "desert",
    "harbor",
    "guitar",
    "lantern",
    "poetry",
    "meadow",
    "rocket",
    "saffron",
    "glacier",
    "canyon",
    "pottery",
)


def _fill(mem: Memory, n: int = 360) -> list[str]:
    """``n`` messages in 5 sessions, two teams, some semantic; random word mixes so that
    cosines rarely tie (a tie at the candidate cut-off may go either way)."""
    rng = np.random.default_rng(1)
    ids: list[str] = []
    for s in range(n // 12):
        msgs = [
            f"note {s * 12 + i}: "
            + " ".join(rng.choice(WORDS, int(rng.integers(6, 20)), replace=True).tolist())
            for i in range(12)
        ]
        recs = mem.add(
            msgs,
            user_id="ann",
            session_id=f"s{s % 5}",
            metadata={"team": "red" if s % 2 else "blue", "n": s},
            timestamp=NOW - timedelta(days=n // 12 - s),
            kind="semantic" if s % 7 == 0 else "episodic",
        )
        ids.extend(r.id for r in recs)
    mem.add("a stranger's garden note", user_id="other", timestamp=NOW - timedelta(days=1))
    return ids


SEARCHES = [
    {},
    {"session_id": "s2"},
    {"kinds": ["semantic"]},
    {"filters": {"team": "red"}},
    {"filters": {"n": {"gte": 20}}, "session_id": "s1"},
    {"include_history": True},
    {"mode": "vector"},
]


def _hits(mem: Memory, query: str, **kw: object) -> list[tuple[str, float]]:
    return [
        (h.memory.id, round(h.score, 6))
        for h in mem.search(query, user_id="ann", limit=15, **kw)  # type: ignore[arg-type]
    ]


def _vector_top(
    mem: Memory, config: AnnConfig, query: str, kw: dict[str, Any]
) -> tuple[list[float], bool]:
    """The vector candidates' cosines, best first, and whether the cut-off falls in a tie."""
    searcher = mem._searcher
    searcher.ann = config
    scope = mem._reader.scope("ann", None, kw.get("session_id"), kw.get("kinds"), kw.get("filters"))
    req = SearchRequest(
        query, scope, 15, None, "vector", NOW, include_history=bool(kw.get("include_history"))
    )
    cands = Candidates()
    searcher._vector_candidates(req, searcher._allowed(req), 50, cands)
    top = [round(cands.cosine[r], 6) for r in cands.vec_rank]
    if config is EXACT:
        rest = sorted((round(v, 6) for v in cands.cosine.values()), reverse=True)
        return top, len(rest) > len(top) and rest[len(top) - 1] == rest[len(top)]
    return top, False


def _same_ranking(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """Same scores in the same order, and the same records at each score (ties may come
    in any order; a tie cut by the limit may hold different records)."""
    if [s for _, s in a] != [s for _, s in b]:
        return False
    last = a[-1][1] if a else 0.0
    return sorted(a) == sorted(b) or {x for x in a if x[1] > last} == {x for x in b if x[1] > last}


def test_search_with_the_index_matches_exact_search(
    new_db: Callable[[str], Any], tmp_path: Path, exhaustive: None
) -> None:
    mem = _memory(new_db("m"))
    ids = _fill(mem)
    # Records exact search must exclude: deleted, archived, expired, superseded.
    mem.delete(ids[3], user_id="ann")
    mem.archive(ids[15], user_id="ann")
    mem.update(ids[30], content="piano lessons moved to Thursday")
    mem.add(
        "garden party",
        user_id="ann",
        timestamp=NOW - timedelta(days=3),
        expires_at=NOW - timedelta(days=1),
    )
    queries = [
        "garden piano kayak",
        "what about chess and opera?",
        "coffee in lisbon harbor",
        "piano Thursday",
    ]
    compared = 0
    for kw in SEARCHES:
        for query in queries:
            exact_top, tied = _vector_top(mem, EXACT, query, kw)
            approx_top, _ = _vector_top(mem, ANN, query, kw)
            # The same cosines in the same order (which of two tied records makes the
            # cut may differ, so records are compared only off ties).
            assert approx_top == exact_top, (kw, query)
            if tied:
                continue
            mem._searcher.ann = EXACT
            exact = _hits(mem, query, **kw)
            mem._searcher.ann = ANN
            approx = _hits(mem, query, **kw)
            assert _same_ranking(approx, exact), (kw, query, approx, exact)
            compared += 1
    assert compared >= len(SEARCHES) * len(queries) // 2
    uv = mem._searcher.vectors.get("ann")
    assert uv.ann is not None and uv.ann.builds == 1
    mem.close()


def test_lazy_cosines_cover_exactly_the_records_in_scope(
    new_db: Callable[[str], Any], tmp_path: Path, exhaustive: None
) -> None:
    mem = _memory(new_db("m"))
    ids = _fill(mem, 240)
    mem.delete(ids[0], user_id="ann")
    mem.archive(ids[1], user_id="ann")
    searcher = mem._searcher
    everyone = [*sorted(searcher.vectors.get("ann").unique.tolist()), 10**9]
    for kw in ({}, {"session_id": "s3"}, {"filters": {"team": "blue"}}):
        scope = mem._reader.scope("ann", None, kw.get("session_id"), None, kw.get("filters"))
        req = SearchRequest("garden chess", scope, 10, None, "hybrid", NOW)
        got = []
        for config in (EXACT, ANN):
            searcher.ann = config
            cands = Candidates()
            searcher._vector_candidates(req, searcher._allowed(req), 50, cands)
            inside = {r for r in everyone if r in cands.cosine}
            got.append((inside, {r: round(cands.cosine[r], 5) for r in inside}))
        assert got[0] == got[1], kw
        # The batch look-up gives what one-by-one look-ups give (NaN out of scope).
        cands = Candidates()
        searcher._vector_candidates(req, searcher._allowed(req), 50, cands)
        assert isinstance(cands.cosine, LazyCosines)
        batch = cands.cosine.many([*everyone, everyone[0]])
        one_by_one = [got[1][1].get(r, float("nan")) for r in [*everyone, everyone[0]]]
        np.testing.assert_allclose(batch, one_by_one, atol=1e-5)
    mem.close()


def test_index_follows_adds_deletes_updates_and_other_writers(
    new_db: Callable[[str], Any], tmp_path: Path, exhaustive: None
) -> None:
    path = new_db("m")
    mem = _memory(path)
    mem._searcher.ann = ANN
    ids = _fill(mem, 240)
    mem.search("garden", user_id="ann")
    index = mem._searcher.vectors.get("ann").ann
    assert index is not None and index.builds == 1 and len(index) == 240

    new = mem.add("zanzibar spice market visit", user_id="ann", timestamp=NOW)[0]
    assert _hits(mem, "zanzibar spice market visit", mode="vector")[0][0] == new.id
    mem.delete(ids[5], user_id="ann")
    mem.update(ids[6], content="quokka photography trip")
    hits = _hits(mem, "quokka photography trip", mode="vector")
    assert hits[0][0] == ids[6]
    assert ids[5] not in {h for h, _ in _hits(mem, ids[5], mode="vector")}
    assert len(index) == 240 and index.builds == 1  # followed, never rebuilt

    other = _memory(path)  # another writer on the same file
    far = other.add("yodelling in the alps", user_id="ann", timestamp=NOW)[0]
    other.close()
    assert _hits(mem, "yodelling in the alps", mode="vector")[0][0] == far.id
    assert len(index) == 241 and index.builds == 1

    for memory_id in ids[100:170]:  # a large change (over rebuild_fraction): rebuilt
        mem.delete(memory_id, user_id="ann")
    hits = _hits(mem, "garden note", mode="vector")
    assert index.builds == 2 and len(index) == 241 - 70
    assert not {h for h, _ in hits} & set(ids[100:170])

    # Erasing a scope drops the user's cached vectors, and the index with them.
    mem.delete_all(user_id="ann", session_id="s0")
    hits = _hits(mem, "garden note", mode="vector")
    fresh = mem._searcher.vectors.get("ann").ann
    assert fresh is not index and fresh is not None and fresh.builds == 1
    assert all(mem.get(h, user_id="ann").session_id != "s0" for h, _ in hits)
    mem.close()


def test_small_users_stay_on_exact_search(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    mem = _memory(new_db("m"))
    _fill(mem, 120)
    mem._searcher.ann = AnnConfig(threshold=1000)
    assert mem.search("garden", user_id="ann")
    assert mem._searcher.vectors.get("ann").ann is None
    mem.close()


def test_ann_candidates_rejects_a_filter_it_cannot_serve() -> None:
    data = ScaleData(3_000, dim=16, seed=4)
    uv = _user_vectors(data.vectors(np.arange(data.n)))
    index = UserAnn(
        AnnConfig(threshold=0, min_candidates=50, max_candidates=500, background=False), 16
    )
    _, q = data.query(0, 0)
    # Excluding more than the index may propose: the caller must search exactly.
    assert ann_candidates(uv, index, q, 10, (False, uv.unique[:2_000])) is None
    # A large include list is served through the index; a small one exactly.
    for listed in (uv.unique[::2], uv.unique[:30]):
        got = ann_candidates(uv, index, q, 10, (True, listed))
        assert got is not None and set(got[0]) <= set(listed.tolist())


def test_cache_eviction_keeps_users_with_an_index(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    mem = _memory(new_db("m"))
    _fill(mem, 120)
    for user in ("u1", "u2", "u3"):
        mem.add(f"{user} likes garden chess", user_id=user, timestamp=NOW)
    mem._searcher.ann = AnnConfig(threshold=100, background=False)
    mem._searcher.vectors._max_users = 2
    mem.search("garden", user_id="ann")
    index = mem._searcher.vectors.get("ann").ann
    for user in ("u1", "u2", "u3"):
        assert mem.search("garden", user_id=user)
    assert mem._searcher.vectors._users["ann"].ann is index and index is not None
    assert index.builds == 1
    mem.close()


def test_exact_search_serves_while_the_index_builds_in_the_background(
    new_db: Callable[[str], Any], tmp_path: Path, exhaustive: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    mem = _memory(new_db("m"))
    ids = _fill(mem, 240)
    exact = {q: _hits(mem, q, mode="vector") for q in ("garden chess", "piano opera")}
    mem._searcher.ann = AnnConfig(threshold=100)  # the shipped default: background builds
    release = threading.Event()
    real = UserAnn._new_built

    def slow_build(self: UserAnn, keys: np.ndarray, matrix: np.ndarray) -> Any:
        assert release.wait(30), "the test never released the build"
        return real(self, keys, matrix)

    monkeypatch.setattr(UserAnn, "_new_built", slow_build)
    # While the build is held back, every search is answered, exactly.
    for _ in range(2):
        for query, want in exact.items():
            assert _hits(mem, query, mode="vector") == want
    index = mem._searcher.vectors.get("ann").ann
    assert index is not None and index.building and index.builds == 0 and len(index) == 0
    release.set()
    assert index.wait(30) and not index.building
    assert index.builds == 1 and len(index) == 240 and index.build_error is None
    for query, want in exact.items():  # now through the index: the same ranking
        assert _hits(mem, query, mode="vector") == want

    # A large change is rebuilt in the background too; exact search serves meanwhile
    # and never returns what was deleted.
    release.clear()
    for memory_id in ids[100:170]:
        mem.delete(memory_id, user_id="ann")
    hits = _hits(mem, "garden note", mode="vector")
    assert index.building and not {h for h, _ in hits} & set(ids[100:170])
    release.set()
    assert index.wait(30) and index.builds == 2 and len(index) == 240 - 70
    assert _hits(mem, "garden note", mode="vector") == hits
    mem.close()


def test_a_failed_background_build_leaves_exact_search_serving(
    new_db: Callable[[str], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _memory(new_db("m"))
    _fill(mem, 240)
    want = _hits(mem, "garden chess", mode="vector")
    mem._searcher.ann = AnnConfig(threshold=100)
    calls: list[int] = []

    def failing(self: UserAnn, keys: np.ndarray, matrix: np.ndarray) -> Any:
        calls.append(keys.size)
        raise MemoryError("no room for the graph")

    monkeypatch.setattr(UserAnn, "_new_built", failing)
    assert _hits(mem, "garden chess", mode="vector") == want
    index = mem._searcher.vectors.get("ann").ann
    assert index is not None and index.wait(30)
    assert isinstance(index.build_error, MemoryError) and index.builds == 0
    # Not retried on every search while the user's vectors are unchanged.
    for _ in range(3):
        assert _hits(mem, "garden chess", mode="vector") == want
    assert calls == [240]
    mem.close()
