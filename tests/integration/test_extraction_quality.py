"""The rule extractor on the labelled gold sets: the issue's extraction-quality bar.

Precision ≥ 0.85 and recall ≥ 0.70 per language, under the matching rule of
:mod:`bench.extraction`. On failure the message lists the worst kinds and a
sample of the false positives and negatives. The same figures, with a table per kind:
``python -m bench extraction``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.extraction import ExtractionScores, evaluate, load_gold
from mnemolayer.extract.base import Extractor

rules = pytest.importorskip(
    "mnemolayer.extract.rules.extractor",
    reason="the rule extractor (mnemolayer.extract.rules.extractor) is absent",
)

GOLD_DIR = Path(__file__).resolve().parents[1] / "data" / "extraction"
MIN_PRECISION = 0.85
MIN_RECALL = 0.70


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    built: Extractor = rules.RuleExtractor()
    return built


def _summary(scores: ExtractionScores, sample: int = 12) -> str:
    kinds = ", ".join(
        f"{kind} P={c.precision:.2f} R={c.recall:.2f}" for kind, c in scores.by_kind.items()
    )
    fps = "\n".join(
        f"  FP {e.example_id}: ({e.fact.subject}, {e.fact.predicate}, {e.fact.object}) "
        f"neg={e.fact.negated} date={e.fact.date}"
        for e in scores.false_positives[:sample]
    )
    fns = "\n".join(
        f"  FN {e.example_id}: ({e.fact.subject}, {e.fact.predicate}, {e.fact.object}) "
        f"neg={e.fact.negated} date={e.fact.date}"
        for e in scores.false_negatives[:sample]
    )
    return (
        f"P={scores.precision:.3f} R={scores.recall:.3f} F1={scores.f1:.3f} "
        f"({scores.total.matched}/{scores.total.predicted} predicted, "
        f"{scores.total.matched}/{scores.total.gold} gold)\n{kinds}\n{fps}\n{fns}"
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rules_reach_the_quality_bar(lang: str, extractor: Extractor) -> None:
    examples = load_gold(GOLD_DIR / f"{lang}.jsonl")
    assert len(examples) >= 80
    scores = evaluate(extractor, examples)
    summary = _summary(scores)
    assert scores.precision >= MIN_PRECISION, f"{lang} precision below the bar: {summary}"
    assert scores.recall >= MIN_RECALL, f"{lang} recall below the bar: {summary}"
