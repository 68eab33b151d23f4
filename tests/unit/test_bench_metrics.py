"""Benchmark metrics on hand-computed cases, and the benchmark data parsers."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest

from bench.locomo import (
    ADD_STYLES,
    parse_evidence,
    parse_session_datetime,
    session_messages,
    styled_messages,
)
from bench.memorybank import load_bank, load_gold, pair_messages
from bench.metrics import (
    aggregate,
    ndcg_at_k,
    percentiles,
    question_scores,
    recall_at_k,
    reciprocal_rank,
    session_recall_at_k,
)
from helpers import shared_data
from mnemolayer.models import Message

# -- metrics -----------------------------------------------------------------------------


def test_recall_at_k_counts_gold_in_the_top_k() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 1) == 0.25
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 3) == 0.5
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 10) == 0.75
    assert recall_at_k(ranked, {"z"}, 5) == 0.0


def test_recall_ignores_repeated_ids() -> None:
    # A repeated hit must neither count twice nor push a later gold id out of the top k.
    assert recall_at_k(["a", "a", "b"], {"a", "b"}, 2) == 1.0


def test_ndcg_matches_hand_computation() -> None:
    # gold at ranks 2 and 4 of 2 gold: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a", "y", "b"], ["a", "b"], 10) == pytest.approx(expected)
    assert ndcg_at_k(["a", "b", "x"], ["a", "b"], 10) == 1.0
    assert ndcg_at_k(["x"] * 3, ["a"], 10) == 0.0


def test_ndcg_ideal_is_capped_at_k() -> None:
    # 3 gold ids but k = 2: the ideal ranking fills both slots, so two hits score 1.
    assert ndcg_at_k(["a", "b"], ["a", "b", "c"], 2) == 1.0
    # a gold id past k is not counted
    assert ndcg_at_k(["x", "y", "a"], ["a"], 2) == 0.0


def test_reciprocal_rank() -> None:
    assert reciprocal_rank(["x", "y", "a", "b"], {"a", "b"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a"], {"a"}) == 1.0
    assert reciprocal_rank(["x", "y"], {"a"}) == 0.0


def test_session_recall_counts_covered_sessions() -> None:
    sessions = [3, 3, 1, 7, 7, 2]
    assert session_recall_at_k(sessions, {1, 2}, 5) == 0.5
    assert session_recall_at_k(sessions, {1, 2}, 6) == 1.0
    assert session_recall_at_k(sessions, {3}, 1) == 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: recall_at_k(["a"], set(), 5),
        lambda: ndcg_at_k(["a"], [], 10),
        lambda: reciprocal_rank(["a"], []),
        lambda: recall_at_k(["a"], {"a"}, 0),
    ],
)
def test_empty_gold_or_bad_k_is_an_error(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_question_scores_and_aggregate() -> None:
    row = question_scores(["a", "x"], {"a"}, [1, 2], {1})
    assert row == {
        "recall@1": 1.0,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "ndcg@10": 1.0,
        "mrr": 1.0,
        "session_recall@5": 1.0,
    }
    miss = question_scores(["x"], {"a"}, [2], {1})
    table = aggregate([row, miss])
    assert table["questions"] == 2
    assert table["recall@5"] == 0.5 and table["mrr"] == 0.5
    assert aggregate([]) == {"questions": 0}


def test_percentiles_interpolate_linearly() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    result = percentiles(values)
    assert result["p50"] == pytest.approx(50.5)
    assert result["p95"] == pytest.approx(95.05)
    assert result["p99"] == pytest.approx(99.01)
    assert percentiles([7.0], (50, 95)) == {"p50": 7.0, "p95": 7.0}
    assert percentiles([], (50,)) == {"p50": None}
    with pytest.raises(ValueError):
        percentiles([1.0], (101,))


# -- LoCoMo parsing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
        ("10:04 AM on 19 December, 2023", datetime(2023, 12, 19, 10, 4, tzinfo=UTC)),
    ],
)
def test_parse_session_datetime(text: str, expected: datetime) -> None:
    assert parse_session_datetime(text) == expected


def test_parse_session_datetime_rejects_other_formats() -> None:
    with pytest.raises(ValueError):
        parse_session_datetime("2023-05-08 13:56")


@pytest.mark.parametrize(
    ("raw", "ids", "bad"),
    [
        (["D1:3"], ["D1:3"], []),
        (["D8:6; D9:17"], ["D8:6", "D9:17"], []),  # two ids in one string
        (["D:11:26"], ["D11:26"], []),  # stray colon
        (["D"], [], ["D"]),  # nothing recoverable
        (["D1:3", "D1:3"], ["D1:3"], []),  # duplicates collapse
        (["D10:19"], [], ["D10:19"]),  # no such turn in the conversation
    ],
)
def test_parse_evidence(raw: list[str], ids: list[str], bad: list[str]) -> None:
    known = {"D1:3", "D8:6", "D9:17", "D11:26"}
    assert parse_evidence(raw, known) == (ids, bad)


def test_session_messages_render_turns() -> None:
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [
        {"speaker": "Ann", "dia_id": "D2:1", "text": "Look at this!", "blip_caption": "a cat"},
        {"speaker": "Bob", "dia_id": "D2:2", "text": "Cute."},
    ]
    first, second = session_messages(turns, 2, start)
    assert first.content == "Look at this! [shares a photo: a cat]"
    assert (first.name, first.metadata) == ("Ann", {"dia_id": "D2:1", "session": 2})
    assert second.timestamp is not None and first.timestamp is not None
    assert (second.timestamp - first.timestamp).total_seconds() == 1
    assert second.content == "Cute."


@pytest.mark.parametrize("style", ADD_STYLES)
def test_styled_messages_keep_the_evidence_ids(style: str) -> None:
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [
        {"speaker": "Ann", "dia_id": "D2:1", "text": "Look at this!", "blip_caption": "a cat"},
        {"speaker": "Bob", "dia_id": "D2:2", "text": "Cute."},
        {"speaker": "Ann", "dia_id": "D2:3", "text": ""},
    ]
    out = styled_messages(turns, 2, start, style)  # type: ignore[arg-type]
    dicts = [m.model_dump() if isinstance(m, Message) else m for m in out]
    assert [d["metadata"] for d in dicts] == [
        {"dia_id": "D2:1", "session": 2},
        {"dia_id": "D2:2", "session": 2},
    ]
    if style == "bench":
        assert [d["name"] for d in dicts] == ["Ann", "Bob"]
    elif style == "role":
        assert [(d["role"], d["name"]) for d in dicts] == [("user", "Ann"), ("assistant", "Bob")]
        assert "timestamp" not in dicts[0]
    else:
        assert [d["content"] for d in dicts] == [
            "Ann: Look at this! [shares a photo: a cat]",
            "Bob: Cute.",
        ]
        assert "name" not in dicts[0] and "timestamp" not in dicts[0]


# -- MemoryBank gold ---------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_memorybank_gold_matches_the_bank_and_the_question_files(lang: str) -> None:
    base = shared_data("memorybank")
    tag = {"zh": "cn", "en": "en"}[lang]
    gold = load_gold(base / "gold_dev.jsonl", lang)  # type: ignore[arg-type]
    bank = load_bank(base / f"memory_bank_{tag}_dev.json")
    questions: dict[str, list[str]] = {}
    for line in (base / f"probing_questions_{tag}_dev.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            questions.update(json.loads(line))
    assert len(gold) == 63
    for q in gold:
        assert q.user in bank  # the exact key, stray spaces included
        # the EN question file uses the stripped key (GOLD_README.md)
        assert questions[q.user.strip()][q.q_index] == q.question
        for ev in q.evidence:
            date, pair = ev.split("#")
            assert 0 <= int(pair) < len(bank[q.user]["history"][date])
    empty = [(q.user, q.q_index) for q in gold if not q.evidence]
    assert empty == ([] if lang == "zh" else [("John Zhang", 4)])
    if lang == "en":
        assert {" Jason ", " Linda", " Ivy "} <= {q.user for q in gold}


def test_memorybank_pairs_become_ordered_messages() -> None:
    bank = load_bank(shared_data("memorybank/memory_bank_en_dev.json"))
    messages = pair_messages(bank[" Jason "], "en")
    assert len(messages) == 43
    assert messages[0].name == "Jason"
    assert messages[0].metadata == {"date": "2023-04-27", "pair": 0}
    stamps = [m.timestamp for m in messages]
    assert stamps == sorted(stamps)
    first = bank[" Jason "]["history"]["2023-04-27"][0]
    assert first["query"].strip() in messages[0].content
    assert first["response"].strip() in messages[0].content
