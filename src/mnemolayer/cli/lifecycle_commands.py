"""Commands over the memory lifecycle of one memory: ``explain`` (why it ranks where it
does, or why recall leaves it out), ``pin`` / ``unpin`` (keep it from decaying), and
``archive`` / ``restore`` (take it out of recall and bring it back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from mnemolayer.cli._common import IdArg, OptUserOpt, _emit, _open, _say, _state, app
from mnemolayer.memory import Memory
from mnemolayer.models import MemoryRecord

QueryOpt = Annotated[
    str | None, typer.Option("--query", "-q", help="Also rank the memory for this query.")
]


@app.command()
def explain(
    ctx: typer.Context, memory_id: IdArg, user: OptUserOpt = None, query: QueryOpt = None
) -> None:
    """Explain a memory: retention and its parts, importance and why, pin, expiry,
    superseded, archived, merged or consolidated state, and with --query its rank."""
    state = _state(ctx)
    # Ranking for a query embeds it; the explanation alone needs no model check.
    with _open(state, check_embedder=query is not None) as mem:
        result = mem.explain(memory_id, user_id=user, query=query)
    if state.json:
        return _emit(result.to_json())
    _say(state.out, f"{result.memory_id} ({result.kind.value}, user {result.user_id})")
    for line in result.summary:
        _say(state.out, f"  {line}")
    return None


def _change(
    ctx: typer.Context,
    memory_id: str,
    user: str | None,
    call: Callable[[Memory, str, str | None], MemoryRecord],
    done: str,
) -> None:
    state = _state(ctx)
    with _open(state, check_embedder=False) as mem:
        record = call(mem, memory_id, user)
    if state.json:
        return _emit(record.to_json())
    _say(state.out, f"{done} {record.id}")
    return None


@app.command()
def pin(ctx: typer.Context, memory_id: IdArg, user: OptUserOpt = None) -> None:
    """Pin a memory: it never decays and is never forgotten (an archived one is restored)."""
    _change(ctx, memory_id, user, lambda m, i, u: m.pin(i, user_id=u), "pinned")


@app.command()
def unpin(ctx: typer.Context, memory_id: IdArg, user: OptUserOpt = None) -> None:
    """Unpin a memory: it decays again like any other."""
    _change(ctx, memory_id, user, lambda m, i, u: m.unpin(i, user_id=u), "unpinned")


@app.command()
def archive(ctx: typer.Context, memory_id: IdArg, user: OptUserOpt = None) -> None:
    """Archive a memory: out of recall, kept and restorable (a pinned one must be unpinned)."""
    _change(ctx, memory_id, user, lambda m, i, u: m.archive(i, user_id=u), "archived")


@app.command()
def restore(ctx: typer.Context, memory_id: IdArg, user: OptUserOpt = None) -> None:
    """Restore an archived memory into recall."""
    _change(ctx, memory_id, user, lambda m, i, u: m.restore(i, user_id=u), "restored")
