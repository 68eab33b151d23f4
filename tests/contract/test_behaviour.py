"""Behaviour pinned by bug reports against other memory systems, on a real SQLite file.

Each test names the failure it guards against; the store is always a real file and the
embedder the deterministic hashing model (wrapped in a counting embedder where a test
needs to know whether the model was called).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from helpers import all_records, is_postgres, raw_rows, table_names
from mnemolayer import (
    EmbeddingModelMismatchError,
    Memory,
    NotFoundError,
    RetrievalConfig,
    ValidationError,
)
from mnemolayer.embed import HashingEmbedder

MODES = ("hybrid", "vector", "keyword")


def contents(hits: Any) -> list[str]:
    return [h.content for h in hits]


# -- multilingual text ----------------------------------------------------------------------

ZH = "我每天早上喝榛子拿铁"
JA = "毎朝コーヒーを飲みます"
EN = "I drink a hazelnut latte every morning"


def test_keyword_search_finds_a_chinese_word_inside_a_sentence(mem: Memory) -> None:
    # jieba cuts 拿铁 apart in this sentence; a whitespace tokenizer sees one long token.
    [zh, ja, en] = mem.add([ZH, JA, EN], user_id="u")
    hits = mem.search("拿铁", user_id="u", mode="keyword")
    assert [h.id for h in hits] == [zh.id]
    assert hits[0].content == ZH
    assert [h.id for h in mem.search("コーヒー", user_id="u", mode="keyword")] == [ja.id]
    assert [h.id for h in mem.search("latte", user_id="u", mode="keyword")] == [en.id]
    assert mem.search("拿铁", user_id="u")[0].id == zh.id


VERBATIM = [
    pytest.param(unicodedata.normalize("NFD", "Crème brûlée in Zürich, señor"), id="nfd"),
    pytest.param("family 👩\u200d👩\u200d👧\u200d👦, flags 🇵🇹🇯🇵, skin 👍🏽 🎉", id="emoji"),
    pytest.param("שלום עולם — مرحبا بالعالم (RTL) \u200fend", id="rtl"),
    pytest.param("Z\u0336a\u0301\u0302l\u0303g\u0324o e\u0301 vs \u00e9", id="combining"),
    pytest.param("  leading and trailing spaces\tand a tab\n", id="whitespace"),
    pytest.param(ZH + " / " + JA + " / 한국어 문장", id="cjk"),
]


@pytest.mark.parametrize("text", VERBATIM)
def test_stored_text_comes_back_byte_identical(db_path: Path, text: str) -> None:
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        [rec] = mem.add(text, user_id="u", metadata={"original": text})
        assert rec.content.encode("utf-8") == text.encode("utf-8")
        assert mem.get(rec.id).content.encode("utf-8") == text.encode("utf-8")
        assert mem.search(text, user_id="u")[0].content.encode("utf-8") == text.encode("utf-8")
    with Memory(db_path, embedder="hashing") as mem:
        [again] = mem.list(user_id="u").items
        assert again.content.encode("utf-8") == text.encode("utf-8")
        assert again.metadata["original"].encode("utf-8") == text.encode("utf-8")
        assert raw_rows(db_path, "SELECT content FROM memories")[0][0] == text


def test_decomposed_text_is_found_by_a_composed_query(mem: Memory) -> None:
    nfd = unicodedata.normalize("NFD", "un café crème")
    [rec] = mem.add(nfd, user_id="u")
    mem.add("a cup of tea", user_id="u")
    assert mem.search("café", user_id="u", mode="keyword")[0].id == rec.id
    assert mem.get(rec.id).content == nfd  # found via NFC, stored as given


# -- blank input ----------------------------------------------------------------------------

BLANKS = ["", " ", "   \t\n ", "\u3000", "\u00a0\u2003"]


@pytest.mark.parametrize("blank", BLANKS, ids=repr)
def test_blank_queries_and_contents_are_rejected_before_embedding(
    db_path: Path, counting: Any, blank: str
) -> None:
    with Memory(db_path, embedder=counting, extractor=None) as mem:
        [rec] = mem.add("I like tea", user_id="u")
        counting.calls.clear()
        attempts = [
            ("query", lambda: mem.search(blank, user_id="u")),
            ("query", lambda: mem.search(blank, user_id="u", mode="keyword")),
            ("content", lambda: mem.add(blank, user_id="u")),
            ("messages[1].content", lambda: mem.add(["fine", blank], user_id="u")),
            ("messages[0].content",
             lambda: mem.add([{"role": "user", "content": blank}], user_id="u")),
            ("content", lambda: mem.update(rec.id, content=blank)),
        ]  # fmt: skip
        for field, call in attempts:
            with pytest.raises(ValidationError, match="empty or whitespace") as err:
                call()
            assert err.value.field == field
            assert str(err.value).startswith(field)
        assert counting.calls == []
        assert mem.stats()["memories"] == 1
        assert mem.get(rec.id).content == "I like tea"
        assert [e.event for e in mem.history(rec.id)] == ["ADD"]


# -- long input -----------------------------------------------------------------------------

FACT = "My passport number is ZX4471 and it expires in March."
QUERY = "passport number ZX4471 expires"
DECOYS = ["my passport photo is old", "the bus number is 12", "I adore green tea"]


def long_text(words: int = 20_000) -> str:
    """``words`` words of prose-like filler (a 3,000-word vocabulary), then :data:`FACT`."""
    rng = random.Random(7)
    syllables = [c + v for c in "bcdfghjklmnprstvz" for v in "aeiou"]
    vocab = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(3000)]
    lines = [" ".join(rng.choices(vocab, k=20)) + "." for _ in range(words // 20)]
    return "\n".join([*lines, FACT])


def test_a_20000_word_message_is_stored_whole_and_its_last_line_is_found(db_path: Path) -> None:
    text = long_text()
    assert len(text.split()) > 20_000
    with Memory(db_path, embedder="hashing") as mem:
        [rec] = mem.add(text, user_id="u")
        mem.add(DECOYS, user_id="u")
        # More than one vector: the text was chunked, not truncated to the model's limit.
        assert mem.stats()["vectors"] > 1 + len(DECOYS)
    with Memory(db_path, embedder="hashing") as mem:
        assert mem.get(rec.id).content == text
        assert [h.id for h in mem.search("ZX4471", user_id="u", mode="keyword")] == [rec.id]
        for mode in MODES:
            hits = mem.search(QUERY, user_id="u", mode=mode)  # type: ignore[arg-type]
            assert rec.id in [h.id for h in hits], mode
            assert next(h for h in hits if h.id == rec.id).content == text


def test_chunking_lets_vector_search_find_the_tail_of_a_long_memory(
    db_path: Path, counting: Any
) -> None:
    # A small window, so that the bag-of-words hashing model sees the fact in a chunk of
    # its own size (real models have 256-512 tokens and read meaning, not word counts).
    counting.max_tokens = 32
    with Memory(db_path, embedder=counting) as mem:
        text = long_text()
        [rec] = mem.add(text, user_id="u")
        [(kind, chunks)] = counting.calls
        assert kind == "document"
        assert len(chunks) > 20_000 // 32
        assert all(counting.count_tokens(c) <= 32 for c in chunks)
        assert "ZX4471" in chunks[-1]
        assert not any("ZX4471" in c for c in chunks[:-2])  # truncation would have lost it
        mem.add(DECOYS, user_id="u")
        [top, *_] = mem.search(QUERY, user_id="u", mode="vector")
        assert top.id == rec.id
        assert top.content == text
        assert top.scores["vector"] > 0.3  # the tail chunk itself matched


# -- idempotent add -------------------------------------------------------------------------


def test_adding_the_same_fact_three_times_stores_it_once(mem: Memory, clock: Any) -> None:
    first = mem.add("I am allergic to peanuts", user_id="u")[0]
    clock.advance(hours=1)
    second = mem.add("I am allergic to peanuts", user_id="u")[0]
    third = mem.add(" I am  allergic to peanuts ", user_id="u")[0]  # whitespace only differs
    assert first.id == second.id == third.id
    assert second == first and third == first
    assert [r.id for r in mem.list(user_id="u")] == [first.id]
    assert [e.event for e in mem.history(first.id)] == ["ADD"]
    assert mem.stats()["history_events"] == 1
    assert mem.stats()["vectors"] == 1
    assert len(mem.search("peanuts", user_id="u", mode="keyword")) == 1


def test_duplicates_inside_one_call_are_stored_once(mem: Memory) -> None:
    records = mem.add(["I like tea", "I like coffee", "I like tea"], user_id="u")
    assert records[0].id == records[2].id != records[1].id
    assert mem.stats()["memories"] == 2


# -- deletion -------------------------------------------------------------------------------


def _three_users(mem: Memory) -> dict[str, list[Any]]:
    out = {}
    for user in "abc":
        out[user] = mem.add(
            [f"user {user} drinks green tea", f"user {user} lives in Lisbon", f"{user}only marker"],
            user_id=user,
        )
    return out


def test_delete_all_for_one_user_leaves_the_others_untouched(mem: Memory, db_path: Path) -> None:
    before = _three_users(mem)
    kept = {u: all_records(mem, u) for u in "bc"}
    assert mem.delete_all(user_id="a").memories == 3
    for user in "bc":
        assert all_records(mem, user) == kept[user]
        for mode in MODES:
            hits = mem.search("green tea", user_id=user, mode=mode)  # type: ignore[arg-type]
            assert before[user][0].id in [h.id for h in hits], (user, mode)
        assert [e.event for e in mem.history(before[user][0].id)] == ["ADD"]
    for mode in MODES:
        assert mem.search("green tea Lisbon", user_id="a", mode=mode) == []  # type: ignore[arg-type]


def test_deleted_memories_are_gone_from_every_index_also_after_reopening(
    mem: Memory, db_path: Path
) -> None:
    before = _three_users(mem)
    [_, b_lisbon, _] = before["b"]
    mem.delete_all(user_id="a")
    mem.delete(b_lisbon.id)
    mem.close()

    with Memory(db_path, embedder="hashing") as again:
        for mode in MODES:
            assert again.search("aonly marker tea", user_id="a", mode=mode) == []  # type: ignore[arg-type]
            hits = again.search("lives in Lisbon", user_id="b", mode=mode)  # type: ignore[arg-type]
            assert b_lisbon.id not in [h.id for h in hits]
        with pytest.raises(NotFoundError):
            again.get(b_lisbon.id)

    memories = raw_rows(db_path, "SELECT rowid, user_id, content FROM memories")
    rowids = {r[0] for r in memories}
    assert len(memories) == 5
    assert {r[1] for r in memories} == {"b", "c"}
    vectors = raw_rows(db_path, "SELECT memory_rowid, user_id FROM vectors")
    assert {r[0] for r in vectors} == rowids
    assert {r[1] for r in vectors} == {"b", "c"}
    fts = raw_rows(db_path, "SELECT rowid, terms FROM memories_fts")
    assert {r[0] for r in fts} == rowids
    assert not any("aonly" in r[1] for r in fts)
    match = (
        "tsv @@ CAST('aonly' AS tsquery)" if is_postgres(db_path) else "memories_fts MATCH 'aonly'"
    )
    assert raw_rows(db_path, f"SELECT COUNT(*) FROM memories_fts WHERE {match}") == [(0,)]
    assert raw_rows(db_path, "SELECT COUNT(*) FROM history WHERE user_id = 'a'") == [(0,)]


def test_another_handle_does_not_serve_deleted_vectors_after_delete_all(db_path: Path) -> None:
    # Two handles on one file behave like two processes: each has its own vector cache.
    writer = Memory(db_path, embedder="hashing")
    reader = Memory(db_path, embedder="hashing")
    try:
        writer.add(["I adore green tea", "my cat is called Tom"], user_id="u")
        assert reader.search("green tea", user_id="u", mode="vector")[0].content == (
            "I adore green tea"
        )
        writer.delete_all(user_id="u")
        [truck, _] = writer.add(["I drive a yellow truck", "my dog is called Rex"], user_id="u")
        hits = reader.search("green tea", user_id="u", mode="vector")
        # Nothing the user still has mentions green tea: every cosine must be ~0.
        assert all(h.scores["vector"] < 0.2 for h in hits), [(h.content, h.scores) for h in hits]
        assert reader.search("yellow truck", user_id="u", mode="vector")[0].id == truck.id
    finally:
        writer.close()
        reader.close()


# -- tenant isolation -----------------------------------------------------------------------


def test_similar_facts_of_two_users_never_touch_each_other(mem: Memory, clock: Any) -> None:
    [alice] = mem.add("my name is Alice", user_id="alice")
    snapshot = (all_records(mem, "alice"), mem.history(alice.id))
    clock.advance(minutes=5)
    [bob] = mem.add("my name is Bob", user_id="bob")
    [bob_says_alice] = mem.add("my name is Alice", user_id="bob")  # same text, other tenant
    assert bob_says_alice.id not in (alice.id, bob.id)
    assert (all_records(mem, "alice"), mem.history(alice.id)) == snapshot

    mem.update(bob.id, content="my name is Robert")
    for call in (
        lambda: mem.update(alice.id, content="my name is Eve", user_id="bob"),
        lambda: mem.delete(alice.id, user_id="bob"),
    ):
        with pytest.raises(NotFoundError):
            call()
    assert (all_records(mem, "alice"), mem.history(alice.id)) == snapshot
    with pytest.raises(NotFoundError):
        mem.history(bob.id, user_id="alice")
    assert [h.id for h in mem.search("what is my name", user_id="alice")] == [alice.id]
    bobs = {h.id for h in mem.search("what is my name", user_id="bob")}
    assert bobs == {bob.id, bob_says_alice.id}


# -- time -----------------------------------------------------------------------------------

NEW_YEAR_UTC = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "given",
    [
        datetime(2024, 1, 1),  # naive: taken as UTC
        datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=9))),
        "2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00z",
        "2024-01-01T00:00:00+00:00",
        "2024-01-01T09:00:00+09:00",
        "2023-12-31T19:00:00-05:00",
        "2024-01-01T00:00:00",
        "2024-01-01 00:00:00.000000Z",
        1_704_067_200,
    ],
    ids=repr,
)
def test_times_are_stored_as_aware_utc(db_path: Path, given: Any) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        [rec] = mem.add("new year's party", user_id="u", timestamp=given)
        [msg] = mem.add([{"content": "fireworks", "timestamp": given}], user_id="u")
    with Memory(db_path, embedder="hashing") as mem:
        for r in (rec, msg):
            stored = mem.get(r.id).occurred_at
            assert stored is not None and r.occurred_at == stored
            assert stored.utcoffset() == timedelta(0)
            assert stored == NEW_YEAR_UTC
            assert stored.isoformat() == "2024-01-01T00:00:00+00:00"
    assert raw_rows(db_path, "SELECT DISTINCT occurred_at FROM memories") == [
        ("2024-01-01T00:00:00.000000+00:00",)
    ]


def test_a_naive_clock_is_read_as_utc(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", clock=lambda: datetime(2024, 1, 1)) as mem:
        [rec] = mem.add("tick", user_id="u")
    assert rec.created_at == rec.occurred_at == NEW_YEAR_UTC
    assert rec.created_at.tzinfo is not None


@pytest.mark.parametrize("bad", ["yesterday", "2024-13-01", "", True, float("nan"), [2024]])
def test_a_bad_time_is_a_validation_error(mem: Memory, bad: Any) -> None:
    with pytest.raises(ValidationError) as err:
        mem.add("x marks the spot", user_id="u", timestamp=bad)
    assert err.value.field == "timestamp"
    assert mem.stats()["memories"] == 0


# -- injection-like input -------------------------------------------------------------------

NASTY = ["' OR '1'='1' --", 'x") or true or ("', "Robert'); DROP TABLE memories;--"]
TABLES = {"memories", "memories_fts", "vectors", "history", "meta", "schema_version"}


def _tables(path: Path) -> set[str]:
    return table_names(path)


@pytest.mark.parametrize("nasty", NASTY)
def test_injection_like_strings_are_plain_data(mem: Memory, db_path: Path, nasty: str) -> None:
    [honest] = mem.add("the honest user likes tea", user_id="honest", metadata={"k": "plain"})
    [rec] = mem.add(nasty, user_id=nasty, session_id=nasty, metadata={"k": nasty, "note": nasty})
    assert (rec.user_id, rec.session_id, rec.content, rec.metadata["k"]) == (nasty,) * 4

    assert [h.id for h in mem.search(nasty, user_id=nasty, mode="keyword")] == [rec.id]
    assert [h.id for h in mem.search(nasty, user_id=nasty)] == [rec.id]
    assert [r.id for r in mem.list(user_id=nasty, session_id=nasty)] == [rec.id]
    assert [r.id for r in mem.list(user_id=nasty, filters={"k": nasty})] == [rec.id]
    assert [r.id for r in mem.list(user_id=nasty, filters={"k": {"in": [nasty]}})] == [rec.id]
    assert [r.id for r in mem.list(user_id=nasty, filters={"note": {"contains": nasty}})] == [
        rec.id
    ]
    assert list(mem.list(user_id="honest", filters={"k": nasty})) == []
    assert list(mem.list(user_id=nasty, filters={"k": "' OR '1'='1"})) == []
    assert [h.id for h in mem.search("tea", user_id="honest", filters={"k": {"ne": nasty}})] == [
        honest.id
    ]
    with pytest.raises(ValidationError) as err:
        mem.add("bad key", user_id="u", metadata={nasty: 1})
    assert err.value.field is not None and err.value.field.startswith("metadata")
    with pytest.raises(ValidationError) as err:
        mem.list(user_id="u", filters={nasty: 1})
    assert err.value.field is not None and err.value.field.startswith("filters")

    assert mem.delete_all(user_id=nasty).memories == 1
    assert _tables(db_path) >= TABLES
    assert mem.get(honest.id) is not None
    assert raw_rows(db_path, "SELECT COUNT(*) FROM memories") == [(1,)]


def test_a_fake_user_id_matches_nothing(mem: Memory) -> None:
    [rec] = mem.add("the real user likes tea", user_id="real")
    for fake in ["' OR '1'='1", "' OR 1=1 --", "%", "*", "real ", "REAL", "real\u200b"]:
        for mode in MODES:
            assert mem.search("tea", user_id=fake, mode=mode) == [], (fake, mode)  # type: ignore[arg-type]
        assert list(mem.list(user_id=fake)) == []
        with pytest.raises(NotFoundError):
            mem.get(rec.id, user_id=fake)
        assert mem.delete_all(user_id=fake).memories == 0
    assert mem.get(rec.id, user_id="real").content == "the real user likes tea"


TEA, CAT = "I adore green tea", "my cat is called Tom"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"', set()),
        ("'", set()),
        ("*", set()),
        ("(", set()),
        ("tea OR cat", {TEA, CAT}),
        ("NEAR(tea cat)", {TEA, CAT}),
        ("content:tea", {TEA}),
        ("^tea", {TEA}),
        ("-tea", {TEA}),
        ('tea" OR "cat', {TEA, CAT}),
    ],
)
def test_fts_syntax_in_a_query_is_searched_as_text(
    mem: Memory, query: str, expected: set[str]
) -> None:
    mem.add([TEA, CAT], user_id="u")
    for mode in MODES:
        hits = mem.search(query, user_id="u", mode=mode)  # type: ignore[arg-type]
        assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert {h.content for h in mem.search(query, user_id="u", mode="keyword")} == expected


# -- scores and thresholds ------------------------------------------------------------------

CONFIGS = [
    pytest.param(RetrievalConfig(), id="default"),
    pytest.param(RetrievalConfig(fusion="rrf"), id="rrf"),
    pytest.param(RetrievalConfig(normalization="absolute"), id="absolute"),
    pytest.param(
        RetrievalConfig(importance_weight=0.3, recency_weight=0.3, access_weight=0.3), id="rerank"
    ),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_scores_are_in_unit_range_and_sorted(db_path: Path, clock: Any, config: Any) -> None:
    with Memory(db_path, embedder="hashing", retrieval=config, clock=clock) as mem:
        for i, text in enumerate(
            ["I adore green tea", "my cat is called Tom", "green cats are rare", "tea tea tea"]
        ):
            mem.add(text, user_id="u", importance=i / 3, timestamp=clock.now - timedelta(days=i))
        mem.add("a memory from the future", user_id="u", timestamp=clock.now + timedelta(days=9))
        for mode in MODES:
            for _ in range(2):  # the second round sees access counts
                hits = mem.search("green tea cat", user_id="u", mode=mode)  # type: ignore[arg-type]
                assert hits
                scores = [h.score for h in hits]
                assert all(0.0 <= s <= 1.0 for s in scores), scores
                assert scores == sorted(scores, reverse=True)
                for h in hits:
                    assert all(0.0 <= v <= 1.0 for k, v in h.scores.items() if k != "keyword")


def test_threshold_keeps_only_hits_at_least_that_good(mem: Memory) -> None:
    [tea, cat, _cello] = mem.add(
        ["I adore green tea", "my cat is called Tom", "I play the cello on Sundays"], user_id="u"
    )
    every = mem.search("green tea", user_id="u")
    assert every[0].id == tea.id
    unrelated = max(h.score for h in every if h.id != tea.id)
    threshold = (every[0].score + unrelated) / 2
    kept = mem.search("green tea", user_id="u", threshold=threshold)
    assert [h.id for h in kept] == [tea.id]
    assert all(h.score >= threshold for h in kept)
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        assert all(h.score >= t for h in mem.search("cat tea", user_id="u", threshold=t))
    assert cat.id in [h.id for h in mem.search("cat tea", user_id="u", threshold=0.0)]


def test_a_threshold_above_one_returns_nothing(mem: Memory) -> None:
    mem.add("I adore green tea", user_id="u")
    assert mem.search("I adore green tea", user_id="u", threshold=1.0000001) == []
    assert mem.search("I adore green tea", user_id="u", threshold=2) == []
    with pytest.raises(ValidationError) as err:
        mem.search("tea", user_id="u", threshold=float("nan"))
    assert err.value.field == "threshold"


def test_a_threshold_rejects_memories_unrelated_to_the_query(mem: Memory) -> None:
    mem.add(["I adore green tea", "my cat is called Tom", "I play the cello"], user_id="u")
    hits = mem.search("quantum chromodynamics lecture", user_id="u")
    assert all(h.scores["vector"] < 0.1 for h in hits)  # nothing here is similar at all
    assert mem.search("quantum chromodynamics lecture", user_id="u", threshold=0.5) == []


def test_rerank_weights_over_one_are_rejected_up_front(db_path: Path) -> None:
    with pytest.raises(ValueError, match="weight"):
        config = RetrievalConfig(importance_weight=0.6, recency_weight=0.6)
        with Memory(db_path, embedder="hashing", retrieval=config) as mem:
            mem.add("I adore green tea", user_id="u")


# -- persistence ----------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import json, sys
    from mnemolayer import Memory
    from mnemolayer.embed import HashingEmbedder

    class Counting:
        def __init__(self):
            self.inner = HashingEmbedder()
            self.name, self.dim = self.inner.name, self.inner.dim
            self.max_tokens = self.inner.max_tokens
            self.calls = []

        def embed(self, texts, kind="document"):
            self.calls.append([kind, len(texts)])
            return self.inner.embed(texts, kind)

        def count_tokens(self, text):
            return self.inner.count_tokens(text)

    embedder = Counting()
    mem = Memory(sys.argv[1], embedder=embedder)
    hits = mem.search(sys.argv[2], user_id="u", mode="vector")
    ids, cursor = [], None
    while True:
        page = mem.list(user_id="u", limit=7, cursor=cursor)
        ids += [r.id for r in page]
        cursor = page.next_cursor
        if cursor is None:
            break
    mem.close()
    print(json.dumps({"calls": embedder.calls, "top": hits[0].id, "ids": ids}))
    """
)


