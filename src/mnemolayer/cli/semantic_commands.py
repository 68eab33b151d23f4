"""Commands over semantic memory: facts, profile, graph, extract."""

from __future__ import annotations

from typing import Annotated

import typer

from mnemolayer.cli._common import (
    UserOpt,
    _emit,
    _fields,
    _open,
    _print_table,
    _progress,
    _say,
    _state,
    app,
)
from mnemolayer.models import Fact


def _fact_row(f: Fact) -> tuple[str, ...]:
    day = "%Y-%m-%d"
    return (
        f.subject,
        f.predicate,
        f.object,
        f.valid_from.strftime(day) if f.valid_from else "",
        f.valid_to.strftime(day) if f.valid_to else "",
        f"{f.confidence:.2f}",
        f.id,
    )


_FACT_COLUMNS = ("subject", "predicate", "object", "valid from", "valid to", "conf.", "id")


@app.command()
def facts(
    ctx: typer.Context,
    user: UserOpt,
    subject: Annotated[
        str | None, typer.Option(help="Entity name or alias ('user' is the user).")
    ] = None,
    predicate: Annotated[str | None, typer.Option(help="Predicate, e.g. lives_in.")] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="What was true at this time (ISO-8601).")
    ] = None,
    include_history: Annotated[
        bool, typer.Option("--history", help="Also facts that are no longer true.")
    ] = False,
    trusted_only: Annotated[
        bool, typer.Option("--trusted-only", help="Leave out facts only tools, web... stated.")
    ] = False,
) -> None:
    """List facts of a user's knowledge graph (current ones by default)."""
    state = _state(ctx)
    with _open(state, create=False) as mem:
        found = mem.facts(
            user_id=user, subject=subject, predicate=predicate, as_of=as_of,
            include_history=include_history, trusted_only=trusted_only,
        )  # fmt: skip
    if state.json:
        return _emit([f.to_json() for f in found])
    if not found:
        return _say(state.err, "no facts")
    _print_table(state, _FACT_COLUMNS, [_fact_row(f) for f in found])


@app.command()
def profile(
    ctx: typer.Context,
    user: UserOpt,
    subject: Annotated[str, typer.Option(help="Whose profile ('user' is the user).")] = "user",
) -> None:
    """Show what is currently known about the user (identity, relationships, preferences, plans)."""
    state = _state(ctx)
    with _open(state, create=False) as mem:
        data = mem.profile(user_id=user, subject=subject)
    if state.json:
        return _emit(data)
    _fields(state, data)


@app.command()
def graph(
    ctx: typer.Context,
    entity: Annotated[str, typer.Argument(help="Entity name or alias.")],
    user: UserOpt,
    depth: Annotated[int, typer.Option(help="How many hops to follow (1-5).")] = 1,
    include_history: Annotated[
        bool, typer.Option("--history", help="Also follow facts that are no longer true.")
    ] = False,
) -> None:
    """Show the entities within DEPTH hops of ENTITY and the facts linking them."""
    state = _state(ctx)
    with _open(state, create=False) as mem:
        found = mem.neighbors(entity, user_id=user, depth=depth, include_history=include_history)
    if state.json:
        return _emit(
            {
                "entity": found["entity"].model_dump(mode="json"),
                "neighbors": [
                    {"entity": n["entity"].model_dump(mode="json"), "hops": n["hops"]}
                    for n in found["neighbors"]
                ],
                "facts": [f.to_json() for f in found["facts"]],
            }
        )
    _print_table(
        state,
        ("entity", "type", "hops"),
        [(n["entity"].name, n["entity"].type, str(n["hops"])) for n in found["neighbors"]],
    )
    _print_table(state, _FACT_COLUMNS, [_fact_row(f) for f in found["facts"]])


@app.command()
def extract(
    ctx: typer.Context,
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user.")] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="Messages per transaction.", min=1)
    ] = 64,
) -> None:
    """Mine stored messages that no fact cites yet (older stores, extraction off, imports)."""
    state = _state(ctx)
    with _open(state, extract=True) as mem, _progress(state, "extracting") as progress:
        added = mem.extract_facts(user_id=user, progress=progress, batch_size=batch_size)
    if state.json:
        return _emit({"facts_added": added})
    _say(state.out, f"added {added} facts")
