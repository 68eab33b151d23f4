"""Unit tests for mnemolayer.text.tokens: exact counts, truncation, registry, chat framing.

The pinned counts were computed once with quicktok-v1 0.4.0; the OpenAI ones match
tiktoken's published values ("hello world" is 2 tokens in cl100k_base and o200k_base,
the pangram with its full stop is 10).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mnemolayer.text.tokens as tokens
from mnemolayer.errors import ValidationError
from mnemolayer.text.tokens import (
    DEFAULT_ENCODING,
    ENCODINGS,
    MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMER_TOKENS,
    QuicktokCounter,
    TokenCounter,
    count_messages,
    get_token_counter,
    resolve_encoding,
)

SAMPLES = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "我今天想吃红烧肉",
    "记得提醒我明天带护照去北京出差。",
    "Alice moved to Berlin in 2021; 她在柏林工作。",
]

# encoding -> counts of SAMPLES, in order.
PINNED = {
    "cl100k_base": [2, 10, 14, 21, 20],
    "o200k_base": [2, 10, 7, 14, 16],
    "o200k_harmony": [2, 10, 7, 14, 16],
    "llama3": [2, 10, 7, 15, 16],
    "qwen3": [2, 10, 7, 10, 18],
}

# --------------------------------------------------------------------------- counting


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_pinned_counts(encoding: str) -> None:
    counter = QuicktokCounter(encoding)
    assert [counter.count(text) for text in SAMPLES] == PINNED[encoding]
    assert counter.count_many(SAMPLES) == PINNED[encoding]


def test_chinese_costs_one_to_two_tokens_per_character_with_o200k() -> None:
    counter = QuicktokCounter()
    for text in ["我今天想吃红烧肉", "记得提醒我明天带护照去北京出差"]:
        assert len(text) // 2 <= counter.count(text) <= 2 * len(text)
    # cl100k, the older vocabulary, needs more tokens for the same Chinese.
    assert QuicktokCounter("cl100k_base").count(SAMPLES[3]) > counter.count(SAMPLES[3])


def test_counts_differ_by_encoding() -> None:
    assert len({tuple(counts) for counts in PINNED.values()}) >= 4


def test_empty_text_costs_nothing() -> None:
    for encoding in ENCODINGS:
        counter = QuicktokCounter(encoding)
        assert counter.count("") == 0
        assert counter.count_many(["", "hello world", ""]) == [0, 2, 0]
        assert counter.count_many([]) == []


def test_special_token_strings_count_as_plain_text() -> None:
    counter = QuicktokCounter()
    assert counter.count("<|endoftext|>") == 7
    assert counter.truncate("<|endoftext|> hi", 7) == "<|endoftext|>"


def test_surrogates_and_nul_are_counted_not_rejected() -> None:
    counter = QuicktokCounter()
    assert counter.count("a\ud800b") == counter.count("a\ufffdb")
    assert counter.count("\ud83d\ude00") == counter.count("😀")  # a pair from a JSON decode
    assert counter.count("a\x00b") == 3


def test_bad_input_types_raise_validation_error() -> None:
    counter = QuicktokCounter()
    with pytest.raises(ValidationError) as err:
        counter.count(b"bytes")  # type: ignore[arg-type]
    assert err.value.field == "text"
    with pytest.raises(ValidationError) as err:
        counter.count_many("a string")
    assert err.value.field == "texts"
    with pytest.raises(ValidationError) as err:
        counter.count_many(["ok", 3])  # type: ignore[list-item]
    assert err.value.field == "texts[1]"


# --------------------------------------------------------------------------- truncation


def test_truncate_keeps_text_that_fits() -> None:
    counter = QuicktokCounter()
    assert counter.truncate("hello world", 2) == "hello world"
    assert counter.truncate("hello world", 100) == "hello world"
    assert counter.truncate("hello world", 1) == "hello"
    assert counter.truncate("hello world", 0) == ""
    assert counter.truncate("", 5) == ""


def test_truncate_chinese_at_token_boundaries() -> None:
    counter = QuicktokCounter()
    text = "我今天想吃红烧肉"
    assert [counter.truncate(text, k) for k in range(1, 4)] == ["我", "我今天", "我今天想"]


def test_truncate_never_splits_a_byte_level_character() -> None:
    # cl100k spells this rare character with several byte tokens: one token is not a
    # whole character, so the cut must drop it rather than emit a broken one.
    counter = QuicktokCounter("cl100k_base")
    char = "𠜎"
    assert counter.count(char) > 1
    assert counter.truncate(char + " and more", 1) == ""
    assert counter.truncate(char + " and more", counter.count(char)) == char


def test_truncate_rejects_bad_budget() -> None:
    counter = QuicktokCounter()
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValidationError) as err:
            counter.truncate("text", bad)  # type: ignore[arg-type]
        assert err.value.field == "max_tokens"


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=80),
    max_tokens=st.integers(min_value=0, max_value=40),
    encoding=st.sampled_from(["o200k_base", "cl100k_base", "llama3"]),
)
def test_truncate_fits_and_is_a_prefix(text: str, max_tokens: int, encoding: str) -> None:
    counter = QuicktokCounter(encoding)
    cut = counter.truncate(text, max_tokens)
    assert counter.count(cut) <= max_tokens
    # A prefix of whole characters: nothing broken, nothing replaced.
    assert text.startswith(cut)
    assert "\ufffd" not in cut or "\ufffd" in text
    if counter.count(text) <= max_tokens:
        assert cut == text
    elif max_tokens > 0 and counter.count(text[:1]) <= max_tokens:
        assert cut  # a budget that fits the first character keeps something


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=60), max_tokens=st.integers(min_value=0, max_value=30))
def test_truncate_fits_for_normalising_encoding(text: str, max_tokens: int) -> None:
    counter = QuicktokCounter("qwen3")
    cut = counter.truncate(text, max_tokens)
    assert counter.count(cut) <= max_tokens
    cut.encode("utf-8")  # whole characters only


# --------------------------------------------------------------------------- resolution


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("o200k_base", "o200k_base"),
        ("O200K", "o200k_base"),
        ("cl100k", "cl100k_base"),
        ("qwen", "qwen3"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen3"),
        ("gpt-oss-20b", "o200k_harmony"),
    ],
)
def test_resolve_encoding(name: str, expected: str) -> None:
    assert resolve_encoding(name) == expected
    assert QuicktokCounter(name).name == expected


@pytest.mark.parametrize("bad", ["nope", "", "o300k_base", "gpt-5x"])
def test_unknown_encoding_names_the_field_and_lists_valid_ones(bad: str) -> None:
    with pytest.raises(ValidationError) as err:
        QuicktokCounter(bad)
    assert err.value.field == "encoding"
    for name in ENCODINGS:
        assert name in str(err.value)


class _Whitespace:
    """A token counter of one's own: one token per whitespace-separated word."""

    def __init__(self, encoding: str | None = None) -> None:
        self.name = f"words:{encoding or 'plain'}"

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def truncate(self, text: str, max_tokens: int) -> str:
        return " ".join(text.split()[:max_tokens])


