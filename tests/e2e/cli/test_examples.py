"""``examples/chat_agent.py`` run as a user would run it: a subprocess over a script.

Offline (no ``MNEMOLAYER_LLM_*``): the stand-in replies come from what mnemolayer recalls,
so the transcript shows recall, facts, the session's end and a new session. Against the
scripted OpenAI-compatible server (``tests/fake_llm_server.py``): the requests the agent
sends carry the pinned system prompt, the recalled context and the window's turns.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mnemolayer import Memory

ROOT = Path(__file__).resolve().parents[3]
CHAT_AGENT = ROOT / "examples" / "chat_agent.py"
FAKE_LLM = Path(__file__).resolve().parents[2] / "fake_llm_server.py"
PROXY_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

# The example as a subprocess, once against a fake model server process.
pytestmark = pytest.mark.e2e

SCRIPT = """\
Hi! My name is Lena and I live in Lisbon.
I work as a nurse at the city hospital.
/facts
Where do I live?
/end
What is my job?
/quit
this line comes after /quit
"""


def _env(**extra: str) -> dict[str, str]:
    """The test environment without model settings or proxies, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MNEMOLAYER_") and k not in PROXY_ENV
    }
    return {**env, **extra}


def _run(
    tmp_path: Path, *args: str, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        str(CHAT_AGENT),
        "--embedder",
        "hashing",
        "--db",
        str(tmp_path / "chat.db"),
    ]
    done = subprocess.run(
        [*cmd, *args], input=stdin, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def _turns(out: str) -> list[str]:
    """The transcript cut at each ``you>`` line: one chunk per user line."""
    return [chunk for chunk in out.split("you> ")[1:]]


def test_offline_scripted_conversation(tmp_path: Path) -> None:
    script = tmp_path / "chat.txt"
    script.write_text(SCRIPT, encoding="utf-8")
    out = _run(tmp_path, "--user", "lena", "--session", "s1", "--script", str(script), env=_env())
    first_line, _ = out.stdout.split("\n", 1)
    assert first_line == "user lena, session s1, offline"
    turns = _turns(out.stdout)
    assert [t.split("\n", 1)[0] for t in turns] == [
        line for line in SCRIPT.splitlines() if line != "this line comes after /quit"
    ]
    hi, job, facts, where, end, new_job, _quit = turns
    assert "[offline stand-in]" in hi and "recall nothing relevant yet" in hi
    assert "lives in: Lisbon" in job  # the first message's fact, recalled a turn later
    assert "- user lives_in Lisbon" in facts and "- user job nurse" in facts
    assert "[offline stand-in]" in where and "lives in: Lisbon" in where
    assert "session ended" in end and "new session: chat-" in end
    assert "job: nurse" in new_job  # recalled in the next session

    with Memory(tmp_path / "chat.db", embedder="hashing") as mem:
        summaries = [
            r
            for r in mem.list(user_id="lena", session_id="s1").items
            if r.metadata.get("session_summary")
        ]
        assert len(summaries) == 1 and "Lisbon" in summaries[0].content
        assert any(
            f.predicate == "lives_in" and f.object == "Lisbon" for f in mem.facts(user_id="lena")
        )


def test_reads_piped_standard_input(tmp_path: Path) -> None:
    out = _run(tmp_path, "--user", "sam", stdin="I like jazz music.\n/facts\n", env=_env())
    turns = _turns(out.stdout)
    assert turns[0].startswith("I like jazz music.\nagent> [offline stand-in]")
    assert "likes" in turns[1] and "jazz" in turns[1]


# -- against an OpenAI-compatible server -------------------------------------------------


class FakeLLM:
    """The scripted server process: script its answers, read what it was asked."""

    def __init__(self, port: int) -> None:
        self.root = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.root, timeout=5, trust_env=False)

    def script(self, *answers: str) -> None:
        self.http.post("/_control", json={"script": [{"content": a} for a in answers]})

    def requests(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.http.get("/_requests").json()
        return found


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    process = subprocess.Popen(
        [sys.executable, str(FAKE_LLM), "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # READY <port>
        assert line.startswith("READY "), line
        server = FakeLLM(int(line.split()[1]))
        yield server
        server.http.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_requests_carry_the_window_and_the_recalled_context(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("Nice to meet you, Lena!", "You live in Lisbon.")
    env = _env(
        MNEMOLAYER_LLM_BASE_URL=f"{fake_llm.root}/v1",
        MNEMOLAYER_LLM_MODEL="fake-model",
        MNEMOLAYER_LLM_API_KEY="sk-test",
        NO_PROXY="127.0.0.1,localhost",
    )
    # Two scripted answers: the third turn gets the server's HTTP 400, and the chat goes on.
    stdin = "Hi! My name is Lena and I live in Lisbon.\nWhere do I live?\nAnd my name?\n/quit\n"
    out = _run(tmp_path, "--user", "lena", "--system", "Answer briefly.", stdin=stdin, env=env)
    assert "model fake-model at http://127.0.0.1" in out.stdout
    assert "agent> Nice to meet you, Lena!" in out.stdout
    assert "agent> You live in Lisbon." in out.stdout
    before, failed = out.stdout.split("you> And my name?")
    assert "[offline stand-in]" not in before
    assert "agent> (the model failed: BadRequestError)\n[offline stand-in]" in failed
    assert "name: Lena" in failed

    first, second, _third = fake_llm.requests()
    assert first["authorization"] == "Bearer sk-test"
    assert first["body"]["model"] == "fake-model"
    assert first["body"]["messages"] == [  # nothing to recall yet
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Hi! My name is Lena and I live in Lisbon."},
    ]
    messages = second["body"]["messages"]
    assert messages[0] == {"role": "system", "content": "Answer briefly."}
    recalled = messages[1]
    assert recalled["role"] == "system" and recalled["content"].startswith("What you remember:")
    assert "Lisbon" in recalled["content"]  # the fact and the first message, recalled
    assert [m["role"] for m in messages[2:]] == ["user", "assistant", "user"]
    assert messages[-1]["content"] == "Where do I live?"
    assert messages[3]["content"] == "Nice to meet you, Lena!"
