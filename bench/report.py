"""Show benchmark results: rich tables in the terminal, and a recall chart as a PNG.

``python -m bench.report results/*.json --plot docs/bench/recall.png`` prints
every saved result and draws them into one chart.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from mnemolayer.errors import MnemolayerRuntimeError

from .metrics import METRIC_NAMES

__all__ = ["plot_results", "print_report", "run_label"]

_HEADERS = {
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "ndcg@10": "nDCG@10",
    "mrr": "MRR",
    "session_recall@5": "sess R@5",
}
_SUMMARY_ROWS = ("overall",)
_APART_ROWS = ("adversarial",)  # shown, but not part of the overall score


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def run_label(result: Mapping[str, Any]) -> str:
    """A short name for a run in legends: ``result["label"]`` or the search mode."""
    return str(result.get("label") or result["config"]["mode"])


def _metrics_table(result: Mapping[str, Any]) -> Table:
    config = result["config"]
    table = Table(
        title=f"{config['benchmark']} · {config['embedder']} · mode={config['mode']}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("n", justify="right")
    for name in METRIC_NAMES:
        table.add_column(_HEADERS.get(name, name), justify="right", no_wrap=True)
    rows = result["metrics"]
    names = list(rows)
    for i, name in enumerate(names):
        row = rows[name]
        cells = [_fmt(row.get(m)) for m in METRIC_NAMES]
        style = "bold" if name in _SUMMARY_ROWS else "dim" if name in _APART_ROWS else None
        is_last_before_summary = i + 1 < len(names) and names[i + 1] in _SUMMARY_ROWS
        table.add_row(
            name, str(row["questions"]), *cells, style=style, end_section=is_last_before_summary
        )
    return table


def _latency_table(latency: Mapping[str, Any]) -> Table:
    table = Table(title="latency", box=box.SIMPLE_HEAVY, title_justify="left")
    for col in ("", "p50", "p95", "p99"):
        table.add_column(col, justify="left" if not col else "right")
    rows = [
        ("add, per message (incl. embedding)", latency["add_ms_per_message"]),
        ("search", latency["search_ms"]),
        ("search, excluding query embedding", latency["search_ms_excluding_embedder"]),
    ]
    if latency.get("search_cpu_ms_excluding_embedder"):
        rows.append(("  its CPU time (this thread)", latency["search_cpu_ms_excluding_embedder"]))
    if latency.get("extract_ms_per_message"):
        rows.insert(1, ("fact extraction, per message", latency["extract_ms_per_message"]))
    for name, pct in rows:
        table.add_row(f"{name} [ms]", *(_fmt(pct.get(p), 1) for p in ("p50", "p95", "p99")))
    return table


def print_report(result: Mapping[str, Any], console: Console | None = None) -> None:
    """Print a result of :func:`run_locomo` or :func:`run_memorybank` as rich tables.

    One table has a row per category (plus ``overall``) and a column per metric (``n`` =
    questions, ``R@k`` = recall@k, ``sess R@5`` = session recall@5); the
    other the add and search latency percentiles; a last line gives ingestion speed,
    embedding-cache use and what was skipped.
    """
    console = console or Console()
    console.print(_metrics_table(result))
    latency = result["latency"]
    console.print(_latency_table(latency))
    rate = latency.get("ingest_messages_per_s")
    hit_rate = latency.get("embedder", {}).get("cache_hit_rate")
    counts = result.get("counts", {})
    skipped_n = len(counts.get("skipped_no_evidence", []))
    extract = latency.get("extract_ms_per_message")
    if extract:
        console.print(
            f"fact extraction ({result.get('config', {}).get('extractor', '?')}): mean "
            f"{extract['mean']:.2f} ms/message; add mean "
            f"{_fmt(latency.get('add_ms_per_message_mean'), 1)} ms/message",
            highlight=False,
        )
    console.print(
        f"ingested {latency['messages']} messages in {latency['ingest_seconds']:.1f} s "
        f"({_fmt(rate, 1)} messages/s; embedding cache hits {_fmt(hit_rate, 2)}); "
        f"{counts.get('questions', 0)} questions scored, {skipped_n} skipped without evidence, "
        f"{len(counts.get('unrecoverable_evidence', []))} with unrecoverable evidence ids",
        highlight=False,
    )


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only; never needs a display
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MnemolayerRuntimeError(
            "plot_results needs matplotlib: pip install -e '.[plot]' in the mnemolayer checkout"
        ) from exc
    return plt


def _tick(category: str, questions: int) -> str:
    note = ", not in overall" if category in _APART_ROWS else ""
    return f"{category}\n(n={questions}{note})"


def _draw_panel(ax: Any, runs: list[Mapping[str, Any]], colors: Sequence[Any]) -> None:
    """Nested bars per category: recall@10 (light), @5 (medium), @1 (dark) per run."""
    categories = list(runs[0]["metrics"])
    width = 0.8 / len(runs)
    shades = (("recall@10", 0.30), ("recall@5", 0.65), ("recall@1", 1.0))
    for r, (result, color) in enumerate(zip(runs, colors, strict=False)):
        xs = [c + (r - (len(runs) - 1) / 2) * width for c in range(len(categories))]
        for metric, alpha in shades:
            values = [result["metrics"].get(cat, {}).get(metric) or 0.0 for cat in categories]
            ax.bar(xs, values, width * 0.92, color=color, alpha=alpha, linewidth=0)
        for x, cat in zip(xs, categories, strict=True):
            value = result["metrics"].get(cat, {}).get("recall@5")
            if value is not None:
                ax.text(x, value + 0.01, f"{value:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(
        [_tick(c, runs[0]["metrics"][c]["questions"]) for c in categories], fontsize=8
    )
    for c, cat in enumerate(categories):
        if cat in _SUMMARY_ROWS:  # set the summary apart from the categories it averages
            ax.axvline(c - 0.5, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_ylim(0, 1.1)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("recall")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    title = runs[0]["config"]["benchmark"]
    ax.set_title(f"{title} — {runs[0]['config']['embedder']}", fontsize=10, loc="left")


def plot_results(
    results: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, dpi: int = 130
) -> Path:
    """Draw recall@1/5/10 by category for one or more runs into a PNG.

    One panel per benchmark (``config.benchmark``); in each, a group of bars per category
    with one bar per run (labelled by :func:`run_label`). Each bar nests recall@10 (light),
    recall@5 (medium, value printed) and recall@1 (dark), which works because
    recall@1 ≤ recall@5 ≤ recall@10.

    Returns:
        The path written (parents created).

    Raises:
        MnemolayerRuntimeError: matplotlib is not installed.
        ValueError: ``results`` is empty.
    """
    if not results:
        raise ValueError("plot_results needs at least one result")
    plt = _pyplot()
    from matplotlib.patches import Patch

    groups: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        groups.setdefault(result["config"]["benchmark"], []).append(result)
    labels = list(dict.fromkeys(run_label(r) for r in results))
    palette = plt.get_cmap("tab10").colors
    color_of = {label: palette[i % len(palette)] for i, label in enumerate(labels)}
    widest = max(len(runs[0]["metrics"]) for runs in groups.values())
    fig, axes = plt.subplots(
        len(groups), 1, figsize=(max(7.0, 1.5 * widest + 2), 3.4 * len(groups)), squeeze=False
    )
    for ax, runs in zip(axes[:, 0], groups.values(), strict=True):
        _draw_panel(ax, runs, [color_of[run_label(r)] for r in runs])
    handles = [Patch(color=color_of[label], label=label) for label in labels]
    handles += [
        Patch(color="0.2", alpha=a, label=name)
        for name, a in (("recall@1", 1.0), ("recall@5 (value shown)", 0.65), ("recall@10", 0.3))
    ]
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_figheight()))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench.report RESULT.json ... [--plot PNG]``."""
    import argparse

    parser = argparse.ArgumentParser(description="Print saved benchmark results; chart them.")
    parser.add_argument("results", nargs="+", type=Path, help="result JSON files")
    parser.add_argument("--plot", type=Path, help="write a recall chart (PNG) here")
    args = parser.parse_args(argv)
    results = [json.loads(p.read_text(encoding="utf-8")) for p in args.results]
    console = Console()
    for result in results:
        print_report(result, console)
        console.print()
    if args.plot:
        console.print(f"chart: {plot_results(results, args.plot)}")


if __name__ == "__main__":
    main()
