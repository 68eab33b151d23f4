"""``examples/pydantic_ai_memory.py`` run as a user would run it: two subprocesses over
one store, offline (Pydantic AI's ``FunctionModel`` driven by rules). The first run's
agent stores a memory with the ``remember`` tool; in the second, the history processor
puts it beside the question and the ``recall`` tool answers with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemolayer import Memory

pytest.importorskip("pydantic_ai")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "pydantic_ai_memory.py"

pytestmark = pytest.mark.e2e


def _run(db: Path, *turns: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOLAYER_")}
    args = [a for turn in turns for a in ("--say", turn)]
    cmd = [sys.executable, str(EXAMPLE), "--db", str(db), "--embedder", "hashing", *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_remembered_in_one_run_recalled_in_the_next(tmp_path: Path) -> None:
    db = tmp_path / "pai.db"
    first = _run(db, "Remember that I'm vegetarian.").splitlines()
    assert first[:3] == [
        "  [0 memories recalled beside the prompt]",
        '  [tool] remember({"text":"I\'m vegetarian."})',
        "user: Remember that I'm vegetarian.",
    ]
    assert first[3].startswith("assistant: Remembered as memory ")
    memory_id = first[3].rsplit(" ", 1)[1].rstrip(".")
    with Memory(db, embedder="hashing") as mem:
        assert mem.get(memory_id).content == "I'm vegetarian."
    second = _run(db, "What do I eat?").splitlines()
    assert second == [
        "  [1 memories recalled beside the prompt]",
        '  [tool] recall({"query":"What do I eat?","k":3})',
        "user: What do I eat?",
        "assistant: From memory: I'm vegetarian.",
    ]
