"""extract_json: the JSON inside a model's near-JSON answer, or a clear ValueError."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("json_repair")

from mnemolayer.llm.jsonrepair import extract_json, strip_reasoning

FACTS = {"facts": [{"subject": "user", "predicate": "likes", "object": "tea"}]}
RAW = '{"facts": [{"subject": "user", "predicate": "likes", "object": "tea"}]}'


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(RAW, id="plain"),
        pytest.param(f"  \n{RAW}\n", id="whitespace"),
        pytest.param(f"```json\n{RAW}\n```", id="json-fence"),
        pytest.param(f"```\n{RAW}\n```", id="bare-fence"),
        pytest.param(f"Here you go:\n```JSON\n{RAW}\n```\nAnything else?", id="fence-in-prose"),
        pytest.param(f"```json\n{RAW}", id="unclosed-fence"),
        pytest.param(
            f"<think>The user says they like tea, so {{likes}}.</think>\n{RAW}", id="think"
        ),
        pytest.param(f"<THINKING>\nhmm [maybe]\n</THINKING>{RAW}", id="thinking-upper"),
        pytest.param(f"okay so likes tea</think>\n\n{RAW}", id="think-opened-in-template"),
        pytest.param(f"Sure! Here is the JSON: {RAW} Let me know if you need more.", id="prose"),
        pytest.param(f"{RAW}\n\nNote: I used [likes] because {{it fits}}.", id="trailing-brackets"),
        pytest.param(f"See [1].\n{RAW}", id="short-array-before"),
        pytest.param(
            "{'facts': [{'subject': 'user', 'predicate': 'likes', 'object': 'tea',},],}",
            id="single-quotes-trailing-commas",
        ),
        pytest.param(
            '{facts: [{subject: "user", predicate: "likes", object: "tea"}]}', id="bare-keys"
        ),
        pytest.param(
            '{"facts": [{"subject": "user", "predicate": "likes", "object": "tea"', id="truncated"
        ),
        pytest.param(
            '{"facts": [ // the one fact\n{"subject": "user", "predicate": "likes", "object": "tea"}]}',
            id="comment",
        ),
    ],
)
def test_recovers_the_object(answer: str) -> None:
    assert extract_json(answer) == FACTS


def test_keeps_brackets_and_quotes_inside_strings() -> None:
    answer = 'x {"a": "}{ ] [", "b": "say \\"hi\\" {"} y'
    assert extract_json(answer) == {"a": "}{ ] [", "b": 'say "hi" {'}


def test_apostrophes_inside_double_quoted_strings_survive() -> None:
    assert extract_json('{"object": "O\'Brien\'s bakery",}') == {"object": "O'Brien's bakery"}


def test_python_literals_become_json_ones() -> None:
    assert extract_json("{'negated': True, 'date': None}") == {"negated": True, "date": None}


def test_top_level_array_and_empty_containers() -> None:
    assert extract_json("The list: [1, 2, 3].") == [1, 2, 3]
    assert extract_json("{}") == {}
    assert extract_json("Nothing to report: { }") == {}
    assert extract_json("```json\n[]\n```") == []


def test_longest_candidate_wins() -> None:
    assert extract_json('{"a": 1} and then {"b": 2, "c": 3}') == {"b": 2, "c": 3}


def test_inner_objects_never_beat_a_truncated_outer_one() -> None:
    value: Any = extract_json('{"facts": [{"x": 1}, {"x": 2}, {"x"')
    assert isinstance(value, dict)
    assert value["facts"][:2] == [{"x": 1}, {"x": 2}]


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "I could not find any facts in this message.",
        "null",
        "42",
        '"just a string"',
        "I think {this is prose} and [so is this].",
        '<think>{"facts": []}</think>',  # only inside the reasoning
        '<think>still thinking when the tokens ran out {"facts": [',
    ],
)
def test_nothing_parseable_raises_value_error(answer: str) -> None:
    with pytest.raises(ValueError, match="no JSON object or array"):
        extract_json(answer)


def test_error_message_previews_the_answer() -> None:
    with pytest.raises(ValueError, match="sorry, no facts"):
        extract_json("sorry, no facts")


def test_strip_reasoning() -> None:
    assert strip_reasoning("<think>a</think>b<think>c</think>d") == "bd"
    assert strip_reasoning("a</think>b</think>c") == "c"
    assert strip_reasoning("answer<think>unfinished") == "answer"
    assert strip_reasoning('<reasoning kind="x">r</reasoning>out') == "out"
    assert strip_reasoning("no tags") == "no tags"
