"""Semantic memory through the public API: facts, conflicts in time, profile, graph,
and how facts change recall. Real SQLite files; the rule extractor; the hashing embedder
(the ranking bar with the real model is in tests/integration/test_semantic_ranking.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from mnemolayer import AsyncMemory, Memory
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.extract.base import SELF, ExtractedFact, Extraction
from mnemolayer.lifecycle.clock import FakeClock


@pytest.fixture
def mem(smem: Memory) -> Memory:
    """This file tests the product default: facts are extracted."""
    return smem


T1 = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)


def current(mem: Memory, user: str, subject: str) -> dict[str, str]:
    return {f.predicate: f.object for f in mem.facts(user_id=user, subject=subject)}


LENA_EN = {
    "t1": ["Lena lives in Lisbon.", "Lena works on project Orca."],
    "t2": [
        "Lena moved to Porto.",
        "Lena was reassigned from Orca to Kestrel.",
        "Lena administers the team Git org.",
    ],
    "name": "Lena",
    "home": ("Lisbon", "Porto"),
    "project": ("Orca", "Kestrel"),
}
LENA_ZH = {
    "t1": ["莉娜住在里斯本。", "莉娜负责Orca项目。"],
    "t2": ["莉娜搬到了波尔图。", "莉娜从Orca项目调到了Kestrel项目。", "莉娜管理团队的Git组织。"],
    "name": "莉娜",
    "home": ("里斯本", "波尔图"),
    "project": ("Orca", "Kestrel"),
}


@pytest.mark.parametrize("case", [LENA_EN, LENA_ZH], ids=["en", "zh"])
def test_newer_facts_close_older_ones_and_keep_history(mem: Memory, case: dict) -> None:
    name = case["name"]
    mem.add(case["t1"], user_id="u1", timestamp=T1)
    assert current(mem, "u1", name)["lives_in"] == case["home"][0]
    mem.add(case["t2"], user_id="u1", timestamp=T2)

    now = mem.facts(user_id="u1", subject=name)
    by_pred = {f.predicate: f for f in now}
    assert by_pred["lives_in"].object == case["home"][1]
    assert by_pred["works_on"].object.casefold().startswith(case["project"][1].casefold())
    assert "role" in by_pred  # the Git-org role did not close works_on (unrelated)

    everything = mem.facts(user_id="u1", subject=name, include_history=True)
    old_home = next(f for f in everything if f.object == case["home"][0])
    old_project = next(
        f for f in everything if f.predicate == "works_on" and case["project"][0] in f.object
    )
    for old in (old_home, old_project):
        assert old.valid_to == T2 and old.superseded_by is not None  # closed, not deleted
    assert old_home.superseded_by == by_pred["lives_in"].id

    # "What was true on date D"
    then = {f.predicate: f.object for f in mem.facts(user_id="u1", subject=name, as_of=T1)}
    assert then["lives_in"] == case["home"][0]
    assert case["project"][0] in then["works_on"]

    # The fact's own record keeps its history: created, then replaced.
    events = mem.history(old_home.memory_id, user_id="u1")
    assert [e.event for e in events] == ["ADD", "SUPERSEDE"]
    assert case["home"][1] in (events[-1].new_content or "")


def test_superseded_facts_only_appear_when_history_is_asked(mem: Memory) -> None:
    mem.add(LENA_EN["t1"], user_id="u1", timestamp=T1)
    mem.add(LENA_EN["t2"], user_id="u1", timestamp=T2)
    facts_now = [h for h in mem.search("Lena lives", user_id="u1", kinds=["semantic"])]
    assert facts_now and all("Lisbon" not in h.content for h in facts_now)
    with_history = mem.search("Lena lives", user_id="u1", kinds=["semantic"], include_history=True)
    texts = [h.content for h in with_history]
    assert any("Lisbon" in t for t in texts)
    porto = next(i for i, t in enumerate(texts) if "Porto" in t)
    lisbon = next(i for i, t in enumerate(texts) if "Lisbon" in t)
    assert porto < lisbon  # current above superseded


def test_first_person_resolves_to_speaker_or_user(mem: Memory) -> None:
    mem.add("I'm allergic to peanuts.", user_id="u1", timestamp=T1)
    mem.add(
        [{"role": "user", "name": "Caroline", "content": "I live in Boston."}],
        user_id="u1",
        timestamp=T1,
    )
    assert "peanuts" in mem.profile(user_id="u1")["preferences"]["allergic_to"]
    assert current(mem, "u1", "Caroline")["lives_in"] == "Boston"
    assert "lives_in" not in current(mem, "u1", SELF)  # Caroline's home is not the user's


def test_assistant_messages_are_not_mined(mem: Memory) -> None:
    mem.add([{"role": "assistant", "content": "I live in the cloud."}], user_id="u1")
    assert mem.facts(user_id="u1") == []


def test_negation_closes_the_fact_without_a_replacement(mem: Memory) -> None:
    mem.add("I eat meat every day.", user_id="u1", timestamp=T1)
    mem.add("I no longer eat meat.", user_id="u1", timestamp=T2)
    assert [f for f in mem.facts(user_id="u1") if f.predicate == "eats"] == []
    closed = [f for f in mem.facts(user_id="u1", include_history=True) if f.predicate == "eats"]
    assert len(closed) == 1 and closed[0].valid_to == T2
    events = mem.history(closed[0].memory_id)
    assert events[-1].event == "RETRACT"


def test_multi_valued_facts_accumulate_and_opposites_flip(mem: Memory) -> None:
    mem.add("I love hiking.", user_id="u1", timestamp=T1)
    mem.add("I love jazz.", user_id="u1", timestamp=T1)
    likes = mem.profile(user_id="u1")["preferences"]["likes"]
    assert {"hiking", "jazz"} <= set(likes)
    mem.add("I hate jazz.", user_id="u1", timestamp=T2)
    prefs = mem.profile(user_id="u1")["preferences"]
    assert "jazz" not in prefs["likes"] and "jazz" in prefs["dislikes"]
    assert "hiking" in prefs["likes"]  # unrelated preference untouched


def test_repeating_a_fact_reinforces_instead_of_duplicating(mem: Memory) -> None:
    first = mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)
    second = mem.add(
        "Still living in Lisbon, I live in Lisbon for real.", user_id="u1", timestamp=T2
    )
    homes = [f for f in mem.facts(user_id="u1") if f.predicate == "lives_in"]
    assert len(homes) == 1
    assert first[0].id in homes[0].source_ids
    if len(homes[0].source_ids) > 1:
        assert second[0].id in homes[0].source_ids


def test_relative_dates_use_the_message_time(mem: Memory) -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    mem.add(
        [
            {
                "role": "user",
                "name": "Caroline",
                "content": "I went to a LGBTQ support group yesterday.",
            }
        ],
        user_id="u1",
        timestamp=said,
    )
    facts = mem.facts(user_id="u1", subject="Caroline")
    dated = [f for f in facts if f.date is not None]
    assert dated and dated[0].date.isoformat() == "2023-05-07"


def test_graph_hops_and_entities(mem: Memory) -> None:
    mem.add("My sister Maria lives in Rome.", user_id="u1", timestamp=T1)
    one = mem.neighbors("user", user_id="u1", depth=1)
    names1 = {n["entity"].name for n in one["neighbors"]}
    assert "Maria" in names1 and "Rome" not in names1
    two = mem.neighbors("user", user_id="u1", depth=2)
    assert "Rome" in {n["entity"].name for n in two["neighbors"]}
    assert {"Maria", "Rome"} <= {e.name for e in mem.entities(user_id="u1")}
    with pytest.raises(NotFoundError, match="name"):
        mem.neighbors("Nobody", user_id="u1")
    with pytest.raises(ValidationError, match="depth"):
        mem.neighbors("user", user_id="u1", depth=9)


def test_facts_are_per_user(mem: Memory) -> None:
    mem.add("I live in Lisbon.", user_id="a", timestamp=T1)
    assert mem.facts(user_id="b") == []
    assert mem.profile(user_id="b")["identity"] == {}
    assert mem.search("Lisbon", user_id="b") == []


def test_deleting_the_source_message_removes_its_facts(mem: Memory) -> None:
    rec = mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)[0]
    fact = mem.facts(user_id="u1")[0]
    mem.delete(rec.id)
    assert mem.facts(user_id="u1", include_history=True) == []
    with pytest.raises(NotFoundError):
        mem.get(fact.memory_id)


def test_delete_all_removes_the_graph(mem: Memory) -> None:
    mem.add("My sister Maria lives in Rome.", user_id="u1", timestamp=T1)
    mem.delete_all(user_id="u1")
    assert mem.facts(user_id="u1", include_history=True) == []
    assert mem.entities(user_id="u1") == []
    assert mem.stats(user_id="u1")["memories"] == 0


def test_learn_from_feedback(mem: Memory) -> None:
    liked = mem.learn_from_feedback(user_id="u1", action="jazz playlist", feedback="👍")
    assert [(f.predicate, f.object) for f in liked] == [("likes", "jazz playlist")]
    words = mem.learn_from_feedback(
        user_id="u1", action="suggested Thai curry", feedback="I'm allergic to peanuts."
    )
    assert ("allergic_to", "peanuts") in {(f.predicate, f.object) for f in words}
    other = mem.learn_from_feedback(user_id="u1", action="long answer", feedback="meh, whatever")
    assert other[0].predicate == "feedback"
    with pytest.raises(ValidationError, match="feedback"):
        mem.learn_from_feedback(user_id="u1", action="x", feedback="  ")


def test_extraction_can_be_switched_off_or_replaced(db_path: Path, clock) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as off:
        off.add("I live in Lisbon.", user_id="u1")
        assert off.facts(user_id="u1") == []

    class Fixed:
        name = "fixed"

        def extract(self, text, *, speaker=None, timestamp=None):
            return Extraction(facts=[ExtractedFact(SELF, "likes", "tea")])

    with Memory(db_path, embedder="hashing", clock=clock, extractor=Fixed()) as custom:
        custom.add("anything at all", user_id="u2")
        assert [(f.predicate, f.object) for f in custom.facts(user_id="u2")] == [("likes", "tea")]
    with pytest.raises(ValidationError, match="extractor"):
        Memory(db_path, embedder="hashing", extractor="magic")


def test_bad_arguments_name_the_field(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="predicate"):
        mem.facts(user_id="u1", predicate="is_secretly")
    with pytest.raises(ValidationError, match="as_of"):
        mem.facts(user_id="u1", as_of="not a date")


def test_a_broken_extractor_never_loses_the_message(db_path: Path, clock) -> None:
    class Broken:
        name = "broken"

        def extract(self, text, *, speaker=None, timestamp=None):
            raise RuntimeError("boom")

    with Memory(db_path, embedder="hashing", clock=clock, extractor=Broken()) as m:
        rec = m.add("I live in Lisbon.", user_id="u1")[0]
        assert m.get(rec.id).content == "I live in Lisbon."


def test_async_memory_has_the_semantic_api(db_path: Path) -> None:
    async def main() -> dict:
        async with AsyncMemory(db_path, embedder="hashing") as am:
            await am.add("My sister Maria lives in Rome.", user_id="u1", timestamp=T1)
            facts = await am.facts(user_id="u1", subject="Maria")
            assert [(f.predicate, f.object) for f in facts] == [("lives_in", "Rome")]
            assert "Maria" in {e.name for e in await am.entities(user_id="u1")}
            near = await am.neighbors("Maria", user_id="u1")
            assert "Rome" in {n["entity"].name for n in near["neighbors"]}
            await am.learn_from_feedback(user_id="u1", action="opera tickets", feedback="-1")
            assert await am.extract_facts(user_id="u1") == 0  # all mined already
            return await am.profile(user_id="u1")

    profile = anyio.run(main)
    assert profile["relationships"]["sister"] == ["Maria"]
    assert profile["preferences"]["dislikes"] == ["opera tickets"]


def test_history_of_facts_survives_export_delete_import(mem: Memory, tmp_path: Path) -> None:
    mem.add(LENA_EN["t1"], user_id="u1", timestamp=T1)
    mem.add(LENA_EN["t2"], user_id="u1", timestamp=T2)
    before = mem.facts(user_id="u1", include_history=True)
    rows = list(mem.export(user_id="u1"))
    mem.delete_all(user_id="u1")
    assert mem.facts(user_id="u1", include_history=True) == []
    mem.import_rows(rows)
    assert mem.facts(user_id="u1", include_history=True) == before
    assert current(mem, "u1", "Lena")["lives_in"] == "Porto"
    assert mem.facts(user_id="u1", subject="Lena", as_of=T1)[0].object == "Lisbon"


def test_a_message_is_found_through_its_facts_words_also_after_reindex(mem: Memory) -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    [turn] = mem.add(
        [
            {
                "role": "user",
                "name": "Caroline",
                "content": "I went to a LGBTQ support group yesterday.",
            }
        ],
        user_id="u1",
        timestamp=said,
    )

    def found() -> list[str]:
        # "attended" and the resolved date appear only in the fact's sentence.
        hits = mem.search("attended 7 May", user_id="u1", mode="keyword", kinds=["episodic"])
        return [h.id for h in hits]

    assert found() == [turn.id]
    assert mem.reindex() == 2
    assert found() == [turn.id]


def test_stats_and_search_breakdown_show_the_semantic_layer(mem: Memory) -> None:
    mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)
    # The fact's sentence matches better than the message's own words: it lifts it.
    hits = mem.search("The user lives in Lisbon", user_id="u1", kinds=["episodic"])
    assert hits[0].content == "I live in Lisbon."
    assert hits[0].scores["fact_key"] > hits[0].scores["vector"] - 1e-9
    stats = mem.stats(user_id="u1")
    assert stats["by_kind"]["semantic"] == 1
    assert (stats["facts"], stats["current_facts"]) == (1, 1)
    assert stats["entities"] == 2  # the user and Lisbon


def test_saying_a_retracted_fact_again_reopens_it(mem: Memory, clock) -> None:
    mem.add("I like coffee", user_id="u1", timestamp=T1)
    mem.add("I don't like coffee anymore", user_id="u1", timestamp=T2)
    assert "likes" not in mem.profile(user_id="u1")["preferences"]
    later = datetime(2024, 9, 1, tzinfo=UTC)
    again = mem.add("I like coffee", user_id="u1", timestamp=later)
    assert len(mem.list(user_id="u1", kinds=["episodic"])) == 2  # the words are stored once
    likes = [f for f in mem.facts(user_id="u1") if f.predicate == "likes"]
    assert [(f.object, f.valid_from) for f in likes] == [("coffee", later)]
    assert again[0].id in likes[0].source_ids
    # Feedback flips back and forth the same way.
    for when, verdict in ((T1, "👍"), (T2, "👎"), (later, "👍")):
        mem.learn_from_feedback(user_id="u2", action="dark mode", feedback=verdict, timestamp=when)
    assert mem.profile(user_id="u2")["preferences"] == {"likes": ["dark mode"]}


def test_a_retry_of_the_same_message_changes_nothing(mem: Memory) -> None:
    mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)
    before = mem.facts(user_id="u1", include_history=True)
    mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)
    assert mem.facts(user_id="u1", include_history=True) == before


def test_editing_a_message_re_extracts_its_facts(mem: Memory) -> None:
    rec = mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)[0]
    mem.update(rec.id, content="I live in Madrid.")
    assert current(mem, "u1", SELF)["lives_in"] == "Madrid"
    assert [f.object for f in mem.facts(user_id="u1", include_history=True)] == ["Madrid"]
    mem.update(rec.id, content="The weather is nice.")
    assert mem.facts(user_id="u1", include_history=True) == []
    assert mem.search("Lisbon", user_id="u1", mode="keyword") == []  # no stale fact words


def test_a_facts_own_record_cannot_be_edited_into_another_fact(mem: Memory) -> None:
    mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)
    fact = mem.facts(user_id="u1")[0]
    with pytest.raises(ValidationError, match="content"):
        mem.update(fact.memory_id, content="The user lives in Tokyo")
    mem.update(fact.memory_id, importance=0.9)  # other fields are fine
    assert mem.get(fact.memory_id).importance == 0.9


def test_a_friend_named_like_the_user_is_someone_else(mem: Memory) -> None:
    mem.add("My name is Tom.", user_id="u1", timestamp=T1)
    mem.add("I live in Berlin.", user_id="u1", timestamp=T1)
    mem.add("My friend Tom lives in Paris.", user_id="u1", timestamp=T2)
    assert current(mem, "u1", SELF)["lives_in"] == "Berlin"
    assert mem.profile(user_id="u1")["relationships"]["friend"] == ["Tom"]
    friend = [
        f for f in mem.facts(user_id="u1") if f.predicate == "lives_in" and f.object == "Paris"
    ]
    assert friend and friend[0].subject == "Tom"


def test_extract_facts_mines_messages_stored_without_extraction(db_path: Path, clock) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as old:
        old.add("I live in Lisbon.", user_id="u1", timestamp=T1)
        old.add("I live in Porto now.", user_id="u1", timestamp=T2)
        old.add("My sister Maria lives in Rome.", user_id="u2", timestamp=T1)
    with Memory(db_path, embedder="hashing", clock=clock) as mem:
        assert mem.facts(user_id="u1") == []
        assert mem.extract_facts() >= 4
        assert current(mem, "u1", SELF)["lives_in"] == "Porto"  # in conversation order
        assert [f.object for f in mem.facts(user_id="u1", include_history=True)] == [
            "Lisbon",
            "Porto",
        ]
        assert current(mem, "u2", "Maria")["lives_in"] == "Rome"
        before = mem.facts(user_id="u1", include_history=True)
        assert mem.extract_facts() == 0  # nothing new the second time
        assert mem.facts(user_id="u1", include_history=True) == before
        hits = mem.search(
            "The user lives in Porto", user_id="u1", mode="keyword", kinds=["episodic"]
        )
        assert hits[0].content == "I live in Porto now."
    with (
        Memory(db_path, embedder="hashing", clock=clock, extractor=None) as off,
        pytest.raises(ValidationError, match="extractor"),
    ):
        off.extract_facts()


def test_a_late_arriving_older_fact_is_stored_closed(mem: Memory) -> None:
    mem.add("I live in Porto.", user_id="u1", timestamp=T2)
    mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)  # said earlier, arrives later
    assert current(mem, "u1", SELF)["lives_in"] == "Porto"
    lisbon = next(f for f in mem.facts(user_id="u1", include_history=True) if f.object == "Lisbon")
    assert lisbon.valid_to == T2
    record = mem.get(lisbon.memory_id)
    assert record.superseded_by is not None and record.valid_to == T2
    hits = mem.search("user lives", user_id="u1", kinds=["semantic"])
    assert [h.content for h in hits] == ["The user lives in Porto"]


# -- truth over staleness (issue 15, item 4) ------------------------------------------

TRUTH_CASES = {
    "lives_in": ("I live in Lisbon.", "I moved to Porto last month.", "Where do I live now?"),
    "works_at": ("I work at Google.", "I now work at Microsoft.", "Where do I work now?"),
    "name": ("My name is Ann.", "Please call me Beth, that's my name now.", "What is my name?"),
    "zh_lives_in": ("我住在里斯本。", "我搬到了波尔图。", "我现在住在哪里？"),
    # One message retracting the old value and stating the new one: the new supersedes.
    "left_and_joined": (
        "I work at Google.",
        "I left Google and joined Meta.",
        "Where do I work now?",
    ),
    # The old message still states a current fact too (work): it is outdated for "live".
    "two_facts": (
        "I live in Lisbon and work at Google.",
        "I moved to Porto.",
        "Where do I live now?",
    ),
    # A retraction alone: the retracting message is what holds now.
    "quit_coffee": ("I love coffee.", "I quit coffee.", "Do I like coffee?"),
    "no_longer_drink": ("I love coffee.", "I don't drink coffee anymore.", "Do I like coffee?"),
    "zh_quit": ("我爱喝咖啡。", "我戒咖啡了", "我喜欢咖啡吗？"),
    "zh_moved_home": ("我住在北京", "我搬家到上海了", "我现在住在哪里？"),
}
CESSATIONS = [
    "I don't drink coffee anymore.",
    "I no longer drink coffee.",
    "I stopped drinking coffee.",
    "I quit coffee.",
    "I gave up coffee.",
    "I've given up coffee.",
    "我不再喝咖啡了",
    "我现在不喝咖啡了",
    "我戒咖啡了",
]
FEB = datetime(2024, 2, 1, tzinfo=UTC)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize("case", sorted(TRUTH_CASES))
def test_the_current_fact_ranks_first_in_every_mode(mem: Memory, case: str, mode: str) -> None:
    old_text, new_text, question = TRUTH_CASES[case]
    old = mem.add(old_text, user_id="u1", timestamp=T1)[0]
    new = mem.add(new_text, user_id="u1", timestamp=T2)[0]
    hits = mem.search(question, user_id="u1", mode=mode)
    assert hits, "the question finds something"
    first = hits[0]
    # The first hit is the current version: its message, or its fact with the message
    # collapsed into it.
    assert new.id in first.provenance
    ids = [h.id for h in hits]
    if old.id in ids:
        assert ids.index(old.id) > 0
        assert hits[ids.index(old.id)].scores["outdated"] == 1.0
        assert hits[ids.index(old.id)].score < first.score


PAST_QUESTIONS = {
    "Where did I live in March?": "past",
    "Where did I live in February 2024?": "past",
    "我三月份住在哪里？": "past",
    "Where do I live now, after March?": "now",
    "Where do I live?": "now",
}


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize("question", sorted(PAST_QUESTIONS))
def test_a_question_about_a_past_time_ranks_the_version_true_then_first(
    mem: Memory, clock: FakeClock, question: str, mode: str
) -> None:
    clock.now = datetime(2024, 7, 1, tzinfo=UTC)
    lisbon = mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)[0]
    porto = mem.add("I moved to Porto.", user_id="u1", timestamp=T2)[0]
    hits = mem.search(question, user_id="u1", mode=mode)
    if mode == "keyword" and not hits:  # no shared word with the Chinese question
        return
    first = lisbon if PAST_QUESTIONS[question] == "past" else porto
    assert first.id in hits[0].provenance, [h.content for h in hits]
    # Asked about the past, the current version is not called outdated.
    if PAST_QUESTIONS[question] == "past":
        assert all(h.scores.get("outdated", 0.0) == 0.0 for h in hits if porto.id in h.provenance)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize("case", ["lives_in", "works_at", "zh_lives_in"])
def test_as_of_in_the_past_ranks_the_version_true_then_first(
    mem: Memory, case: str, mode: str
) -> None:
    old_text, new_text, question = TRUTH_CASES[case]
    old = mem.add(old_text, user_id="u1", timestamp=T1)[0]
    mem.add(new_text, user_id="u1", timestamp=T2)
    hits = mem.search(question, user_id="u1", mode=mode, as_of=FEB)
    assert hits and old.id in hits[0].provenance


@pytest.mark.parametrize("said", CESSATIONS)
def test_ending_a_habit_ends_the_taste(mem: Memory, said: str) -> None:
    coffee = "咖啡" if "咖啡" in said else "coffee"
    mem.add("我爱喝咖啡。" if coffee == "咖啡" else "I love coffee.", user_id="u1", timestamp=T1)
    assert mem.profile(user_id="u1")["preferences"] == {"likes": [coffee]}
    mem.add(said, user_id="u1", timestamp=T2)
    assert mem.profile(user_id="u1")["preferences"] == {}
    assert mem.facts(user_id="u1") == []


def test_a_retraction_beside_a_new_value_links_the_versions(mem: Memory) -> None:
    mem.add("I work at Google.", user_id="u1", timestamp=T1)
    mem.add("I left Google and joined Meta.", user_id="u1", timestamp=T2)
    facts = {f.object: f for f in mem.facts(user_id="u1", include_history=True)}
    assert facts["Google"].valid_to == T2 and facts["Meta"].valid_to is None
    assert facts["Google"].superseded_by == facts["Meta"].id


def test_a_message_with_a_current_fact_is_not_outdated_for_it(mem: Memory) -> None:
    old = mem.add("I live in Lisbon and work at Google.", user_id="u1", timestamp=T1)[0]
    mem.add("I moved to Porto.", user_id="u1", timestamp=T2)
    # Keyword mode judges by the words the query shares with each fact (no cosine).
    hits = mem.search("Where do I work?", user_id="u1", mode="keyword")
    assert old.id in hits[0].provenance and hits[0].scores["outdated"] == 0.0
    hits = mem.search("Where do I live now?", user_id="u1", mode="keyword")
    assert old.id not in hits[0].provenance
    assert hits[[h.id for h in hits].index(old.id)].scores["outdated"] == 1.0


def test_history_still_ranks_below_the_current_fact(mem: Memory) -> None:
    old = mem.add("I live in Lisbon.", user_id="u1", timestamp=T1)[0]
    new = mem.add("I moved to Porto last month.", user_id="u1", timestamp=T2)[0]
    hits = mem.search("Where do I live now?", user_id="u1", include_history=True)
    ids = [i for h in hits for i in h.provenance]
    assert new.id in hits[0].provenance and old.id in ids
    assert any("Lisbon" in h.content for h in hits)  # the history is there, below


def test_a_fact_and_its_message_are_one_hit(mem: Memory) -> None:
    msg = mem.add("I work at Google.", user_id="u1", timestamp=T1)[0]
    fact = mem.facts(user_id="u1")[0]
    hits = mem.search("works at Google", user_id="u1")
    assert len(hits) == 1
    assert set(hits[0].provenance) == {msg.id, fact.memory_id}
    assert hits[0].provenance[0] == hits[0].id


def test_two_facts_of_one_message_show_the_message(mem: Memory) -> None:
    # "name is Ana" matches the name, "lives in Porto" the question: the one hit that
    # stands for both shows the message that states both, never one fact hiding another.
    msg = mem.add(
        "I'm Ana. I moved to Porto last spring and I'm allergic to peanuts.",
        user_id="u1",
        timestamp=T1,
    )[0]
    mem.add("My sister Maria lives in Rome.", user_id="u1", timestamp=T1)
    facts = {f.memory_id for f in mem.facts(user_id="u1") if msg.id in f.source_ids}
    hits = mem.search("where does Ana live?", user_id="u1")
    shown = [h for h in hits if set(h.provenance) & facts]
    assert len(shown) == 1 and shown[0].id == msg.id and "Porto" in shown[0].content
    assert shown[0].provenance[0] == msg.id
    assert shown[0].score == shown[0].scores["final"]


def test_collapsing_can_be_turned_off(db_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    from mnemolayer.config import RetrievalConfig

    m = Memory(
        db_path, embedder="hashing", clock=clock, retrieval=RetrievalConfig(collapse_facts=False)
    )
    try:
        m.add("I work at Google.", user_id="u1", timestamp=T1)
        hits = m.search("works at Google", user_id="u1")
        assert len(hits) == 2 and all(h.provenance == [h.id] for h in hits)
    finally:
        m.close()


# A fact stated only by a memory that has expired is out of recall, facts, the profile
# and the context at once, before maintenance deletes anything.


def _expiring(db_path: Path, clock, **kw) -> Memory:  # type: ignore[no-untyped-def]
    return Memory(db_path, embedder="hashing", clock=clock, **kw)


@pytest.mark.parametrize("how", ["own_expires_at", "kind_ttl"])
def test_a_fact_of_an_expired_memory_is_forgotten_before_maintenance(
    db_path: Path, clock, how: str
) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from mnemolayer.lifecycle.config import LifecycleConfig

    kw = {"lifecycle": LifecycleConfig(ttl_days={"episodic": 2})} if how == "kind_ttl" else {}
    m = _expiring(db_path, clock, **kw)
    try:
        said = clock()
        add = {"expires_at": said + timedelta(days=2)} if how == "own_expires_at" else {}
        m.add("I work at Google.", user_id="u1", timestamp=said, **add)
        m.add("I like tea.", user_id="u1", timestamp=said + timedelta(days=3))
        assert "Google" in [f.object for f in m.facts(user_id="u1")]
        clock.now = said + timedelta(days=4)  # past the expiry; no maintenance ran
        assert "Google" not in [f.object for f in m.facts(user_id="u1")]
        assert "works_at" not in m.profile(user_id="u1")["identity"]
        for mode in ("hybrid", "vector", "keyword"):
            hits = m.search("Where do I work? Google", user_id="u1", mode=mode)
            assert all("Google" not in h.content for h in hits), mode
        assert "Google" not in m.context("Where do I work?", user_id="u1").text
        assert [f.object for f in m.facts(user_id="u1")] == ["tea"]  # the rest stays
    finally:
        m.close()


def test_a_fact_restated_by_a_lasting_memory_outlives_the_expired_one(db_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    m = _expiring(db_path, clock)
    try:
        said = clock()
        m.add(
            "I work at Google.", user_id="u1", timestamp=said, expires_at=said + timedelta(days=1)
        )
        m.add("I work at Google, still.", user_id="u1", timestamp=said + timedelta(hours=1))
        clock.now = said + timedelta(days=3)
        assert [f.object for f in m.facts(user_id="u1")] == ["Google"]
    finally:
        m.close()
