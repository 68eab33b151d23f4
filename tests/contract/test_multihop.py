"""Multi-hop and aggregation recall (mnemolayer.retrieval.expand): entity-centred
expansion, the pivoting second pass and memory chains widen the candidate pool; the
session spread re-orders the top-k; and the context packer spreads its budget across
sessions and leaves out episodes under a relevance floor. Each on a small hand-made
conversation that flips the outcome, through the store on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.context.assemble import build_context
from mnemolayer.context.items import ContextItem
from mnemolayer.context.pack import above_floor, session_priority
from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.query import Scope
from mnemolayer.retrieval.candidates import SearchRequest
from mnemolayer.retrieval.expand import (
    aggregation_shaped,
    diversify,
    named_entities,
    session_cap_for,
)

#: Melanie's three pastimes, each in its own session after a question of Caroline's
#: that shares the query's words but not its answer.
TALK = [
    ("s1", [("Caroline", "What are you doing this weekend, Melanie?"),
            ("Melanie", "I love painting sunsets by the sea")]),
    ("s2", [("Caroline", "Melanie, what are you doing on Sunday?"),
            ("Melanie", "Busy, but I love pottery on Sundays")]),
    ("s3", [("Caroline", "What were you doing all day, Melanie?"),
            ("Melanie", "I love camping with my kids")]),
]  # fmt: skip
PASTIMES = {t for _, turns in TALK for who, t in turns if who == "Melanie"}
QUERY = "What does Melanie love doing?"


def _memory(db_path: Any, clock: FakeClock, extractor: str | None = "rules", **cfg: Any) -> Memory:
    # A pool of one candidate per signal, no neighbours and every multi-hop knob off
    # unless asked for: what each one adds shows.
    settings: dict[str, Any] = {
        "candidates": 1, "context_weight": 0.0, "track_access": False, "entity_expansion": 0,
        "entity_weight": 0.0, "aggregation_session_cap": 0,
    }  # fmt: skip
    retrieval = RetrievalConfig(**{**settings, **cfg})
    return Memory(
        db_path, embedder="hashing", clock=clock, extractor=extractor, retrieval=retrieval
    )


def _add(mem: Memory, talk: list[tuple[str, list[tuple[str, str]]]] = TALK) -> None:
    for session, turns in talk:
        mem.add(
            [{"role": "user", "name": who, "content": text} for who, text in turns],
            user_id="u1",
            session_id=session,
        )


def _pool(mem: Memory, query: str = QUERY) -> dict[str, dict[str, float]]:
    """Every candidate of the usual one-per-signal pool: content → breakdown."""
    req = SearchRequest(
        query=query, scope=Scope("u1", kinds=("episodic",)), limit=1000, threshold=None,
        mode="hybrid", now=mem.now(), lifecycle=mem.lifecycle, track=False, pool=1,
    )  # fmt: skip
    return {h.memory.content: h.scores for h in mem._searcher.search(req)}


def test_entity_expansion_brings_every_turn_of_the_entity_and_predicate(
    db_path: Any, clock: FakeClock
) -> None:
    with _memory(db_path, clock) as mem:
        _add(mem)
        assert not set(_pool(mem)) >= PASTIMES
    with _memory(db_path, clock, entity_expansion=10) as mem:
        pool = _pool(mem)
        assert set(pool) >= PASTIMES
        assert all(pool[t]["entity"] == 1.0 for t in PASTIMES)
        assert all(s["entity"] == 0.0 for t, s in pool.items() if t not in PASTIMES)


def test_entity_expansion_respects_its_limit(db_path: Any, clock: FakeClock) -> None:
    with _memory(db_path, clock) as mem:
        _add(mem)
        before = set(_pool(mem))
    with _memory(db_path, clock, entity_expansion=1) as mem:
        assert len(set(_pool(mem)) - before) == 1


def test_the_pivot_pass_finds_the_turns_near_the_first_hits(db_path: Any, clock: FakeClock) -> None:
    query = "Melanie, what are you doing?"
    with _memory(db_path, clock, extractor=None) as mem:
        _add(mem)
        before = set(_pool(mem, query))
    with _memory(db_path, clock, extractor=None, pivot_turns=3) as mem:
        pool = _pool(mem, query)
        assert len(set(pool) - before) >= 1
        assert all(0.0 <= s["pivot"] <= 1.0 for s in pool.values())


def test_memory_chains_bring_the_turn_a_hit_replies_to(db_path: Any, clock: FakeClock) -> None:
    query = "Who loves camping with kids?"
    asked = "What were you doing all day, Melanie?"
    with _memory(db_path, clock, extractor=None) as mem:
        _add(mem)
        assert asked not in _pool(mem, query)
    with _memory(db_path, clock, extractor=None, chain_turns=1) as mem:
        assert asked in _pool(mem, query)


def test_session_cap_spreads_the_top_k_across_sessions(db_path: Any, clock: FakeClock) -> None:
    talk = [
        ("s1", [("Melanie", "I went to a pottery class and made a pottery bowl"),
                ("Melanie", "The pottery class made me love pottery bowls")]),
        ("s2", [("Melanie", "I bought clay for a pottery class")]),
    ]  # fmt: skip
    query = "Melanie pottery class bowl"
    with _memory(db_path, clock, extractor=None, candidates=3) as mem:
        _add(mem, talk)
        hits = mem.search(query, user_id="u1", limit=2)
        assert [h.memory.session_id for h in hits] == ["s1", "s1"]
    with _memory(db_path, clock, extractor=None, candidates=3, session_cap=1) as mem:
        hits = mem.search(query, user_id="u1", limit=2)
        assert [h.memory.session_id for h in hits] == ["s1", "s2"]
    with _memory(db_path, clock, extractor=None, candidates=3, mmr_lambda=0.5) as mem:
        hits = mem.search(query, user_id="u1", limit=2)
        assert [h.memory.session_id for h in hits] == ["s1", "s2"]


# -- the pure functions --------------------------------------------------------------


def test_diversify_is_mmr_over_session_identity() -> None:
    scores = np.array([0.9, 0.85, 0.8, 0.5])
    sessions = [0, 0, 1, -1]
    assert diversify(scores, sessions, 3).tolist() == [0, 1, 2, 3]
    # λ = 0.9: 0.9·0.85 − 0.1 < 0.9·0.8, so session 1's turn comes second.
    assert diversify(scores, sessions, 3, mmr_lambda=0.9).tolist() == [0, 2, 1, 3]
    # λ = 0.99: the penalty is too small to pass over a 0.05 better turn.
    assert diversify(scores, sessions, 3, mmr_lambda=0.99).tolist() == [0, 1, 2, 3]
    # A cap of 1: session 0's second turn waits for the turn outside any session too.
    assert diversify(scores, sessions, 3, session_cap=1).tolist() == [0, 2, 3, 1]
    # When every left candidate's session is full, the best of them still comes.
    assert diversify(np.array([0.9, 0.8]), [0, 0], 2, session_cap=1).tolist() == [0, 1]


def test_named_entities_match_whole_words() -> None:
    names = [("melanie", "e1"), ("ann", "e2"), ("mel", "e3")]
    assert named_entities("What does Melanie like?", names) == ["e1"]
    assert named_entities("annual report", names) == []


def _item(text: str, score: float, session: str | None) -> ContextItem:
    return ContextItem(text=text, score=score, session_id=session, tokens=10)


def test_session_priority_discounts_later_turns_of_a_session() -> None:
    a1, a2, b1 = _item("a1", 0.9, "a"), _item("a2", 0.85, "a"), _item("b1", 0.6, "b")
    none = _item("n", 0.5, None)
    prio = session_priority([a1, a2, b1, none], 0.5)
    assert prio[id(a1)] == 0.9 and prio[id(a2)] == pytest.approx(0.425)
    assert prio[id(b1)] == 0.6 and prio[id(none)] == 0.5
    assert session_priority([a1, a2], 0.0) == {id(a1): 0.9, id(a2): 0.85}


def test_above_floor_drops_what_is_far_below_the_best() -> None:
    items = [_item("a", 0.8, "s"), _item("b", 0.3, "s")]
    assert [i.text for i in above_floor(items, 0.5)] == ["a"]
    assert above_floor(items, 0.0) == items


def test_the_packer_spreads_its_budget_across_sessions(db_path: Any, clock: FakeClock) -> None:
    talk = [
        ("s1", [("Melanie", t) for t in (
            "The pottery bowls came out of the kiln with a blue glaze",
            "My teacher says pottery bowls need a thin glaze",
            "I glazed three pottery bowls on Monday evening",
            "Pottery glaze on bowls cracks when it cools too fast")]),
        ("s2", [("Melanie", "Camping trip note: my pottery bowls came along too")]),
    ]  # fmt: skip
    with _memory(db_path, clock, extractor=None, candidates=50) as mem:
        _add(mem, talk)
        kw: dict[str, Any] = {"user_id": "u1", "budget_tokens": 50, "sections": ["episodes"]}

        def sessions(**extra: Any) -> set[str | None]:
            ctx = build_context(mem, "Melanie pottery bowls glaze", **kw, **extra)
            return {i.session_id for s in ctx.sections for i in s.items}

        assert sessions() == {"s1"}
        assert sessions(session_spread=0.5) == {"s1", "s2"}
        # s2's turn scores about 0.6 of the best: under a 0.9 floor it is left out.
        assert sessions(session_spread=0.5, episode_floor=0.9) == {"s1"}
        with pytest.raises(ValidationError, match="session_spread"):
            build_context(mem, "x", user_id="u1", session_spread=1.0)


def test_aggregation_shaped_questions() -> None:
    for q in ("What activities does Melanie partake in?", "Where has Melanie camped?",
              "How many times did Caroline go to the beach?", "What books has Melanie read?"):  # fmt: skip
        assert aggregation_shaped(q), q
    for q in ("When did Melanie paint a sunrise?", "What is Caroline's identity?"):
        assert not aggregation_shaped(q), q
    cfg = RetrievalConfig(session_cap=0, aggregation_session_cap=4)
    assert session_cap_for("Where has Melanie camped?", cfg) == 4
    assert session_cap_for("What is Caroline's identity?", cfg) == 0


def test_the_aggregation_cap_spreads_only_aggregation_questions(
    db_path: Any, clock: FakeClock
) -> None:
    talk = [
        ("s1", [("Melanie", "I went to a pottery class and made a pottery bowl"),
                ("Melanie", "The pottery class made me love pottery bowls")]),
        ("s2", [("Melanie", "I bought clay for a pottery class")]),
    ]  # fmt: skip
    with _memory(db_path, clock, extractor=None, candidates=3, aggregation_session_cap=1) as mem:
        _add(mem, talk)
        plain = mem.search("Melanie pottery class bowl", user_id="u1", limit=2)
        assert [h.memory.session_id for h in plain] == ["s1", "s1"]
        listed = mem.search("What pottery things has Melanie made in class?", user_id="u1", limit=2)
        assert [h.memory.session_id for h in listed] == ["s1", "s2"]


def test_bench_tune_ranks_with_the_session_cap_as_the_searcher_does() -> None:
    from bench.tune import Collected, evaluate
    from mnemolayer.retrieval.structure import FEATURES

    data = Collected(
        base=np.array([[0.9, 0.8, 0.7]]), features=np.zeros((1, 3, len(FEATURES))),
        factor=np.ones((1, 3)), gold=np.array([[False, False, True]]),
        valid=np.ones((1, 3), dtype=bool), n_gold=np.array([1.0]),
        conversation=np.array(["c"]), category=np.array([1]), keys=[("c", 0)],
        session=np.array([[0, 0, 1]]),
    )  # fmt: skip
    assert evaluate(data, {}, ks=(1, 2)).tolist() == [[0.0], [0.0]]
    assert evaluate(data, {}, ks=(1, 2), session_cap=1).tolist() == [[0.0], [1.0]]
