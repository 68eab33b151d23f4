"""LLMSummarizer against a real OpenAI-compatible HTTP server process on loopback.

The server (``tests/fake_llm_server.py``, started by ``conftest.py``) runs as a
subprocess on 127.0.0.1 and answers each chat request with the next step of a per-test
script, so every path goes over real HTTP: answers used and cut to the budget, cleaned
answers, HTTP errors with retries, timeouts, empty answers, and a working-memory window
folding turns through the model.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("openai")

from mnemolayer import Memory
from mnemolayer.errors import ValidationError
from mnemolayer.extract.llm import LLMExtractor
from mnemolayer.extract.llm_summary import LLMSummarizer, build_messages, clean_answer, fit_lines
from mnemolayer.extract.summarize import ExtractiveSummarizer, Summarizer
from mnemolayer.text.tokens import QuicktokCounter, TokenCounter, count_messages

if TYPE_CHECKING:
    from conftest import FakeLLM

pytestmark = pytest.mark.usefixtures("no_proxy")

COUNTER = QuicktokCounter("o200k_base")
LINES = [
    "user: Hi there!",
    "user: My sister Maria moved to Porto on May 3.",
    "assistant: Noted. Shall I book the train for Friday at 9:15?",
    "user: Yes, and please always use metric units.",
    "user: Can you also find out whether the museum opens on Mondays?",
]
ANSWER = (
    "User's sister Maria moved to Porto on May 3.\n"
    "User asked to book the train for Friday at 9:15.\n"
    "Always use metric units.\n"
    "Open: does the museum open on Mondays?"
)
LINES_ZH = [
    "user: 我妹妹玛丽亚五月三号搬到了波尔图。",
    "assistant: 好的，要我帮你订周五九点十五的火车吗？",
    "user: 好，请以后都用公制单位。",
]
ANSWER_ZH = "用户的妹妹玛丽亚5月3日搬到波尔图。\n用户同意订周五9:15的火车。\n以后都用公制单位。"
LLM_ENV = ("MNEMOLAYER_LLM_BASE_URL", "MNEMOLAYER_LLM_MODEL", "MNEMOLAYER_LLM_API_KEY")


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in LLM_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def make(server: FakeLLM, on_server: Any) -> Any:
    """``make(timeout_s=…, max_retries=…, **summarizer_kwargs)`` → an LLMSummarizer on the
    fake server (script emptied); closed after the test."""
    server.script()
    return functools.partial(on_server, LLMSummarizer)


def answer(content: str, **extra: Any) -> dict[str, Any]:
    return {"content": content, **extra}


def extractive(lines: Sequence[str], budget: int) -> str:
    return ExtractiveSummarizer().summarize(lines, budget, COUNTER)


# -- the model's answer ---------------------------------------------------------------------


def test_request_carries_the_lines_and_the_budget(server: FakeLLM, make: Any) -> None:
    server.script(answer(ANSWER))
    summarizer = make()
    assert isinstance(summarizer, Summarizer)
    assert summarizer.name == "llm:fake-model"

    result = summarizer.summarize(LINES, 120, COUNTER)

    assert result == ANSWER
    assert summarizer.last_source == "llm"
    assert summarizer.last_error is None
    [body] = server.bodies()
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 150 + 16  # a bit above the budget: 1.25 * 120 + 16
    assert "response_format" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "at most 120 tokens" in system["content"]
    assert "Chinese" in system["content"] and "earlier summary" in system["content"]
    assert user["content"] == "<conversation>\n" + "\n".join(LINES) + "\n</conversation>"


def test_max_answer_tokens_caps_the_request(server: FakeLLM, make: Any) -> None:
    server.script(answer(ANSWER))
    make(max_answer_tokens=40).summarize(LINES, 120, COUNTER)
    assert server.bodies()[0]["max_tokens"] == 40


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(
            f"<think>The user wants a summary. Keep dates.</think>\n\n{ANSWER}", id="think"
        ),
        pytest.param(f"```text\n{ANSWER}\n```", id="code-fence"),
        pytest.param(f"Summary:\n{ANSWER}", id="summary-colon"),
        pytest.param(f"Here is a concise summary of the conversation:\n\n{ANSWER}", id="here-is"),
        pytest.param("- " + ANSWER.replace("\n", "\n- "), id="bullets"),
        pytest.param(f"**Summary:** {ANSWER}", id="bold-inline"),
    ],
)
def test_answer_is_cleaned(server: FakeLLM, make: Any, content: str) -> None:
    server.script(answer(content))
    summarizer = make()
    assert summarizer.summarize(LINES, 120, COUNTER) == ANSWER
    assert summarizer.last_source == "llm"


def test_chinese_answer_is_kept_and_cleaned(server: FakeLLM, make: Any) -> None:
    numbered = "以下是对话摘要：\n" + "\n".join(
        f"{i}、{line}" for i, line in enumerate(ANSWER_ZH.split("\n"), 1)
    )
    server.script(answer(numbered))
    summarizer = make()
    assert summarizer.summarize(LINES_ZH, 80, COUNTER) == ANSWER_ZH
    user = server.bodies()[0]["messages"][1]["content"]
    assert all(line in user for line in LINES_ZH)


@pytest.mark.parametrize("budget", [1, 7, 20, 33, 60])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_too_long_answer_is_cut_to_the_budget(
    server: FakeLLM, make: Any, budget: int, language: str
) -> None:
    long_answer = "\n".join([ANSWER if language == "en" else ANSWER_ZH] * 20)
    server.script(answer(long_answer))
    summarizer = make()
    result = summarizer.summarize(LINES if language == "en" else LINES_ZH, budget, COUNTER)
    assert result
    assert COUNTER.count(result) <= budget
    assert long_answer.startswith(result)
    assert summarizer.last_source == "llm"


def test_whole_lines_are_kept_when_one_fits() -> None:
    text = "Maria moved to Porto on May 3.\nBook the train for Friday at 9:15."
    first = text.split("\n")[0]
    budget = COUNTER.count(first) + 3  # the first line, not the second
    assert fit_lines(text, budget, COUNTER) == first
    assert fit_lines(text, COUNTER.count(text), COUNTER) == text
    cut = fit_lines(text, 4, COUNTER)  # not even the first line: it is cut
    assert first.startswith(cut) and COUNTER.count(cut) <= 4
    assert fit_lines(text, 0, COUNTER) == ""


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("reasoning without an opening tag</think>\nuser likes tea", "user likes tea"),
        ("<thinking>a\nb</thinking>user likes tea", "user likes tea"),
        ("## Summary\nuser likes tea", "user likes tea"),
        ("摘要：用户喜欢茶", "用户喜欢茶"),
        ("Summary of decisions: user chose A", "Summary of decisions: user chose A"),
        ("1. user likes tea\n2) user lives in Porto", "user likes tea\nuser lives in Porto"),
        ("<think>cut off before the answer", ""),
    ],
)
def test_clean_answer(content: str, expected: str) -> None:
    assert clean_answer(content) == expected


def test_build_messages_states_the_budget_in_words_and_characters() -> None:
    system, user = build_messages(["user: 你好"], 100)
    assert "at most 100 tokens (about 70 English words or 100 Chinese characters)" in str(
        system["content"]
    )
    assert user["content"] == "<conversation>\nuser: 你好\n</conversation>"


# -- nothing to do -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "budget"), [(LINES, 0), ([], 50), (["", "  \n "], 50)], ids=["zero", "none", "blank"]
)
def test_nothing_to_summarise_makes_no_request(
    server: FakeLLM, make: Any, lines: list[str], budget: int
) -> None:
    summarizer = make()
    assert summarizer.summarize(lines, budget, COUNTER) == ""
    assert summarizer.last_source == "llm"
    assert server.bodies() == []


def test_bad_arguments_are_refused(make: Any) -> None:
    summarizer = make()
    with pytest.raises(ValidationError) as info:
        summarizer.summarize(LINES, -1, COUNTER)
    assert info.value.field == "max_tokens"
    with pytest.raises(ValidationError) as info:
        summarizer.summarize("user: hello", 10, COUNTER)
    assert info.value.field == "lines"
    with pytest.raises(ValidationError) as info:
        summarizer.summarize(["ok", 3], 10, COUNTER)  # type: ignore[list-item]
    assert info.value.field == "lines[1]"
    for field, kwargs in [
        ("budget_s", {"budget_s": 0}),
        ("max_answer_tokens", {"max_answer_tokens": 0}),
        ("fallback", {"fallback": object()}),
    ]:
        with pytest.raises(ValidationError) as info:
            make(**kwargs)
        assert info.value.field == field
    with pytest.raises(ValidationError) as info:
        LLMSummarizer({"base_url": "http://127.0.0.1:1/v1", "model": "m"})  # type: ignore[arg-type]
    assert info.value.field == "settings"


# -- failures fall back to the extractive summary ------------------------------------------------


def assert_fell_back(summarizer: LLMSummarizer, result: str, budget: int, error: str) -> None:
    assert result == extractive(LINES, budget)
    assert result and COUNTER.count(result) <= budget
    assert summarizer.last_source == "fallback"
    assert summarizer.last_error is not None and error in summarizer.last_error


def test_server_errors_fall_back_after_the_retries(server: FakeLLM, make: Any) -> None:
    server.script(
        {"status": 500, "error": "boom", "headers": {"retry-after-ms": "10"}},
        {"status": 503, "error": "still down"},
    )
    summarizer = make(max_retries=1)
    result = summarizer.summarize(LINES, 40, COUNTER)
    assert_fell_back(summarizer, result, 40, "InternalServerError")
    assert len(server.bodies()) == 2


def test_a_server_error_then_an_answer_is_retried(server: FakeLLM, make: Any) -> None:
    server.script(
        {"status": 429, "error": "slow down", "headers": {"retry-after-ms": "20"}}, answer(ANSWER)
    )
    summarizer = make(max_retries=2)
    assert summarizer.summarize(LINES, 120, COUNTER) == ANSWER
    assert summarizer.last_source == "llm"
    assert len(server.bodies()) == 2


def test_a_timeout_falls_back_within_the_time_budget(server: FakeLLM, make: Any) -> None:
    server.script(answer(ANSWER, delay_s=5), answer(ANSWER, delay_s=5))
    summarizer = make(timeout_s=0.3, max_retries=1)  # budget (1 + 1) * 0.3 = 0.6 s
    started = time.monotonic()
    result = summarizer.summarize(LINES, 30, COUNTER)
    assert time.monotonic() - started < 2.5
    assert_fell_back(summarizer, result, 30, "Timeout")


@pytest.mark.parametrize(
    "content", ["", "   \n", "<think>I should summarise this.</think>", "```\n```"]
)
def test_an_empty_answer_falls_back(server: FakeLLM, make: Any, content: str) -> None:
    server.script(answer(content))
    summarizer = make()
    result = summarizer.summarize(LINES, 25, COUNTER)
    assert_fell_back(summarizer, result, 25, "no summary")
    assert len(server.bodies()) == 1  # an answer is not retried


def test_connection_refused_falls_back(make: Any) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    summarizer = make(base_url=f"http://127.0.0.1:{port}/v1")
    result = summarizer.summarize(LINES, 30, COUNTER)
    assert_fell_back(summarizer, result, 30, "APIConnectionError")


class WordySummarizer:
    """A fallback that ignores the budget, or fails outright."""

    name = "wordy"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        if self.fail:
            raise RuntimeError("the fallback broke")
        return "\n".join(lines) * 10


def test_a_custom_fallback_is_held_to_the_budget(make: Any) -> None:
    summarizer = make(fallback=WordySummarizer())  # the empty script answers 400
    result = summarizer.summarize(LINES, 30, COUNTER)
    assert result and COUNTER.count(result) <= 30
    assert summarizer.last_source == "fallback"
    assert make(fallback=WordySummarizer(fail=True)).summarize(LINES, 30, COUNTER) == ""


def test_last_source_is_per_thread(server: FakeLLM, make: Any) -> None:
    summarizer = make()
    server.script(answer(ANSWER))
    summarizer.summarize(LINES, 120, COUNTER)
    seen: list[str | None] = []

    def other() -> None:
        seen.append(summarizer.last_source)
        summarizer.summarize(LINES, 30, COUNTER)  # the script is spent: HTTP 400
        seen.append(summarizer.last_source)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [None, "fallback"]
    assert summarizer.last_source == "llm"


# -- working memory folds through the model -------------------------------------------------------

TURNS = [
    ("user", "My sister Maria moved to Porto on May 3 and starts at the bank on June 1."),
    ("assistant", "Congratulations to Maria! Do you want me to remember the start date?"),
    ("user", "Yes please. Also, I am allergic to peanuts, so never suggest satay."),
    ("assistant", "Understood: no peanuts, and Maria starts on June 1 in Porto."),
    ("user", "We decided to visit her on the weekend of June 15 by train."),
    ("assistant", "I can look for trains from Lisbon to Porto for June 15."),
]
MODEL_NOTE = "Maria moved to Porto on May 3; the user is allergic to peanuts."


def fill(wm: Any, rounds: int) -> list[int]:
    """Add TURNS ``rounds`` times; the window's tokens after each add."""
    sizes: list[int] = []
    for i in range(rounds):
        for role, text in TURNS:
            wm.add(role, f"{text} (round {i})")
            sizes.append(wm.tokens)
    return sizes