def test_a_new_process_finds_every_memory_without_re_embedding(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        records = mem.add(
            [f"fact {i}: the {i}th colour is shade{i}" for i in range(30)], user_id="u"
        )
        target = records[17]
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(db_path), "shade17"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["calls"] == [["query", 1]]  # the query only; no document was re-embedded
    assert result["top"] == target.id
    assert result["ids"] == [r.id for r in records]


def _build(path: Path, n: int = 200) -> list[Any]:
    with Memory(path, embedder="hashing") as mem:
        return mem.add(
            [f"memory {i} about topic {i % 7} with some filler words" for i in range(n)],
            user_id="u",
        )


# -- embedding model ------------------------------------------------------------------------


def test_opening_with_another_embedding_model_is_refused_until_reindex(db_path: Path) -> None:
    records = _build(db_path, n=20)
    small = HashingEmbedder(dim=64)
    with pytest.raises(EmbeddingModelMismatchError) as err:
        Memory(db_path, embedder=small)
    message = str(err.value)
    assert "hashing-v1/256" in message and "hashing-v1/64" in message
    assert "reindex" in message
    assert (err.value.stored, err.value.configured) == (
        "hashing-v1/256 (256)",
        "hashing-v1/64 (64)",
    )

    with Memory(db_path, embedder=small, check_embedder=False) as mem:
        for mode in ("hybrid", "vector"):
            with pytest.raises(EmbeddingModelMismatchError):
                mem.search("topic 3", user_id="u", mode=mode)  # type: ignore[arg-type]
        with pytest.raises(EmbeddingModelMismatchError):
            mem.add("a new memory", user_id="u")
        assert mem.search("memory 3", user_id="u", mode="keyword")  # no vectors needed
        seen: list[tuple[int, int]] = []
        assert mem.reindex(progress=lambda done, total: seen.append((done, total))) == 20
        assert seen[-1] == (20, 20)
        hits = mem.search(records[13].content, user_id="u", mode="vector")
        assert hits[0].id == records[13].id
        assert mem.stats()["embedding_model"] == "hashing-v1/64"
        assert mem.get(records[0].id).embedding_model == "hashing-v1/64"
    size = "vector_dims(vector) * 4" if is_postgres(db_path) else "length(vector)"
    assert {r[0] for r in raw_rows(db_path, f"SELECT {size} FROM vectors")} == {64 * 4}

    with Memory(db_path, embedder=small) as mem:
        hits = mem.search(records[13].content, user_id="u", mode="vector")
        assert hits[0].id == records[13].id
    with pytest.raises(EmbeddingModelMismatchError):
        Memory(db_path, embedder="hashing")


def test_a_store_with_nothing_embedded_takes_the_model_it_is_opened_with(db_path: Path) -> None:
    # A first add that failed (its model could not load) left a store with a model
    # recorded and nothing embedded: another model may open it, and it is recorded.
    Memory(db_path, embedder="hashing").close()
    small = HashingEmbedder(dim=64)
    with Memory(db_path, embedder=small) as mem:
        assert mem.stats()["embedding_model"] == "hashing-v1/64"
        mem.add("I live in Lisbon.", user_id="u")
    with pytest.raises(EmbeddingModelMismatchError):  # now there is something to protect
        Memory(db_path, embedder="hashing")


# -- metadata filters -----------------------------------------------------------------------

ITEMS = [
    ("red bike", {"price": 120, "city": "Porto", "tags": ["sport", "bike"], "new": True}),
    ("blue helmet", {"price": 60, "city": "Lisbon", "tags": ["sport"], "note": "blue gear"}),
    ("green tea", {"price": 4.5, "city": "Kyoto", "tags": ["food"], "new": False}),
    ("old map", {"city": "Porto"}),
]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"city": {"eq": "Porto"}}, {"red bike", "old map"}),
        ({"city": "Porto"}, {"red bike", "old map"}),
        ({"price": {"ne": 60}}, {"red bike", "green tea", "old map"}),
        ({"price": {"gt": 60}}, {"red bike"}),
        ({"price": {"gte": 60}}, {"red bike", "blue helmet"}),
        ({"price": {"lt": 60}}, {"green tea"}),
        ({"price": {"lte": 60}}, {"blue helmet", "green tea"}),
        ({"city": {"in": ["Kyoto", "Lisbon"]}}, {"blue helmet", "green tea"}),
        ({"city": {"nin": ["Porto"]}}, {"blue helmet", "green tea"}),
        ({"tags": {"contains": "sport"}}, {"red bike", "blue helmet"}),
        ({"note": {"contains": "gear"}}, {"blue helmet"}),
        ({"new": True}, {"red bike"}),
        ({"and": [{"city": "Porto"}, {"price": {"gte": 100}}]}, {"red bike"}),
        ({"or": [{"city": "Kyoto"}, {"price": {"lt": 100}}]}, {"blue helmet", "green tea"}),
        ({"not": {"city": "Porto"}}, {"blue helmet", "green tea"}),
        ({"price": {"gte": 50, "lt": 100}}, {"blue helmet"}),
        ({"price": {"gt": "100"}}, set()),  # a string never orders against a number
    ],
    ids=lambda case: repr(sorted(case) if isinstance(case, set) else case),  # same order
    # in every process (set order follows the hash seed, and xdist's workers must agree)
)
def test_metadata_filters_in_search_and_list(
    mem: Memory, filters: dict[str, Any], expected: set[str]
) -> None:
    for text, meta in ITEMS:
        mem.add(text, user_id="u", metadata=meta)
    mem.add("red bike", user_id="other", metadata=ITEMS[0][1])
    listed = {r.content for r in mem.list(user_id="u", filters=filters)}
    assert listed == expected
    for mode in MODES:
        found = {
            h.content
            for h in mem.search("red bike blue helmet green tea old map", user_id="u",
                                filters=filters, mode=mode, limit=50)  # type: ignore[arg-type]
        }  # fmt: skip
        assert found <= expected, mode
        if mode != "keyword":
            assert found == expected, mode


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"price": {"between": [1, 2]}}, "filters.price.between"),
        ({"price": {"$gt": 1}}, "filters.price.$gt"),
        ({"and": [{"price": {"like": "%"}}]}, "filters.and[0].price.like"),
        ({"or": {"city": "Porto"}}, "filters.or"),
        ({"and": []}, "filters.and"),
        ({"price": {"gt": None}}, "filters.price.gt"),
        ({"city": {"in": "Porto"}}, "filters.city.in"),
        ({}, "filters"),
    ],
    ids=repr,
)
def test_a_bad_filter_is_an_error_never_an_unfiltered_result(
    mem: Memory, filters: dict[str, Any], field: str
) -> None:
    mem.add("red bike", user_id="u", metadata={"price": 120})
    calls = [
        lambda: mem.list(user_id="u", filters=filters),
        lambda: mem.search("bike", user_id="u", filters=filters),
    ]
    if filters == {}:
        # An empty dict is "no filter" at the API (falsy); only the parser rejects it.
        assert len(mem.list(user_id="u", filters=filters)) == 1
        return
    for call in calls:
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == field


