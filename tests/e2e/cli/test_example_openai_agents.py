"""``examples/openai_agents_session.py`` run as a user would run it: three subprocesses
over one store, offline (a rule-based ``Model``, tracing off). Monday's session stores
what the user said; Tuesday's, a new session in a new process, calls the recall tool and
answers from Monday's words; Monday's again resumes its window as it was left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemolayer import Memory

pytest.importorskip("agents")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "openai_agents_session.py"

pytestmark = pytest.mark.e2e


def _run(db: Path, session: str, *turns: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOLAYER_", "OPENAI_"))}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    args = [a for turn in turns for a in ("--say", turn)]
    cmd = [sys.executable, str(EXAMPLE), "--db", str(db), "--embedder", "hashing"]
    done = subprocess.run(
        [*cmd, "--session", session, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_later_session_recalls_and_the_first_resumes(tmp_path: Path) -> None:
    db = tmp_path / "agents.db"
    monday = _run(db, "monday", "I'm allergic to peanuts.")
    assert monday.splitlines() == [
        "session 'monday': 0 items resumed",
        "user: I'm allergic to peanuts.",
        "assistant: Noted: I'm allergic to peanuts.",
        "session 'monday': 2 items, 62 tokens",
    ]
    tuesday = _run(db, "tuesday", "What am I allergic to?")
    assert '  [tool] recall_memory({"query": "What am I allergic to?", "k": 3})' in tuesday
    assert "assistant: From memory: I'm allergic to peanuts." in tuesday
    assert "session 'tuesday': 4 items" in tuesday  # question, call, output, answer
    again = _run(db, "monday", "Thanks!")
    assert again.startswith("session 'monday': 2 items resumed\n")
    assert "session 'monday': 4 items" in again
    with Memory(db, embedder="hashing") as mem:
        hits = mem.search("allergic", user_id="ana", limit=10, kinds=["episodic"])
        said = {h.memory.content: h.memory.session_id for h in hits}
        assert said["I'm allergic to peanuts."] == "monday"  # stored as it was said
        assert said["What am I allergic to?"] == "tuesday"