def test_working_memory_folds_with_the_models_text(
    server: FakeLLM, make: Any, db_path: Path, clock: Any
) -> None:
    summarizer = make()
    # Each answer is too long for the summary's share and must be cut to fit; each is
    # new, so the summary outgrows its share and is summarised again by the model.
    notes = [f"Note {k}: {MODEL_NOTE}" for k in range(60)]
    server.script(*[answer("\n".join([note] * 40)) for note in notes])
    mem = Memory(db_path, embedder="hashing", extractor=None, clock=clock, summarizer=summarizer)
    try:
        assert mem.summarizer is summarizer
        wm = mem.working(session_id="s1", user_id="u1", budget_tokens=200)
        compactions: list[Any] = []
        wm.on_compact(after=compactions.append)
        sizes = fill(wm, 4)
        assert max(sizes) <= 200
        assert len(server.bodies()) == len(compactions) > 0  # one request per compaction
        assert wm.tokens == count_messages(wm.messages(), wm.counter) <= 200
        # Only the model's lines (the window may cut the last one to fit its share).
        lines = wm.summary.split("\n")
        assert lines and all(any(n.startswith(line) for n in notes) for line in lines)
        assert summarizer.last_source == "llm"
        asked = [b["messages"][1]["content"] for b in server.bodies()]
        assert any("user: My sister Maria" in text for text in asked)
        # A hierarchical round: the earlier summary's lines went back to the model.
        assert wm.summary_rounds >= 1
        assert any("\nNote 0: " in text for text in asked)
    finally:
        mem.close()


