"""The stdio transport of ``mnemolayer mcp``: one JSON-RPC message per line, as the SDK's
own, but strict about text that is not UTF-8.

Why not the SDK's: it decodes stdin with replacement, so the bytes of two different lone
surrogates (``ED A0 80`` and ``ED A0 81``, which UTF-8 does not encode) both arrive as
U+FFFD x 3, and two different ids name one user, who sees the other's memories. It also
drops, unanswered, a line whose JSON holds a lone surrogate escape (``"\\ud800"``), which
its JSON parser refuses, so the client waits for an answer that never comes.

Here a line is decoded with ``surrogateescape`` (each byte that is not UTF-8 becomes a
lone surrogate of its own, so different bytes stay different) and parsed by
:func:`json.loads` (which keeps ``\\ud800`` escapes as lone surrogates). Either way the
tool gets a string that is not valid Unicode and answers with an error naming the
argument: the library refuses such ids (:func:`mnemolayer._validate.scope_id`). A line
that is not JSON-RPC at all is handed on as the SDK hands on its parse errors.

While serving, fd 1 points at stderr and the protocol goes to a private duplicate of it,
so stray output (a library's print) cannot corrupt the stream; it is restored on exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticSerializationError

__all__ = ["StrictStdioServer", "parse_line", "serve_stdio"]


def parse_line(raw: bytes) -> SessionMessage | Exception:
    """One line of stdin as a JSON-RPC message, or the error that it is not one.

    Text that is not UTF-8 is kept as lone surrogates (one per byte), never replaced.
    """
    text = raw.decode("utf-8", "surrogateescape")
    try:
        message = types.jsonrpc_message_adapter.validate_python(json.loads(text), by_name=False)
    except (ValueError, PydanticValidationError) as exc:
        return exc
    return SessionMessage(message)


def _encode(message: SessionMessage) -> bytes:
    """A message as one line of JSON; text that is not valid Unicode (an error quoting the
    caller's bad input) is written as ``\\uXXXX`` escapes rather than failing the write."""
    try:
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = message.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        text = json.dumps(data, ensure_ascii=True)
    return text.encode("utf-8") + b"\n"


async def _read(stdin: IO[bytes], sink: ObjectSendStream[SessionMessage | Exception]) -> None:
    async with sink:
        async for raw in anyio.wrap_file(stdin):
            if raw.strip():
                await sink.send(parse_line(raw))


async def _write(source: ObjectReceiveStream[SessionMessage], out: IO[bytes]) -> None:
    async with source:
        async for message in source:
            await anyio.to_thread.run_sync(_put, out, _encode(message))


def _put(out: IO[bytes], data: bytes) -> None:
    out.write(data)
    out.flush()


@contextlib.contextmanager
def _protocol_stdout() -> Iterator[IO[bytes]]:
    """The process's stdout for the protocol alone: a private duplicate of fd 1, while
    fd 1 itself points at stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(private, "wb", closefd=False)
    try:
        yield out
    finally:
        with contextlib.suppress(OSError, ValueError):
            out.flush()
        sys.stdout.flush()
        os.dup2(private, 1)
        os.close(private)


async def serve_stdio(server: MCPServer[Any], stdin: IO[bytes] | None = None) -> None:
    """Serve ``server`` over stdin and stdout until stdin ends.

    Args:
        server: from :func:`mnemolayer.server.mcp.build_server`.
        stdin: where the messages come from (default: the process's stdin).
    """
    # The SDK's own in-process client reaches the low-level server the same way.
    lowlevel = server._lowlevel_server
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    with _protocol_stdout() as out:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read, stdin if stdin is not None else sys.stdin.buffer, read_in)
            tasks.start_soon(_write, write_out, out)
            async with write_in:
                await lowlevel.run(read_out, write_in, lowlevel.create_initialization_options())


class StrictStdioServer(MCPServer[Any]):
    """An :class:`MCPServer` whose ``run("stdio")`` serves with :func:`serve_stdio`, and
    whose tools refuse arguments they do not have (the SDK drops them, so a misspelled
    ``limt`` would silently run with the default limit) and report a bad argument in one
    line, ``tool: argument: what is wrong``, as the mnemolayer errors read."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """The SDK's call, with unknown arguments refused and validation errors in one line.

        Raises:
            ToolError: an unknown tool or argument, or an argument that fails validation.
        """
        tool = self._tool_manager.get_tool(name)
        if tool is not None and arguments:
            known = set((tool.parameters or {}).get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                raise ToolError(
                    f"Error executing tool {name}: {unknown[0]}: not an argument of {name} "
                    f"(it takes {', '.join(sorted(known))})"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, PydanticValidationError) and cause.errors():
                first = cause.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "arguments"
                raise ToolError(f"Error executing tool {name}: {where}: {first['msg']}") from cause
            raise

    async def run_stdio_async(self) -> None:
        """Serve over stdin and stdout, refusing text that is not UTF-8 (module docstring)."""
        await serve_stdio(self)
