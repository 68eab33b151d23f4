"""The ``mnemolayer`` command line: thin commands over :class:`~mnemolayer.Memory`.

Every command opens the store named by ``--db`` with the embedder named by ``--embedder``
(both default to ``MNEMOLAYER_DB`` / ``MNEMOLAYER_EMBEDDER``, read once here, at the edge),
calls one ``Memory`` method and prints the result: a rich table for people, or with
``--json`` one JSON document on stdout (``export`` always writes JSON Lines). Progress
bars, prompts and errors go to stderr so that stdout stays machine-readable.

A :class:`~mnemolayer.errors.MnemolayerError` becomes one red ``error: <message>`` line
on stderr and exit code 2 (usage error) or 1 (runtime error), never a traceback.
"""

from __future__ import annotations

from mnemolayer.cli import (  # noqa: F401  (importing registers the commands)
    context_commands,
    keys_commands,
    lifecycle_commands,
    maintain_commands,
    mcp_commands,
    mem0_commands,
    memory_commands,
    procedural_commands,
    semantic_commands,
    server_commands,
    session_commands,
)
from mnemolayer.cli._common import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``mnemolayer`` console script."""
    app(prog_name="mnemolayer")