def test_a_failing_model_still_keeps_the_window_within_budget(
    server: FakeLLM, make: Any, db_path: Path, clock: Any
) -> None:
    summarizer = make()  # the empty script answers every request with HTTP 400
    mem = Memory(db_path, embedder="hashing", extractor=None, clock=clock, summarizer=summarizer)
    try:
        wm = mem.working(session_id="s1", user_id="u1", budget_tokens=160)
        sizes = fill(wm, 4)
        assert max(sizes) <= 160
        assert wm.summary and MODEL_NOTE not in wm.summary
        assert summarizer.last_source == "fallback"
        assert summarizer.last_error is not None and "BadRequestError" in summarizer.last_error
    finally:
        mem.close()


# -- Memory(summarizer=...) resolution ------------------------------------------------------


def test_auto_picks_the_llm_summarizer_when_an_llm_is_configured(
    server: FakeLLM, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOLAYER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MNEMOLAYER_LLM_MODEL", "fake-model")
    mem = Memory(db_path, embedder="hashing", extractor="llm", summarizer="auto")
    try:
        assert isinstance(mem.semantic.extractor, LLMExtractor)
        assert isinstance(mem.summarizer, LLMSummarizer)
        assert mem.summarizer.name == "llm:fake-model"
        assert mem.summarizer.settings == mem.semantic.extractor.settings
        server.script(answer(ANSWER))
        assert mem.summarizer.summarize(LINES, 120, COUNTER) == ANSWER
    finally:
        mem.close()
        mem.summarizer.close()  # type: ignore[attr-defined]
        mem.semantic.extractor.close()


def test_auto_without_an_llm_stays_extractive(server: FakeLLM, db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None, summarizer="auto") as mem:
        assert isinstance(mem.summarizer, ExtractiveSummarizer)
    with Memory(db_path, embedder="hashing", extractor="rules") as mem:
        assert isinstance(mem.summarizer, ExtractiveSummarizer)


def test_llm_summarizer_by_name_reads_the_env(
    server: FakeLLM, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValidationError) as info:
        Memory(db_path, embedder="hashing", extractor=None, summarizer="llm")
    assert info.value.field == "summarizer"
    monkeypatch.setenv("MNEMOLAYER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MNEMOLAYER_LLM_MODEL", "fake-model")
    with Memory(db_path, embedder="hashing", extractor=None, summarizer="llm") as mem:
        assert isinstance(mem.summarizer, LLMSummarizer)
        assert mem.summarizer.settings.base_url == server.base_url
        mem.summarizer.close()


@pytest.mark.parametrize("spec", ["abstractive", "LLM", "", 42, object()])
def test_bad_summarizer_specs_are_refused(db_path: Path, spec: Any) -> None:
    with pytest.raises(ValidationError) as info:
        Memory(db_path, embedder="hashing", extractor=None, summarizer=spec)
    assert info.value.field == "summarizer"
