"""Speaker labels in a message's text (mnemolayer.text.speakers): what is read as who
speaks, and what is left as text."""

from __future__ import annotations

import pytest

from mnemolayer.text.speakers import is_transcript, split_speaker, strip_speaker


@pytest.mark.parametrize(
    ("text", "speaker", "rest"),
    [
        ("Caroline: I went hiking", "Caroline", "I went hiking"),
        ("  Melanie:   Yes, last Friday!", "Melanie", "Yes, last Friday!"),
        ("John Zhang: I work at a bank", "John Zhang", "I work at a bank"),
        ("Dr. Smith: take two a day", "Dr. Smith", "take two a day"),
        ("O'Brien: sure", "O'Brien", "sure"),
        ("Émile: salut", "Émile", "salut"),
        ("Ольга: привет", "Ольга", "привет"),
        ("Caroline: see https://example.org", "Caroline", "see https://example.org"),
        ("卡罗琳：我去徒步了", "卡罗琳", "我去徒步了"),
        ("张曼婷：今天很开心", "张曼婷", "今天很开心"),
        ("梅兰妮: 你好", "梅兰妮", "你好"),
        ("约翰·史密斯：你好", "约翰·史密斯", "你好"),
    ],
)
def test_a_leading_name_label_is_the_speaker(text: str, speaker: str, rest: str) -> None:
    assert split_speaker(text) == (speaker, rest)


@pytest.mark.parametrize(
    "text",
    [
        "Note: buy milk",
        "NOTE: buy milk",
        "Warning: the oven is hot",
        "Update: I moved to Porto",
        "P.S.: call me",
        "Q: what time?",
        "AI: hello",
        "User: I like tea",
        "Breakfast: eggs",
        "Monday: gym",
        "My plan: go hiking",  # not every word capitalised
        "caroline: lower case",
        "10:30 the meeting starts",
        "Meet at 10:30",
        "https://example.org",
        "Ratio 3:1",
        "Caroline:",  # nothing said
        "Caroline:   ",
        "I went hiking",
        "A Very Long Label Of Many Words: text",
        "注意：小心路滑",
        "晚饭：吃面",
        "我的计划：去徒步",
        "今天：开会",
        "Linda: Where should I go?\nAI: Spain is lovely.",  # a transcript
        "张曼婷：我想去旅行\nAI：去哪里？",
    ],
)
def test_other_colons_are_not_speakers(text: str) -> None:
    assert split_speaker(text) is None


def test_a_later_line_without_a_label_keeps_the_speaker() -> None:
    assert split_speaker("Mary Ann: well\nI think so: yes") == ("Mary Ann", "well\nI think so: yes")


def test_strip_speaker_removes_only_the_named_label() -> None:
    assert strip_speaker("Caroline: I went hiking", "Caroline") == "I went hiking"
    assert strip_speaker("卡罗琳：我去徒步了", "卡罗琳") == "我去徒步了"
    assert strip_speaker("Caroline: I went hiking", "Melanie") == "Caroline: I went hiking"
    assert strip_speaker("Note: buy milk", "Note") == "Note: buy milk"
    assert strip_speaker("I went hiking", None) == "I went hiking"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Linda: Any tips for sleeping?\nAI: Try a warm bath. Does that help?", True),
        ("User: hello\nAI: Hi, how can I help?", True),
        ("张曼婷：我最近在学画画。\nAI：你喜欢哪位画家？", True),
        ("Linda: Any tips for sleeping?", False),
        ("Any tips for sleeping?\nAI: Try a warm bath.", False),
        ("I said: hello\nthen left", False),
    ],
)
def test_an_exchange_of_labelled_lines_is_a_transcript(text: str, expected: bool) -> None:
    assert is_transcript(text) is expected
