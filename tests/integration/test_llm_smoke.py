"""Opt-in smoke test of LLMExtractor against a real local model server.

Skipped unless ``MNEMOLAYER_LLM_SMOKE=1`` and ``MNEMOLAYER_LLM_BASE_URL`` points at an
OpenAI-compatible server on this machine (the test suite blocks every address but
loopback), for example a llama.cpp server with a small instruct model (MODELS.md lists
Qwen2.5-1.5B-Instruct GGUF builds that work)::

    MNEMOLAYER_LLM_SMOKE=1 MNEMOLAYER_LLM_BASE_URL=http://127.0.0.1:8080/v1 \\
    MNEMOLAYER_LLM_MODEL=qwen2.5-1.5b-instruct \\
        .venv/bin/python -m pytest -q tests/integration/test_llm_smoke.py

``MNEMOLAYER_LLM_MODEL`` defaults to ``local`` (llama.cpp ignores it) and
``MNEMOLAYER_LLM_TIMEOUT`` to 180 s per attempt: a 1.5B model on two CPU cores writes
about 10 tokens per second. A fallback that raises makes any failure of the model (no
JSON, timeout, HTTP error) fail the test instead of being covered by the rules. The gate,
the settings and that fallback are in ``conftest.py`` (``smoke_settings``,
``on_smoke_server``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("json_repair")

from mnemolayer.extract.base import SELF
from mnemolayer.extract.llm import LLMExtractor

WHEN = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture
def extractor(on_smoke_server: Any) -> LLMExtractor:
    return on_smoke_server(LLMExtractor, max_tokens=512)


def test_identity_and_allergy_facts(extractor: LLMExtractor) -> None:
    result = extractor.extract("I live in Lisbon and I'm allergic to peanuts.", timestamp=WHEN)
    assert extractor.last_source == "llm"
    triples = {(f.subject, f.predicate, f.object.casefold()) for f in result.facts}
    assert (SELF, "lives_in", "lisbon") in triples
    assert (SELF, "allergic_to", "peanuts") in triples


def test_relative_date_resolves_against_the_message_time(extractor: LLMExtractor) -> None:
    result = extractor.extract("Yesterday I visited Porto with my sister Maria.", timestamp=WHEN)
    assert extractor.last_source == "llm"
    visits = [
        f for f in result.facts if f.predicate == "visited" and "porto" in f.object.casefold()
    ]
    assert visits, result.facts
    assert visits[0].date == date(2024, 5, 7)