# -- update ---------------------------------------------------------------------------------


def test_updated_content_replaces_the_old_in_every_index(mem: Memory) -> None:
    [rec] = mem.add("I live in Porto near the river", user_id="u")
    mem.add("I like jazz", user_id="u")
    mem.update(rec.id, content="I moved to Lisbon last year")
    assert mem.search("Porto river", user_id="u", mode="keyword") == []
    assert [h.id for h in mem.search("Lisbon", user_id="u", mode="keyword")] == [rec.id]
    vector = mem.search("moved to Lisbon last year", user_id="u", mode="vector")
    assert vector[0].id == rec.id and vector[0].scores["vector"] > 0.6
    stale = mem.search("Porto river", user_id="u", mode="vector")
    assert all(h.scores["vector"] < 0.3 for h in stale)

    history = mem.history(rec.id)
    assert [(e.event, e.old_content, e.new_content) for e in history] == [
        ("ADD", None, "I live in Porto near the river"),
        ("UPDATE", "I live in Porto near the river", "I moved to Lisbon last year"),
    ]
    # The new content is the dedup key now: adding it again returns the updated record.
    assert mem.add("I moved to Lisbon last year", user_id="u")[0].id == rec.id
    assert mem.add("I live in Porto near the river", user_id="u")[0].id != rec.id


