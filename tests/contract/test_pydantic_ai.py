"""The Pydantic AI adapters (src/mnemolayer/integrations/pydantic_ai.py) against the real
``pydantic-ai-slim`` from PyPI, with its own offline models (``TestModel``, and a
scripted ``FunctionModel``), on both engines: the memory toolset's ``recall`` answers
with the stored memory, ``remember`` and ``forget`` write and delete for the bound user
only; the history processor puts the memories recalled for the latest prompt beside it
(once, across a run's tool calls) and drops the oldest whole turns past its budget,
keeping the system prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from mnemolayer import Memory, ValidationError
from mnemolayer.integrations.pydantic_ai import (
    RECALL_PREFIX,
    MemoryHistoryProcessor,
    memory_toolset,
)


def _with_processor(model: Any, processor: MemoryHistoryProcessor, **kwargs: Any) -> Agent[Any]:
    """An agent running ``processor`` before each request: a ``ProcessHistory``
    capability in Pydantic AI 2, ``history_processors`` before it."""
    try:
        from pydantic_ai.capabilities import ProcessHistory
    except ImportError:  # pydantic-ai 1.x
        return Agent(model, history_processors=[processor], **kwargs)
    return Agent(model, capabilities=[ProcessHistory(processor)], **kwargs)


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def _system(messages: list[ModelMessage]) -> list[str]:
    return [p.content for m in messages for p in m.parts if isinstance(p, SystemPromptPart)]


def test_the_test_model_calls_recall_and_gets_the_memory(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        mem.add("I'm allergic to peanuts.", user_id="ana")
        mem.add("Bob is allergic to cats.", user_id="bob")
        agent = Agent(
            TestModel(call_tools=["recall"]), toolsets=[memory_toolset(mem, user_id="ana")]
        )
        result = agent.run_sync("What am I allergic to?")
        [ret] = _returns(result.all_messages())
        assert ret.tool_name == "recall" and "I'm allergic to peanuts." in ret.content
        assert "Bob" not in ret.content  # the bound user's memories only


def test_a_scripted_model_recalls_then_answers(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        [stored] = mem.add("My sister Maria lives in Rome.", user_id="ana")
        seen: list[list[ModelMessage]] = []

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            if len(seen) == 1:
                assert {t.name for t in info.function_tools} == {"remember", "recall", "forget"}
                return ModelResponse(
                    parts=[ToolCallPart("recall", {"query": "sister Maria", "k": 2})]
                )
            return ModelResponse(parts=[TextPart("Rome: " + _returns(messages)[-1].content)])

        agent = Agent(FunctionModel(script), toolsets=[memory_toolset(mem, user_id="ana")])
        result = agent.run_sync("Where does my sister live?")
        assert result.output.startswith("Rome: ")
        assert f"[{stored.id}] episodic" in result.output
        assert "My sister Maria lives in Rome." in result.output


def test_remember_and_forget_write_for_the_bound_user(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        calls = iter(
            [
                ToolCallPart("remember", {"text": "Ana's cat is called Miso."}),
                ToolCallPart("forget", {"memory_id": "0" * 32}),  # no such memory: a retry
                TextPart("Done."),
            ]
        )

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[next(calls)])

        agent = Agent(FunctionModel(script), toolsets=[memory_toolset(mem, user_id="ana")])
        result = agent.run_sync("Remember my cat's name, Miso.")
        [record] = mem.search("cat Miso", user_id="ana", limit=1)
        assert record.memory.content == "Ana's cat is called Miso."
        assert record.memory.source == "agent"  # written by the model: untrusted
        assert mem.search("cat Miso", user_id="bob", limit=1) == []
        # the NotFoundError goes back to the model as a retry (a ToolReturnPart whose
        # outcome is "retried" in Pydantic AI 2, a RetryPromptPart before)
        [retry] = [
            p
            for m in result.all_messages()
            for p in m.parts
            if getattr(p, "tool_name", None) == "forget" and p.part_kind != "tool-call"
        ]
        assert f"memory_id: no memory '{'0' * 32}'" in str(retry.content)
        assert getattr(retry, "outcome", "retried") == "retried"

        forget = iter(
            [ToolCallPart("forget", {"memory_id": record.memory.id}), TextPart("Forgotten.")]
        )
        agent = Agent(
            FunctionModel(lambda m, i: ModelResponse(parts=[next(forget)])),
            toolsets=[memory_toolset(mem, user_id="ana")],
        )
        agent.run_sync("Forget my cat.")
        assert mem.search("cat Miso", user_id="ana", limit=1) == []


def test_the_processor_recalls_once_for_the_latest_prompt(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        mem.add("I'm allergic to peanuts.", user_id="ana")
        seen: list[list[ModelMessage]] = []

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            if len(seen) == 1:
                return ModelResponse(parts=[ToolCallPart("recall", {"query": "peanuts"})])
            return ModelResponse(parts=[TextPart("No peanuts, then.")])

        processor = MemoryHistoryProcessor(mem, user_id="ana", recall_k=3)
        agent = _with_processor(
            FunctionModel(script),
            processor,
            system_prompt="You plan dinners.",
            toolsets=[memory_toolset(mem, user_id="ana")],
        )
        agent.run_sync("Plan a dinner with satay for me.")
        for messages in seen:  # both requests of the run
            system = _system(messages)
            assert system[0] == "You plan dinners."
            [recalled] = [s for s in system if s.startswith(RECALL_PREFIX)]
            assert "I'm allergic to peanuts." in recalled
        first = seen[0][0]
        assert isinstance(first, ModelRequest)
        # the recalled part sits just before the user's prompt
        assert isinstance(first.parts[-2], SystemPromptPart) and isinstance(
            first.parts[-1], UserPromptPart
        )


def test_the_processor_keeps_the_history_under_its_budget(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        seen: list[list[ModelMessage]] = []

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            seen.append(list(messages))
            return ModelResponse(parts=[TextPart(f"Reply {len(seen)}: " + "words " * 30)])

        processor = MemoryHistoryProcessor(mem, user_id="ana", budget_tokens=200, recall_k=0)
        agent = _with_processor(FunctionModel(script), processor, system_prompt="Be brief.")
        history: list[ModelMessage] = []
        for i in range(6):
            history = agent.run_sync(
                f"Turn {i}: " + "talk " * 20, message_history=history
            ).all_messages()
        last = seen[-1]
        assert sum(processor.cost(m) for m in last) <= 200
        assert _system(last) == ["Be brief."]  # the system prompt was carried over
        prompts = [p.content for m in last for p in m.parts if isinstance(p, UserPromptPart)]
        assert prompts[-1].startswith("Turn 5:") and not any(
            str(p).startswith("Turn 0:") for p in prompts
        )  # the oldest turns were dropped, whole
        assert isinstance(last[0], ModelRequest) and len(seen[0]) == 1


def test_the_latest_turn_stays_even_over_budget(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        processor = MemoryHistoryProcessor(mem, user_id="ana", budget_tokens=64, recall_k=0)
        old = ModelRequest(parts=[UserPromptPart("hello")])
        reply = ModelResponse(parts=[TextPart("hi")])
        big = ModelRequest(parts=[UserPromptPart("long " * 200)])
        assert processor([old, reply, big]) == [big]


def test_bad_arguments_are_refused_by_name(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        for kwargs, field in [
            ({"user_id": " "}, "user_id"),
            ({"user_id": "ana", "k": 0}, "k"),
            ({"user_id": "ana", "source": "rumour"}, "source"),
            ({"user_id": "ana", "forget": "yes"}, "forget"),
        ]:
            with pytest.raises(ValidationError, match=field):
                memory_toolset(mem, **kwargs)
        for kwargs, field in [
            ({"budget_tokens": 10}, "budget_tokens"),
            ({"recall_k": 51}, "recall_k"),
            ({"recall_k": True}, "recall_k"),
            ({"threshold": 1.5}, "threshold"),
        ]:
            with pytest.raises(ValidationError, match=field):
                MemoryHistoryProcessor(mem, user_id="ana", **kwargs)
        assert set(memory_toolset(mem, user_id="ana", forget=False).tools) == {"remember", "recall"}
