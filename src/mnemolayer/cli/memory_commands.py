"""The commands over one store.

add, search, list, get, update, delete, forget, history, stats, export, import, reindex.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import typer

from mnemolayer.cli._common import (
    AgentOpt,
    IdArg,
    ImportanceOpt,
    KindOpt,
    MetaJsonOpt,
    MetaOpt,
    Mode,
    OptUserOpt,
    SessionOpt,
    UserOpt,
    _cells,
    _emit,
    _fields,
    _json_object,
    _metadata,
    _open,
    _open_file,
    _print_table,
    _progress,
    _say,
    _State,
    _state,
    app,
)
from mnemolayer.errors import ValidationError


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
    session_only: Annotated[
        bool,
        typer.Option(
            "--session-only",
            help="A temporary memory of --session (required then), deleted when it ends.",
        ),
    ] = False,
    pinned: Annotated[
        bool, typer.Option("--pinned", help="Pin it: it never decays, expires or is forgotten.")
    ] = False,
    expires_at: Annotated[
        str | None,
        typer.Option(
            "--expires-at",
            help="When it expires (ISO-8601).",
            show_default="the kind's TTL, else never",
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Where it came from: user, assistant (trusted), tool, web, import, agent.",
            show_default="user",
        ),
    ] = None,
) -> None:
    """Store one memory."""
    state = _state(ctx)
    metadata = _metadata(meta, meta_json)
    with _open(state, extract=True) as mem:
        started = mem.now()
        records = mem.add(
            text,
            user_id=user,
            agent_id=agent,
            session_id=session,
            timestamp=time,
            metadata=metadata,
            importance=importance,
            kind=kind,
            session_only=session_only,
            pinned=pinned,
            expires_at=expires_at,
            source=source,
        )
    if state.json:
        return _emit([r.to_json() for r in records])
    for record in records:
        if record.created_at < started:  # add is idempotent: this content was stored before
            _say(state.out, f"exists {record.id} (same content already stored; kept as it was)")
        else:
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
    include_history: Annotated[
        bool, typer.Option("--history", help="Also superseded memories (ranked lower).")
    ] = False,
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", help="Ask about the past: what was true then (ISO-8601)."),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Say why each hit ranks where it does (relevance, retention)."
        ),
    ] = False,
    trusted_only: Annotated[
        bool, typer.Option("--trusted-only", help="Only memories the user or assistant said.")
    ] = False,
) -> None:
    """Recall the memories most relevant to QUERY."""
    state = _state(ctx)
    filters = _json_object(filter_json, "--filter-json") if filter_json is not None else None
    with _open(state, create=False) as mem:
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
            include_history=include_history,
            explain=explain,
            as_of=as_of,
            trusted_only=trusted_only,
        )
    if state.json:
        return _emit([hit.model_dump(mode="json") for hit in hits])
    columns = ("#", "score", "kind", "date (UTC)", "speaker", "content")
    rows = [
        (str(rank), f"{hit.score:.3f}", hit.memory.kind, *_cells(hit.memory))
        for rank, hit in enumerate(hits, 1)
    ]
    _print_table(state, columns, rows)
    if explain:  # one line per hit under the table: too long for a column
        for rank, hit in enumerate(hits, 1):
            _say(state.out, f"{rank}. {(hit.explanation or {}).get('summary', '')}")


@app.command("list")
def list_(
    ctx: typer.Context,
    user: UserOpt,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    kind: KindOpt = None,
    limit: Annotated[int, typer.Option(help="Page size.")] = 100,
    cursor: Annotated[str | None, typer.Option(help="Cursor from the previous page.")] = None,
    filter_json: Annotated[str | None, typer.Option(help="Metadata filter as JSON.")] = None,
) -> None:
    """List a user's memories, oldest first, one page at a time."""
    state = _state(ctx)
    filters = _json_object(filter_json, "--filter-json") if filter_json is not None else None
    with _open(state, check_embedder=False, create=False) as mem:
        page = mem.list(
            user_id=user,
            agent_id=agent,
            session_id=session,
            kinds=kind,
            filters=filters,
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
    with _open(state, check_embedder=False, create=False) as mem:
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
    with _open(state, extract=True) as mem:
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
    with _open(state, check_embedder=False) as mem:
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
    with _open(state, check_embedder=False) as mem:
        receipt = mem.delete_all(user_id=user, agent_id=agent, session_id=session)
    if state.json:
        return _emit({"removed": receipt.memories, "receipt": receipt.model_dump(mode="json")})
    _say(state.out, f"removed {receipt.memories} memories")
    _report_receipt(state, "removed per table and index", receipt.removed, receipt.remaining)


@app.command()
def erase(
    ctx: typer.Context,
    memory_id: IdArg,
    user: OptUserOpt = None,
) -> None:
    """Erase one memory's text everywhere (history, facts only it stated, caches, log)."""
    state = _state(ctx)
    with _open(state, check_embedder=False) as mem:
        receipt = mem.forget(memory_id, user_id=user)
    if state.json:
        return _emit(receipt.model_dump(mode="json"))
    _report_receipt(state, f"erased {memory_id}", receipt.removed, receipt.remaining)


@app.command()
def history(
    ctx: typer.Context,
    memory_id: IdArg,
    user: OptUserOpt = None,
) -> None:
    """Show the audit history of one memory."""
    state = _state(ctx)
    with _open(state, check_embedder=False, create=False) as mem:
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
    with _open(state, check_embedder=False, create=False) as mem:
        result = mem.stats(user_id=user)
    if state.json:
        return _emit(result)
    _fields(state, result)


ExportFormat = Literal["jsonl", "markdown"]


@app.command()
def export(
    ctx: typer.Context,
    user: OptUserOpt = None,
    out: Annotated[
        Path | None, typer.Option(dir_okay=False, help="Output file.", show_default="stdout")
    ] = None,
    format_: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            help="jsonl: every record, fact, window and history event (re-importable "
            "exactly); markdown: a MEMORY.md a person can read and edit (needs --user).",
        ),
    ] = "jsonl",
) -> None:
    """Write memories and their history as JSON Lines, or one user's MEMORY.md."""
    state = _state(ctx)
    if format_ == "markdown":
        if user is None:
            raise ValidationError("--user", "--format markdown exports one user: name them")
        with _open(state, check_embedder=False, create=False) as mem:
            text = mem.export_markdown(user_id=user)
        if out is None:
            sys.stdout.write(text)
            return
        _write_text(out, text)
        if state.json:
            return _emit({"exported": "markdown", "path": str(out)})
        _say(state.err, f"wrote MEMORY.md of {user} to {out}")
        return
    with _open(state, check_embedder=False, create=False) as mem:
        if out is None:
            for row in mem.export(user_id=user):
                _emit(row)
            return
        count = _write_jsonl(out, mem.export(user_id=user))
    if state.json:
        return _emit({"exported": count, "path": str(out)})
    _say(state.err, f"exported {count} rows to {out}")


