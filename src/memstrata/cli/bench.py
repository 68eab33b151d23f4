"""``memstrata bench``: retrieval benchmarks (LoCoMo, MemoryBank).

The benchmark modules are imported inside each command, so that ``memstrata --help`` and
the memory commands never pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from ._common import Mode, _emit, _State, _state

bench_app = typer.Typer(no_args_is_help=True, help="Run retrieval benchmarks.")

DataPath = Annotated[Path, typer.Option(exists=True, help="Benchmark data file.")]
OutOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Write the result JSON here.")]
PlotOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Save a PNG chart here.")]
BenchEmbedder = Annotated[str | None, typer.Option(help="Embedder.", show_default="--embedder")]
WorkdirOpt = Annotated[Path | None, typer.Option(file_okay=False, help="Scratch directory.")]
CacheOpt = Annotated[bool, typer.Option(help="Reuse cached embeddings and stores.")]


def _report(state: _State, result: dict[str, Any], plot: Path | None) -> None:
    from ..bench.report import plot_results, print_report

    if plot is not None:
        plot_results([result], plot)
    if state.json:
        return _emit(result)
    print_report(result, console=state.out)


@bench_app.command()
def locomo(
    ctx: typer.Context,
    data: DataPath,
    out: OutOpt = None,
    mode: Annotated[Mode, typer.Option(help="Retrieval mode.")] = "hybrid",
    embedder: BenchEmbedder = None,
    conversations: Annotated[
        list[str] | None, typer.Option(help="Conversation id (repeatable).", show_default="all")
    ] = None,
    max_questions: Annotated[int | None, typer.Option(help="Stop after N questions.")] = None,
    workdir: WorkdirOpt = None,
    cache: CacheOpt = True,
    plot: PlotOpt = None,
) -> None:
    """LoCoMo: recall of the evidence turns for each question."""
    from ..bench.locomo import run_locomo

    state = _state(ctx)
    result = run_locomo(
        data,
        out=out,
        embedder=embedder or state.embedder,
        mode=mode,
        conversations=conversations,
        workdir=workdir,
        cache=cache,
        max_questions=max_questions,
        show_progress=not state.json,
    )
    _report(state, result, plot)


@bench_app.command()
def memorybank(
    ctx: typer.Context,
    bank: DataPath,
    gold: Annotated[Path, typer.Option(exists=True, help="Gold answers file.")],
    lang: Annotated[Literal["zh", "en"], typer.Option(help="Language of the data.")],
    out: OutOpt = None,
    mode: Annotated[Mode, typer.Option(help="Retrieval mode.")] = "hybrid",
    embedder: BenchEmbedder = None,
    workdir: WorkdirOpt = None,
    cache: CacheOpt = True,
    plot: PlotOpt = None,
) -> None:
    """MemoryBank: recall of the memory each probing question is about."""
    from ..bench.memorybank import run_memorybank

    state = _state(ctx)
    result = run_memorybank(
        bank,
        gold,
        lang=lang,
        out=out,
        embedder=embedder or state.embedder,
        mode=mode,
        workdir=workdir,
        cache=cache,
        show_progress=not state.json,
    )
    _report(state, result, plot)
