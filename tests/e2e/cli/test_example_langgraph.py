"""``examples/langgraph_agent.py`` run as a user would run it: a subprocess. The thread
state is the checkpointer's (a new thread starts empty), the memories mnemolayer's (the
new thread's prompt recalls what the first thread was told)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.memory", reason="the langgraph extra is not installed")

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langgraph_agent.py"


def test_a_new_thread_recalls_what_another_thread_was_told(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--embedder", "hashing", "--db", str(tmp_path / "a.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert "thread monday holds 4 messages" in lines
    assert "thread tuesday holds 2 messages" in lines
    tuesday = lines.index("[tuesday] user: Where do I live?")
    assert "Hi! I'm Lena and I live in Lisbon." in lines[tuesday + 1]
    assert lines[tuesday + 2] == "[tuesday] assistant: You told me you live in Lisbon."
    assert "lives_in=Lisbon" in lines[-1] and "job=nurse" in lines[-1]
