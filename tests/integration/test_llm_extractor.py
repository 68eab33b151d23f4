"""LLMExtractor against a real OpenAI-compatible HTTP server process on loopback.

The server (``tests/fake_llm_server.py``, started by ``conftest.py``) runs as a
subprocess on 127.0.0.1 and answers each chat request with the next step of a per-test
script, so every path is exercised over real HTTP: valid answers, near-JSON, invalid answers and re-asks, timeouts, HTTP
errors with retries, and a server that rejects ``response_format``.
"""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("json_repair")

from pydantic import ValidationError

from mnemolayer.config import LLMSettings, settings_from_env
from mnemolayer.errors import ValidationError as MnemolayerValidationError
from mnemolayer.extract.base import (
    SELF,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    Extractor,
    ResolvedDate,
)
from mnemolayer.extract.llm import LLMExtractor, build_messages, normalize_predicate

if TYPE_CHECKING:
    from conftest import FakeLLM

pytestmark = pytest.mark.usefixtures("no_proxy")

WHEN = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)  # a Wednesday
YESTERDAY = date(2024, 5, 7)
TEXT = "I live in Lisbon. My sister Maria visited Porto yesterday."
MARKER = ExtractedFact(SELF, "likes", "the fallback ran")

ANSWER: dict[str, Any] = {
    "facts": [
        {
            "subject": "user",
            "predicate": "lives_in",
            "object": "Lisbon",
            "evidence": "I live in Lisbon",
        },
        {"subject": "user", "predicate": "sister", "object": "Maria", "object_type": "person"},
        {
            "subject": "Maria",
            "predicate": "visited",
            "object": "Porto",
            "object_type": "place",
            "date": "2024-05-07",
            "evidence": "My sister Maria visited Porto yesterday",
        },
    ],
    "entities": [
        {"name": "Maria", "type": "person", "aliases": []},
        {"name": "Porto", "type": "place"},
        {"name": "Lisbon", "type": "place"},
    ],
    "dates": [{"text": "yesterday", "value": "2024-05-07"}],
}
RAW = json.dumps(ANSWER)
EXPECTED_FACTS = [
    ExtractedFact(SELF, "lives_in", "Lisbon", evidence="I live in Lisbon"),
    ExtractedFact(SELF, "sister", "Maria", object_type="person", evidence=TEXT),
    ExtractedFact(
        "Maria",
        "visited",
        "Porto",
        object_type="place",
        date=YESTERDAY,
        evidence="My sister Maria visited Porto yesterday",
    ),
]
LIVES_IN_LISBON = ExtractedFact(SELF, "lives_in", "Lisbon", evidence="I live in Lisbon")


# -- fixtures -----------------------------------------------------------------------------


class RecordingFallback:
    """A stand-in for the rules: records its calls, returns one marker fact."""

    name = "recording-fallback"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, datetime | None]] = []

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        self.calls.append((text, speaker, timestamp))
        return Extraction(facts=[MARKER])


@pytest.fixture
def fallback() -> RecordingFallback:
    return RecordingFallback()


@pytest.fixture
def make(on_server: Any, fallback: RecordingFallback) -> Any:
    """``make(timeout_s=…, max_retries=…, **extractor_kwargs)`` → an LLMExtractor on the
    fake server with the recording fallback; closed after the test."""
    return functools.partial(on_server, LLMExtractor, fallback=fallback)


def answer(content: str, **extra: Any) -> dict[str, Any]:
    return {"content": content, **extra}


# -- happy path -----------------------------------------------------------------------------


