"""The benchmark runners end to end on tiny data with the deterministic hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.locomo import run_locomo
from bench.metrics import METRIC_NAMES
from bench.report import plot_results, print_report
from mnemolayer.cli.demo import SAMPLE

ROWS = ("multi-hop", "temporal", "open-domain", "single-hop", "overall", "adversarial")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("bench")
    return run_locomo(
        SAMPLE,
        out=tmp / "out" / "locomo.json",
        embedder="hashing",
        workdir=tmp / "work",
        cache=False,
        show_progress=False,
    )


def test_locomo_result_shape(result: dict) -> None:
    assert tuple(result["metrics"]) == ROWS
    overall = result["metrics"]["overall"]
    assert overall["questions"] == 12  # the sample's 13 questions minus 1 adversarial
    assert result["metrics"]["adversarial"]["questions"] == 1
    for name in METRIC_NAMES:
        assert 0.0 <= overall[name] <= 1.0
    assert overall["recall@10"] > 0
    assert overall["recall@1"] <= overall["recall@5"] <= overall["recall@10"]
    assert result["counts"]["messages"] == 60
    assert result["config"]["embedder"].startswith("hashing")
    assert len(result["config"]["data"]["locomo"]["sha256"]) == 64
    latency = result["latency"]
    assert latency["searches"] == 13 and latency["add_calls"] == 4
    assert latency["search_ms"]["p50"] >= latency["search_ms_excluding_embedder"]["p50"] >= 0
    assert latency["search_cpu_ms_excluding_embedder"]["p50"] >= 0
    assert set(result["by_conversation"]) == {"sample-1"}


def test_result_is_written_as_json(result: dict, tmp_path_factory: pytest.TempPathFactory) -> None:
    saved = list(Path(tmp_path_factory.getbasetemp()).glob("bench*/out/locomo.json"))
    assert saved and json.loads(saved[0].read_text("utf-8"))["metrics"] == result["metrics"]


def test_report_and_plot(result: dict, tmp_path: Path) -> None:
    from rich.console import Console

    console = Console(record=True, width=120)
    print_report(result, console)
    text = console.export_text()
    assert "single-hop" in text and "R@5" in text and "search" in text
    pytest.importorskip("matplotlib")
    keyword = {**result, "label": "keyword"}
    png = plot_results([result, keyword], tmp_path / "recall.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_max_questions_stops_early(tmp_path: Path) -> None:
    small = run_locomo(
        SAMPLE,
        embedder="hashing",
        cache=False,
        max_questions=3,
        show_progress=False,
        workdir=tmp_path,
    )
    assert small["counts"]["questions"] == 3


@pytest.mark.parametrize("style", ["prefix", "role", "per-turn"])
def test_add_styles_recall_as_the_bench_way(
    style: str, result: dict, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp(f"style-{style}")
    styled = run_locomo(
        SAMPLE, embedder="hashing", workdir=tmp, cache=False, show_progress=False,
        add_style=style,  # type: ignore[arg-type]
    )  # fmt: skip
    assert styled["config"]["add_style"] == style
    for row in ("overall", "adversarial"):
        got, want = styled["metrics"][row]["recall@5"], result["metrics"][row]["recall@5"]
        assert abs(got - want) <= 0.02, (row, got, want)
    calls = styled["latency"]["add_calls"]
    assert calls == (60 if style == "per-turn" else 4)
