"""The LangChain adapters (src/mnemolayer/integrations/langchain.py) against the real
``langchain-core`` from PyPI, with its own scripted chat model (``FakeListChatModel``, no
network), on both engines: a conversation run through ``RunnableWithMessageHistory``
keeps its turns in working memory and resumes in a new process's ``Memory``; turns that
overflow the budget are summarised and stay findable by the retriever; the retriever
returns recall's hits as documents (issue 18, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from mnemolayer import Memory, ValidationError
from mnemolayer.integrations.langchain import (
    MnemolayerChatMessageHistory,
    MnemolayerRetriever,
)


def _chain(mem: Memory, replies: list[str], budget: int = 4000) -> RunnableWithMessageHistory:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are helpful."), MessagesPlaceholder("history"), ("human", "{input}")]
    )
    return RunnableWithMessageHistory(
        prompt | FakeListChatModel(responses=replies),
        lambda session_id: MnemolayerChatMessageHistory(
            mem, session_id=session_id, user_id="ana", budget_tokens=budget
        ),
        input_messages_key="input",
        history_messages_key="history",
    )


def test_a_conversation_is_kept_in_working_memory_and_resumes(db_path: Path) -> None:
    config = {"configurable": {"session_id": "s1"}}
    with Memory(db_path, embedder="hashing") as mem:
        chain = _chain(mem, ["Nice to meet you, Ana.", "You live in Porto."])
        assert chain.invoke({"input": "I'm Ana and I live in Porto."}, config).content == (
            "Nice to meet you, Ana."
        )
        chain.invoke({"input": "Where do I live?"}, config)
    with Memory(db_path, embedder="hashing") as again:  # as a new process would
        history = MnemolayerChatMessageHistory(again, session_id="s1", user_id="ana")
        assert [(type(m), m.content) for m in history.messages] == [
            (HumanMessage, "I'm Ana and I live in Porto."),
            (AIMessage, "Nice to meet you, Ana."),
            (HumanMessage, "Where do I live?"),
            (AIMessage, "You live in Porto."),
        ]
        history.clear()  # archived to episodic memory, the window emptied
        assert history.messages == []
        retriever = MnemolayerRetriever(memory=again, user_id="ana", k=2)
        [top, *_] = retriever.invoke("where does Ana live")
        assert "Porto" in top.page_content and top.metadata["id"] == top.id


def test_overflowing_turns_are_summarised_and_stay_findable(db_path: Path) -> None:
    config = {"configurable": {"session_id": "long"}}
    with Memory(db_path, embedder="hashing") as mem:
        chain = _chain(mem, [f"Noted, number {i}." for i in range(12)], budget=200)
        chain.invoke({"input": "My bicycle is a green Gazelle from 1998."}, config)
        for i in range(11):
            chain.invoke(
                {"input": f"Filler message {i} about the weather and nothing else."}, config
            )
        messages = MnemolayerChatMessageHistory(
            mem, session_id="long", user_id="ana", budget_tokens=200
        ).messages
        assert isinstance(messages[0], SystemMessage)  # the running summary
        assert all("Gazelle" not in m.content for m in messages[1:])  # evicted
        docs = MnemolayerRetriever(memory=mem, user_id="ana", k=3).invoke("green Gazelle bicycle")
        assert any("Gazelle" in d.page_content for d in docs)


def test_the_retriever_returns_recalls_hits_as_documents(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        mem.add(
            ["I love green tea.", "My sister Maria lives in Rome.", "I hate coffee."], user_id="ana"
        )
        mem.add("Bob loves green tea too.", user_id="bob")
        retriever = MnemolayerRetriever(
            memory=mem, user_id="ana", k=2, search_kwargs={"kinds": ["episodic"]}
        )
        docs = retriever.invoke("green tea")
        assert len(docs) == 2 and docs[0].page_content == "I love green tea."
        meta = docs[0].metadata
        assert meta["kind"] == "episodic" and 0 < meta["score"] <= 1
        assert meta["source"] == "user" and docs[0].id in meta["provenance"]
        assert all("Bob" not in d.page_content for d in docs)  # one user's memories only
        assert [d.id for d in retriever.batch(["green tea"])[0]] == [d.id for d in docs]


def test_a_message_without_a_role_is_refused_by_name(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        history = MnemolayerChatMessageHistory(mem, session_id="s", user_id="ana")
        with pytest.raises(ValidationError, match="messages"):
            history.add_messages([ChatMessage(role="critic", content="meh")])
        assert history.messages == []
