"""``mnemolayer maintain``: one maintenance pass over the store (expiry, merging of
near-duplicates, consolidation, forgetting), with a report of what changed."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from mnemolayer.cli._common import OptUserOpt, _emit, _open, _say, _state, app
from mnemolayer.lifecycle.maintain import MaintenanceReport

_ROWS = (
    ("examined", "records examined"),
    ("expired", "expired (deleted)"),
    ("purged", "purged (archived or merged long ago)"),
    ("embedded", "embedded (embedding was pending)"),
    ("extracted", "facts extracted (extraction was pending)"),
    ("merged", "merged into a near-duplicate"),
    ("consolidated", "linked to a consolidation"),
    ("created", "semantic records created"),
    ("archived", "archived (faded)"),
    ("deleted", "deleted (faded)"),
    ("derived_deleted", "facts' records deleted with their sources"),
    ("released", "released from a deleted record"),
    ("active", "active afterwards"),
)
#: With more users than this, the table shows the totals only (``--json`` has them all).
_MAX_USER_COLUMNS = 4


def _table(report: MaintenanceReport) -> Table:
    verb = "would change" if report.dry_run else "changed"
    table = Table(
        title=f"maintenance at {report.now.isoformat()}: {report.changes} {verb} "
        f"in {report.duration_s:.2f} s" + (" (dry run)" if report.dry_run else ""),
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    table.add_column("")
    users = report.users if len(report.users) <= _MAX_USER_COLUMNS else []
    for user in users:
        table.add_column(Text(user.user_id), justify="right", overflow="fold")
    if len(report.users) != 1:
        table.add_column(f"all {len(report.users)} users", justify="right")
    totals = report.totals
    for key, label in _ROWS:
        cells = [str(getattr(u, key)) for u in users]
        if len(report.users) != 1:
            cells.append(str(totals[key]))
        table.add_row(label, *cells)
    return table


@app.command()
def maintain(
    ctx: typer.Context,
    user: OptUserOpt = None,
    now: Annotated[
        str | None,
        typer.Option(
            help="Judge expiry and retention at this time (ISO-8601).", show_default="now"
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would change; write nothing.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (as the global --json).")
    ] = False,
) -> None:
    """Apply the memory lifecycle: delete expired memories, merge near-duplicates,
    consolidate what was said in 3+ sessions, archive faded small talk."""
    state = _state(ctx)
    # A dry run writes nothing, so it must not make a store either.
    with _open(state, create=not dry_run) as mem:
        report = mem.maintain(user_id=user, now=now, dry_run=dry_run)
    if state.json or as_json:
        return _emit(report.to_json())
    if not report.users:
        return _say(state.err, "no memories")
    state.out.print(_table(report))
    return None