def test_a_query_longer_than_the_cap_is_refused_naming_it(mem: Memory) -> None:
    from mnemolayer._validate import MAX_QUERY_CHARS

    mem.add("I ride my bike to work", user_id="u1")
    assert mem.search("bike " * (MAX_QUERY_CHARS // 5), user_id="u1")  # at the cap: searched
    long = "x" * (MAX_QUERY_CHARS + 1)
    for call in (
        lambda: mem.search(long, user_id="u1"),
        lambda: mem.context(long, user_id="u1"),
    ):
        with pytest.raises(ValidationError) as err:
            call()
        assert err.value.field == "query"


def test_context_takes_recent_turns_as_tuples_or_window_dicts(mem: Memory) -> None:
    mem.add("I ride my bike to work", user_id="u1")
    as_tuples = mem.context(
        "bike", user_id="u1", recent=[("user", "hi there", None), ("assistant", "hello!", None)]
    )
    as_dicts = mem.context(
        "bike",
        user_id="u1",
        recent=[
            {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "hello!"},
        ],
    )
    assert as_dicts.text == as_tuples.text and "hello!" in as_dicts.text
    for bad, field in [
        ([{"content": "no role"}], "recent[0]"),
        ([{"role": "user", "content": "x", "colour": "red"}], "recent[0]"),
        ([{"role": "user", "content": 7}], "recent[0].content"),
    ]:
        with pytest.raises(ValidationError) as err:
            mem.context("bike", user_id="u1", recent=bad)
        assert err.value.field == field


@pytest.mark.parametrize("raw", [b"hello", bytearray(b"hello"), [b"hello"]], ids=repr)
def test_bytes_are_refused_saying_bytes(mem: Memory, raw: Any) -> None:
    with pytest.raises(ValidationError, match="bytes"):
        mem.add(raw, user_id="u1")
    assert mem.list(user_id="u1").items == []
