"""Recall lifts the day or conversation a query names (mnemolayer.retrieval.named_time):
through the public API on both engines, English and Chinese, and on the pure functions;
and a memory holding a whole exchange is not penalised as a question
(mnemolayer.retrieval.structure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.models import Message
from mnemolayer.retrieval.conversation import ConversationIndex
from mnemolayer.retrieval.named_time import first_session, lift_named, named_mask, named_turns
from mnemolayer.retrieval.structure import conversation_features
from mnemolayer.text.stem import stemmed_terms


def _day(y: int, m: int, d: int, second: int = 0) -> datetime:
    return datetime(y, m, d, 10, 0, tzinfo=UTC) + timedelta(seconds=second)


def _memory(db_path: Any, clock: FakeClock, **cfg: Any) -> Memory:
    retrieval = RetrievalConfig(track_access=False, **cfg)
    return Memory(db_path, embedder="hashing", clock=clock, extractor=None, retrieval=retrieval)


def _add(mem: Memory, sessions: list[tuple[str, datetime, list[str]]]) -> None:
    for session, when, texts in sessions:
        msgs = [
            Message(content=t, name="Lin", timestamp=when + timedelta(seconds=i))
            for i, t in enumerate(texts)
        ]
        mem.add(msgs, user_id="u1", session_id=session)


def _first(mem: Memory, query: str, a: str, b: str) -> str:
    hits = [h.memory.content for h in mem.search(query, user_id="u1", limit=20)]
    return next(t for t in hits if t in (a, b))


KITTEN, TOPIC = "I adopted a kitten named Miso", "What topic should we talk about today?"
EN_DAYS = [("d1", _day(2023, 4, 27), [KITTEN]), ("d2", _day(2023, 4, 28), [TOPIC])]


def test_the_day_a_question_names_ranks_first(db_path: Any, clock: FakeClock) -> None:
    query = "What topic did we talk about on April 27th?"
    with _memory(db_path, clock, named_time_weight=0.0) as mem:
        _add(mem, EN_DAYS)
        assert _first(mem, query, KITTEN, TOPIC) == TOPIC  # the words match the 28th
    with _memory(db_path, clock) as mem:
        assert _first(mem, query, KITTEN, TOPIC) == KITTEN
        hits = mem.search(query, user_id="u1", limit=2)
        assert [h.scores["named_time"] for h in hits] == [1.0, 0.0]


def test_a_day_with_no_memory_changes_nothing(db_path: Any, clock: FakeClock) -> None:
    query = "What topic did we talk about on June 3rd?"
    with _memory(db_path, clock, named_time_weight=0.0) as mem:
        _add(mem, EN_DAYS)
        before = [(h.memory.id, h.score) for h in mem.search(query, user_id="u1")]
    with _memory(db_path, clock) as mem:
        assert [(h.memory.id, h.score) for h in mem.search(query, user_id="u1")] == before


ZH_KITTEN, ZH_TOPIC = "我领养了一只小猫，叫米索", "今天我们聊什么话题？"


def test_a_chinese_day_ranks_first(db_path: Any, clock: FakeClock) -> None:
    query = "在4月27号我们聊了什么话题？"
    days = [("d1", _day(2023, 4, 27), [ZH_KITTEN]), ("d2", _day(2023, 4, 28), [ZH_TOPIC])]
    with _memory(db_path, clock, named_time_weight=0.0) as mem:
        _add(mem, days)
        assert _first(mem, query, ZH_KITTEN, ZH_TOPIC) == ZH_TOPIC
    with _memory(db_path, clock) as mem:
        assert _first(mem, query, ZH_KITTEN, ZH_TOPIC) == ZH_KITTEN


THANKS = "Thanks for the conversation, we talked about a lot today"


def test_the_first_conversation_is_the_earliest_session(db_path: Any, clock: FakeClock) -> None:
    # Session ids sort "s10" before "s2"; "s2" is the earlier conversation.
    sessions = [("s2", _day(2023, 4, 27), [KITTEN]), ("s10", _day(2023, 5, 2), [THANKS])]
    query = "Do you remember what we talked about during our first conversation?"
    with _memory(db_path, clock, named_time_weight=0.0) as mem:
        _add(mem, sessions)
        assert _first(mem, query, KITTEN, THANKS) == THANKS
    with _memory(db_path, clock) as mem:
        assert _first(mem, query, KITTEN, THANKS) == KITTEN
        zh = "你还记得我们第一次对话的时候，聊了什么话题吗？"
        assert mem.search(zh, user_id="u1", limit=1)[0].memory.content == KITTEN


# -- the pure functions ---------------------------------------------------------------


def _conv(sessions: list[list[tuple[int, datetime]]]) -> ConversationIndex:
    idx = ConversationIndex()
    for number, turns in enumerate(sessions):
        idx.turns.append([r for r, _ in turns])
        for r, when in turns:
            idx.session[r], idx.when[r] = number, when
    return idx


NOW = datetime(2025, 6, 1, tzinfo=UTC)


def test_a_day_without_its_year_is_the_latest_one_up_to_now() -> None:
    occurred = [_day(2023, 4, 27), _day(2024, 4, 27), _day(2024, 4, 28), _day(2026, 4, 27)]
    mask = named_mask("What did I say on April 27th?", [1, 2, 3, 4], occurred, None, NOW)
    assert mask is not None and mask.tolist() == [0.0, 1.0, 0.0, 0.0]
    exact = named_mask("on 27 April, 2023?", [1, 2, 3, 4], occurred, None, NOW)
    assert exact is not None and exact.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert named_mask("What did I say in April?", [1], occurred[:1], None, NOW) is None


def test_the_first_session_follows_time_not_numbers() -> None:
    conv = _conv([[(1, _day(2023, 5, 2)), (2, _day(2023, 5, 2, 1))], [(3, _day(2023, 4, 27))]])
    assert first_session(conv) == 1
    assert named_turns("what did we say in our first chat?", conv, NOW) == [3]
    assert named_turns("what did we say on May 2nd?", conv, NOW) == [1, 2]
    assert named_turns("what did we say?", conv, NOW) == []
    mask = named_mask("我们第一次聊天聊了什么？", [1, 2, 3], [_day(2023, 5, 2)] * 3, conv, NOW)
    assert mask is not None and mask.tolist() == [0.0, 0.0, 1.0]


def test_the_lift_puts_every_named_candidate_first_and_only_when_one_is_named() -> None:
    rel = np.array([0.9, 0.2, 0.4])
    out = lift_named(rel, np.array([0.0, 1.0, 1.0]), 1.0)
    assert np.allclose(out, [0.45, 0.6, 0.7]) and out[1:].min() > out[0]
    assert lift_named(rel, np.zeros(3), 1.0) is rel
    assert lift_named(rel, np.ones(3), 0.0) is rel


def test_an_exchange_ending_with_a_question_is_not_penalised() -> None:
    texts = {
        1: "Lin: I am planning a trip to New Zealand.\nAI: Will you go skiing?",
        2: "Will you go skiing?",
    }
    idx = ConversationIndex(turns=[[1, 2]])
    for r, text in texts.items():
        idx.session[r], idx.terms[r] = 0, stemmed_terms(text)
        idx.asks.add(r)
    idx.exchanges.add(1)
    f = conversation_features("trip", [1, 2], np.zeros(2), idx)
    assert f["question"].tolist() == [0.0, 1.0]
