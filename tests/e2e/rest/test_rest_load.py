"""``python -m bench load``, the CI slice: simulated agents against real ``mnemolayer
serve`` processes for a few seconds, hashing embedder; any failed request fails the test.

The command runs as a process of its own: locust patches the standard library for
gevent when it is imported, which must not happen inside pytest (so nothing here imports
``bench.load.agents``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO


def bench_load(
    tmp_path: Path, *args: str, timeout: float = 150
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "bench", "--embedder", "hashing", "--json", "load", *args]
    return subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def checked(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout)
    totals = result["totals"]
    assert totals["failures"] == 0 and totals["exceptions"] == 0, result["errors"]
    assert totals["server_tracebacks"] == 0
    return result


@pytest.mark.timeout(180)
def test_a_short_load_on_a_data_dir_has_no_errors(tmp_path: Path) -> None:
    out, plot = tmp_path / "load.json", tmp_path / "load.png"
    result = checked(
        bench_load(
            tmp_path,
            *("--duration", "20s", "--agents", "8", "--tenants", "2", "--users", "2"),
            *("--think", "0.1-0.5", "--interval", "2", "--spawn-rate", "8"),
            *("--workdir", str(tmp_path / "work"), "--out", str(out), "--plot", str(plot)),
        )
    )
    assert json.loads(out.read_text(encoding="utf-8"))["totals"] == result["totals"]
    cfg = result["config"]
    assert cfg["embedder"] == "hashing" and cfg["auth"] and cfg["replicas"] == 1
    assert set(result["operations"]) == set(cfg["weights"])  # every kind of request was made
    for name, op in result["operations"].items():
        assert op["requests"] > 0 and op["failures"] == 0, name
        assert 0 < op["p50"] <= op["p95"] <= op["p99"] <= op["max"], name
    totals = result["totals"]
    assert totals["requests"] == sum(op["requests"] for op in result["operations"].values())
    assert totals["rps"] > 1 and totals["seconds"] >= 20
    assert sum(point["requests"] for point in result["timeline"]) == totals["requests"]
    (server,) = result["servers"]
    assert server["requests"] == totals["requests"]
    assert len(server["samples"]) >= 10 and all(s[1] > 10 for s in server["samples"])
    assert len(result["loadavg"]["start"]) == len(result["loadavg"]["end"]) == 3
    # Both tenants got stores of their own (keys reached them), under the data dir.
    tenants = tmp_path / "work" / "data" / "tenants"
    assert sorted(p.name for p in tenants.iterdir()) == ["tenant0", "tenant1"]
    assert plot.stat().st_size > 10_000


@pytest.mark.timeout(180)
def test_two_replicas_on_one_postgres_database_share_the_load(tmp_path: Path, pg_url: str) -> None:
    result = checked(
        bench_load(
            tmp_path,
            *("--store", pg_url, "--replicas", "2", "--duration", "10s", "--agents", "6"),
            *("--think", "0.1-0.5", "--interval", "2", "--spawn-rate", "6"),
            *("--workdir", str(tmp_path / "work")),
        )
    )
    assert result["config"]["replicas"] == 2 and not result["config"]["auth"]
    assert result["config"]["store"].startswith("postgresql://")
    first, second = (s["requests"] for s in result["servers"])
    assert first > 0 and second > 0 and abs(first - second) <= 1  # round robin
    assert first + second == result["totals"]["requests"]
