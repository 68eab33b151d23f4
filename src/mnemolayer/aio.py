"""``AsyncMemory``: the same calls as :class:`~mnemolayer.memory.Memory`, awaitable.

One implementation: every method runs the synchronous :class:`Memory` method in a worker
thread (``anyio.to_thread``), so the event loop never blocks on SQLite or the embedder
and there is no second copy of the logic. :class:`Memory` is thread-safe.

Each method is made by :func:`_to_thread` from the :class:`Memory` method itself, typed
with ``ParamSpec``/``Concatenate``: a type checker sees ``AsyncMemory.search`` with the
parameters of ``Memory.search`` and an awaitable of its return type, and
``inspect.signature`` shows the same parameters at run time (a test keeps every public
method and property of ``Memory`` here).
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Coroutine, Iterator
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar, overload

import anyio.to_thread

from mnemolayer.layers.procedural.strategies import ProceduralConfig
from mnemolayer.memory import Memory

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


@overload
def _to_thread(
    method: Callable[Concatenate[Memory, P], R],
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]: ...


@overload
def _to_thread(
    method: Callable[Concatenate[Memory, P], R], then: Callable[[R], T]
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, T]]: ...


def _to_thread(
    method: Callable[..., Any], then: Callable[[Any], Any] | None = None
) -> Callable[..., Any]:
    """An async method that calls ``method`` of ``self.sync`` in a worker thread, with the
    same parameters (and docstring); ``then`` turns the result into the awaited value in
    that thread too (``list`` collects an iterator there, not in the event loop)."""
    name = method.__name__

    @functools.wraps(method)
    async def call(self: AsyncMemory, /, *args: Any, **kwargs: Any) -> Any:
        # Looked up per call, so that a method replaced on the instance is the one run.
        bound = getattr(self.sync, name)

        def run() -> Any:
            result = bound(*args, **kwargs)
            return result if then is None else then(result)

        return await anyio.to_thread.run_sync(run)

    call.__qualname__ = f"AsyncMemory.{name}"
    return call


def _init_like(
    source: Callable[Concatenate[Memory, P], None],
) -> Callable[[Callable[..., None]], Callable[Concatenate[AsyncMemory, P], None]]:
    """Give an ``__init__(self, *args, **kwargs)`` the parameters of ``source``, for type
    checkers and for ``inspect.signature``."""

    def apply(init: Callable[..., None]) -> Callable[Concatenate[AsyncMemory, P], None]:
        init.__wrapped__ = source  # type: ignore[attr-defined]
        return init

    return apply


def _rows(rows: Iterator[dict[str, Any]]) -> builtins.list[dict[str, Any]]:
    return builtins.list(rows)


class AsyncMemory:
    """Awaitable :class:`Memory`. Takes the same arguments; ``await mem.aclose()`` at the end.

    Every public method of :class:`Memory` is here with the same parameters, as a
    coroutine, except :meth:`now` (cheap, so synchronous). :meth:`export` returns the
    rows as a list (collected in the worker thread) instead of an iterator. Other
    attributes of the store (``path``, ``store``, ``keyring``...) are on :attr:`sync`.

    Example::

        async with AsyncMemory("memory.db") as mem:
            await mem.add("I moved to Porto", user_id="u1")
            hits = await mem.search("where do I live?", user_id="u1")
    """

    #: The synchronous :class:`Memory` every call runs on.
    sync: Memory

    @_init_like(Memory.__init__)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = Memory(*args, **kwargs)

    @classmethod
    def wrap(cls, mem: Memory) -> AsyncMemory:
        """An ``AsyncMemory`` over an open :class:`Memory` (the same store, not a copy:
        closing either closes it)."""
        self = cls.__new__(cls)
        self.sync = mem
        return self

    # Memories: write, read, audit, transfer.
    add = _to_thread(Memory.add)
    search = _to_thread(Memory.search)
    get = _to_thread(Memory.get)
    list = _to_thread(Memory.list)
    update = _to_thread(Memory.update)
    delete = _to_thread(Memory.delete)
    delete_all = _to_thread(Memory.delete_all)
    forget = _to_thread(Memory.forget)
    history = _to_thread(Memory.history)
    stats = _to_thread(Memory.stats)
    reindex = _to_thread(Memory.reindex)
    flush = _to_thread(Memory.flush)
    pending = _to_thread(Memory.pending)
    export = _to_thread(Memory.export, _rows)
    import_rows = _to_thread(Memory.import_rows)
    # The person-editable MEMORY.md view.
    export_markdown = _to_thread(Memory.export_markdown)
    import_markdown = _to_thread(Memory.import_markdown)
    # Semantic memory.
    facts = _to_thread(Memory.facts)
    entities = _to_thread(Memory.entities)
    neighbors = _to_thread(Memory.neighbors)
    profile = _to_thread(Memory.profile)
    learn_from_feedback = _to_thread(Memory.learn_from_feedback)
    extract_facts = _to_thread(Memory.extract_facts)
    # Procedural memory.
    record_outcome = _to_thread(Memory.record_outcome)
    outcomes = _to_thread(Memory.outcomes)
    strategies = _to_thread(Memory.strategies)
    should_avoid = _to_thread(Memory.should_avoid)
    reflect = _to_thread(Memory.reflect)
    # Working memory and sessions (a WorkingMemory is a sync object; its calls are
    # quick, or run them in a thread).
    working = _to_thread(Memory.working)
    end_session = _to_thread(Memory.end_session)
    list_sessions = _to_thread(Memory.list_sessions)
    session_window = _to_thread(Memory.session_window)
    # The lifecycle: pinning, archiving, explanations and maintenance.
    pin = _to_thread(Memory.pin)
    unpin = _to_thread(Memory.unpin)
    archive = _to_thread(Memory.archive)
    restore = _to_thread(Memory.restore)
    explain = _to_thread(Memory.explain)
    maintain = _to_thread(Memory.maintain)
    # Context assembly for the next model call.
    context = _to_thread(Memory.context)
    # Closing: ``await mem.aclose()`` or ``await mem.close()``.
    close = _to_thread(Memory.close)
    aclose = close

    def now(self) -> datetime:
        """The clock's current time (aware UTC); cheap, so not threaded."""
        return self.sync.now()

    @property
    def last_query_embed_seconds(self) -> float:
        """Seconds the last search spent embedding its query."""
        return self.sync.last_query_embed_seconds

    @property
    def procedural_config(self) -> ProceduralConfig:
        """The store object's procedural thresholds (:attr:`Memory.procedural_config`);
        assigning one changes them."""
        return self.sync.procedural_config

    @procedural_config.setter
    def procedural_config(self, value: ProceduralConfig) -> None:
        self.sync.procedural_config = value

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"Async{self.sync!r}"
