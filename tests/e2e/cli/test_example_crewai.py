"""``examples/crewai_storage.py`` run as a user would run it: a subprocess, twice on one
store (the second run finds the notes already there and stores nothing new).

Skipped where crewai is missing (it is not in the ``dev`` extra), unless
``MNEMOLAYER_REQUIRE_CREWAI=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("MNEMOLAYER_REQUIRE_CREWAI") != "1":
    pytest.importorskip("crewai", reason="crewai is not installed (the crewai extra)")

from mnemolayer import Memory

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "crewai_storage.py"


def _run(db: Path) -> str:
    env = {**os.environ, "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--db", str(db), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_the_example_remembers_and_recalls_through_crewai(tmp_path: Path) -> None:
    db = tmp_path / "crew.db"
    first = _run(db)
    assert "scopes: /acme/billing, /acme/ops, /acme/sales" in first
    assert "Who do I talk to at Acme? -> Acme's contact person is Maria Santos" in first
    assert "-> Acme wants its invoices in euros" in first
    assert "in mnemolayer: Acme's contact person is Maria Santos" in first
    assert _run(db).count("->") == 2
    with Memory(db, embedder="hashing") as mem:
        assert len(mem.list(user_id="acme-crew", kinds=["episodic"]).items) == 3
