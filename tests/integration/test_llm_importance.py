"""LLMImportance and ``Memory(importance=...)`` against a real OpenAI-compatible HTTP server.

The server (``tests/fake_llm_server.py``, started by ``conftest.py``) runs as a subprocess
on 127.0.0.1 and answers each chat request with the next step of a per-test script, so
every path goes over real HTTP: the model's score used, answers read leniently, and
out-of-range scores, garbage, HTTP errors, timeouts and refused connections falling back
to the rules.
"""

from __future__ import annotations

import functools
import json
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("openai")

from mnemolayer import Memory
from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle.importance import ImportanceEstimate, ImportanceEstimator, RuleImportance
from mnemolayer.lifecycle.llm_importance import (
    MAX_TEXT_CHARS,
    LLMImportance,
    build_messages,
    parse_answer,
)

if TYPE_CHECKING:
    from conftest import FakeLLM

pytestmark = pytest.mark.usefixtures("no_proxy")

LLM_ENV = ("MNEMOLAYER_LLM_BASE_URL", "MNEMOLAYER_LLM_MODEL", "MNEMOLAYER_LLM_API_KEY")
TEXT = "Please remember that my daughter Lena is allergic to peanuts."
TEXT_ZH = "记住，我女儿对花生过敏。"
RULES = RuleImportance()


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in LLM_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def make(server: FakeLLM, on_server: Any) -> Any:
    """``make(timeout_s=…, max_retries=…, **kwargs)`` → an LLMImportance on the fake
    server (script emptied); closed after the test."""
    server.script()
    return functools.partial(on_server, LLMImportance)


@pytest.fixture
def llm_env(server: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOLAYER_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("MNEMOLAYER_LLM_MODEL", "fake-model")
    monkeypatch.setenv("MNEMOLAYER_LLM_TIMEOUT", "3")
    server.script()


def score(value: Any, reason: str = "explicit request and a health constraint") -> dict[str, Any]:
    return {"content": json.dumps({"importance": value, "reason": reason})}


# -- the model's answer ---------------------------------------------------------------------


def test_request_carries_the_text_and_the_answer_is_used(server: FakeLLM, make: Any) -> None:
    server.script(score(0.95))
    estimator = make()
    assert isinstance(estimator, ImportanceEstimator)
    assert estimator.name == "llm:fake-model"

    estimate = estimator.estimate(TEXT)

    assert estimate == ImportanceEstimate(
        value=0.95, reasons=["llm:fake-model: explicit request and a health constraint"]
    )
    assert estimator.last_source == "llm"
    assert estimator.last_error is None
    [body] = server.bodies()
    assert body["model"] == "fake-model"
    assert body["max_tokens"] == 512
    assert "response_format" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert '"importance"' in system["content"] and "Chinese" in system["content"]
    assert user["content"] == f"<message>\n{TEXT}\n</message>"


def test_chinese_text_is_sent_as_is(server: FakeLLM, make: Any) -> None:
    server.script(score(0.9, "明确要求记住"))
    estimate = make().estimate(TEXT_ZH)
    assert estimate.value == 0.9
    assert estimate.reasons == ["llm:fake-model: 明确要求记住"]
    assert TEXT_ZH in server.bodies()[0]["messages"][1]["content"]


def test_long_texts_are_cut(server: FakeLLM, make: Any) -> None:
    server.script(score(0.3))
    make().estimate("x" * (MAX_TEXT_CHARS + 500))
    sent = server.bodies()[0]["messages"][1]["content"]
    assert sent == "<message>\n" + "x" * MAX_TEXT_CHARS + "\n</message>"


@pytest.mark.parametrize(
    ("content", "value", "reasons"),
    [
        pytest.param(
            '{"importance": 1, "reason": "name"}', 1.0, ["llm:fake-model: name"], id="int"
        ),
        pytest.param('{"importance": 0}', 0.0, ["llm:fake-model"], id="zero-no-reason"),
        pytest.param('{"importance": "0.7", "reason": 3}', 0.7, ["llm:fake-model"], id="string"),
        pytest.param(
            '<think>It states a preference.</think>\n```json\n{"importance": 0.75,'
            ' "reason": "a preference",}\n```',
            0.75,
            ["llm:fake-model: a preference"],
            id="think-fence-trailing-comma",
        ),
        pytest.param(
            "Sure! {'importance': 0.123456, 'reason': '  small\n talk '} Hope that helps.",
            0.1235,
            ["llm:fake-model: small talk"],
            id="prose-single-quotes",
        ),
    ],
)
def test_answers_are_read_leniently(
    server: FakeLLM, make: Any, content: str, value: float, reasons: list[str]
) -> None:
    server.script({"content": content})
    estimator = make()
    assert estimator.estimate(TEXT) == ImportanceEstimate(value=value, reasons=reasons)
    assert estimator.last_source == "llm"


# -- falling back to the rules ---------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param('{"importance": 1.5}', id="above-1"),
        pytest.param('{"importance": -0.1}', id="negative"),
        pytest.param('{"importance": 8, "reason": "on a 1-10 scale"}', id="other-scale"),
        pytest.param('{"importance": "80%"}', id="percent"),
        pytest.param('{"importance": true}', id="bool"),
        pytest.param('{"importance": null}', id="null"),
        pytest.param('{"importance": NaN}', id="nan"),
        pytest.param('{"score": 0.8}', id="no-key"),
        pytest.param("[0.8]", id="array"),
        pytest.param("I'd say this is quite important.", id="prose"),
        pytest.param("", id="empty"),
    ],
)
def test_unusable_answers_fall_back_to_the_rules(server: FakeLLM, make: Any, content: str) -> None:
    server.script({"content": content})
    estimator = make()
    assert estimator.estimate(TEXT) == RULES.estimate(TEXT)
    assert estimator.last_source == "fallback"
    assert estimator.last_error is not None and estimator.last_error.startswith("ValueError")
    assert len(server.requests()) == 1  # no re-ask: the rules answer at once


