"""The deterministic stand-ins mnemolayer ships for tests (mnemolayer.testing)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from mnemolayer import Memory
from mnemolayer.embed import HashingEmbedder as EmbedHashing
from mnemolayer.extract.llm import LLMExtractor
from mnemolayer.extract.llm_summary import LLMSummarizer
from mnemolayer.lifecycle.llm_importance import LLMImportance
from mnemolayer.protocols import ChatModel, Clock, Deadline, Embedder
from mnemolayer.testing import CountingEmbedder, FakeClock, HashingEmbedder, ScriptedChatModel
from mnemolayer.text.tokens import get_token_counter


def test_the_fakes_are_not_collected_as_tests() -> None:
    for cls in (CountingEmbedder, FakeClock, ScriptedChatModel):
        assert cls.__test__ is False  # type: ignore[attr-defined]


def test_hashing_embedder_is_the_embed_one() -> None:
    assert HashingEmbedder is EmbedHashing


def test_fake_clock_stands_still_until_moved() -> None:
    clock = FakeClock(datetime(2024, 5, 8, 12, tzinfo=UTC))
    assert isinstance(clock, Clock)
    assert clock() == clock() == datetime(2024, 5, 8, 12, tzinfo=UTC)
    assert clock.advance(days=1, hours=2) == datetime(2024, 5, 9, 14, tzinfo=UTC)


def test_counting_embedder_records_calls_and_looks_like_its_inner_model(tmp_path) -> None:
    counting = CountingEmbedder()
    assert isinstance(counting, Embedder)
    assert (counting.name, counting.dim) == (HashingEmbedder().name, HashingEmbedder().dim)
    with Memory(tmp_path / "m.db", embedder=counting, clock=FakeClock()) as mem:
        mem.add("I moved to Porto in May.", user_id="u1")
        mem.search("where do I live?", user_id="u1")
    assert counting.kinds() == ["document", "query"]
    assert counting.calls[0][1][0].endswith("I moved to Porto in May.")  # dated for retrieval


def test_scripted_chat_model_answers_in_order_and_records_requests() -> None:
    chat = ScriptedChatModel(["one", lambda messages: f"{len(messages)} messages"])
    assert isinstance(chat, ChatModel)
    deadline = Deadline.after(5)
    assert chat.complete([{"role": "user", "content": "hi"}], deadline) == "one"
    assert chat.complete([{"role": "user", "content": "hi"}], deadline, max_tokens=7) == (
        "1 messages"
    )
    assert [r["max_tokens"] for r in chat.requests] == [None, 7]
    with pytest.raises(LookupError, match="no scripted response left"):
        chat.complete([], deadline)
    chat.push(TimeoutError)
    with pytest.raises(TimeoutError):
        chat.complete([], deadline)
    with pytest.raises(TimeoutError):  # a passed deadline, whatever the script says
        chat.complete([], Deadline.after(-1))
    chat.close()
    assert chat.closed


def test_the_llm_importance_estimator_runs_on_a_scripted_model() -> None:
    chat = ScriptedChatModel([json.dumps({"importance": 0.8, "reason": "a plan"}), TimeoutError()])
    estimator = LLMImportance(chat.settings, chat=chat)
    estimate = estimator.estimate("I fly to Lisbon on Friday")
    assert estimate.value == 0.8 and estimate.reasons == ["llm:scripted: a plan"]
    assert estimator.last_source == "llm"
    estimator.estimate("ok")  # the model times out: the rules answer
    assert estimator.last_source == "fallback" and "TimeoutError" in (estimator.last_error or "")
    assert len(chat.requests) == 2


def test_the_llm_summarizer_runs_on_a_scripted_model() -> None:
    chat = ScriptedChatModel(["The user moved to Porto."])
    summarizer = LLMSummarizer(chat.settings, chat=chat)
    text = summarizer.summarize(["user: I moved to Porto."], 50, get_token_counter())
    assert text == "The user moved to Porto." and summarizer.last_source == "llm"


def test_the_llm_extractor_feeds_memory_from_a_scripted_model(tmp_path) -> None:
    answer = {
        "facts": [{"subject": "user", "predicate": "lives_in", "object": "Porto"}],
        "entities": [],
        "dates": [],
    }
    chat = ScriptedChatModel([json.dumps(answer)])
    extractor = LLMExtractor(chat.settings, chat=chat)
    with Memory(
        tmp_path / "m.db", embedder="hashing", clock=FakeClock(), extractor=extractor
    ) as mem:
        mem.add("I live in Porto now", user_id="u1")
        facts = mem.facts(user_id="u1")
    assert [(f.predicate, f.object) for f in facts] == [("lives_in", "Porto")]
    assert extractor.last_source == "llm" and chat.remaining == 0
