"""``python -m bench scale`` at CI size: it runs end to end through the real write path,
and the ANN index it measures keeps recall@10 >= 0.95 against exact search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bench.cli import bench_app as app
from bench.scale import ScaleData, StagedEmbedder, plot_scale, run_scale
from mnemolayer.errors import EmbedderError, ValidationError
from mnemolayer.retrieval.ann import AnnConfig


def test_scale_slice_runs_and_keeps_recall(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = run_scale(
        4_000,
        users=40,
        queries=30,
        batch=50,
        embedder_sample=0,
        recall_queries=100,
        ann=AnnConfig(threshold=1_000),
        workdir=tmp_path / "work",
        out=out,
        show_progress=False,
    )
    assert json.loads(out.read_text("utf-8")) == json.loads(json.dumps(result))
    cfg = result["config"]
    assert (cfg["n"], cfg["users"], cfg["big_user"]) == (4_000, 40, 2_000)
    assert result["add"]["records"] == 4_000 and result["add"]["records_per_s"] > 0
    for group in ("small_users", "big_user"):
        row = result["search"][group]
        assert row["searches"] == 30 and 0 < row["p50"] <= row["p95"] <= row["p99"]
        cpu = row["cpu_ms"]
        assert 0 < cpu["p50"] <= cpu["p95"] <= cpu["p99"] and len(row["loadavg_1min"]) == 2
    ann = result["ann"]
    assert ann["used"] and ann["vectors"] == 2_000 and ann["builds"] == 1
    assert ann["recall@10"] >= 0.95, ann
    assert result["store"]["bytes"] > 0 and result["memory"]["peak_rss_bytes"] > 0
    assert result["embedder"]["model"] is None  # not timed at sample 0
    png = plot_scale([result], tmp_path / "scale.png")
    assert png.stat().st_size > 1000


def test_scale_on_postgres_runs_and_drops_its_database(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setenv("MNEMOLAYER_BENCH_PG_URL", pg_url)
    result = run_scale(
        600,
        users=6,
        backend="postgres",
        queries=10,
        embedder_sample=0,
        recall_queries=20,
        ann=AnnConfig(threshold=100),
        workdir=tmp_path / "work",
        show_progress=False,
    )
    assert result["config"]["backend"] == "postgres"
    assert result["add"]["records"] == 600 and result["add"]["analyze_seconds"] >= 0
    assert result["search"]["big_user"]["searches"] == 10
    assert result["ann"]["used"] and result["ann"]["recall@10"] >= 0.95
    assert result["store"]["bytes"] > 0 and result["store"]["path"].startswith("postgresql://")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'mnemolayer_scale_%'"
        ).fetchone()
    assert left == (0,)


def test_scale_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app,
        [
            "--embedder", "hashing", "--json", "scale",
            "--n", "600", "--n", "800", "--users", "10", "--queries", "5",
            "--embedder-sample", "0", "--ann-threshold", "100",
            "--workdir", str(tmp_path / "w"), "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [r["config"]["n"] for r in document["runs"]] == [600, 800]
    assert json.loads(out.read_text("utf-8")) == document


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(ValidationError, match="n"):
        run_scale(0, show_progress=False)
    with pytest.raises(ValidationError, match="big_user"):
        run_scale(100, big_user=200, show_progress=False)
    with pytest.raises(ValidationError, match="backend"):
        run_scale(100, backend="oracle", embedder_sample=0, show_progress=False)


def test_data_is_reproducible_and_staged_embedder_is_strict() -> None:
    a, b = ScaleData(500, dim=16, seed=9), ScaleData(500, dim=16, seed=9)
    ids = np.array([3, 77, 499])
    assert np.array_equal(a.vectors(ids), b.vectors(ids))
    assert a.text(77) == b.text(77) and a.text(77).startswith("#77 ")
    staged = StagedEmbedder(16)
    staged.docs[77] = a.vectors(np.array([77]))[0]
    assert staged.embed([f"(1 May 2024) {a.text(77)}"]).shape == (1, 16)
    with pytest.raises(EmbedderError):
        staged.embed([a.text(77)])  # each staged vector is used once