def test_server_error_falls_back(server: FakeLLM, make: Any) -> None:
    server.script({"status": 500, "error": "model crashed"})
    estimator = make()
    assert estimator.estimate(TEXT_ZH) == RULES.estimate(TEXT_ZH)
    assert estimator.last_source == "fallback"
    assert estimator.last_error is not None and "InternalServerError" in estimator.last_error


def test_server_error_is_retried_within_the_budget(server: FakeLLM, make: Any) -> None:
    server.script({"status": 503, "error": "busy", "headers": {"retry-after-ms": "10"}}, score(0.2))
    estimator = make(max_retries=1)
    assert estimator.estimate(TEXT).value == 0.2
    assert estimator.last_source == "llm"
    assert len(server.requests()) == 2


def test_timeout_falls_back_in_bounded_time(server: FakeLLM, make: Any) -> None:
    server.script({**score(0.9), "delay_s": 3.0})
    estimator = make(timeout_s=0.3)
    started = time.monotonic()
    assert estimator.estimate(TEXT) == RULES.estimate(TEXT)
    assert time.monotonic() - started < 2.0
    assert estimator.last_source == "fallback"
    assert estimator.last_error is not None and "Timeout" in estimator.last_error


def test_budget_bounds_the_retries(server: FakeLLM, make: Any) -> None:
    server.script(*[{**score(0.9), "delay_s": 1.0}] * 3)
    estimator = make(timeout_s=0.4, max_retries=2, budget_s=0.5)
    started = time.monotonic()
    assert estimator.estimate(TEXT) == RULES.estimate(TEXT)
    assert time.monotonic() - started < 1.5
    assert estimator.last_source == "fallback"


def test_connection_refused_falls_back(on_server: Any) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    estimator = on_server(LLMImportance, base_url=f"http://127.0.0.1:{port}/v1")
    assert estimator.estimate(TEXT) == RULES.estimate(TEXT)
    assert estimator.last_error is not None and "APIConnectionError" in estimator.last_error


def test_a_given_fallback_answers_instead(server: FakeLLM, make: Any) -> None:
    server.script({"content": "no idea"})
    estimator = make(fallback=RuleImportance(base=0.9))
    assert estimator.estimate("the sky").value == RuleImportance(base=0.9).estimate("the sky").value


def test_last_source_is_reset_by_the_next_answer(server: FakeLLM, make: Any) -> None:
    server.script({"content": "garbage"}, score(0.6))
    estimator = make()
    estimator.estimate(TEXT)
    assert estimator.last_source == "fallback"
    estimator.estimate(TEXT)
    assert estimator.last_source == "llm" and estimator.last_error is None


