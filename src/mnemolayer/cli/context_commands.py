"""``mnemolayer context``: print the token-budgeted context for a query (the LoCoMo context
benchmark is ``python -m bench context`` in the source checkout)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import typer

from mnemolayer.cli._common import SessionOpt, UserOpt, _emit, _open, _say, _state, app
from mnemolayer.errors import ValidationError

Format = Literal["markdown", "json"]
BudgetOpt = Annotated[int, typer.Option("--budget", help="Token budget (o200k_base).", min=1)]


@app.command("context")
def context_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The message or task the context is for.")],
    user: UserOpt,
    session: SessionOpt = None,
    budget: BudgetOpt = 1500,
    format: Annotated[Format, typer.Option("--format", help="Rendering of the text.")] = "markdown",
    section: Annotated[
        list[str] | None,
        typer.Option(
            "--section",
            help="Only this section: profile, facts, episodes, strategies, recent (repeatable).",
            show_default="all",
        ),
    ] = None,
    recent_json: Annotated[
        str | None,
        typer.Option(
            help='The latest turns, oldest first: [{"role": ..., "content": ..., "time": ...}].',
            show_default="the --session's saved window",
        ),
    ] = None,
    encoding: Annotated[
        str | None, typer.Option(help="Token encoding.", show_default="o200k_base")
    ] = None,
    include_untrusted: Annotated[
        bool,
        typer.Option(
            "--include-untrusted", help="Also memories of tools, web pages, imports, agents."
        ),
    ] = False,
) -> None:
    """Print the memories that fit BUDGET tokens for QUERY: profile, relevant facts,
    recalled episodes and strategies, each with its time, and the recent turns (the
    session's saved window, or --recent-json). ``--json`` prints the whole result
    (sections, items, token count)."""
    state = _state(ctx)
    recent = _recent(recent_json) if recent_json is not None else None
    with _open(state, create=False) as mem:
        result = mem.context(
            query,
            user_id=user,
            session_id=session,
            budget_tokens=budget,
            format=format,
            sections=section,
            recent=recent,
            counter=encoding,
            include_untrusted=include_untrusted,
        )
    if state.json:
        return _emit(result.to_json())
    if not result.text:
        why = "nothing fits: no memories for this user and query"
        if not include_untrusted:
            why += " (memories of tools, web pages, imports and agents are left out: --include-untrusted)"
        return _say(state.err, why)
    typer.echo(result.text)
    _say(state.err, f"{result.tokens} of {result.budget_tokens} tokens ({result.encoding})")
    return None


def _recent(raw: str) -> list[tuple[Any, ...]]:
    """``--recent-json``: a JSON list of ``{"role", "content", "time"}`` objects (or
    ``[role, content, time]`` lists) as ``Memory.context`` takes them."""
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError("--recent-json", f"not valid JSON ({exc})") from exc
    if not isinstance(value, list):
        raise ValidationError("--recent-json", "must be a JSON list of turns")
    turns: list[tuple[Any, ...]] = []
    for i, turn in enumerate(value):
        # Memory.context checks each turn (naming recent[i].role, recent[i].content...).
        if isinstance(turn, dict):
            turns.append((turn.get("role"), turn.get("content"), turn.get("time")))
        elif isinstance(turn, list):
            turns.append(tuple(turn))
        else:
            raise ValidationError(f"--recent-json[{i}]", "must be an object with role and content")
    return turns
