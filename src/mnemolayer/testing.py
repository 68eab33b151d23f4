"""Deterministic stand-ins for tests (yours and ours), so that no test needs a model
download, an HTTP server or the real time.

* :class:`FakeClock`: a clock that stands still until told to move (``Memory(clock=...)``);
* :class:`HashingEmbedder`: deterministic feature hashing, no model (``embedder="hashing"``);
* :class:`CountingEmbedder`: wraps an embedder and records every ``embed`` call;
* :class:`ScriptedChatModel`: a chat model that answers from a script, for the LLM fact
  extractor, summariser and importance estimator (their ``chat=`` argument).

Example::

    from mnemolayer import Memory
    from mnemolayer.extract.llm import LLMExtractor
    from mnemolayer.testing import FakeClock, ScriptedChatModel

    chat = ScriptedChatModel(['{"facts": [{"subject": "user", "predicate": "lives_in", '
                              '"object": "Porto"}]}'])
    extractor = LLMExtractor(chat.settings, chat=chat)
    with Memory(":memory:", embedder="hashing", clock=FakeClock(), extractor=extractor) as mem:
        mem.add("I live in Porto", user_id="u1")

Each class sets ``__test__ = False``, so pytest does not collect it as a test class.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from mnemolayer.config import LLMSettings
from mnemolayer.embed.base import EmbedKind
from mnemolayer.embed.hashing import HashingEmbedder
from mnemolayer.lifecycle.clock import FakeClock

if TYPE_CHECKING:
    from mnemolayer.protocols import Deadline, Embedder

__all__ = ["CountingEmbedder", "FakeClock", "HashingEmbedder", "ScriptedChatModel"]

#: What one step of a :class:`ScriptedChatModel` script may be.
Step = str | BaseException | type[BaseException] | Callable[[list[Any]], str]


class CountingEmbedder:
    """Wraps an embedder and records every ``embed`` call as ``(kind, texts)``.

    Has the inner model's ``name``, ``dim`` and ``max_tokens``, so a store cannot tell the
    two apart.

    Args:
        inner: the embedder that answers (default a :class:`HashingEmbedder`).

    Attributes:
        calls: every ``embed`` call, oldest first, as ``(kind, texts)``.
    """

    __test__ = False

    def __init__(self, inner: Embedder | None = None) -> None:
        self.inner: Embedder = inner if inner is not None else HashingEmbedder()
        self.calls: list[tuple[str, list[str]]] = []
        self.name: str = self.inner.name
        self.dim: int = self.inner.dim
        self.max_tokens: int = self.inner.max_tokens

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        self.calls.append((kind, list(texts)))
        return self.inner.embed(texts, kind)

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def kinds(self) -> list[str]:
        """The ``kind`` of each call, in order."""
        return [kind for kind, _ in self.calls]

    def __repr__(self) -> str:
        return f"CountingEmbedder({self.inner!r}, calls={len(self.calls)})"


class ScriptedChatModel:
    """A chat model that answers from a script (:class:`mnemolayer.protocols.ChatModel`):
    the LLM extractor, summariser and importance estimator run against it without an
    HTTP server (``LLMExtractor(chat.settings, chat=chat)``).

    Args:
        script: the answers, in order. A string is the answer's text; an exception (an
            instance or a class) is raised instead (``TimeoutError()`` for a model that
            does not answer in time); a callable gets the request's messages and returns
            the text.
        model: the model name :attr:`settings` carries (the component is then named
            ``"llm:<model>"``).

    Attributes:
        requests: every request, oldest first, as ``{"messages", "max_tokens",
            "response_format"}``.
        closed: whether :meth:`close` was called.

    A request past the end of the script raises :class:`LookupError` ("no scripted
    response left"), which the components treat as a failed call (they fall back), so an
    unexpected request shows in :attr:`requests` and in the component's ``last_error``.
    Thread-safe.
    """

    __test__ = False

    def __init__(self, script: Iterable[Step] = (), *, model: str = "scripted") -> None:
        self._steps: list[Step] = list(script)
        self._lock = threading.Lock()
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.closed = False

    @property
    def settings(self) -> LLMSettings:
        """Settings to build a component with (the endpoint is never contacted)."""
        return LLMSettings(base_url="http://scripted.invalid/v1", model=self.model)

    def push(self, *steps: Step) -> None:
        """Append ``steps`` to the script."""
        with self._lock:
            self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        """How many steps of the script are left."""
        with self._lock:
            return len(self._steps)

    def complete(
        self,
        messages: list[Any],
        deadline: Deadline,
        *,
        max_tokens: int | None = None,
        response_format: Any | None = None,
    ) -> str:
        """The next step's answer to ``messages``.

        Raises:
            TimeoutError: ``deadline`` has passed, or the step is a timeout.
            LookupError: the script is spent.
        """
        with self._lock:
            self.requests.append(
                {
                    "messages": [dict(m) for m in messages],
                    "max_tokens": max_tokens,
                    "response_format": response_format,
                }
            )
            step = self._steps.pop(0) if self._steps else None
        if deadline.remaining() <= 0:
            raise TimeoutError(f"no answer within the {deadline.budget_s:g} s budget")
        if step is None:
            raise LookupError("no scripted response left")
        if isinstance(step, str):
            return step
        if isinstance(step, BaseException) or (
            isinstance(step, type) and issubclass(step, BaseException)
        ):
            raise step
        answer = cast("Callable[[list[Any]], str]", step)
        return str(answer(list(messages)))

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return f"ScriptedChatModel(model={self.model!r}, remaining={self.remaining})"
