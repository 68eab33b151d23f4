"""The extraction evaluator: object normalisation, fact matching, scoring, gold loading,
the shipped gold sets' shape, and ``python -m bench extraction`` on a fake extractor."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bench.cli import bench_app as app
from bench.extraction import (
    KINDS,
    GoldExample,
    GoldFact,
    default_data_dir,
    evaluate,
    load_gold,
    match_fact,
    normalize_object,
)
from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import ExtractedFact, Extraction

GOLD_DIR = Path(__file__).resolve().parents[1] / "data" / "extraction"
T0 = datetime(2024, 3, 16, 10, 0, tzinfo=UTC)


def gold(s: str, p: str, o: str, *, negated: bool = False, day: date | None = None) -> GoldFact:
    return GoldFact(subject=s, predicate=p, object=o, negated=negated, date=day)


def pred(
    s: str, p: str, o: str, *, negated: bool = False, day: date | None = None
) -> ExtractedFact:
    return ExtractedFact(subject=s, predicate=p, object=o, negated=negated, date=day)


def example(
    id: str, text: str, facts: list[GoldFact], *, kind: str = "identity", speaker: str | None = None
) -> GoldExample:
    return GoldExample(id, text, speaker, T0, "none" if not facts else kind, tuple(facts))


class Scripted:
    """A fake extractor answering each text with fixed facts and recording its calls."""

    name = "scripted"

    def __init__(self, answers: dict[str, list[ExtractedFact]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, str | None, datetime | None]] = []

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        self.calls.append((text, speaker, timestamp))
        return Extraction(facts=list(self.answers.get(text, [])))


# -- normalisation and matching ---------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("the Louvre.", "louvre"),
        ("A golden retriever", "golden retriever"),
        ("my friend's wedding", "friend s wedding"),
        ("Their  NEW   house!", "new house"),
        ("the", "the"),  # a lone article is kept, not emptied
        ("ＳＯＮＹ", "sony"),  # full-width letters fold (NFKC)
        ("一只猫", "猫"),
        ("两条金鱼", "金鱼"),
        ("我的猫咪团子", "猫咪团子"),
        ("太咸的", "太咸"),
        ("把房子卖了", "把房子卖"),
        ("《流浪地球2》", "流浪地球2"),
        ("了", "了"),  # nothing but a particle: kept rather than emptied
    ],
)
def test_normalize_object(raw: str, expected: str) -> None:
    assert normalize_object(raw) == expected


def test_match_requires_subject_predicate_and_negation() -> None:
    g = gold("user", "likes", "sushi")
    assert match_fact(pred(" User ", "likes", "Sushi"), g)
    assert not match_fact(pred("Maria", "likes", "sushi"), g)
    assert not match_fact(pred("user", "dislikes", "sushi"), g)
    assert not match_fact(pred("user", "likes", "sushi", negated=True), g)
    assert match_fact(
        pred("user", "eats", "meat", negated=True), gold("user", "eats", "meat", negated=True)
    )


@pytest.mark.parametrize(
    ("predicted", "gold_object", "expected"),
    [
        ("the Coldplay concert", "Coldplay concert", True),  # equal after dropping "the"
        ("call the landlord about the leak", "call the landlord", True),  # 3 of 6 words
        ("a Coldplay concert with my friends", "Coldplay concert", False),  # 2 of 5 words
        ("sushi", "eating sushi", True),  # 1 of 2 words, either direction
        ("cat", "category", False),  # containment is by whole words
        ("landlord call", "call the landlord", False),  # words must be contiguous, in order
        ("吃火锅", "火锅", True),  # 2 of 3 characters
        ("宅在家里打游戏", "打游戏", False),  # 3 of 7 characters
        ("看了《流浪地球2》", "流浪地球2", True),
        ("Kevin", "kevin", True),
        ("", "kevin", False),
    ],
)
def test_match_objects(predicted: str, gold_object: str, expected: bool) -> None:
    assert (
        match_fact(pred("user", "likes", predicted), gold("user", "likes", gold_object)) is expected
    )


def test_match_dates() -> None:
    g = gold("user", "visited", "Louvre", day=date(2024, 3, 9))
    assert match_fact(pred("user", "visited", "Louvre", day=date(2024, 3, 9)), g)
    assert not match_fact(pred("user", "visited", "Louvre", day=date(2024, 3, 10)), g)
    assert not match_fact(pred("user", "visited", "Louvre"), g)  # the gold date is required
    # a datetime counts by its day
    assert match_fact(pred("user", "visited", "Louvre", day=datetime(2024, 3, 9, 18, 30)), g)
    # no gold date: any predicted date (or none) is accepted
    undated = gold("user", "visited", "Louvre")
    assert match_fact(pred("user", "visited", "Louvre", day=date(2020, 1, 1)), undated)
    assert match_fact(pred("user", "visited", "Louvre"), undated)


# -- scoring ----------------------------------------------------------------------------


def test_scores_counts_and_breakdowns() -> None:
    examples = [
        example(
            "a",
            "My sister Maria lives in Rome.",
            [gold("user", "sister", "Maria"), gold("Maria", "lives_in", "Rome")],
            kind="relationship",
        ),
        example("b", "I love sushi.", [gold("user", "likes", "sushi")], kind="preference"),
        example("c", "Hello there!", []),
    ]
    extractor = Scripted(
        {
            "My sister Maria lives in Rome.": [
                pred("user", "sister", "Maria"),
                pred("user", "lives_in", "Rome"),  # wrong subject: a third party's fact
            ],
            "I love sushi.": [pred("user", "likes", "sushi")],
            "Hello there!": [pred("user", "name", "there")],
        }
    )
    scores = evaluate(extractor, examples)

    assert (scores.total.gold, scores.total.predicted, scores.total.matched) == (3, 4, 2)
    assert scores.precision == pytest.approx(0.5)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert scores.examples == 3
    assert list(scores.by_kind) == ["relationship", "preference", "none"]  # KINDS order
    assert scores.messages_by_kind == {"relationship": 1, "preference": 1, "none": 1}
    none = scores.by_kind["none"]
    assert (none.gold, none.predicted, none.matched, none.precision, none.recall) == (
        0,
        1,
        0,
        0.0,
        1.0,
    )
    assert scores.by_kind["preference"].f1 == 1.0
    lives = scores.by_predicate["lives_in"]
    assert (lives.gold, lives.predicted, lives.matched) == (1, 1, 0)
    assert scores.by_predicate["name"].predicted == 1 and scores.by_predicate["name"].gold == 0
    assert list(scores.by_predicate) == sorted(scores.by_predicate)

    assert [(e.example_id, e.fact.subject, e.fact.predicate) for e in scores.false_positives] == [
        ("a", "user", "lives_in"),
        ("c", "user", "name"),
    ]
    assert [(e.example_id, e.fact.subject) for e in scores.false_negatives] == [("a", "Maria")]
    fn = scores.false_negatives[0].to_dict()
    assert fn == {
        "id": "a",
        "kind": "relationship",
        "text": "My sister Maria lives in Rome.",
        "subject": "Maria",
        "predicate": "lives_in",
        "object": "Rome",
        "negated": False,
        "date": None,
    }
    data = scores.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["precision"] == 0.5 and len(data["false_positives"]) == 2
    assert "false_positives" not in scores.to_dict(errors=False)


def test_each_fact_matches_at_most_once() -> None:
    examples = [
        example(
            "a",
            "I have two cats, Oreo and Pickles.",
            [gold("user", "has_pet", "Oreo"), gold("user", "has_pet", "Pickles")],
            kind="pet",
        )
    ]
    repeated = [pred("user", "has_pet", "Oreo")] * 3
    scores = evaluate(Scripted({examples[0].text: repeated}), examples)
    assert (scores.total.predicted, scores.total.matched) == (3, 1)
    assert len(scores.false_positives) == 2
    assert [e.fact.object for e in scores.false_negatives] == ["Pickles"]


def test_pairing_is_a_maximum_matching_whatever_the_order() -> None:
    # "Japanese food" could match either gold fact; a greedy pairing that gives it to
    # "Japanese food culture" would leave "Japanese" unmatched.
    text = "I like Japanese and Japanese food culture."
    golds = [gold("user", "likes", "Japanese food culture"), gold("user", "likes", "Japanese")]
    guesses = [
        pred("user", "likes", "Japanese food"),
        pred("user", "likes", "Japanese food culture"),
    ]
    for order in (guesses, guesses[::-1]):
        scores = evaluate(Scripted({text: order}), [example("a", text, golds, kind="preference")])
        assert scores.total.matched == 2, order
        assert not scores.false_positives and not scores.false_negatives


def test_the_date_rule_applies_inside_evaluate() -> None:
    text = "I visited the Louvre last week."
    golds = [gold("user", "visited", "Louvre", day=date(2024, 3, 9))]
    wrong_day = Scripted({text: [pred("user", "visited", "the Louvre", day=date(2024, 3, 16))]})
    scores = evaluate(wrong_day, [example("a", text, golds, kind="event")])
    assert (scores.total.matched, len(scores.false_positives), len(scores.false_negatives)) == (
        0,
        1,
        1,
    )
    assert scores.false_positives[0].to_dict()["date"] == "2024-03-16"


def test_evaluate_passes_speaker_and_timestamp_and_warms_up() -> None:
    examples = [
        example("a", "I'm a counselor.", [gold("Caroline", "job", "counselor")], speaker="Caroline")
    ]
    extractor = Scripted({"I'm a counselor.": [pred("Caroline", "job", "a counselor")]})
    scores = evaluate(extractor, examples)
    assert extractor.calls == [("I'm a counselor.", "Caroline", T0)] * 2  # warm-up + scored
    assert scores.recall == 1.0 and scores.seconds >= 0 and scores.ms_per_message >= 0

    cold = Scripted({})
    evaluate(cold, examples, warm_up=False)
    assert len(cold.calls) == 1


def test_empty_inputs_score_vacuously() -> None:
    scores = evaluate(Scripted({}), [])
    assert (scores.examples, scores.precision, scores.recall, scores.ms_per_message) == (
        0,
        1.0,
        1.0,
        0.0,
    )
    assert scores.by_kind == {} and scores.false_negatives == []


def test_an_extractor_error_names_the_example() -> None:
    class Broken:
        name = "broken"

        def extract(
            self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
        ) -> Extraction:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom") as info:
        evaluate(Broken(), [example("en-007", "Hi", [])], warm_up=False)
    assert any("en-007" in note for note in info.value.__notes__)


# -- loading ----------------------------------------------------------------------------

LINE = {
    "id": "x-1",
    "text": "I visited the Louvre last week.",
    "speaker": None,
    "timestamp": "2024-03-16T10:00:00+00:00",
    "kind": "event",
    "facts": [
        {
            "subject": "user",
            "predicate": "visited",
            "object": "Louvre",
            "negated": False,
            "date": "2024-03-09",
        }
    ],
}


def write_lines(path: Path, *rows: Any) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def test_load_gold_parses_every_field(tmp_path: Path) -> None:
    naive = {**LINE, "id": "x-2", "timestamp": "2024-03-16T18:00:00+08:00", "speaker": "Jon"}
    none = {**LINE, "id": "x-3", "kind": "none", "facts": [], "timestamp": "2024-03-16T10:00:00"}
    examples = load_gold(write_lines(tmp_path / "g.jsonl", LINE, "", naive, none))
    assert [e.id for e in examples] == ["x-1", "x-2", "x-3"]
    first = examples[0]
    assert first.facts == (GoldFact("user", "visited", "Louvre", False, date(2024, 3, 9)),)
    assert first.timestamp == T0 and first.speaker is None and first.kind == "event"
    assert examples[1].timestamp == T0 and examples[1].speaker == "Jon"  # converted to UTC
    assert examples[2].timestamp == T0 and examples[2].facts == ()  # no offset: UTC


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "JSON object"),
        ({k: v for k, v in LINE.items() if k != "text"}, "missing 'text'"),
        ({**LINE, "text": "  "}, "blank"),
        ({**LINE, "speaker": 3}, "wrong type"),
        ({**LINE, "kind": "gossip"}, "unknown kind"),
        ({**LINE, "kind": "none"}, "no facts"),
        ({**LINE, "facts": []}, "no facts"),
        ({**LINE, "timestamp": "last Tuesday"}, "bad timestamp"),
        ({**LINE, "facts": [{**LINE["facts"][0], "predicate": "adores"}]}, "unknown predicate"),
        ({**LINE, "facts": [{**LINE["facts"][0], "date": "9 March"}]}, "bad date"),
        ({**LINE, "facts": [{**LINE["facts"][0], "negated": "no"}]}, "wrong type"),
        ({**LINE, "facts": ["user visited Louvre"]}, "JSON object"),
    ],
)
def test_load_gold_rejects_bad_lines(tmp_path: Path, row: Any, message: str) -> None:
    path = write_lines(tmp_path / "g.jsonl", LINE | {"id": "ok"}, row)
    with pytest.raises(ValidationError, match=message) as info:
        load_gold(path)
    assert info.value.field == f"{path}:2"


def test_load_gold_rejects_repeated_ids_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="repeated id"):
        load_gold(write_lines(tmp_path / "g.jsonl", LINE, LINE))
    with pytest.raises(ValidationError, match="cannot read"):
        load_gold(tmp_path / "absent.jsonl")


# -- the shipped gold sets --------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gold_set_shape(lang: str) -> None:
    examples = load_gold(GOLD_DIR / f"{lang}.jsonl")  # validates every line
    assert len(examples) >= 100
    assert all(e.id.startswith(f"{lang}-") for e in examples)
    kinds = Counter(e.kind for e in examples)
    assert set(kinds) == set(KINDS)
    assert 0.15 <= kinds["none"] / len(examples) <= 0.25
    assert len({e.text for e in examples}) == len(examples)
    facts = [f for e in examples for f in e.facts]
    assert sum(f.negated for f in facts) >= 10
    assert sum(f.date is not None for f in facts) >= 20
    assert sum(e.speaker is not None for e in examples) >= 10
    # first-person facts of a line without a speaker belong to "user", never to a name
    # that is not in the text
    for e in examples:
        for f in e.facts:
            assert f.subject in ("user", e.speaker) or f.subject in e.text, (e.id, f)
    # every gold date lies within two months of its message
    for e in examples:
        for f in e.facts:
            if f.date is not None:
                assert abs((f.date - e.timestamp.date()).days) <= 62, (e.id, f)


def test_default_data_dir_is_the_checkout_gold_set() -> None:
    assert default_data_dir() == GOLD_DIR


# -- the command line -------------------------------------------------------------------


@pytest.fixture
def fake_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import mnemolayer.extract.rules.extractor as rules

    answers = {
        "I visited the Louvre last week.": [
            pred("user", "visited", "Louvre", day=date(2024, 3, 9))
        ],
        "Hi!": [pred("user", "name", "Hi")],
    }
    monkeypatch.setattr(rules, "RuleExtractor", lambda: Scripted(answers))


def gold_dir(tmp_path: Path) -> Path:
    write_lines(
        tmp_path / "en.jsonl",
        LINE,
        {**LINE, "id": "x-2", "text": "Hi!", "kind": "none", "facts": []},
    )
    write_lines(tmp_path / "zh.jsonl", {**LINE, "id": "z-1", "text": "上周我去了卢浮宫。"})
    return tmp_path


def test_bench_extraction_json(tmp_path: Path, fake_rules: None) -> None:
    data = gold_dir(tmp_path)
    out = tmp_path / "res" / "extraction.json"
    result = CliRunner().invoke(
        app, ["extraction", "--data", str(data), "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document == json.loads(out.read_text(encoding="utf-8"))
    assert document["extractor"] == "scripted" and set(document["languages"]) == {"en", "zh"}
    en, zh = document["languages"]["en"], document["languages"]["zh"]
    assert (en["gold"], en["predicted"], en["matched"]) == (1, 2, 1)
    assert en["precision"] == 0.5 and en["recall"] == 1.0
    assert en["by_kind"]["none"]["predicted"] == 1
    assert zh["recall"] == 0.0 and zh["false_negatives"][0]["id"] == "z-1"

    global_json = CliRunner().invoke(
        app, ["--json", "extraction", "--data", str(data), "--lang", "zh"]
    )
    assert global_json.exit_code == 0, global_json.output
    assert set(json.loads(global_json.stdout)["languages"]) == {"zh"}


def test_bench_extraction_table(tmp_path: Path, fake_rules: None) -> None:
    result = CliRunner().invoke(
        app,
        ["extraction", "--data", str(gold_dir(tmp_path)), "--lang", "en", "--errors", "5"],
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "extraction · en · 2 messages" in out and "ms/message" in out
    assert "overall" in out and "0.500" in out and "1.000" in out
    assert "false positives · en" in out and "(user, name, Hi)" in out
    assert "zh" not in out.split("ms/message")[0]


def test_bench_extraction_refuses_a_directory_without_the_language(
    tmp_path: Path, fake_rules: None
) -> None:
    write_lines(tmp_path / "en.jsonl", LINE)
    result = CliRunner().invoke(app, ["extraction", "--data", str(tmp_path), "--lang", "zh"])
    assert result.exit_code == 2
    assert "zh.jsonl does not exist" in result.output