# -- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"fallback": object()}, "fallback"),
        ({"fallback": RuleImportance}, "fallback"),
        ({"budget_s": 0}, "budget_s"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
    ],
)
def test_bad_arguments_are_refused(make: Any, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        make(**kwargs)
    assert info.value.field == field


def test_settings_must_be_llm_settings() -> None:
    with pytest.raises(ValidationError) as info:
        LLMImportance({"base_url": "http://127.0.0.1:1/v1", "model": "m"})  # type: ignore[arg-type]
    assert info.value.field == "settings"


def test_text_must_be_a_string(server: FakeLLM, make: Any) -> None:
    with pytest.raises(ValidationError) as info:
        make().estimate(42)
    assert info.value.field == "text"
    assert server.requests() == []


def test_parse_answer_and_build_messages() -> None:
    assert parse_answer('{"importance": 0.5, "reason": "a\\nplan"}') == (0.5, "a plan")
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        parse_answer('{"importance": 2}')
    system, user = build_messages("hi")
    assert system["role"] == "system" and user["content"] == "<message>\nhi\n</message>"


# -- Memory(importance=...) ------------------------------------------------------------------


def test_memory_llm_scores_each_message_it_is_not_given_a_value_for(
    server: FakeLLM, db_path: Path, llm_env: None
) -> None:
    with Memory(db_path, embedder="hashing", extractor=None, importance="llm") as mem:
        assert isinstance(mem.importance_estimator, LLMImportance)
        assert mem.importance_estimator.settings.base_url == server.base_url
        server.script(score(0.91), score(0.05, "small talk"))
        records = mem.add(
            [{"role": "user", "content": TEXT}, {"role": "user", "content": "ok thanks"}],
            user_id="u1",
        )
        assert [r.importance for r in records] == [0.91, 0.05]
        assert [b["messages"][1]["content"] for b in server.bodies()] == [
            f"<message>\n{TEXT}\n</message>",
            "<message>\nok thanks\n</message>",
        ]
        assert mem.get(records[0].id).importance == 0.91

        server.script()  # any request now would get HTTP 400 and show up in the log
        given = mem.add("I moved to Lisbon last week.", user_id="u1", importance=0.33)
        assert given[0].importance == 0.33
        assert server.requests() == []


def test_memory_llm_keeps_the_kind_floor_and_asks_once_per_text(
    server: FakeLLM, db_path: Path, llm_env: None
) -> None:
    with Memory(db_path, embedder="hashing", extractor=None, importance="llm") as mem:
        server.script(score(0.2))
        records = mem.add(
            [
                {"role": "user", "content": "I like tea."},
                {"role": "user", "content": "I like tea."},
            ],
            user_id="u1",
            kind="preference",
        )
        assert {r.importance for r in records} == {0.6}  # preference records start at 0.6
        assert len(server.requests()) == 1


def test_memory_llm_failure_stores_the_rules_value(
    server: FakeLLM, db_path: Path, other_db_path: Path, llm_env: None
) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as rules_mem:
        expected = rules_mem.add(TEXT_ZH, user_id="u1")[0].importance
    with Memory(other_db_path, embedder="hashing", extractor=None, importance="llm") as mem:
        server.script({"status": 500, "error": "down"})
        [record] = mem.add(TEXT_ZH, user_id="u1")
        assert record.importance == expected
        assert mem.importance_estimator.last_source == "fallback"  # type: ignore[attr-defined]


def test_memory_rejected_add_makes_no_request(
    server: FakeLLM, db_path: Path, llm_env: None
) -> None:
    with Memory(db_path, embedder="hashing", extractor=None, importance="llm") as mem:
        with pytest.raises(ValidationError) as info:
            mem.add(
                [
                    {"role": "user", "content": TEXT, "timestamp": "2024-01-01T00:00:00Z"},
                    {"role": "user", "content": "later", "timestamp": "2030-01-01T00:00:00Z"},
                ],
                user_id="u1",
                expires_at="2025-01-01T00:00:00Z",
            )
        assert info.value.field == "expires_at"
        assert server.requests() == []


def test_memory_closes_the_estimator_it_built(
    server: FakeLLM, db_path: Path, llm_env: None
) -> None:
    mem = Memory(db_path, embedder="hashing", extractor=None, importance="llm")
    built = mem.importance_estimator
    assert isinstance(built, LLMImportance)
    mem.close()
    assert built._chat._client.is_closed()


def test_memory_leaves_a_given_estimator_open(
    server: FakeLLM, on_server: Any, db_path: Path
) -> None:
    server.script(score(0.42))
    given = on_server(LLMImportance)
    with Memory(db_path, embedder="hashing", extractor=None, importance=given) as mem:
        assert mem.importance_estimator is given
        assert mem.add("We booked the flight.", user_id="u1")[0].importance == 0.42
    assert not given._chat._client.is_closed()


def test_memory_default_is_the_rules(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        assert isinstance(mem.importance_estimator, RuleImportance)
        assert mem.add(TEXT, user_id="u1")[0].importance == RULES.estimate(TEXT).value


def test_memory_llm_needs_the_env(db_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        Memory(db_path, embedder="hashing", extractor=None, importance="llm")
    assert info.value.field == "importance"
    assert "MNEMOLAYER_LLM_BASE_URL" in str(info.value)


@pytest.mark.parametrize("spec", ["LLM", "", "none", None, 0.5, object(), RuleImportance])
def test_bad_importance_specs_are_refused(db_path: Path, spec: Any) -> None:
    with pytest.raises(ValidationError) as info:
        Memory(db_path, embedder="hashing", extractor=None, importance=spec)
    assert info.value.field == "importance"
