"""Context assembly commands: ``mnemolayer context`` (print the token-budgeted context for a
query) and ``mnemolayer bench context`` (LoCoMo: is each question's evidence in it?)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from mnemolayer.cli._common import SessionOpt, UserOpt, _emit, _open, _say, _state, app
from mnemolayer.cli.bench import BenchEmbedder, CacheOpt, DataPath, OutOpt, WorkdirOpt, bench_app
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
        )
    if state.json:
        return _emit(result.to_json())
    if not result.text:
        return _say(state.err, "nothing fits: no memories for this user and query")
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


@bench_app.command("context")
def bench_context(
    ctx: typer.Context,
    data: DataPath,
    budget: BudgetOpt = 1500,
    out: OutOpt = None,
    embedder: BenchEmbedder = None,
    conversations: Annotated[
        list[str] | None, typer.Option(help="Conversation id (repeatable).", show_default="all")
    ] = None,
    max_questions: Annotated[int | None, typer.Option(help="Stop after N questions.")] = None,
    workdir: WorkdirOpt = None,
    cache: CacheOpt = True,
    format: Annotated[Format, typer.Option("--format", help="Context rendering.")] = "markdown",
) -> None:
    """LoCoMo: fraction of questions whose gold evidence turns are all in the context
    assembled under BUDGET tokens, and the mean context tokens."""
    from rich import box
    from rich.table import Table

    from mnemolayer.bench.context import run_context_bench

    state = _state(ctx)
    result = run_context_bench(
        data,
        budget_tokens=budget,
        out=out,
        embedder=embedder or state.embedder,
        conversations=conversations,
        workdir=workdir,
        cache=cache,
        max_questions=max_questions,
        show_progress=not state.json,
        extractor=state.extractor,
        format=format,
    )
    if state.json:
        return _emit(result)
    table = Table(box=box.SIMPLE_HEAD, title=f"context under {budget} tokens")
    for column in ("category", "questions", "all evidence", "with facts", "recall", "mean tok"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, row in result["metrics"].items():
        if not row.get("questions"):
            continue
        table.add_row(
            name,
            str(row["questions"]),
            f"{row['all_evidence']:.1%}",
            f"{row['all_evidence_or_fact']:.1%}",
            f"{row['evidence_recall']:.1%}",
            f"{row['mean_tokens']:.0f}",
        )
    state.out.print(table)
    if out is not None:
        _say(state.err, f"result written to {Path(out)}")
    return None
