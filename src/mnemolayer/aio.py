"""``AsyncMemory``: the same calls as :class:`~mnemolayer.memory.Memory`, awaitable.

One implementation: every method runs the synchronous :class:`Memory` method in a worker
thread (``anyio.to_thread``), so the event loop never blocks on SQLite or the embedder
and there is no second copy of the logic. :class:`Memory` is thread-safe.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

from mnemolayer.memory import Memory

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
R = TypeVar("R")


def _threaded(method: Callable[P, R]) -> Callable[..., Any]:
    name = method.__name__

    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        bound = getattr(self.sync, name)
        return await anyio.to_thread.run_sync(functools.partial(bound, *args, **kwargs))

    return call


class AsyncMemory:
    """Awaitable :class:`Memory`. Takes the same arguments; ``await mem.aclose()`` at the end.

    Example::

        async with AsyncMemory("memory.db") as mem:
            await mem.add("I moved to Porto", user_id="u1")
            hits = await mem.search("where do I live?", user_id="u1")
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sync = Memory(*args, **kwargs)

    add: Callable[..., Any] = _threaded(Memory.add)
    search: Callable[..., Any] = _threaded(Memory.search)
    get: Callable[..., Any] = _threaded(Memory.get)
    list: Callable[..., Any] = _threaded(Memory.list)
    update: Callable[..., Any] = _threaded(Memory.update)
    delete: Callable[..., Any] = _threaded(Memory.delete)
    delete_all: Callable[..., Any] = _threaded(Memory.delete_all)
    history: Callable[..., Any] = _threaded(Memory.history)
    stats: Callable[..., Any] = _threaded(Memory.stats)
    reindex: Callable[..., Any] = _threaded(Memory.reindex)
    facts: Callable[..., Any] = _threaded(Memory.facts)
    entities: Callable[..., Any] = _threaded(Memory.entities)
    neighbors: Callable[..., Any] = _threaded(Memory.neighbors)
    profile: Callable[..., Any] = _threaded(Memory.profile)
    learn_from_feedback: Callable[..., Any] = _threaded(Memory.learn_from_feedback)
    extract_facts: Callable[..., Any] = _threaded(Memory.extract_facts)
    record_outcome: Callable[..., Any] = _threaded(Memory.record_outcome)
    outcomes: Callable[..., Any] = _threaded(Memory.outcomes)
    strategies: Callable[..., Any] = _threaded(Memory.strategies)
    should_avoid: Callable[..., Any] = _threaded(Memory.should_avoid)
    reflect: Callable[..., Any] = _threaded(Memory.reflect)
    end_session: Callable[..., Any] = _threaded(Memory.end_session)
    list_sessions: Callable[..., Any] = _threaded(Memory.list_sessions)
    session_window: Callable[..., Any] = _threaded(Memory.session_window)
    # The lifecycle: pinning, archiving, explanations and maintenance.
    pin: Callable[..., Any] = _threaded(Memory.pin)
    unpin: Callable[..., Any] = _threaded(Memory.unpin)
    archive: Callable[..., Any] = _threaded(Memory.archive)
    restore: Callable[..., Any] = _threaded(Memory.restore)
    explain: Callable[..., Any] = _threaded(Memory.explain)
    maintain: Callable[..., Any] = _threaded(Memory.maintain)
    # Context assembly for the next model call.
    context: Callable[..., Any] = _threaded(Memory.context)
    # The person-editable MEMORY.md view.
    export_markdown: Callable[..., Any] = _threaded(Memory.export_markdown)
    import_markdown: Callable[..., Any] = _threaded(Memory.import_markdown)

    async def export(self, *, user_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """All export rows (see :meth:`Memory.export`), collected in a worker thread."""
        return await anyio.to_thread.run_sync(lambda: list(self.sync.export(user_id=user_id)))

    async def import_rows(self, rows: Iterable[dict[str, Any]]) -> int:
        return await anyio.to_thread.run_sync(lambda: self.sync.import_rows(rows))

    async def working(self, **kwargs: Any) -> Any:
        """The session's :class:`~mnemolayer.layers.working.window.WorkingMemory` (a sync object; its
        calls are quick, or run them in a thread)."""
        return await anyio.to_thread.run_sync(lambda: self.sync.working(**kwargs))

    async def aclose(self) -> None:
        """Close the store (``await mem.close()`` works too)."""
        await anyio.to_thread.run_sync(self.sync.close)

    close = aclose

    def now(self) -> datetime:
        """The clock's current time (aware UTC); cheap, so not threaded."""
        return self.sync.now()

    @property
    def last_query_embed_seconds(self) -> float:
        """Seconds the last search spent embedding its query."""
        return self.sync.last_query_embed_seconds

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
