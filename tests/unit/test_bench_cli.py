"""``python -m bench``: the benchmark command line of the source checkout, end to end on
the bundled sample (and MemoryBank dev when ``../shared`` holds it), hashing embedder.

The benchmarks are not part of the ``mnemolayer`` wheel: nothing under ``src/`` may import
them, and the ``mnemolayer`` command line has no ``bench`` command.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from bench.cli import bench_app
from helpers import REPO, shared_data
from mnemolayer.cli import app
from mnemolayer.cli.demo import SAMPLE

runner = CliRunner()


def ok(*args: str) -> Any:
    """``python -m bench --embedder hashing --json ARGS``: check success, parse stdout."""
    result = runner.invoke(bench_app, ["--embedder", "hashing", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bench_locomo(tmp_path: Path) -> None:
    out, plot = tmp_path / "locomo.json", tmp_path / "locomo.png"
    args = ["--data", str(SAMPLE), "--no-cache", "--workdir", str(tmp_path / "work")]
    result = ok("locomo", *args, "--out", str(out))
    assert result["config"]["embedder"].startswith("hashing")  # the global --embedder
    assert result["metrics"]["overall"]["questions"] > 0
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"] == result["metrics"]

    report = runner.invoke(
        bench_app,
        ["locomo", *args, "--embedder", "hashing", "--mode", "keyword", "--plot", str(plot)],
    )
    assert report.exit_code == 0, report.output
    assert "overall" in report.stdout and "mode=keyword" in report.stdout
    assert plot.stat().st_size > 0


def test_bench_context(tmp_path: Path) -> None:
    args = ["--data", str(SAMPLE), "--no-cache", "--workdir", str(tmp_path / "work")]
    result = ok("context", *args, "--budget", "300")
    assert result["metrics"]["overall"]["questions"] == 12
    table = runner.invoke(bench_app, ["--embedder", "hashing", "context", *args])
    assert table.exit_code == 0, table.output
    assert "context under 1500 tokens" in table.stdout


def test_bench_memorybank(tmp_path: Path) -> None:
    data = shared_data("memorybank")
    args = ["--bank", str(data / "memory_bank_en_dev.json"), "--gold", str(data / "gold_dev.jsonl")]
    result = ok("memorybank", *args, "--lang", "en", "--no-cache")
    assert result["config"]["benchmark"] == "memorybank-en"
    assert result["metrics"]["overall"]["questions"] > 0


def test_errors_are_one_line_with_the_usage_exit_code(tmp_path: Path) -> None:
    result = runner.invoke(bench_app, ["--embedder", "nope", "locomo", "--data", str(SAMPLE)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.count("error:") == 1 and "nope" in result.output


def test_python_dash_m_bench_runs_from_the_repository_root() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for command in ("locomo", "memorybank", "context", "extraction", "dedup", "scale"):
        assert command in done.stdout


def test_the_mnemolayer_cli_has_no_bench_command() -> None:
    assert "bench" not in typer.main.get_command(app).commands  # type: ignore[attr-defined]


def test_nothing_in_the_library_imports_the_benchmarks() -> None:
    pattern = re.compile(
        r"^\s*(from|import)\s+(bench\b|mnemolayer\.bench\b|\.+bench\b|"
        r"mnemolayer\.(semantic|privacy)\.evaluate\b)",
        re.M,
    )
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "src").rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    assert not (REPO / "src" / "mnemolayer" / "bench").exists()


def test_bench_ingest_times_add_against_the_bare_embedder_idle_and_busy(tmp_path: Path) -> None:
    args = ["--data", str(SAMPLE), "--messages", "30", "--batch", "10", "--single", "6"]
    result = ok("ingest", *args, "--load", "idle", "--load", "busy", "--workdir", str(tmp_path))
    assert result["config"]["embedder"].startswith("hashing")
    assert result["config"]["messages"] == 30 and set(result["runs"]) == {"idle", "busy"}
    for run in result["runs"].values():
        batched, single = run["batched"], run["one_per_call"]
        assert batched["messages"] == 30 and batched["embedder_texts_per_s"] > 0
        assert batched["ratio"] == pytest.approx(
            batched["add_messages_per_s"] / batched["embedder_texts_per_s"]
        )
        assert batched["model_texts_per_message"] >= 1.0  # each message, plus facts
        assert single["messages"] == 6 and single["ratio_p50"] > 0
        assert len(run["loadavg_1min"]) == 2
    table = runner.invoke(bench_app, ["--embedder", "hashing", "ingest", *args])
    assert table.exit_code == 0, table.output
    assert "embedder" in table.stdout and "idle" in table.stdout
    bad = runner.invoke(bench_app, ["--embedder", "hashing", "ingest", *args, "--load", "x"])
    assert bad.exit_code != 0 and "loads" in bad.output


@pytest.mark.timeout(120)
def test_bench_faults_reports_every_fault_with_nothing_acknowledged_lost() -> None:
    faults = {f["fault"]: f for f in ok("faults")["faults"]}
    disk, ro = faults["disk full (SQLite, RLIMIT_FSIZE)"], faults["read-only store (SQLite)"]
    for f in (disk, ro):
        assert f["acknowledged"] > 0 and f["found_after"] == f["acknowledged"]
        assert set(f["errors"]) == {"StoreError"} and f["recovery_s"] is not None
    if shutil.which("redis-server"):
        kept = faults["Redis killed mid-session (appendonly yes)"]
        lost = faults["Redis killed mid-session (appendonly no)"]
        assert kept["found_after"] == kept["acknowledged"] > 0 and lost["found_after"] == 0
        assert kept["errors"] == lost["errors"] == {"StoreError": 3}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--replicas", "2"), "--replicas"),  # an SQLite data dir has one server process
        (("--think", "3-1"), "--think"),
        (("--think", "soon"), "--think"),
        (("--duration", "forever"), "--duration"),
        (("--store", "mysql://db"), "--store"),
        (("--spawn-rate", "0"), "--spawn-rate"),
    ],
)
def test_bench_load_refuses_bad_options_before_starting_anything(
    tmp_path: Path, args: tuple[str, ...], field: str
) -> None:
    work = tmp_path / "work"
    result = runner.invoke(bench_app, ["load", *args, "--workdir", str(work)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.count("error:") == 1 and field in result.output
    assert not work.exists()  # no data dir, no server
    # locust patches the standard library for gevent when imported: only a run may.
    assert "locust" not in sys.modules
