"""Opt-in smoke test of LLMSummarizer against a real local model server.

Gated like ``test_llm_smoke.py``: skipped unless ``MEMSTRATA_LLM_SMOKE=1`` and
``MEMSTRATA_LLM_BASE_URL`` points at an OpenAI-compatible server on this machine (the test
suite blocks every address but loopback)::

    MEMSTRATA_LLM_SMOKE=1 MEMSTRATA_LLM_BASE_URL=http://127.0.0.1:8080/v1 \\
    MEMSTRATA_LLM_MODEL=qwen2.5-1.5b-instruct \\
        .venv/bin/python -m pytest -q tests/integration/test_llm_summary_smoke.py

``MEMSTRATA_LLM_MODEL`` defaults to ``local`` and ``MEMSTRATA_LLM_TIMEOUT`` to 180 s per
attempt. A fallback that raises makes any failure of the model (timeout, HTTP error,
empty answer) fail the test instead of being covered by the extractive summary.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import pytest

pytest.importorskip("openai")

from memstrata.config import LLMSettings, settings_from_env
from memstrata.llm_summary import LLMSummarizer
from memstrata.tokens import QuicktokCounter, TokenCounter

pytestmark = pytest.mark.skipif(
    os.environ.get("MEMSTRATA_LLM_SMOKE") != "1" or not os.environ.get("MEMSTRATA_LLM_BASE_URL"),
    reason="opt-in: set MEMSTRATA_LLM_SMOKE=1 and MEMSTRATA_LLM_BASE_URL to a local model server",
)

COUNTER = QuicktokCounter("o200k_base")


class FailingFallback:
    """Turns a fallback into a test failure, with the model's error in the message."""

    name = "failing-fallback"

    def __init__(self) -> None:
        self.summarizer: LLMSummarizer | None = None

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        error = self.summarizer.last_error if self.summarizer else None
        pytest.fail(f"the model's answer was not usable: {error}")


@pytest.fixture(scope="module")
def settings() -> LLMSettings:
    env = dict(os.environ)
    env.setdefault("MEMSTRATA_LLM_MODEL", "local")
    env.setdefault("MEMSTRATA_LLM_TIMEOUT", "180")
    llm = settings_from_env(env).llm
    assert llm is not None
    return llm.model_copy(update={"max_retries": 0})


@pytest.fixture
def summarizer(settings: LLMSettings) -> LLMSummarizer:
    fallback = FailingFallback()
    summarizer = LLMSummarizer(settings, fallback=fallback)
    fallback.summarizer = summarizer
    return summarizer


def test_english_summary_keeps_names_and_numbers(summarizer: LLMSummarizer) -> None:
    lines = [
        "user: Hi! Quick update: my sister Maria moved to Porto on May 3.",
        "assistant: Nice! Anything I should remember about her?",
        "user: She starts at Banco Norte on June 1. Please always use metric units with me.",
        "assistant: Noted. Do you want me to look for trains to Porto?",
    ]
    result = summarizer.summarize(lines, 60, COUNTER)
    assert summarizer.last_source == "llm"
    assert COUNTER.count(result) <= 60
    assert "Maria" in result and "Porto" in result


def test_chinese_summary_stays_in_chinese(summarizer: LLMSummarizer) -> None:
    lines = [
        "user: 我妹妹玛丽亚五月三号搬到了波尔图。",
        "assistant: 好的，我记住了。",
        "user: 她六月一号开始上班。以后请都用公制单位。",
    ]
    result = summarizer.summarize(lines, 60, COUNTER)
    assert summarizer.last_source == "llm"
    assert COUNTER.count(result) <= 60
    assert "玛丽亚" in result or "波尔图" in result
    assert len(re.findall(r"[\u4e00-\u9fff]", result)) > len(re.findall(r"[A-Za-z]", result))
