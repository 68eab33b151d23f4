"""``examples/llamaindex_memory.py`` run as a user would run it: a subprocess, with the
network refused inside it (a socket guard installed before the script runs), so a
download by LlamaIndex (its tokenizer, NLTK data) or by mnemolayer would fail the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from mnemolayer import Memory

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "llamaindex_memory.py"

pytestmark = pytest.mark.e2e

#: Runs the example as ``__main__`` after refusing every connection but loopback/Unix.
OFFLINE = """\
import runpy, socket, sys
real = socket.socket.connect
def connect(sock, address):
    if sock.family == socket.AF_UNIX or (isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1")):
        return real(sock, address)
    raise OSError(f"network access is blocked (tried {address!r})")
socket.socket.connect = connect
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_the_example_runs_offline_and_recalls_mondays_chat_on_tuesday(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOLAYER_")}
    env.pop("TIKTOKEN_CACHE_DIR", None)  # LlamaIndex then uses the tokenizer it bundles
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE, str(EXAMPLE), "--db", str(db), "--embedder", "hashing"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("monday> ") == 3 and "resumed 'monday' from" in out
    assert f"{db}: 6 messages" in out and "archived; chat keys now: []" in out
    tuesday = out.split("tuesday> ", 1)[1]
    assert "model: I remember:" in tuesday and "lives in: Lisbon" in tuesday
    assert "<mnemolayer>" in tuesday and "allergic to: shellfish" in tuesday

    with Memory(db, embedder="hashing") as mem:  # Monday's turns are in episodic memory
        said = [r.content for r in mem.list(user_id="lena", session_id="monday").items]
        assert "I work as a nurse at the city hospital." in said
        assert mem.list_sessions("lena") == []
