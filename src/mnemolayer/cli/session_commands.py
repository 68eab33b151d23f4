"""Commands over working-memory sessions: ``session list`` (a user's saved windows),
``session show`` (one window: pinned messages, running summary, latest turns, tokens) and
``session end`` (archive the window, write the session summary, clear session-only
memories)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from mnemolayer.cli._common import AgentOpt, UserOpt, _emit, _open, _print_table, _say, _state, app
from mnemolayer.errors import NotFoundError
from mnemolayer.layers.working.sessions import MAX_SUMMARY_TOKENS, MIN_SUMMARY_TOKENS
from mnemolayer.layers.working.window import SUMMARY_PREFIX, WorkingMemory

session_app = typer.Typer(
    no_args_is_help=True,
    help="Working-memory sessions: list the saved windows, show one, end a session.",
)
app.add_typer(session_app, name="session")

SessionArg = Annotated[str, typer.Option("--session", "-s", help="Session id.")]
# The root --json works too; this one lets it follow the command, as in the usage.
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


@session_app.command("list")
def session_list(ctx: typer.Context, user: UserOpt, as_json: JsonOpt = False) -> None:
    """List a user's saved working-memory windows, most recently used first."""
    state = _state(ctx)
    with _open(state) as mem:
        infos = mem.list_sessions(user)
    if state.json or as_json:
        return _emit(
            [
                {**asdict(i), "updated_at": i.updated_at.isoformat() if i.updated_at else None}
                for i in infos
            ]
        )
    if not infos:
        return _say(state.err, "no sessions")
    _print_table(
        state,
        ("session", "agent", "messages", "compacted", "budget", "updated"),
        [
            (
                i.session_id,
                i.agent_id,
                str(i.messages),
                str(i.evicted_count),
                str(i.budget_tokens),
                _when(i.updated_at),
            )
            for i in infos
        ],
    )
    return None


def _window_json(wm: WorkingMemory) -> dict[str, Any]:
    return {
        "user_id": wm.user_id,
        "session_id": wm.session_id,
        "agent_id": wm.agent_id,
        "budget_tokens": wm.budget_tokens,
        "tokens": wm.tokens,
        "encoding": wm.counter.name,
        "summary": wm.summary,
        "summary_rounds": wm.summary_rounds,
        "evicted_count": wm.evicted_count,
        "window": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "created_at": m.created_at.isoformat(),
                "pinned": m.pinned,
                "truncated": m.truncated,
            }
            for m in wm.window()
        ],
        "messages": wm.messages(),
    }


@session_app.command("show")
def session_show(
    ctx: typer.Context,
    user: UserOpt,
    session: SessionArg,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a session's working-memory window as the next model call sees it: pinned
    messages, the running summary and the latest turns, with its tokens and budget."""
    state = _state(ctx)
    with _open(state) as mem:
        wm = mem.session_window(session, user, agent_id=agent)
    if wm is None:
        raise NotFoundError(f"session: no saved window for session {session!r} of user {user!r}")
    if state.json or as_json:
        return _emit(_window_json(wm))
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("time", "role", "", "content"):
        table.add_column(name, overflow="fold", min_width=20 if name == "content" else None)
    window = wm.window()
    # The order of wm.messages(): the leading pinned messages, the summary, the rest.
    lead = 0
    while lead < len(window) and window[lead].pinned:
        lead += 1
    for m in window[:lead]:
        table.add_row(_when(m.created_at), m.role, "pinned", Text(m.content))
    if wm.summary:
        table.add_row("", "system", "summary", Text(SUMMARY_PREFIX + wm.summary))
    for m in window[lead:]:
        mark = "pinned" if m.pinned else ("cut" if m.truncated else "")
        table.add_row(_when(m.created_at), m.role, mark, Text(m.content))
    state.out.print(table)
    _say(
        state.err,
        f"{wm.tokens} of {wm.budget_tokens} tokens ({wm.counter.name}); {len(window)} "
        f"messages, {sum(m.pinned for m in window)} pinned; {wm.evicted_count} turns compacted into the "
        f"summary ({wm.summary_rounds} re-summarised)",
    )
    return None


@session_app.command("end")
def session_end(
    ctx: typer.Context,
    user: UserOpt,
    session: SessionArg,
    agent: AgentOpt = None,
    summary_tokens: Annotated[
        int,
        typer.Option(
            "--summary-tokens",
            help="Token budget of the session summary.",
            min=MIN_SUMMARY_TOKENS,
            max=MAX_SUMMARY_TOKENS,
        ),
    ] = 300,
    as_json: JsonOpt = False,
) -> None:
    """End a session: archive its window's turns into episodic memory, write one session
    summary there, and delete its session-only memories. Ending it again does nothing."""
    state = _state(ctx)
    with _open(state, extract=True) as mem:
        result = mem.end_session(session, user, agent_id=agent, summary_tokens=summary_tokens)
    if state.json or as_json:
        return _emit(result.to_json())
    if result.summary is None and not (result.archived or result.cleared or result.window_closed):
        return _say(state.err, f"nothing to end: session {session!r} has no open window or turns")
    _say(
        state.out,
        f"ended session {session}: archived {result.archived} turns, cleared "
        f"{result.cleared} session-only memories"
        + (", window closed" if result.window_closed else ""),
    )
    if result.summary is not None:
        _say(state.out, f"summary {result.summary.id} ({result.turns} turns):")
        _say(state.out, result.summary.content)
    return None
