"""Coming from Mem0: import-mem0."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mnemolayer.cli._common import _emit, _open, _open_file, _say, _state, app
from mnemolayer.errors import ValidationError
from mnemolayer.privacy.mem0 import import_mem0


def _read(path: Path, option: str) -> str:
    with _open_file(path, "r", option) as fh:
        try:
            return fh.read()
        except UnicodeDecodeError as exc:
            raise ValidationError(option, f"not UTF-8 text ({exc.reason})") from exc


@app.command("import-mem0")
def import_mem0_(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(dir_okay=False, help="Mem0's get_all answer as JSON (or a list of items)."),
    ],
    history: Annotated[
        Path | None,
        typer.Option(
            "--history", dir_okay=False, help="Mem0 history events as JSON: a list or {id: [...]}."
        ),
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="The user of items without a user_id.")
    ] = None,
) -> None:
    """Import a Mem0 export, keeping Mem0's ids, users, metadata and times; importing
    again skips what is there. Exits 1 when some items were malformed (the rest are
    imported)."""
    state = _state(ctx)
    export: Any = _read(file, "FILE")
    events: Any = _read(history, "--history") if history is not None else None
    with _open(state) as mem:
        report = import_mem0(mem, export, events, user_id=user)
    if state.json:
        _emit(report.model_dump(mode="json"))
    else:
        _say(
            state.out,
            f"imported {report.imported} memories and {report.history_imported} history "
            f"events, skipped {report.skipped} already stored, {len(report.errors)} errors",
        )
        for err in report.errors:
            _say(state.err, f"{err.field}: {err.message}")
    if report.errors:
        raise typer.Exit(1)
