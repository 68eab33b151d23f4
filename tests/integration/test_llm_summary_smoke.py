"""Opt-in smoke test of LLMSummarizer against a real local model server.

Gated like ``test_llm_smoke.py`` (``smoke_settings`` and ``on_smoke_server`` in
``conftest.py``): skipped unless ``MNEMOLAYER_LLM_SMOKE=1`` and
``MNEMOLAYER_LLM_BASE_URL`` points at an OpenAI-compatible server on this machine (the test
suite blocks every address but loopback)::

    MNEMOLAYER_LLM_SMOKE=1 MNEMOLAYER_LLM_BASE_URL=http://127.0.0.1:8080/v1 \\
    MNEMOLAYER_LLM_MODEL=qwen2.5-1.5b-instruct \\
        .venv/bin/python -m pytest -q tests/integration/test_llm_summary_smoke.py

``MNEMOLAYER_LLM_MODEL`` defaults to ``local`` and ``MNEMOLAYER_LLM_TIMEOUT`` to 180 s per
attempt. A fallback that raises makes any failure of the model (timeout, HTTP error,
empty answer) fail the test instead of being covered by the extractive summary.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("openai")

from mnemolayer.extract.llm_summary import LLMSummarizer
from mnemolayer.text.tokens import QuicktokCounter

COUNTER = QuicktokCounter("o200k_base")
BUDGET = 60


@pytest.fixture
def summarizer(on_smoke_server: Any) -> LLMSummarizer:
    return on_smoke_server(LLMSummarizer)


def summarize(summarizer: LLMSummarizer, lines: list[str]) -> str:
    """The model's summary of ``lines``, checked to be the model's and within BUDGET."""
    result = summarizer.summarize(lines, BUDGET, COUNTER)
    assert summarizer.last_source == "llm"
    assert COUNTER.count(result) <= BUDGET
    return result


def test_english_summary_keeps_names_and_numbers(summarizer: LLMSummarizer) -> None:
    lines = [
        "user: Hi! Quick update: my sister Maria moved to Porto on May 3.",
        "assistant: Nice! Anything I should remember about her?",
        "user: She starts at Banco Norte on June 1. Please always use metric units with me.",
        "assistant: Noted. Do you want me to look for trains to Porto?",
    ]
    result = summarize(summarizer, lines)
    assert "Maria" in result and "Porto" in result


def test_chinese_summary_stays_in_chinese(summarizer: LLMSummarizer) -> None:
    lines = [
        "user: 我妹妹玛丽亚五月三号搬到了波尔图。",
        "assistant: 好的，我记住了。",
        "user: 她六月一号开始上班。以后请都用公制单位。",
    ]
    result = summarize(summarizer, lines)
    assert "玛丽亚" in result or "波尔图" in result
    assert len(re.findall(r"[\u4e00-\u9fff]", result)) > len(re.findall(r"[A-Za-z]", result))
