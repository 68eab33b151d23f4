"""The summariser seam: ExtractiveSummarizer and get_summarizer's resolution of
``Memory(summarizer=...)``. No request is made: an LLM summariser is only built here
(building one opens no connection); tests/integration/test_llm_summary.py drives one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mnemolayer.config import LLMSettings
from mnemolayer.errors import ValidationError
from mnemolayer.extract.summarize import (
    SUMMARIZERS,
    ExtractiveSummarizer,
    Summarizer,
    get_summarizer,
)
from mnemolayer.layers.working.window import summarize
from mnemolayer.text.tokens import QuicktokCounter, TokenCounter

COUNTER = QuicktokCounter("o200k_base")
LINES = [
    "user: Hello!",
    "user: My sister Maria moved to Porto on May 3.",
    "assistant: Shall I book the train for Friday at 9:15?",
    "user: 我们决定下周五去波尔图看她。",
]
# A closed port on loopback: building an LLM summariser never connects.
SETTINGS = LLMSettings(base_url="http://127.0.0.1:9/v1", model="local-model")


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MNEMOLAYER_LLM_BASE_URL", "MNEMOLAYER_LLM_MODEL", "MNEMOLAYER_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)


class Constant:
    """A custom summariser: the same text whatever the lines."""

    name = "constant"

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        return counter.truncate("a constant summary", max_tokens)


# -- the extractive summariser -------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 1, 5, 12, 30, 200])
def test_extractive_is_working_summarize_within_budget(budget: int) -> None:
    summarizer = ExtractiveSummarizer()
    assert isinstance(summarizer, Summarizer)
    assert summarizer.name == "extractive"
    result = summarizer.summarize(LINES, budget, COUNTER)
    assert result == summarize(LINES, budget, COUNTER)
    assert COUNTER.count(result) <= budget
    assert (result == "") == (budget == 0)


def test_extractive_keeps_the_most_informative_line_first() -> None:
    maria = "user: My sister Maria moved to Porto on May 3."  # a name, a place and a date
    budget = COUNTER.count(maria) + 1
    assert ExtractiveSummarizer().summarize(LINES, budget, COUNTER) == maria


def test_extractive_refuses_a_bad_budget() -> None:
    with pytest.raises(ValidationError) as info:
        ExtractiveSummarizer().summarize(LINES, -1, COUNTER)
    assert info.value.field == "max_tokens"


# -- resolution ----------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [None, "extractive"])
def test_extractive_by_name(spec: str | None) -> None:
    assert isinstance(get_summarizer(spec), ExtractiveSummarizer)


def test_auto_is_extractive_without_an_llm_extractor() -> None:
    from mnemolayer.extract.rules.extractor import RuleExtractor

    assert isinstance(get_summarizer("auto"), ExtractiveSummarizer)
    assert isinstance(get_summarizer("auto", extractor=RuleExtractor()), ExtractiveSummarizer)


def test_auto_follows_an_llm_extractor() -> None:
    pytest.importorskip("openai")
    from mnemolayer.extract.llm import LLMExtractor
    from mnemolayer.extract.llm_summary import LLMSummarizer

    extractor = LLMExtractor(SETTINGS)
    summarizer = get_summarizer("auto", extractor=extractor)
    try:
        assert isinstance(summarizer, LLMSummarizer)
        assert summarizer.settings == SETTINGS
        assert summarizer.name == "llm:local-model"
    finally:
        extractor.close()
        summarizer.close()  # type: ignore[attr-defined]


def test_llm_by_name_needs_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError) as info:
        get_summarizer("llm")
    assert info.value.field == "summarizer"
    assert "MNEMOLAYER_LLM_BASE_URL" in str(info.value)

    pytest.importorskip("openai")
    from mnemolayer.extract.llm_summary import LLMSummarizer

    monkeypatch.setenv("MNEMOLAYER_LLM_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("MNEMOLAYER_LLM_MODEL", "env-model")
    summarizer = get_summarizer("llm")
    try:
        assert isinstance(summarizer, LLMSummarizer)
        assert summarizer.settings.base_url == "http://127.0.0.1:9/v1"
        assert summarizer.name == "llm:env-model"
    finally:
        summarizer.close()  # type: ignore[attr-defined]


def test_a_summarizer_object_is_used_as_is() -> None:
    custom = Constant()
    assert get_summarizer(custom) is custom
    assert get_summarizer(custom).summarize(LINES, 2, COUNTER) == "a constant"


@pytest.mark.parametrize("spec", ["abstractive", "LLM", "Auto", "", 3, object()])
def test_bad_specs_are_refused(spec: Any) -> None:
    with pytest.raises(ValidationError) as info:
        get_summarizer(spec)
    assert info.value.field == "summarizer"


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ValidationError) as info:
        get_summarizer("abstractive")
    assert all(name in str(info.value) for name in SUMMARIZERS)
