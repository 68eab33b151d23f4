"""mnemolayer as a Model Context Protocol (MCP) server, built on the official ``mcp`` SDK.

:func:`build_server` exposes one open :class:`~mnemolayer.Memory` (or
:class:`~mnemolayer.AsyncMemory`) to AI assistants
(Claude Desktop, Claude Code, Cursor, ...) as the tools ``add_memory``,
``search_memory``, ``get_context``, ``list_memories``, ``delete_memory``,
``forget_memory``, ``get_facts``,
``record_outcome``, ``get_strategies``, ``get_history``, ``explain_memory`` and
``pin_memory``; ``mnemolayer mcp`` runs it
over stdio (:func:`serve_stdio`: strict about text that is not UTF-8, so two ids never
become one) or streamable HTTP (docs/mcp.md). The store is opened once, by the caller,
and shared by every session: the embedding model loads once per server. The tools call
it through :class:`~mnemolayer.AsyncMemory` (each call in a worker thread), and their
arguments come from the operations table, :mod:`mnemolayer.server.ops`.

User scoping: each tool takes an optional ``user_id``. A :class:`UserScope` gives the
default user for calls that name none, and when ``pinned`` refuses calls that name
another user, so an assistant connected to a pinned server can only ever read and change
that one user's memories.

Needs the ``mcp`` extra (``pip install -e '.[mcp]' in the mnemolayer checkout``).
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from mnemolayer import __version__
from mnemolayer.aio import AsyncMemory
from mnemolayer.memory import Memory
from mnemolayer.server.mcp._stdio import StrictStdioServer, serve_stdio
from mnemolayer.server.mcp._tools import MemoryTools, UserScope

__all__ = ["MemoryTools", "UserScope", "build_server", "serve_stdio"]

_INSTRUCTIONS = """\
mnemolayer is long-term memory about the user, kept across conversations.
- Before answering anything that may depend on what the user said earlier (their name, family, home, job, preferences, plans, past events), call get_context (one packed summary) or search_memory (individual memories with scores).
- When the user shares something lasting (a fact, preference, plan, event or decision), call add_memory with their words.
- When the user asks you to forget something, find it with search_memory or list_memories and call delete_memory with its id.
- After carrying out a task, call record_outcome; before choosing how to do a task, call get_strategies to see what worked before.
- When the user asks you to always remember something, call pin_memory on it (pinned=false lets it fade again). When they ask why you remember or forgot something, call explain_memory.
Errors name the argument at fault; fix it and call again."""


def build_server(mem: Memory | AsyncMemory, scope: UserScope | None = None) -> MCPServer[Any]:
    """An MCP server whose tools read and write ``mem``.

    Args:
        mem: the open store (a ``Memory`` is wrapped in an ``AsyncMemory``); the caller
            closes it after the server stops.
        scope: the default user and whether the server is pinned to it; default: no
            default user, every call names its user.

    Returns:
        The server, ready for ``server.run("stdio")`` or
        ``server.run("streamable-http", host=..., port=...)`` (endpoint ``/mcp``).
    """
    scope = scope or UserScope()
    tools = MemoryTools(mem, scope)
    instructions = _INSTRUCTIONS
    if scope.pinned:
        instructions += f"\nThis server acts for user {scope.user!r} only; omit user_id."
    elif scope.user is not None:
        instructions += f"\nCalls without user_id act for user {scope.user!r}."
    else:
        instructions += "\nEvery call must name the user in user_id."
    # Its stdio transport keeps text that is not UTF-8 from becoming another id.
    server: MCPServer[Any] = StrictStdioServer(
        "mnemolayer",
        title="mnemolayer memory",
        instructions=instructions,
        version=__version__,
        log_level="WARNING",
    )
    for name, read_only in MemoryTools.TOOLS:
        fn = getattr(tools, name)
        server.add_tool(
            fn,
            name=name,
            description=inspect.cleandoc(fn.__doc__ or ""),
            annotations=ToolAnnotations(
                read_only_hint=read_only,
                destructive_hint=name in ("delete_memory", "forget_memory"),
                idempotent_hint=read_only or name in MemoryTools.IDEMPOTENT,
                open_world_hint=False,
            ),
        )
    return server
