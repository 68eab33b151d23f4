"""Commands over procedural memory: ``strategies`` (what worked for similar tasks, and the
insights drawn from all outcomes)."""

from __future__ import annotations

from typing import Annotated

import typer

from mnemolayer.cli._common import AgentOpt, UserOpt, _emit, _open, _print_table, _say, _state, app
from mnemolayer.layers.procedural.strategies import ProceduralConfig


@app.command()
def strategies(
    ctx: typer.Context,
    user: UserOpt,
    task: Annotated[
        str | None,
        typer.Argument(help="The task at hand; omit it to list insights over all outcomes."),
    ] = None,
    agent: AgentOpt = None,
    limit: Annotated[int, typer.Option(help="At most this many strategies.")] = 10,
    min_successes: Annotated[
        int | None,
        typer.Option("--min-successes", help="Successes that make a strategy reliable.", min=1),
    ] = None,
    min_failures: Annotated[
        int | None,
        typer.Option("--min-failures", help="Failures that make a failure recurring.", min=1),
    ] = None,
) -> None:
    """Show the strategies tried on tasks similar to TASK with their successes and failures,
    or without TASK the insights: reliable strategies and recurring failures."""
    state = _state(ctx)
    changes: dict[str, int] = {}
    if min_successes is not None:
        changes["success_threshold"] = min_successes
    if min_failures is not None:
        changes["failure_threshold"] = min_failures
    with _open(state) as mem:
        config = ProceduralConfig(**{**mem.procedural_config.model_dump(), **changes})
        if task is None:
            insights = mem.reflect(user_id=user, agent_id=agent, config=config)
        else:
            found = mem.strategies(task, user_id=user, agent_id=agent, limit=limit, config=config)
    if task is None:
        if state.json:
            return _emit([i.to_json() for i in insights])
        if not insights:
            return _say(state.err, "no insights yet")
        _print_table(
            state,
            ("insight", "strategy", "ok", "failed", "tasks like"),
            [
                (
                    "reliable" if i.kind == "reliable" else "recurring failure",
                    i.strategy,
                    str(i.successes),
                    str(i.failures),
                    i.task,
                )
                for i in insights
            ],
        )
        return None
    if state.json:
        return _emit([s.to_json() for s in found])
    if not found:
        return _say(state.err, "no outcomes of similar tasks")
    _print_table(
        state,
        ("strategy", "ok", "failed", "rate", "last tried", "similar tasks"),
        [
            (
                s.strategy,
                str(s.successes),
                str(s.failures),
                f"{s.success_rate:.0%}",
                s.last_outcome_at.strftime("%Y-%m-%d"),
                "; ".join(s.tasks),
            )
            for s in found
        ],
    )
    return None
