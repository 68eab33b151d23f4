"""``bench.context`` on the bundled sample: it builds its own SQLite store in its work
directory, so it runs here, on a file."""

from __future__ import annotations

from pathlib import Path


def test_the_context_bench_runs_on_the_sample(tmp_path: Path) -> None:
    from bench.context import run_context_bench
    from mnemolayer.cli.demo import SAMPLE

    result = run_context_bench(
        SAMPLE,
        budget_tokens=300,
        embedder="hashing",
        workdir=tmp_path,
        cache=False,
        show_progress=False,
    )
    overall = result["metrics"]["overall"]
    assert overall["questions"] == 12 and result["metrics"]["adversarial"]["questions"] == 1
    assert overall["all_evidence_whole"] <= overall["all_evidence"]
    assert overall["all_evidence"] <= overall["all_evidence_or_fact"] <= 1.0
    assert overall["max_tokens"] <= 300
    answered = [d for d in result["details"] if d["answer_in_context"] is not None]
    assert overall["extractive_answers"] == sum(d["category"] != 5 for d in answered)
    if answered:
        assert 0.0 <= overall["answer_in_context"] <= 1.0
    for row in result["details"]:
        assert set(row["condensed"]) <= set(row["episodes"])
        assert row["all_evidence"] == all(g in row["episodes"] for g in row["gold"])
