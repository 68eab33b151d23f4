"""``mnemolayer mcp``: serve the store to AI assistants over the Model Context Protocol.

The MCP SDK is an optional extra, so it is imported only when the command runs.
"""

from __future__ import annotations

import ipaddress
import os
import signal
from dataclasses import replace
from typing import Annotated, Literal

import typer

from mnemolayer import _validate as v
from mnemolayer.cli._checks import check_listen
from mnemolayer.cli._common import _open, _say, _state, app
from mnemolayer.errors import UsageError

Transport = Literal["stdio", "http"]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    transport: Annotated[
        Transport,
        typer.Option(help="stdio (the assistant starts the server) or streamable http."),
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.", min=1, max=65535)] = 8765,
    db: Annotated[
        str | None,
        typer.Option(
            help="Store path, sqlite:/// URL or postgresql:// URL.", show_default="the global --db"
        ),
    ] = None,
    embedder: Annotated[
        str | None, typer.Option(help="Embedding model name.", show_default="the global --embedder")
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            "-u",
            help="Pin the server to this user: tools act for it and refuse any other.",
            show_default="$MNEMOLAYER_USER as a default that calls may override",
        ),
    ] = None,
) -> None:
    """Run an MCP server with memory tools (add_memory, search_memory, get_context,
    list_memories, delete_memory, get_facts, record_outcome, get_strategies,
    get_history, explain_memory, pin_memory) for Claude Desktop, Claude Code and other
    MCP clients. Over stdio
    nothing but the protocol is written to stdout; over http the endpoint is
    http://HOST:PORT/mcp (no authentication: keep it on loopback)."""
    try:
        from mnemolayer.server.mcp import UserScope, build_server
    except ImportError as exc:  # only the SDK is optional; anything else is a bug
        if not (exc.name or "").startswith("mcp"):
            raise
        raise UsageError(
            "mnemolayer mcp needs the MCP SDK 2.x: pip install -e '.[mcp]' in the mnemolayer checkout"
        ) from exc
    state = _state(ctx)
    state = replace(state, db=db or state.db, embedder=embedder or state.embedder)
    if user is not None:
        scope = UserScope(v.scope_id(user, "--user"), pinned=True)
    else:
        default = os.environ.get("MNEMOLAYER_USER") or None
        scope = UserScope(v.scope_id(default, "MNEMOLAYER_USER"))
    if transport == "http":
        check_listen(host, port)  # in use: one line now, not a traceback after the start
        if not _is_loopback(host):
            _say(state.err, f"warning: {host} is not loopback; MCP over HTTP has no authentication")
    who = f"user {scope.user}" if scope.user else "no default user"
    with _open(state, extract=True) as mem:
        server = build_server(mem, scope)
        shown = f"[{host}]" if ":" in host else host  # an IPv6 address in a URL
        where = "stdio" if transport == "stdio" else f"http://{shown}:{port}/mcp"
        pinned = ", pinned" if scope.pinned else ""
        _say(state.err, f"mnemolayer MCP server for {mem.path} on {where} ({who}{pinned})")
        # SIGTERM (how assistants and service managers stop a server) unwinds like
        # Ctrl-C, so the store is closed and the exit status is 0.
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            if transport == "stdio":
                server.run("stdio")
            else:
                server.run("streamable-http", host=host, port=port)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