def _write_text(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    try:
        with _open_file(partial, "w", "--out") as fh:
            fh.write(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


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


ImportFormat = Literal["auto", "jsonl", "markdown"]


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            dir_okay=False, allow_dash=True, help="JSON Lines or MEMORY.md; - for stdin."
        ),
    ],
    user: OptUserOpt = None,
    format_: Annotated[
        ImportFormat,
        typer.Option("--format", help="auto: markdown for a .md file, else jsonl."),
    ] = "auto",
) -> None:
    """Load rows written by export (same ids, times, metadata, history), or apply the
    edits of a MEMORY.md to --user's memories."""
    state = _state(ctx)
    markdown = format_ == "markdown" or (
        format_ == "auto" and file.suffix.lower() in (".md", ".markdown")
    )
    if markdown:
        if user is None:
            raise ValidationError("--user", "a MEMORY.md is applied to one user: name them")
        if str(file) == "-":
            text = sys.stdin.read()
        else:
            with _open_file(file, "r", "FILE") as fh:
                try:
                    text = fh.read()
                except UnicodeDecodeError as exc:
                    raise ValidationError(str(file), f"not UTF-8 text ({exc.reason})") from exc
        with _open(state, extract=True) as mem:
            result = mem.import_markdown(text, user_id=user)
        if state.json:
            return _emit(result.model_dump(mode="json"))
        _say(
            state.out,
            f"added {len(result.added)}, updated {len(result.updated)}, deleted "
            f"{len(result.deleted)}, replaced {len(result.replaced)} facts, unchanged "
            f"{result.unchanged}, skipped {len(result.skipped)}",
        )
        for skip in result.skipped:
            _say(state.err, f"skipped line {skip['line']} ({skip['id']}): {skip['reason']}")
        return
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


BatchOpt = Annotated[int, typer.Option("--batch-size", help="Memories per transaction.", min=1)]


@app.command()
def reindex(ctx: typer.Context, batch_size: BatchOpt = 64) -> None:
    """Re-embed every memory with the configured embedder (after changing models)."""
    state = _state(ctx)
    # The store may have been embedded with another model: that is why we are here.
    with _open(state, check_embedder=False) as mem, _progress(state, "re-embedding") as progress:
        count = mem.reindex(progress=progress, batch_size=batch_size)
    if state.json:
        return _emit({"reindexed": count, "embedder": state.embedder})
    _say(state.out, f"re-embedded {count} memories with {state.embedder}")


def _report_receipt(
    state: _State, what: str, removed: dict[str, int], remaining: dict[str, int]
) -> None:
    """Print a deletion receipt (``delete_all``'s or ``forget``'s): what was removed, and
    the checks after the commit; exit 1 when they still found something."""
    counts = ", ".join(f"{k} {n}" for k, n in removed.items() if n)
    _say(state.out, f"{what}: {counts or 'nothing'}")
    left = {k: n for k, n in remaining.items() if n}
    if left:
        _say(state.err, f"NOT verified: still found {left}")
        raise typer.Exit(1)
    _say(state.out, f"verified: {len(remaining)} checks after the commit found nothing left")
