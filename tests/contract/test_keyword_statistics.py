"""Keyword scores stay exact while a store keeps its BM25 statistics between searches.

A store caches each query term's document count (and the searcher the collection
statistics) until its change token moves; these tests change the index by the same
handle and by another one on the same store, and check that a long-lived handle scores
exactly as a freshly opened one does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.lifecycle.clock import FakeClock


def _scores(mem: Memory, query: str) -> dict[str, float]:
    return {h.id: h.scores["keyword"] for h in mem.search(query, user_id="u", mode="keyword")}


def _fresh(db_path: Path, clock: FakeClock, query: str) -> dict[str, float]:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as other:
        return _scores(other, query)


def test_a_cached_handle_scores_as_a_fresh_one(db_path: Path, clock: FakeClock) -> None:
    with (
        Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem,
        Memory(db_path, embedder="hashing", clock=clock, extractor=None) as writer,
    ):
        first = mem.add(
            ["a kiwi smoothie for breakfast", "tea at noon", "pasta at night"], user_id="u"
        )
        before = _scores(mem, "kiwi smoothie")
        assert list(before) == [first[0].id]
        assert _scores(mem, "kiwi smoothie") == before  # served from the cache

        # Another handle adds a document holding the term: its IDF falls.
        writer.add(["a kiwi tart"], user_id="u")
        after_other = _scores(mem, "kiwi smoothie")
        assert after_other == pytest.approx(_fresh(db_path, clock, "kiwi smoothie"))
        assert after_other[first[0].id] < before[first[0].id]

        # The same handle adds one more: the term is commoner.
        mem.add(["kiwi jam on toast"], user_id="u")
        after_own = _scores(mem, "kiwi smoothie")
        assert after_own == pytest.approx(_fresh(db_path, clock, "kiwi smoothie"))
        assert after_own != after_other

        # Deleting by the other handle makes it rarer again.
        tart = [h.id for h in writer.search("tart", user_id="u", mode="keyword")]
        writer.delete(tart[0], user_id="u")
        after_delete = _scores(mem, "kiwi smoothie")
        assert after_delete == pytest.approx(_fresh(db_path, clock, "kiwi smoothie"))
        assert after_delete != after_own


def test_document_counts_follow_the_change_token(db_path: Path, clock: FakeClock) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        store = mem._searcher.store
        mem.add(["plum cake", "plum jam"], user_id="u")
        (term,) = store.blind_query_terms("u", ["plum"])
        (absent,) = store.blind_query_terms("u", ["quince"])
        store.change_token()
        assert store.term_doc_counts([term, absent]) == {term: 2}
        mem.add(["plum tart", "quince paste"], user_id="u")
        store.change_token()
        assert store.term_doc_counts([term, absent, term]) == {term: 3, absent: 1}