def test_happy_path_returns_the_rule_types(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script(answer(RAW))
    extractor = make()
    assert isinstance(extractor, Extractor)
    assert extractor.name == "llm:fake-model"

    result = extractor.extract(TEXT, timestamp=WHEN)

    assert result.facts == EXPECTED_FACTS
    assert result.dates == [ResolvedDate("yesterday", YESTERDAY)]
    assert result.entities == [
        ExtractedEntity("Maria", "person"),
        ExtractedEntity("Porto", "place"),
        ExtractedEntity("Lisbon", "place"),
    ]
    assert extractor.last_source == "llm"
    assert extractor.last_error is None
    assert fallback.calls == []

    [request] = server.requests()
    body = request["body"]
    assert request["authorization"] == "Bearer sk-test"
    assert body["model"] == "fake-model"
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == 0.0
    system, user = body["messages"]
    assert user == {"role": "user", "content": TEXT}
    assert "2024-05-08 (Wednesday)" in system["content"]
    assert "YYYY-MM-DD" in system["content"]
    assert "- lives_in: X lives in Y" in system["content"]
    assert "feedback" not in system["content"]


def test_first_person_resolves_to_the_speaker(server: FakeLLM, make: Any) -> None:
    server.script(
        answer(
            json.dumps(
                {
                    "facts": [
                        {"subject": "I", "predicate": "has_pet", "object": "a dog named Max"},
                        {"subject": "Ana", "predicate": "friend", "object": "me"},
                        {"subject": "我", "predicate": "dislikes", "object": "香菜。"},
                        {"subject": "user", "predicate": "hobby", "object": "  the guitar "},
                        {"subject": "Ana", "predicate": "visited", "object": "The Hague"},
                    ]
                }
            )
        )
    )
    result = make().extract("…", speaker="Ana", timestamp=WHEN)
    assert [(f.subject, f.predicate, f.object) for f in result.facts] == [
        ("Ana", "has_pet", "dog named Max"),
        ("Ana", "friend", "Ana"),
        ("Ana", "dislikes", "香菜"),
        ("Ana", "hobby", "guitar"),
        ("Ana", "visited", "The Hague"),
    ]
    system = server.bodies()[0]["messages"][0]["content"]
    assert 'The speaker is "Ana"' in system


# -- near-JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(f"```json\n{RAW}\n```", id="code-fence"),
        pytest.param(
            f"<think>Lisbon is a city; yesterday = 2024-05-07.</think>\n{RAW}", id="think"
        ),
        pytest.param(f"{RAW}\n\nI extracted three facts. Let me know!", id="trailing-prose"),
        pytest.param(f"Here is the JSON:\n{RAW}", id="leading-prose"),
        pytest.param(
            RAW.replace('"Porto"}', '"Porto",}').replace("]", ",]", 1), id="trailing-commas"
        ),
        pytest.param(json.dumps(ANSWER["facts"]), id="bare-list-of-facts"),
    ],
)
def test_near_json_is_repaired_without_a_reask(
    server: FakeLLM, make: Any, fallback: RecordingFallback, content: str
) -> None:
    server.script(answer(content))
    extractor = make()
    result = extractor.extract(TEXT, timestamp=WHEN)
    assert result.facts == EXPECTED_FACTS
    assert extractor.last_source == "llm"
    assert len(server.requests()) == 1
    assert fallback.calls == []


# -- invalid answers: re-ask, then fall back ------------------------------------------------


