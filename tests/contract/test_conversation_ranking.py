"""Recall's conversation features (mnemolayer.retrieval.structure): each one, on a small
hand-made conversation, flips the order of two turns; through the public API on both
engines, and on the pure feature function."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.retrieval.conversation import ConversationIndex, Corpus
from mnemolayer.retrieval.structure import FEATURES, conversation_features, lift, named_speakers
from mnemolayer.text.stem import stem_word, stemmed_terms

#: Every conversation feature and the session widening off: today's ranking.
OFF: dict[str, Any] = {
    "session_weight": 0.0, "reply_weight": 0.0, "speaker_weight": 0.0,
    "question_penalty": 0.0, "window_keyword_weight": 0.0, "session_keyword_weight": 0.0,
    "time_word_weight": 0.0, "session_turns": 0, "entity_expansion": 0, "entity_weight": 0.0,
    "aggregation_session_cap": 0,
}  # fmt: skip


def _memory(db_path: Any, clock: FakeClock, **weights: Any) -> Memory:
    cfg = RetrievalConfig(**{**OFF, **weights}, track_access=False)
    return Memory(db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg)


@pytest.fixture
def talk() -> list[tuple[str, list[tuple[str, str]]]]:
    """Two sessions between Caroline and Melanie."""
    return [
        ("s1", [
            ("Caroline", "I went hiking at the lake yesterday"),
            ("Melanie", "I went hiking at the lake yesterday with my kids and my dog, then we "
             "had a long picnic by the old pier near the town"),
        ]),
        ("s2", [
            ("Caroline", "Did you finish anything in your pottery class?"),
            ("Melanie", "Yes, a bowl with blue glaze"),
            ("Caroline", "I bought a blue bowl at the market"),
        ]),
    ]  # fmt: skip


def _add(mem: Memory, talk: list[tuple[str, list[tuple[str, str]]]]) -> None:
    for session, turns in talk:
        mem.add(
            [{"role": "user", "name": who, "content": text} for who, text in turns],
            user_id="u1",
            session_id=session,
        )


def _order(mem: Memory, query: str, a: str, b: str) -> list[str]:
    hits = [h.memory.content for h in mem.search(query, user_id="u1", limit=20)]
    return [t for t in hits if t in (a, b)]


def test_the_named_speaker_lifts_their_turn(db_path: Any, clock: FakeClock, talk: list) -> None:
    caroline, melanie = talk[0][1][0][1], talk[0][1][1][1]
    query = "Where did Melanie go hiking at the lake?"
    with _memory(db_path, clock) as mem:
        _add(mem, talk)
        assert _order(mem, query, caroline, melanie) == [caroline, melanie]
    with _memory(db_path, clock, speaker_weight=0.5) as mem:
        assert _order(mem, query, caroline, melanie) == [melanie, caroline]
        hit = mem.search(query, user_id="u1", limit=1)[0]
        assert hit.scores["speaker"] == 1.0


def test_a_reply_rises_with_the_question_it_answers(
    db_path: Any, clock: FakeClock, talk: list
) -> None:
    reply, asked = "Yes, a bowl with blue glaze", talk[1][1][0][1]
    query = "What did Melanie make in her pottery class?"
    with _memory(db_path, clock) as mem:
        _add(mem, talk)
        assert _order(mem, query, reply, asked) == [asked, reply]
    with _memory(db_path, clock, reply_weight=1.0) as mem:
        assert _order(mem, query, reply, asked) == [reply, asked]


def test_features_are_off_without_sessions(db_path: Any, clock: FakeClock) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        mem.add(["I went hiking at the lake", "I like blue bowls"], user_id="u1")
        hit = mem.search("hiking", user_id="u1", limit=1)[0]
        assert "session" not in hit.scores and hit.memory.content == "I went hiking at the lake"


# -- the feature function on a hand-built index ------------------------------------


def _index(sessions: list[list[tuple[str, str]]]) -> ConversationIndex:
    idx = ConversationIndex()
    rid = 0
    for number, turns in enumerate(sessions):
        ids = []
        for who, text in turns:
            rid += 1
            ids.append(rid)
            idx.terms[rid], idx.session[rid], idx.speaker[rid] = stemmed_terms(text), number, who
            if text.endswith("?"):
                idx.asks.add(rid)
        idx.turns.append(ids)
        idx.sessions.add([t for r in ids for t in idx.terms[r]])
        for i, r in enumerate(ids):
            if i:
                idx.previous[r] = ids[i - 1]
            idx.window[r] = idx.windows.add(
                [t for n in ids[max(i - 1, 0) : i + 2] for t in idx.terms[n]]
            )
    idx.windows.close()
    idx.sessions.close()
    idx.speakers = frozenset(idx.speaker.values())
    return idx


IDX = [
    [("caroline", "What are you painting?"), ("melanie", "A sunset over the lake"),
     ("caroline", "Lovely")],
    [("melanie", "We hiked up the mountain last week"), ("caroline", "Hikes are fun")],
]  # fmt: skip


def test_session_prior_is_the_best_relevance_of_the_session() -> None:
    f = conversation_features(
        "paint", [1, 2, 3, 4, 5], np.array([0.9, 0.1, 0.2, 0.5, 0.0]), _index(IDX)
    )
    assert f["session"].tolist() == [0.9, 0.9, 0.9, 0.5, 0.5]


def test_reply_takes_the_relevance_of_the_question_before_it() -> None:
    f = conversation_features("paint", [1, 2, 3], np.array([0.8, 0.1, 0.2]), _index(IDX))
    assert f["reply"].tolist() == [0.0, 0.8, 0.0]
    assert f["question"].tolist() == [1.0, 0.0, 0.0]


def test_speaker_counts_only_when_one_speaker_is_named() -> None:
    idx = _index(IDX)
    one = conversation_features("What does Melanie paint?", [1, 2], np.zeros(2), idx)
    assert one["speaker"].tolist() == [0.0, 1.0]
    both = conversation_features("Do Melanie and Caroline paint?", [1, 2], np.zeros(2), idx)
    assert both["speaker"].tolist() == [0.0, 0.0]
    assert named_speakers("Melanies cat", idx.speakers) == set()


def test_stemmed_window_keyword_matches_other_word_forms() -> None:
    assert stem_word("hiking") == stem_word("hiked") == "hike"
    f = conversation_features("Who went hiking?", [1, 4, 5], np.zeros(3), _index(IDX))
    # "hiked" (turn 4) and "Hikes" (turn 5) share a window; turn 1 says nothing of it.
    assert f["window_keyword"][0] == 0.0 and f["window_keyword"][1:].min() > 0.0
    assert f["window_keyword"].max() == 1.0
    assert f["session_keyword"].tolist() == [0.0, 1.0, 1.0]


def test_time_word_only_for_when_questions() -> None:
    idx = _index(IDX)
    when = conversation_features("When did Melanie hike?", [4, 5], np.zeros(2), idx)
    assert when["time_word"].tolist() == [1.0, 0.0]
    what = conversation_features("What did Melanie hike?", [4, 5], np.zeros(2), idx)
    assert what["time_word"].tolist() == [0.0, 0.0]


def test_lift_rescales_and_flips_an_order() -> None:
    cfg = RetrievalConfig(**{**OFF, "session_weight": 1.0})
    rel = np.array([0.5, 0.45])
    feats = {name: np.zeros(2) for name in FEATURES}
    feats["session"] = np.array([0.5, 0.9])
    out = lift(cfg, rel, feats)
    assert out[1] > out[0] and np.allclose(out, (rel + feats["session"]) / 2.0)
    assert np.allclose(lift(RetrievalConfig(**OFF), rel, feats), rel)


def test_corpus_keeps_document_frequencies() -> None:
    c = Corpus()
    c.add(["a", "a", "b"])
    c.add(["b"])
    c.close()
    assert c.doc_freq == {"a": 1, "b": 2} and c.avg_len == 2.0 and c.docs[0]["a"] == 2


def test_a_memory_outside_any_session_is_not_scaled_down(
    db_path: Any, clock: FakeClock, talk: list
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as mem:
        _add(mem, talk)
        alone = mem.add("zanzibar spice market visit", user_id="u1")[0]
        hit = mem.search("zanzibar spice market visit", user_id="u1", limit=1)[0]
        assert hit.memory.id == alone.id and hit.scores["in_session"] == 0.0
        assert hit.scores["relevance"] == hit.scores["relevance_base"]
