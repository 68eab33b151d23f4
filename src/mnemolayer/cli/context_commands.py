"""``mnemolayer context``: print the token-budgeted context for a query (the LoCoMo context
benchmark is ``python -m bench context`` in the source checkout)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from mnemolayer.cli._common import SessionOpt, UserOpt, _emit, _open, _say, _state, app

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
) -> None:
    """Print the memories that fit BUDGET tokens for QUERY: profile, relevant facts,
    recalled episodes and strategies, each with its time. ``--json`` prints the whole
    result (sections, items, token count)."""
    from mnemolayer.context.assemble import build_context

    state = _state(ctx)
    with _open(state) as mem:
        result = build_context(
            mem, query, user_id=user, session_id=session, budget_tokens=budget, format=format
        )
    if state.json:
        return _emit(result.to_json())
    if not result.text:
        return _say(state.err, "nothing fits: no memories for this user and query")
    typer.echo(result.text)
    _say(state.err, f"{result.tokens} of {result.budget_tokens} tokens ({result.encoding})")
    return None