def test_garbage_then_valid_answer_after_one_reask(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script(answer("I'm sorry, I can't help with that."), answer(RAW))
    extractor = make()
    result = extractor.extract(TEXT, timestamp=WHEN)
    assert result.facts == EXPECTED_FACTS
    assert extractor.last_source == "llm"
    assert fallback.calls == []
    first, second = server.bodies()
    assert len(second["messages"]) == len(first["messages"]) + 2
    assert second["messages"][-2] == {
        "role": "assistant",
        "content": "I'm sorry, I can't help with that.",
    }
    assert "not valid" in second["messages"][-1]["content"]


def test_invalid_schema_twice_falls_back(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script(
        answer('{"triples": [["user", "likes", "tea"]]}'),
        answer('{"facts": [{"s": "user", "p": "likes", "o": "tea"}]}'),
    )
    extractor = make()  # reasks=1: two requests in all
    result = extractor.extract(TEXT, speaker="Ana", timestamp=WHEN)
    assert result.facts == [MARKER]
    assert extractor.last_source == "fallback"
    assert extractor.last_error is not None and "InvalidAnswerError" in extractor.last_error
    assert fallback.calls == [(TEXT, "Ana", WHEN)]
    assert len(server.requests()) == 2


def test_reasks_zero_falls_back_after_one_request(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script(answer("no json here"))
    extractor = make(reasks=0)
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert len(server.requests()) == 1


def test_unknown_predicates_dropped_near_misses_mapped(server: FakeLLM, make: Any) -> None:
    facts = [
        {"subject": "user", "predicate": "favourite_colour", "object": "green"},
        {"subject": "user", "predicate": "Works For", "object": "Acme"},
        {"subject": "user", "predicate": "is_allergic_to", "object": "peanuts"},
        {"subject": "Maria", "predicate": "sister_of", "object": "user"},
        {"subject": "user", "predicate": "feedback", "object": "too long"},
        {"subject": "user", "predicate": "likes", "object": ""},  # fails the schema: dropped
        {"subject": "user", "predicate": "likes", "object": "tea"},
        {"subject": "user", "predicate": "likes", "object": "tea"},  # duplicate
    ]
    server.script(answer(json.dumps({"facts": facts})))
    extractor = make()
    result = extractor.extract("…", timestamp=WHEN)
    assert [(f.predicate, f.object) for f in result.facts] == [
        ("works_at", "Acme"),
        ("allergic_to", "peanuts"),
        ("likes", "tea"),
    ]
    assert extractor.last_source == "llm"


def test_dates_are_validated(server: FakeLLM, make: Any) -> None:
    facts = [
        {"subject": "user", "predicate": "visited", "object": "Rome", "date": "2024-02-30"},
        {"subject": "user", "predicate": "visited", "object": "Oslo", "date": "yesterday"},
        {
            "subject": "user",
            "predicate": "visited",
            "object": "Kyiv",
            "date": "2024-05-07T09:30:00Z",
        },
        {"subject": "user", "predicate": "attended", "object": "PyCon", "date": None},
    ]
    dates = [
        {"text": "yesterday", "value": "2024-05-07"},
        {"text": "someday", "value": "soon"},
        {"value": "2024-05-01"},
    ]
    server.script(answer(json.dumps({"facts": facts, "dates": dates})))
    result = make().extract("…", timestamp=WHEN)
    assert [(f.object, f.date) for f in result.facts] == [
        ("Rome", None),
        ("Oslo", None),
        ("Kyiv", YESTERDAY),
        ("PyCon", None),
    ]
    assert result.dates == [ResolvedDate("yesterday", YESTERDAY)]


def test_without_a_timestamp_the_prompt_says_the_date_is_unknown(
    server: FakeLLM, make: Any
) -> None:
    server.script(answer('{"facts": []}'))
    extractor = make()
    assert extractor.extract("I moved yesterday.") == Extraction()
    assert extractor.last_source == "llm"
    system = server.bodies()[0]["messages"][0]["content"]
    assert "date is unknown" in system


# -- transport: timeouts, HTTP errors, retries --------------------------------------------


def test_timeout_falls_back_within_the_budget(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    slow = answer(RAW, delay_s=5)
    server.script(slow, slow)
    extractor = make(timeout_s=0.4, max_retries=1)  # budget (1 + 1) * 0.4 = 0.8 s
    start = time.monotonic()
    result = extractor.extract(TEXT, timestamp=WHEN)
    elapsed = time.monotonic() - start
    assert result.facts == [MARKER]
    assert extractor.last_source == "fallback"
    assert 0.4 <= elapsed < 0.8 + 0.5
    assert len(server.requests()) == 2  # the first attempt and one retry


def test_server_errors_then_success_are_retried(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script(
        {"status": 500, "error": "model is loading"},
        {"status": 429, "error": "slow down", "headers": {"retry-after-ms": "20"}},
        answer(RAW),
    )
    extractor = make(max_retries=2)
    start = time.monotonic()
    result = extractor.extract(TEXT, timestamp=WHEN)
    assert result.facts == EXPECTED_FACTS
    assert extractor.last_source == "llm"
    assert fallback.calls == []
    assert len(server.requests()) == 3
    assert time.monotonic() - start < 2.0


def test_server_error_without_retries_left_falls_back(
    server: FakeLLM, make: Any, fallback: RecordingFallback
) -> None:
    server.script({"status": 503, "error": "overloaded"}, answer(RAW))
    extractor = make(max_retries=0)
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert extractor.last_error is not None and "overloaded" in extractor.last_error
    assert len(server.requests()) == 1


def test_retry_after_past_the_budget_gives_up_at_once(server: FakeLLM, make: Any) -> None:
    server.script({"status": 429, "error": "quota", "headers": {"retry-after": "60"}}, answer(RAW))
    extractor = make(timeout_s=1.0, max_retries=3)
    start = time.monotonic()
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert time.monotonic() - start < 1.0
    assert len(server.requests()) == 1


def test_client_errors_are_not_retried(server: FakeLLM, make: Any) -> None:
    server.script({"status": 404, "error": "model not found"}, answer(RAW))
    extractor = make(max_retries=3)
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert extractor.last_source == "fallback"
    assert len(server.requests()) == 1


def test_refused_response_format_is_dropped_and_remembered(server: FakeLLM, make: Any) -> None:
    server.script(answer(RAW), answer(RAW), reject_response_format=True)
    extractor = make()
    assert extractor.extract(TEXT, timestamp=WHEN).facts == EXPECTED_FACTS
    assert not extractor.json_mode
    assert extractor.extract(TEXT, timestamp=WHEN).facts == EXPECTED_FACTS
    assert ["response_format" in body for body in server.bodies()] == [True, False, False]


def test_a_400_not_about_response_format_keeps_json_mode(server: FakeLLM, make: Any) -> None:
    server.script({"status": 400, "error": "context too long"}, {"status": 400, "error": "still"})
    extractor = make()
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert extractor.json_mode
    assert ["response_format" in body for body in server.bodies()] == [True, False]


def test_connection_refused_falls_back(make: Any, fallback: RecordingFallback) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    extractor = make(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    assert extractor.extract(TEXT, timestamp=WHEN).facts == [MARKER]
    assert extractor.last_error is not None and "APIConnectionError" in extractor.last_error
    assert len(fallback.calls) == 1


# -- the contract: never raise ------------------------------------------------------------


class BrokenFallback:
    name = "broken"

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        raise RuntimeError("rules crashed")


def test_a_failing_fallback_still_does_not_raise(server: FakeLLM, make: Any) -> None:
    server.script(answer("nope"), answer("still nope"))
    extractor = make(fallback=BrokenFallback())
    assert extractor.extract(TEXT, timestamp=WHEN) == Extraction()
    assert extractor.last_source == "fallback"


def test_blank_text_makes_no_request(server: FakeLLM, make: Any) -> None:
    server.script()
    extractor = make()
    assert extractor.extract("   \n") == Extraction()
    assert server.requests() == []


def test_last_source_is_per_thread(server: FakeLLM, make: Any) -> None:
    server.script(answer("garbage"), answer("garbage"))
    extractor = make()
    extractor.extract(TEXT)  # this thread: fallback
    seen: list[str | None] = []
    worker = threading.Thread(target=lambda: seen.append(extractor.last_source))
    worker.start()
    worker.join()
    assert extractor.last_source == "fallback"
    assert seen == [None]


# -- pieces without the server ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("lives_in", "lives_in"),
        ("Lives In", "lives_in"),
        ("lives-in", "lives_in"),
        ("works_for", "works_at"),
        ("is_allergic_to", "allergic_to"),
        ("has_sister", "sister"),
        ("like", "likes"),
        ("friends", "friend"),
        ("is_from", "from"),
        ("has_pet", "has_pet"),
        ("sister_of", None),
        ("feedback", None),
        ("favourite_colour", None),
        ("", None),
    ],
)
def test_normalize_predicate(raw: str, expected: str | None) -> None:
    assert normalize_predicate(raw) == expected


def test_build_messages_names_the_speaker_and_date() -> None:
    system, user = build_messages("我昨天去了上海。", speaker="小雨", timestamp=WHEN)
    assert user == {"role": "user", "content": "我昨天去了上海。"}
    content = str(system["content"])
    assert 'The speaker is "小雨"' in content and "2024-05-08 (Wednesday)" in content
    _, user_default = build_messages("hi")
    assert 'The speaker is "user"' in str(build_messages("hi")[0]["content"])
    assert user_default["content"] == "hi"


def test_llm_settings_from_env() -> None:
    settings = settings_from_env(
        {
            "MNEMOLAYER_LLM_BASE_URL": "http://127.0.0.1:8080/v1/",
            "MNEMOLAYER_LLM_MODEL": "qwen2.5-1.5b",
            "MNEMOLAYER_LLM_API_KEY": "sk-secret",
            "MNEMOLAYER_LLM_TIMEOUT": "12.5",
        }
    )
    assert settings.llm is not None
    assert settings.llm.base_url == "http://127.0.0.1:8080/v1"
    assert settings.llm.model == "qwen2.5-1.5b"
    assert settings.llm.api_key is not None
    assert settings.llm.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(settings)
    assert settings.llm.timeout_s == 12.5
    assert (settings.llm.max_retries, settings.llm.temperature) == (2, 0.0)
    assert settings_from_env({}).llm is None
    assert settings_from_env({"MNEMOLAYER_LLM_BASE_URL": ""}).llm is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MNEMOLAYER_LLM_MODEL": "m"}, "MNEMOLAYER_LLM_BASE_URL: not set"),
        ({"MNEMOLAYER_LLM_BASE_URL": "http://127.0.0.1:1/v1"}, "MNEMOLAYER_LLM_MODEL: required"),
        ({"MNEMOLAYER_LLM_BASE_URL": "ftp://x", "MNEMOLAYER_LLM_MODEL": "m"}, "http"),
        (
            {
                "MNEMOLAYER_LLM_BASE_URL": "http://x/v1",
                "MNEMOLAYER_LLM_MODEL": "m",
                "MNEMOLAYER_LLM_TIMEOUT": "-1",
            },
            "MNEMOLAYER_LLM_TIMEOUT",
        ),
    ],
)
def test_bad_llm_env_is_refused(env: dict[str, str], message: str) -> None:
    # A usage error naming the variable (a ValueError too), never a pydantic traceback.
    with pytest.raises(MnemolayerValidationError, match=message):
        settings_from_env(env)


def test_llm_settings_reject_bad_values() -> None:
    with pytest.raises(ValidationError):
        LLMSettings(base_url="http://x/v1", model="m", max_retries=-1)
    with pytest.raises(ValidationError):
        LLMSettings(base_url="http://x/v1", model="")
    with pytest.raises(ValueError, match="reasks"):
        LLMExtractor(LLMSettings(base_url="http://x/v1", model="m"), reasks=-1)