def test_get_token_counter() -> None:
    default = get_token_counter(None)
    assert isinstance(default, QuicktokCounter)
    assert default.name == DEFAULT_ENCODING == "o200k_base"
    assert get_token_counter("llama3") == QuicktokCounter("llama3")
    assert get_token_counter(default.name) == default
    assert get_token_counter(default) is default
    assert isinstance(default, TokenCounter)

    custom = _Whitespace()
    assert get_token_counter(custom) is custom
    with pytest.raises(ValidationError) as err:
        get_token_counter("nope")
    assert err.value.field == "encoding"
    with pytest.raises(ValidationError) as err:
        get_token_counter(42)  # type: ignore[arg-type]
    assert err.value.field == "encoding"


def test_the_registry_resolves_counters_by_backend_and_encoding() -> None:
    from mnemolayer import registry

    assert registry.get_token_counter() == QuicktokCounter("o200k_base")
    assert registry.resolve("tokens", None) == get_token_counter(None)
    # Every name the quicktok resolver knows means the same counter through the seam.
    for name in (*ENCODINGS, "cl100k", "harmony", "gpt-4o", "Qwen/Qwen2.5-7B-Instruct"):
        assert registry.get_token_counter(name) == get_token_counter(name), name
        assert registry.get_token_counter(f"quicktok:{name}") == get_token_counter(name), name
    assert registry.get_token_counter("quicktok") == QuicktokCounter()
    given = QuicktokCounter("llama3")
    assert registry.get_token_counter(given) is given
    for bad in ("nope", "quicktok:", "quicktok:nope", 42, QuicktokCounter):
        with pytest.raises(ValidationError) as err:
            registry.get_token_counter(bad)  # type: ignore[arg-type]
        assert err.value.field == "encoding", bad


