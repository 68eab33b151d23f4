"""The peer comparison (bench/peers/mem0_vs_mnemolayer.py) on tiny data, hashing embedder.

The mnemolayer side, the scoring, the report and the chart run everywhere; the Mem0 side
runs only where the optional ``peers`` extra (``mem0ai``) is installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from io import StringIO
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

from mnemolayer.cli.demo import SAMPLE
from mnemolayer.embed import HashingEmbedder
from mnemolayer.models import Message

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "peers" / "mem0_vs_mnemolayer.py"

pytestmark = pytest.mark.slow  # the whole comparison on the sample: about 15 s


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mem0_vs_mnemolayer", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mnemolayer_result(peers: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return peers.run(
        SAMPLE,
        systems=["mnemolayer", "mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path_factory.mktemp("peers"),
        probe=4,
        show_progress=False,
    )


def test_render_is_what_mnemolayer_indexes(peers: ModuleType) -> None:
    from datetime import UTC, datetime

    message = Message(
        content="I went to the support group.",
        name="Caroline",
        timestamp=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    )
    assert (
        peers.render(message, "u") == '(8 May 2023) Caroline said, "I went to the support group."'
    )


def test_vector_table_serves_the_same_vectors(peers: ModuleType) -> None:
    model = HashingEmbedder()
    table = peers.VectorTable(model)
    assert table.fill(["a cat", "a dog", "a cat"], "document", batch_size=1) >= 0
    assert len(table) == 2 and table.misses == 0
    out = table.embed(["a dog", "a cat"], "document")
    assert out.shape == (2, model.dim)
    assert (out[1] == model.embed(["a cat"], "document")[0]).all()
    table.embed(["a bird"], "query")  # unseen: sent to the model once, then kept
    table.embed(["a bird"], "query")
    assert table.misses == 1 and len(table) == 3
    assert table.similarity_floor == model.similarity_floor


def test_mnemolayer_side_end_to_end(mnemolayer_result: dict) -> None:
    result = mnemolayer_result
    assert result["counts"]["conversations"] == 1
    assert result["counts"]["turns"] == 60 and result["counts"]["questions"] == 13
    assert result["checks"]["refused_connections"] == []
    assert result["checks"]["mem0_llm_calls"] is None
    for name in ("mnemolayer", "mnemolayer-vector"):
        report = result["systems"][name]
        assert report["add"]["records"] == 60 and report["add"]["calls"] == 4
        assert (
            report["add"]["ms_per_record"] >= report["add"]["ms_per_record_excluding_embedder"] >= 0
        )
        assert report["search"]["queries"] == 13
        p50 = report["search"]["ms"]["p50"]
        assert p50 > 0 and p50 >= report["search"]["ms_excluding_embedder"]["p50"]
        overall = report["metrics"]["overall"]
        assert overall["questions"] == 12  # one adversarial question is reported apart
        assert 0 <= overall["recall@5"] <= overall["recall@10"] <= 1
        assert report["store_bytes"] > 0
        assert len(result["details"][name]) == 13
    # The default (with facts) finds something; both are scored on the same questions.
    assert result["systems"]["mnemolayer"]["metrics"]["overall"]["recall@10"] > 0
    questions = [[d["index"] for d in result["details"][n]] for n in result["config"]["systems"]]
    assert questions[0] == questions[1]
    # No comparison without the Mem0 baseline; the probe timed the model both ways.
    assert result["comparison"] == {}
    assert result["embedding"]["probe"]["texts"] == 4
    json.dumps(result)  # JSON-ready


def test_every_turn_and_question_came_from_the_shared_table(peers: ModuleType) -> None:
    # Without facts, mnemolayer embeds exactly the rendered turns and the stripped
    # questions: the only misses are the warm-up's text and query.
    result = peers.run(
        SAMPLE,
        systems=["mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        probe=0,
        show_progress=False,
    )
    assert result["checks"]["vector_table"]["misses"] == 2


def _fake_report(p50: float, recall5: float) -> dict[str, Any]:
    return {
        "label": "x",
        "add": {"ms_per_record": 1.0, "ms_per_record_excluding_embedder": 0.5},
        "search": {"ms": {"p50": p50, "p95": 2 * p50}, "ms_excluding_embedder": {"p50": p50}},
        "metrics": {"overall": {"recall@5": recall5, "recall@10": recall5 + 0.1}},
    }


def test_compare_applies_the_bar(peers: ModuleType) -> None:
    systems = {
        "mem0": _fake_report(20.0, 0.5),
        "mnemolayer": _fake_report(2.0, 0.5),
        "mnemolayer-vector": _fake_report(2.0, 0.49),
        "mnemolayer-raw": _fake_report(5.0, 0.9),
    }
    out = peers.compare(systems)
    assert out["baseline"] == "mem0"
    rows = out["systems"]
    assert rows["mnemolayer"]["search_p50_speedup"] == pytest.approx(10.0)
    assert rows["mnemolayer"]["bar_met"] is True  # 10x, recall equal
    assert rows["mnemolayer-vector"]["bar_met"] is False  # recall@5 lower
    assert rows["mnemolayer-raw"]["bar_met"] is False  # only 4x
    assert rows["mnemolayer-raw"]["recall@5_delta"] == pytest.approx(0.4)
    assert peers.compare({"mnemolayer": systems["mnemolayer"]}) == {}


def test_summary_table_and_plot(peers: ModuleType, mnemolayer_result: dict, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = {**mnemolayer_result, "systems": dict(mnemolayer_result["systems"])}
    result["systems"] = {"mem0": _fake_report(50.0, 0.1), **result["systems"]}
    result["comparison"] = peers.compare(result["systems"])
    rows = peers.summary_rows(result)
    assert [r["system"] for r in rows] == ["mem0", "mnemolayer", "mnemolayer-vector"]
    assert rows[0]["speedup_p50"] is None and rows[1]["speedup_p50"] > 0
    console = Console(file=StringIO(), width=160)
    peers.print_summary(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "mnemolayer-vector" in text and "recall@5" in text and "Mem0 LLM calls" in text
    png = peers.plot(result, tmp_path / "charts" / "peers.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_line(peers: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    status = peers.main(
        [
            "--data", str(SAMPLE), "--systems", "mnemolayer-vector", "--embedder", "hashing",
            "--no-cache", "--probe", "0", "--max-questions", "5", "--no-progress",
            "--no-plot", "--no-details", "--out", str(out),
        ]
    )  # fmt: skip
    assert status == 0
    saved = json.loads(out.read_text("utf-8"))
    assert saved["counts"]["questions"] == 5 and "details" not in saved
    assert saved["config"]["command"].startswith("python bench/peers/mem0_vs_mnemolayer.py")
    assert peers.main(["--from-json", str(out), "--no-plot"]) == 0  # reprints, runs nothing
    with pytest.raises(ValueError, match="systems"):
        peers.run(SAMPLE, systems=["mnemolayer", "mnemolayer"], embedder="hashing")


def test_mem0_side(peers: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-home"))
    pytest.importorskip("mem0")
    result = peers.run(
        SAMPLE,
        systems=["mem0", "mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path / "work",
        probe=0,
        show_progress=False,
    )
    checks = result["checks"]
    assert checks["mem0_llm_calls"] == 0 and checks["refused_connections"] == []
    # Mem0 embedded the same rendered turns and questions: only the warm-up missed.
    assert checks["vector_table"]["misses"] == 2
    mem0 = result["systems"]["mem0"]
    assert mem0["add"]["records"] == 60 and mem0["search"]["queries"] == 13
    assert mem0["embedder"]["texts"]["document"] == 61  # 60 turns + the warm-up
    known = {f"D{s}:{t}" for s in range(1, 5) for t in range(1, 40)}
    for detail in result["details"]["mem0"]:
        assert set(detail["ranked"]) <= known and len(detail["ranked"]) <= 10
    assert "mnemolayer-vector" in result["comparison"]["systems"]
