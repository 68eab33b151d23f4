"""The OpenAI Agents SDK adapters (src/mnemolayer/integrations/openai_agents.py) against
the real ``openai-agents`` from PyPI, with a scripted ``Model`` (no network, tracing off),
on both engines: the session's items come back exactly as added and resume in a new
process's ``Memory``; the second of two runs sends the first run's items to the model; a
tool call round trip (the call and its output) is stored and returned as the SDK wrote
it; items that overflow the window are summarised and archived, and the recall tool
finds them."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, Usage, set_tracing_disabled
from agents.items import ModelResponse, TResponseOutputItem
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from mnemolayer import Memory, ValidationError
from mnemolayer.integrations.openai_agents import (
    MnemolayerSession,
    item_role,
    item_text,
    recall_tool,
)

set_tracing_disabled(True)  # the SDK would export traces to OpenAI


def _say(text: str, item_id: str = "msg") -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
    )


class ScriptedModel(Model):
    """Answers each call with the next scripted output item; records every input."""

    def __init__(self, outputs: list[TResponseOutputItem]) -> None:
        self.outputs = list(outputs)
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        self.inputs.append(copy.deepcopy(input if isinstance(input, list) else [input]))
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        raise NotImplementedError("the tests run without streaming")


def _items(session: MnemolayerSession, limit: int | None = None) -> list[Any]:
    return asyncio.run(session.get_items(limit))


def test_two_runs_share_the_session_and_it_resumes(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        model = ScriptedModel([_say("Nice to meet you, Ana.", "m1"), _say("In Porto.", "m2")])
        agent = Agent(name="assistant", instructions="Be brief.", model=model)
        session = MnemolayerSession(mem, session_id="s1", user_id="ana")
        assert Runner.run_sync(
            agent, "I'm Ana, I live in Porto.", session=session
        ).final_output == ("Nice to meet you, Ana.")
        Runner.run_sync(agent, "Where do I live?", session=session)
        first_run = [
            {"content": "I'm Ana, I live in Porto.", "role": "user"},
            _say("Nice to meet you, Ana.", "m1").model_dump(exclude_unset=True),
        ]
        assert model.inputs[1][:2] == first_run  # the second run saw the first
        assert model.inputs[1][2] == {"content": "Where do I live?", "role": "user"}
    with Memory(db_path, embedder="hashing") as again:  # as a new process would
        resumed = MnemolayerSession(again, session_id="s1", user_id="ana")
        items = _items(resumed)
        assert items[:2] == first_run and len(items) == 4
        assert items[3]["content"][0]["text"] == "In Porto."
        assert _items(resumed, limit=1) == items[3:]
        assert asyncio.run(resumed.pop_item()) == items[3]
        assert _items(resumed) == items[:3]


def test_a_tool_call_round_trip_is_stored_exactly(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        mem.add("My bicycle is a green Gazelle from 1998.", user_id="ana")
        call = ResponseFunctionToolCall(
            id="fc_1",
            call_id="call_1",
            type="function_call",
            name="recall_memory",
            arguments='{"query":"bicycle","k":2}',
        )
        model = ScriptedModel([call, _say("A green Gazelle.")])
        agent = Agent(name="assistant", model=model, tools=[recall_tool(mem, user_id="ana", k=3)])
        session = MnemolayerSession(mem, session_id="tools", user_id="ana")
        result = Runner.run_sync(agent, "What bicycle do I have?", session=session)
        assert result.final_output == "A green Gazelle."
        items = _items(session)
        assert [i.get("type", "message") for i in items] == [
            "message",
            "function_call",
            "function_call_output",
            "message",
        ]
        assert items[1] == call.model_dump(exclude_unset=True)
        assert items[2]["call_id"] == "call_1"
        assert "green Gazelle" in items[2]["output"]  # the tool's answer, from recall
        assert model.inputs[1][1:3] == items[1:3]  # what the model saw after the call
        # a new process gets the very dicts back
        assert _items(MnemolayerSession(mem, session_id="tools", user_id="ana")) == items


def test_overflowing_items_are_summarised_archived_and_recalled(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        session = MnemolayerSession(mem, session_id="long", user_id="ana", budget_tokens=300)
        first = {"role": "user", "content": "My bicycle is a green Gazelle from 1998."}
        asyncio.run(session.add_items([first]))
        for i in range(12):
            asyncio.run(
                session.add_items(
                    [
                        {"role": "user", "content": f"Filler {i} about the weather, nothing else."},
                        {"role": "assistant", "content": f"Noted, number {i}."},
                    ]
                )
            )
        items = _items(session)
        lead, *held = items
        assert lead["role"] == "system" and lead["content"].startswith("Summary of")
        assert "{" not in lead["content"]  # the summary reads the items' words, not JSON
        assert first not in held and session.window.tokens <= 300
        [top] = mem.search("green Gazelle bicycle", user_id="ana", limit=1)
        assert top.memory.content == first["content"]  # archived as its text
        assert top.memory.session_id == "long" and top.memory.metadata["agents_item_type"] == (
            "message"
        )
        asyncio.run(session.clear_session())
        assert _items(session) == []
        [last] = mem.search("Noted, number 11.", user_id="ana", limit=1, mode="keyword")
        assert last.memory.content == "Noted, number 11."  # the rest archived on clear


def test_an_orphaned_tool_output_is_left_out_of_the_history(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        session = MnemolayerSession(mem, session_id="orphans", user_id="ana", budget_tokens=400)
        # a large call and its short output: the call alone leaves the window first
        arguments = '{"q":"%s"}' % ("porto " * 120)
        call = {"type": "function_call", "call_id": "c9", "name": "lookup", "arguments": arguments}
        output = {"type": "function_call_output", "call_id": "c9", "output": "Porto"}
        asyncio.run(session.add_items([call, output]))
        assert _items(session) == [call, output]
        filler = {"role": "user", "content": "More words to fill the window. " * 5}
        for _ in range(5):
            asyncio.run(session.add_items([filler]))
        held = [session._item(m.role, m.content) for m in session.window.window()]
        assert call not in held and output in held  # the call was evicted, its output not
        items = _items(session)
        assert output not in items and items[1:] == [filler] * 5
        assert "called lookup" in items[0]["content"]  # the call is in the summary


def test_user_messages_are_recalled_in_a_later_session(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        monday = MnemolayerSession(mem, session_id="monday", user_id="ana")
        asyncio.run(monday.add_items([{"role": "user", "content": "I'm allergic to peanuts."}]))
        [hit] = mem.search("allergic peanuts", user_id="ana", limit=5)  # stored at once
        assert hit.memory.session_id == "monday" and hit.memory.source == "user"
        question = {"role": "user", "content": "What am I allergic to?"}
        call = ResponseFunctionToolCall(
            id="fc_1",
            call_id="call_1",
            type="function_call",
            name="recall_memory",
            arguments='{"query":"What am I allergic to?","k":3}',
        )
        tuesday = MnemolayerSession(mem, session_id="tuesday", user_id="ana")
        model = ScriptedModel([call, _say("Peanuts.")])
        tool = recall_tool(mem, user_id="ana", session=tuesday)
        agent = Agent(name="assistant", model=model, tools=[tool])
        Runner.run_sync(agent, question["content"], session=tuesday)
        output = model.inputs[1][-1]["output"]
        assert "I'm allergic to peanuts." in output  # Monday's, from long-term memory
        assert "What am I allergic to?" not in output  # in the window: left out
        # the first session's window was not touched, and nothing is stored twice
        assert _items(monday) == [{"role": "user", "content": "I'm allergic to peanuts."}]
        asyncio.run(monday.clear_session())
        assert len(mem.search("allergic peanuts", user_id="ana", limit=5, kinds=["episodic"])) == 2
        quiet = MnemolayerSession(mem, session_id="w", user_id="bo", store_user_messages=False)
        asyncio.run(quiet.add_items([{"role": "user", "content": "Only in the window."}]))
        assert mem.search("Only in the window", user_id="bo", limit=1) == []


def test_a_bad_k_from_the_model_comes_back_to_it(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        call = ResponseFunctionToolCall(
            id="fc_1",
            call_id="call_1",
            type="function_call",
            name="recall_memory",
            arguments='{"query":"anything","k":0}',
        )
        model = ScriptedModel([call, _say("Sorry.")])
        agent = Agent(name="assistant", model=model, tools=[recall_tool(mem, user_id="ana")])
        assert Runner.run_sync(agent, "Remind me.").final_output == "Sorry."
        output = model.inputs[1][-1]["output"]
        assert "k: must be between 1 and 50, got 0" in output


def test_item_text_and_roles() -> None:
    assert item_role({"role": "developer", "content": "x"}) == "system"
    assert item_role({"type": "function_call", "name": "f", "arguments": "{}"}) == "assistant"
    assert item_role({"type": "function_call_output", "call_id": "c", "output": "ok"}) == "tool"
    parts = {"role": "user", "content": [{"type": "input_text", "text": "Hola"}]}
    assert item_text(parts) == "Hola"
    assert item_text({"type": "function_call", "name": "f", "arguments": '{"a":1}'}) == (
        'called f({"a":1})'
    )
    assert item_text({"type": "reasoning", "summary": []}) == '{"type":"reasoning","summary":[]}'


def test_bad_input_is_refused_by_name(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        session = MnemolayerSession(mem, session_id="bad", user_id="ana", budget_tokens=100)
        with pytest.raises(ValidationError, match="items"):
            asyncio.run(session.add_items([{"role": "user", "content": "ok"}, "not a dict"]))  # type: ignore[list-item]
        with pytest.raises(ValidationError, match=r"items.*item 0 costs"):
            asyncio.run(session.add_items([{"role": "user", "content": "word " * 400}]))
        with pytest.raises(ValidationError, match=r"items.*JSON"):
            asyncio.run(session.add_items([{"role": "user", "content": object()}]))  # type: ignore[list-item]
        with pytest.raises(ValidationError, match="limit"):
            _items(session, limit=-1)
        assert _items(session) == [] and asyncio.run(session.pop_item()) is None
        with pytest.raises(ValidationError, match="session_id"):
            MnemolayerSession(mem, session_id=" ", user_id="ana")
        with pytest.raises(ValidationError, match="k"):
            recall_tool(mem, user_id="ana", k=0)
        with pytest.raises(ValidationError, match="user_id"):
            recall_tool(mem, user_id="")
        with pytest.raises(ValidationError, match="session"):
            recall_tool(mem, user_id="ana", session="s1")  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="store_user_messages"):
            MnemolayerSession(mem, session_id="s", user_id="ana", store_user_messages=1)  # type: ignore[arg-type]
