"""The LlamaIndex adapters (src/mnemolayer/integrations/llamaindex.py) against the real
``llama-index-core`` from PyPI, with its own mock LLMs (no network: its tokenizer and
NLTK data are bundled in the package), on both engines: the memory block puts recalled
long-term memory into the prompt of a chat engine and an agent, and stores what
LlamaIndex flushes from its queue; the chat store keeps ``ChatMemoryBuffer`` histories
in working-memory sessions that resume in a new process, summarise what overflows and
implement every ``BaseChatStore`` method."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import (
    MockFunctionCallingLLMWithChatMemoryOfLastCall,
    MockLLMWithChatMemoryOfLastCall,
)
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.memory import Memory as LlamaMemory

from mnemolayer import Memory, ValidationError
from mnemolayer.integrations.llamaindex import MnemolayerChatStore, MnemolayerMemoryBlock
from mnemolayer.layers.working.window import SUMMARY_PREFIX

# LlamaIndex's workflows (FunctionAgent) read deprecated pydantic attributes through
# inspect.getmembers when an agent is built; nothing of the adapter's.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect")


def _said(messages: Any) -> list[tuple[str, str]]:
    return [(str(m.role.value), m.content) for m in messages]


# -- the memory block ----------------------------------------------------------------------


def test_the_block_puts_recalled_memory_into_a_chat_engines_prompt(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        mem.add(["I live in Porto.", "I am allergic to peanuts."], user_id="ana")
        mem.add("I live in Oslo.", user_id="bob")
        memory = LlamaMemory.from_defaults(
            session_id="s1", memory_blocks=[MnemolayerMemoryBlock(mem, user_id="ana")]
        )
        llm = MockLLMWithChatMemoryOfLastCall(max_tokens=3)
        engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
        assert engine.chat("Where do I live?").response == "text text text"
        system, user = llm.last_chat_messages
        assert system.role == "system" and user.content == "Where do I live?"
        assert "<mnemolayer>" in system.content and "Porto" in system.content
        assert "Oslo" not in system.content  # one user's memories only


def test_an_agent_sees_the_block_and_its_flushed_turns_are_recalled_later(
    db_path: Path,
) -> None:
    replies = iter(["Noted, Ana.", "Noted again.", "Still noted.", "You ride a Gazelle."])
    llm = MockFunctionCallingLLMWithChatMemoryOfLastCall(
        response_generator=lambda messages, **kw: ChatMessage(
            role="assistant", content=next(replies)
        )
    )
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="Be brief.")

    async def talk(mem: Memory, session: str, *turns: str) -> LlamaMemory:
        memory = LlamaMemory.from_defaults(
            session_id=session,
            token_limit=60,
            token_flush_size=20,
            memory_blocks=[MnemolayerMemoryBlock(mem, user_id="ana")],
        )
        for turn in turns:
            await agent.run(turn, memory=memory)
        return memory

    with Memory(db_path, embedder="hashing") as mem:
        asyncio.run(
            talk(
                mem,
                "s1",
                "My bicycle is a green Gazelle from 1998, and I ride it to work every day.",
                "Filler about the weather, which is grey and rainy again this morning.",
                "More filler about the weather, the wind and the clouds over the harbour.",
            )
        )
        flushed = mem.list(user_id="ana", kinds=["episodic"]).items
        turns = [(r.role, r.content, r.session_id) for r in flushed]
        assert ("user", turns[0][1], "s1") == turns[0] and "Gazelle" in turns[0][1]
        assert ("assistant", "Noted, Ana.", "s1") in turns
    with Memory(db_path, embedder="hashing") as again:  # as a new process would
        asyncio.run(talk(again, "s2", "What bicycle do I have?"))
        system_prompts = [m.content for m in llm.last_chat_messages if m.role == "system"]
        assert any("Gazelle" in p and "<mnemolayer>" in p for p in system_prompts)


def test_flushed_messages_keep_their_speaker_and_skip_bare_tool_calls(mem: Memory) -> None:
    block = MnemolayerMemoryBlock(mem, user_id="ana", agent_id="helper")
    call = ChatMessage(
        role="assistant",
        blocks=[ToolCallBlock(tool_call_id="c1", tool_name="weather", tool_kwargs={})],
    )
    said = [
        ChatMessage(
            role="user", content="Caroline went hiking.", additional_kwargs={"name": "Dee"}
        ),
        call,
        ChatMessage(role="tool", content="Sunny, 21 C."),
        ChatMessage(role="developer", content="Answer in English."),
    ]
    asyncio.run(block.aput(said, from_short_term_memory=True, session_id="s9"))
    records = sorted(mem.list(user_id="ana", agent_id="helper").items, key=lambda r: r.content)
    assert [(r.role, r.content, r.speaker, r.session_id) for r in records] == [
        ("system", "Answer in English.", None, "s9"),
        ("user", "Caroline went hiking.", "Dee", "s9"),
        ("tool", "Sunny, 21 C.", None, "s9"),
    ]
    assert records[2].source == "tool"  # untrusted: out of the block's context by default
    assert (
        asyncio.run(block.aget([ChatMessage(role="user", content="weather?")])).count("Sunny") == 0
    )


def test_the_block_is_empty_without_a_user_message_or_anything_recalled(mem: Memory) -> None:
    block = MnemolayerMemoryBlock(mem, user_id="ana")
    assert asyncio.run(block.aget([])) == ""
    assert asyncio.run(block.aget([ChatMessage(role="assistant", content="Hi!")])) == ""
    assert asyncio.run(block.aget([ChatMessage(role="user", content="anything?")])) == ""


def test_the_block_stays_in_its_budget_and_truncates_when_llamaindex_asks(mem: Memory) -> None:
    mem.add([f"Trip {i}: I visited town number {i} by train." for i in range(40)], user_id="ana")
    block = MnemolayerMemoryBlock(mem, user_id="ana", budget_tokens=60, priority=1)
    text = asyncio.run(block.aget([ChatMessage(role="user", content="which towns by train?")]))
    ctx = mem.context("which towns by train?", user_id="ana", budget_tokens=60)
    assert text and ctx.tokens <= 60 and "town number" in text
    cut = asyncio.run(block.atruncate(text, 20))
    assert cut is not None and text.startswith(cut) and len(cut) < len(text)
    assert asyncio.run(block.atruncate(text, 10_000)) is None
    memory = LlamaMemory.from_defaults(session_id="s", token_limit=40, memory_blocks=[block])
    memory.put(ChatMessage(role="user", content="which towns by train?"))
    [system, _] = memory.get()  # cut to LlamaIndex's limit, not dropped
    inner = system.content.split("<mnemolayer>\n")[1].split("\n</mnemolayer>")[0]
    assert text.startswith(inner) and 0 < len(inner) < len(text)


def test_bad_block_fields_are_refused_by_name(mem: Memory) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"user_id": " "}, "user_id"),
        ({"user_id": "ana", "agent_id": 3}, "agent_id"),
        ({"user_id": "ana", "budget_tokens": 0}, "budget_tokens"),
        ({"user_id": "ana", "budget_tokens": True}, "budget_tokens"),
        ({"user_id": "ana", "sections": "facts"}, "sections"),
        ({"user_id": "ana", "sections": ["facts", "gossip"]}, r"sections\[1\]"),
    ]
    for kwargs, field in cases:
        with pytest.raises(ValidationError, match=f"^{field}:"):
            MnemolayerMemoryBlock(mem, **kwargs)
    with pytest.raises(ValidationError, match=r"^memory:"):
        MnemolayerMemoryBlock(object(), user_id="ana")  # type: ignore[arg-type]


# -- the chat store ------------------------------------------------------------------------


def test_a_chat_engines_history_is_a_working_memory_session_that_resumes(
    db_path: Path,
) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        store = MnemolayerChatStore(mem, user_id="ana")
        buffer = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="s1")
        engine = SimpleChatEngine.from_defaults(
            llm=MockLLMWithChatMemoryOfLastCall(max_tokens=2), memory=buffer
        )
        engine.chat("I'm Ana and I live in Porto.")
        engine.chat("Where do I live?")
        window = mem.session_window("s1", "ana")
        assert window is not None and len(window) == 4
    with Memory(db_path, embedder="hashing") as again:  # as a new process would
        store = MnemolayerChatStore(again, user_id="ana")
        assert store.get_keys() == ["s1"]
        assert _said(store.get_messages("s1")) == [
            ("user", "I'm Ana and I live in Porto."),
            ("assistant", "text text"),
            ("user", "Where do I live?"),
            ("assistant", "text text"),
        ]
        llm = MockLLMWithChatMemoryOfLastCall(max_tokens=1)
        buffer = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="s1")
        SimpleChatEngine.from_defaults(llm=llm, memory=buffer).chat("And my name?")
        assert [m.content for m in llm.last_chat_messages][:2] == [
            "I'm Ana and I live in Porto.",
            "text text",
        ]


def test_overflowing_turns_are_summarised_and_kept_in_episodic_memory(mem: Memory) -> None:
    store = MnemolayerChatStore(mem, user_id="ana", budget_tokens=200)
    store.add_message("long", ChatMessage(role="user", content="My bicycle is a green Gazelle."))
    for i in range(14):
        store.add_message(
            "long", ChatMessage(role="user", content=f"Filler {i} about the weather and the sea.")
        )
    shown = store.get_messages("long")
    assert shown[0].role == "system" and shown[0].content.startswith(SUMMARY_PREFIX)
    assert all("Gazelle" not in m.content for m in shown[1:])
    assert any("Gazelle" in h.memory.content for h in mem.search("green Gazelle", user_id="ana"))


def test_every_chat_store_method(mem: Memory) -> None:
    store = MnemolayerChatStore(mem, user_id="ana")
    hi, reply = ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo")
    assert store.get_messages("s") == [] and store.get_keys() == []
    assert store.delete_messages("s") is None and store.delete_last_message("s") is None
    store.set_messages("s", [hi, reply, ChatMessage(role="user", content="bye")])
    assert _said(store.get_messages("s")) == [("user", "hi"), ("assistant", "yo"), ("user", "bye")]
    store.set_messages("s", [reply])  # replaced, not appended
    store.add_message("s", hi)
    assert _said(store.get_messages("s")) == [("assistant", "yo"), ("user", "hi")]
    assert _said([store.delete_message("s", 0)]) == [("assistant", "yo")]  # type: ignore[list-item]
    assert store.delete_message("s", 5) is None and store.delete_message("s", -2) is None
    store.add_message("s", reply)
    assert _said([store.delete_last_message("s")]) == [("assistant", "yo")]  # type: ignore[list-item]
    assert _said(store.get_messages("s")) == [("user", "hi")]
    store.add_message("t", hi)
    assert sorted(store.get_keys()) == ["s", "t"]
    assert _said(store.delete_messages("s") or []) == [("user", "hi")]
    assert store.get_keys() == ["t"] and store.get_messages("s") == []
    assert [r.content for r in mem.list(user_id="ana", session_id="s").items] == ["hi"]  # archived
    assert MnemolayerChatStore(mem, user_id="bob").get_keys() == []
    assert MnemolayerChatStore(mem, user_id="ana", agent_id="a").get_keys() == []


def test_deleting_the_summary_message_drops_the_summary(mem: Memory) -> None:
    store = MnemolayerChatStore(mem, user_id="ana", budget_tokens=120)
    for i in range(10):
        store.add_message("s", ChatMessage(role="user", content=f"Turn {i} of a long story."))
    shown = store.get_messages("s")
    assert shown[0].content.startswith(SUMMARY_PREFIX)
    removed = store.delete_message("s", -len(shown))
    assert removed is not None and removed.content == shown[0].content
    assert _said(store.get_messages("s")) == _said(shown[1:])


def test_the_async_methods_and_an_agent_use_the_chat_store(mem: Memory) -> None:
    store = MnemolayerChatStore(mem, user_id="ana")
    llm = MockFunctionCallingLLMWithChatMemoryOfLastCall(
        response_generator=lambda messages, **kw: ChatMessage(role="assistant", content="Hello!")
    )
    agent = FunctionAgent(tools=[], llm=llm)

    async def scenario() -> None:
        buffer = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="a1")
        assert str(await agent.run("Hi agent", memory=buffer)) == "Hello!"
        assert _said(await store.aget_messages("a1")) == [
            ("user", "Hi agent"),
            ("assistant", "Hello!"),
        ]
        await store.async_add_message("a1", ChatMessage(role="user", content="more"))
        assert (await store.adelete_last_message("a1")).content == "more"  # type: ignore[union-attr]
        assert await store.aget_keys() == ["a1"]
        await store.aset_messages("a1", [ChatMessage(role="user", content="reset")])
        assert (await store.adelete_message("a1", 0)).content == "reset"  # type: ignore[union-attr]
        assert await store.adelete_messages("a1") == []

    asyncio.run(scenario())


def test_bad_chat_store_input_is_refused_by_name(mem: Memory) -> None:
    for kwargs, field in [
        ({"user_id": ""}, "user_id"),
        ({"user_id": "ana", "budget_tokens": 10}, "budget_tokens"),
        ({"user_id": "ana", "agent_id": ""}, "agent_id"),
    ]:
        with pytest.raises(ValidationError, match=f"^{field}:"):
            MnemolayerChatStore(mem, **kwargs)
    store = MnemolayerChatStore(mem, user_id="ana")
    image = ChatMessage(
        role="user", blocks=[TextBlock(text="look"), ImageBlock(url="http://x/a.png")]
    )
    bad: list[tuple[Any, str]] = [
        (lambda: store.add_message("", ChatMessage(role="user", content="hi")), "key"),
        (lambda: store.get_messages(None), "key"),  # type: ignore[arg-type]
        (lambda: store.add_message("s", "hi"), "message"),  # type: ignore[arg-type]
        (lambda: store.add_message("s", ChatMessage(role="user", content=" ")), "message.content"),
        (lambda: store.add_message("s", image), "message"),
        (
            lambda: store.set_messages("s", [ChatMessage(role="user", content="ok"), image]),
            r"messages\[1\]",
        ),
        (lambda: store.set_messages("s", ChatMessage(role="user", content="ok")), "messages"),
        (lambda: store.delete_message("s", "0"), "idx"),  # type: ignore[arg-type]
    ]
    for call, field in bad:
        with pytest.raises(ValidationError, match=f"^{field}:"):
            call()
    assert store.get_keys() == []  # nothing was half-written