def test_a_counter_backend_of_ones_own_is_one_table_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mnemolayer import Memory, registry

    monkeypatch.setitem(registry.TOKEN_COUNTERS, "words", _Whitespace)
    counter = registry.get_token_counter("words:v1")
    assert isinstance(counter, _Whitespace) and counter.name == "words:v1"
    assert registry.get_token_counter("words").name == "words:plain"
    # A window keeps its counter's name and resumes with an equivalent counter by it.
    with Memory(tmp_path / "m.db", embedder="hashing", extractor=None) as mem:
        window = mem.working(session_id="s1", user_id="u1", budget_tokens=200, counter="words:v1")
        window.add("user", "one two three four")
        saved = mem.session_window("s1", "u1")  # as saved: by its own counter, by name
        assert saved is not None and isinstance(saved.counter, _Whitespace)
        assert saved.counter.name == "words:v1"
        assert [m["content"] for m in saved.messages()] == ["one two three four"]
        context = mem.context("numbers", user_id="u1", counter="words")
        assert context.encoding == "words:plain"
        assert context.tokens == len(context.text.split())


# --------------------------------------------------------------------------- loading


def test_lazy_loading_is_once_per_process_and_thread_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    import quicktok

    monkeypatch.setattr(tokens, "_LOADED", {})
    real = quicktok.get_encoding
    loads: list[str] = []

    def slow_get_encoding(name: str, data_dir: str = "") -> quicktok.Tokenizer:
        loads.append(name)
        time.sleep(0.05)  # widen the race window
        return real(name, data_dir)

    monkeypatch.setattr(quicktok, "get_encoding", slow_get_encoding)
    counters = [QuicktokCounter("o200k_base") for _ in range(8)]
    assert loads == []  # constructing loads nothing

    barrier = threading.Barrier(len(counters))
    results: list[list[int]] = []
    lock = threading.Lock()

    def work(counter: QuicktokCounter) -> None:
        barrier.wait()
        counts = [counter.count(text) for text in SAMPLES * 20]
        with lock:
            results.append(counts)

    threads = [threading.Thread(target=work, args=(c,)) for c in counters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == ["o200k_base"]
    assert len(results) == len(counters)
    assert all(counts == PINNED["o200k_base"] * 20 for counts in results)


# --------------------------------------------------------------------------- chat framing


def test_count_messages_adds_documented_overhead() -> None:
    counter = QuicktokCounter()
    messages = [("system", "You are helpful."), ("user", "hello world")]
    content = sum(counter.count(r) + counter.count(c) for r, c in messages)
    expected = content + MESSAGE_OVERHEAD_TOKENS * 2 + REPLY_PRIMER_TOKENS
    assert count_messages(messages, counter) == expected == 17
    assert MESSAGE_OVERHEAD_TOKENS == 3 and REPLY_PRIMER_TOKENS == 3


def test_count_messages_accepts_dicts_objects_and_names() -> None:
    @dataclass
    class Turn:
        role: str
        content: str

    as_tuples = [("user", "我今天想吃红烧肉"), ("assistant", "好的")]
    as_dicts = [{"role": r, "content": c} for r, c in as_tuples]
    as_objects = [Turn(r, c) for r, c in as_tuples]
    base = count_messages(as_tuples)
    assert count_messages(as_dicts) == count_messages(as_objects) == base
    assert count_messages(as_tuples, "cl100k_base") > base  # Chinese costs more there

    named = [{"role": "user", "content": "hi", "name": "alice"}]
    plain = [{"role": "user", "content": "hi"}]
    assert count_messages(named) == count_messages(plain) + 1 + QuicktokCounter().count("alice")

    parts = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hello "}, {"type": "text", "text": "world"}],
        }
    ]
    assert count_messages(parts) == count_messages([("user", "hello world")])
    assert count_messages([{"role": "assistant", "content": None}]) == 1 + 3 + 3
    assert count_messages([]) == 0


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([("user",)], "messages[0]"),
        ([("user", "ok"), {"content": "no role"}], "messages[1]"),
        ([42], "messages[0]"),
        ([("user", 5)], "messages[0].content"),
        ([{"role": "user", "content": "x", "name": 3}], "messages[0].name"),
        ([{"role": "user", "content": [{"type": "image_url"}]}], "messages[0].content[0]"),
        ("user: hi", "messages"),
    ],
)
def test_count_messages_rejects_bad_shapes(messages: object, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        count_messages(messages)  # type: ignore[arg-type]
    assert err.value.field == field
