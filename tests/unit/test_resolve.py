"""Bi-temporal conflict resolution (semantic/resolve.py) over a real SQLite graph."""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemolayer.extract.base import SELF, ExtractedEntity, ExtractedFact
from mnemolayer.lifecycle.conflicts import ResolveResult, object_matches, resolve, valid_from_of
from mnemolayer.models import Fact
from mnemolayer.store.graph import GraphStore
from mnemolayer.store.sqlite.store import SQLiteStore

T1 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 9, 1, 9, 0, tzinfo=UTC)


def at(days: float) -> datetime:
    return T1 + timedelta(days=days)


def F(subject: str, predicate: str, obj: str, **kw: object) -> ExtractedFact:
    return ExtractedFact(subject, predicate, obj, **kw)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(str(tmp_path / "resolve.db"))
    yield s
    s.close()


@pytest.fixture
def graph(store: SQLiteStore) -> GraphStore:
    return GraphStore(store)


def say(
    graph: GraphStore,
    facts: Sequence[ExtractedFact],
    *,
    when: datetime,
    source: str,
    user: str = "u1",
    recorded: datetime | None = None,
    speaker: str | None = None,
    entities: Sequence[ExtractedEntity] = (),
) -> ResolveResult:
    """Resolve one message's facts in one transaction, as the write path does."""
    return graph.store.transact(
        lambda c: resolve(
            graph,
            c,
            user,
            facts,
            source_id=source,
            speaker=speaker,
            observed_at=when,
            now=recorded or when,
            entities=entities,
        )
    )


def objects(facts: Sequence[Fact]) -> list[tuple[str, str, str]]:
    return [(f.subject, f.predicate, f.object) for f in facts]


# -- the Lena scenario -------------------------------------------------------------------

LENA_EN: dict[str, Any] = {
    "name": "Lena",
    "t1": [F("Lena", "lives_in", "Lisbon"), F("Lena", "works_on", "Orca")],
    "t2": [
        F("Lena", "lives_in", "Porto"),
        F("Lena", "works_on", "Kestrel"),
        F("Lena", "role", "team Git org"),
    ],
}
LENA_ZH: dict[str, Any] = {
    "name": "莉娜",
    "t1": [F("莉娜", "lives_in", "里斯本"), F("莉娜", "works_on", "逆戟鲸项目")],
    "t2": [
        F("莉娜", "lives_in", "波尔图"),
        F("莉娜", "works_on", "红隼项目"),
        F("莉娜", "role", "团队的Git组织"),
    ],
}


@pytest.mark.parametrize("case", [LENA_EN, LENA_ZH], ids=["en", "zh"])
def test_lena_moves_and_is_reassigned(graph: GraphStore, case: dict[str, Any]) -> None:
    lena = case["name"]
    old_home, old_project = (f.object for f in case["t1"])
    new_home, new_project, role = (f.object for f in case["t2"])

    first = say(graph, case["t1"], when=T1, source="m1")
    assert objects(first.added) == [(lena, "lives_in", old_home), (lena, "works_on", old_project)]
    second = say(graph, case["t2"], when=T2, source="m2", recorded=T2 + timedelta(seconds=5))
    added = {f.object: f for f in second.added}

    # Current: the new home, the new project and the role; the role closed nothing.
    assert objects(graph.facts("u1")) == [
        (lena, "lives_in", new_home),
        (lena, "works_on", new_project),
        (lena, "role", role),
    ]
    assert {(old.object, by.object if by else None) for old, by in second.closed} == {
        (old_home, new_home),
        (old_project, new_project),
    }
    # The old facts are closed at t2 (valid time), recorded as closed at the write
    # (transaction time), linked to their replacements, and still stored.
    history = {f.object: f for f in graph.facts("u1", include_history=True)}
    assert set(history) == {old_home, old_project, new_home, new_project, role}
    for old, new in ((old_home, new_home), (old_project, new_project)):
        assert history[old].valid_from == T1 and history[old].created_at == T1
        assert history[old].valid_to == T2
        assert history[old].expired_at == T2 + timedelta(seconds=5)
        assert history[old].superseded_by == added[new].id
        assert history[new].current and history[new].valid_from == T2
    # What was true when.
    assert sorted(f.object for f in graph.facts("u1", as_of=T1)) == sorted([old_home, old_project])
    assert sorted(f.object for f in graph.facts("u1", as_of=T2)) == sorted(
        [new_home, new_project, role]
    )
    assert graph.facts("u1", as_of=T1 - timedelta(seconds=1)) == []
    # Places and projects are entities: the graph links Lena to them.
    reached, _ = graph.neighbors("u1", lena)
    assert {e.name for e, _ in reached} == {new_home, new_project}
    assert graph.entity("u1", lena) is not None and graph.entity("u1", lena).type == "person"  # type: ignore[union-attr]


def test_forgetting_the_move_brings_the_old_facts_back(graph: GraphStore) -> None:
    say(graph, LENA_EN["t1"], when=T1, source="m1")
    say(graph, LENA_EN["t2"], when=T2, source="m2")
    deleted = graph.store.transact(lambda c: graph.remove_sources(c, "u1", ["m2"]))
    assert sorted(f.object for f in deleted) == ["Kestrel", "Porto", "team Git org"]
    assert objects(graph.facts("u1")) == [
        ("Lena", "lives_in", "Lisbon"),
        ("Lena", "works_on", "Orca"),
    ]
    assert all(f.superseded_by is None and f.expired_at is None for f in graph.facts("u1"))
    assert {e.name for e in graph.entities("u1")} == {"Lena", "Lisbon", "Orca"}


# -- reinforcement, accumulation, independence ---------------------------------------------


def test_the_same_fact_again_is_reinforced_not_duplicated(graph: GraphStore) -> None:
    say(graph, [F(SELF, "allergic_to", "peanuts", confidence=0.7)], when=T1, source="m1")
    again = say(
        graph, [F(SELF, "allergic_to", "Peanuts.", confidence=0.9)], when=at(3), source="m2"
    )
    assert again.added == [] and again.closed == []
    (fact,) = again.reinforced
    assert fact.source_ids == ["m1", "m2"] and fact.confidence == pytest.approx(0.9)
    assert fact.valid_from == T1  # it has held since it was first said
    (stored,) = graph.facts("u1", include_history=True)
    assert stored == fact
    # The same message processed twice adds nothing.
    twice = say(graph, [F(SELF, "allergic_to", "peanuts")], when=at(3), source="m2")
    assert twice.reinforced == [] and twice.ignored[0][1] == "already recorded from this message"
    assert graph.counts("u1")["facts"] == 1


def test_multi_valued_predicates_accumulate(graph: GraphStore) -> None:
    say(graph, [F(SELF, "likes", "tea"), F(SELF, "visited", "Kyoto")], when=T1, source="m1")
    result = say(
        graph, [F(SELF, "likes", "coffee"), F(SELF, "visited", "Oslo")], when=T2, source="m2"
    )
    assert result.closed == []
    assert sorted(f.object for f in graph.facts("u1")) == ["Kyoto", "Oslo", "coffee", "tea"]


def test_unrelated_facts_never_retire_each_other(graph: GraphStore) -> None:
    say(
        graph,
        [F("Lena", "lives_in", "Lisbon"), F(SELF, "lives_in", "Berlin")],
        when=T1,
        source="m1",
    )
    result = say(
        graph,
        [F("Maria", "lives_in", "Rome"), F("Lena", "works_at", "Acme"), F("Lena", "from", "Faro")],
        when=T2,
        source="m2",
    )
    assert result.closed == []
    assert len(graph.facts("u1")) == 5


# -- single-valued conflicts in time -------------------------------------------------------


def test_a_late_arriving_old_fact_never_overrides_a_newer_one(graph: GraphStore) -> None:
    porto = say(graph, [F("Lena", "lives_in", "Porto")], when=T2, source="m2").added[0]
    late = say(
        graph,
        [F("Lena", "lives_in", "Lisbon")],
        when=T1,
        source="m1",
        recorded=T2 + timedelta(days=1),
    )
    (lisbon,) = late.added
    assert late.closed == []
    assert (lisbon.valid_from, lisbon.valid_to, lisbon.superseded_by) == (T1, T2, porto.id)
    assert lisbon.expired_at == T2 + timedelta(days=1)
    assert [f.object for f in graph.facts("u1")] == ["Porto"]
    assert [f.object for f in graph.facts("u1", as_of=at(1))] == ["Lisbon"]
    current = graph.fact(None, porto.id)
    assert current is not None and current.current


def test_a_late_fact_is_spliced_into_the_history(graph: GraphStore) -> None:
    say(graph, [F(SELF, "lives_in", "Lisbon")], when=at(0), source="m1")
    porto = say(graph, [F(SELF, "lives_in", "Porto")], when=at(20), source="m3").added[0]
    late = say(graph, [F(SELF, "lives_in", "Madrid")], when=at(10), source="m2", recorded=at(30))
    (madrid,) = late.added
    ((lisbon, by),) = late.closed
    assert by is not None and by.id == madrid.id
    assert (lisbon.object, lisbon.valid_to, lisbon.superseded_by) == ("Lisbon", at(10), madrid.id)
    assert lisbon.expired_at == at(20)  # when it first stopped being current
    assert (madrid.valid_to, madrid.superseded_by) == (at(20), porto.id)
    timeline = [
        (f.object, f.valid_from, f.valid_to) for f in graph.facts("u1", include_history=True)
    ]
    assert timeline == [
        ("Lisbon", at(0), at(10)),
        ("Madrid", at(10), at(20)),
        ("Porto", at(20), None),
    ]


def test_a_late_statement_of_the_current_fact_moves_its_start_back(graph: GraphStore) -> None:
    say(graph, [F(SELF, "lives_in", "Lisbon")], when=at(0), source="m1")
    porto = say(graph, [F(SELF, "lives_in", "Porto")], when=at(20), source="m2").added[0]
    late = say(graph, [F(SELF, "lives_in", "Porto")], when=at(10), source="m0")
    assert late.added == []
    (moved,) = late.reinforced
    assert moved.id == porto.id and moved.valid_from == at(10) and moved.source_ids == ["m2", "m0"]
    ((lisbon, by),) = late.closed
    assert lisbon.valid_to == at(10) and by is not None and by.id == porto.id
    assert [f.object for f in graph.facts("u1", as_of=at(15))] == ["Porto"]


def test_equal_times_the_later_recorded_statement_wins(graph: GraphStore) -> None:
    result = say(graph, [F(SELF, "age", "30"), F(SELF, "age", "31")], when=T1, source="m1")
    assert [f.object for f in graph.facts("u1")] == ["31"]
    ((old, by),) = result.closed
    assert old.object == "30" and old.valid_to == old.valid_from == T1
    assert by is not None and by.object == "31"
    assert [f.object for f in graph.facts("u1", as_of=T1)] == ["31"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["Lisbon", "Porto", "Faro"])),
        min_size=1,
        max_size=7,
        unique_by=lambda x: x[0],
    ),
    st.randoms(use_true_random=False),
)
def test_any_arrival_order_gives_the_same_history(
    statements: list[tuple[int, str]], rnd: object
) -> None:
    """Statements of a single-valued fact at distinct times, fed in any order: at every
    moment the graph answers with the latest statement made for a time at or before it,
    and at most one fact is current."""
    order = list(statements)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(str(Path(tmp) / "g.db"))
        try:
            graph = GraphStore(store)
            for i, (t, place) in enumerate(order):
                say(
                    graph,
                    [F(SELF, "lives_in", place)],
                    when=at(t),
                    source=f"m{i}",
                    recorded=at(100 + i),
                )
            truth = sorted(statements)
            for probe in range(-1, 62):
                expect = [p for t, p in truth if t <= probe][-1:]
                got = [f.object for f in graph.facts("u1", as_of=at(probe))]
                assert got == expect, (order, probe)
            assert [f.object for f in graph.facts("u1")] == [truth[-1][1]]
            history = graph.facts("u1", include_history=True)
            for f in history:
                assert f.valid_to is None or f.valid_to >= f.valid_from
                if f.superseded_by is not None:
                    assert graph.fact(None, f.superseded_by) is not None
        finally:
            store.close()


def test_a_late_fact_between_two_statements_cuts_the_interval(graph: GraphStore) -> None:
    lisbon = say(graph, [F(SELF, "lives_in", "Lisbon")], when=at(0), source="m1").added[0]
    say(graph, [F(SELF, "lives_in", "Lisbon")], when=at(20), source="m3")
    graph.store.transact(lambda c: graph.set_memory_id(c, lisbon.id, "sem-lisbon"))
    late = say(graph, [F(SELF, "lives_in", "Porto")], when=at(10), source="m2", recorded=at(30))
    (porto,) = late.added
    ((early, rest),) = late.split
    assert early is not None and late.closed == []
    # Lisbon until Porto, Porto until Lisbon was said again, Lisbon since.
    assert (early.valid_from, early.valid_to, early.superseded_by) == (at(0), at(10), porto.id)
    assert (early.source_ids, early.memory_id, early.expired_at) == (["m1"], None, at(30))
    assert (porto.valid_to, porto.superseded_by) == (at(20), lisbon.id)
    assert (rest.id, rest.valid_from, rest.source_ids) == (lisbon.id, at(20), ["m3"])
    assert rest.current and rest.memory_id == "sem-lisbon"
    assert graph.fact(None, lisbon.id) == rest
    timeline = [
        (f.object, f.valid_from, f.valid_to) for f in graph.facts("u1", include_history=True)
    ]
    assert timeline == [
        ("Lisbon", at(0), at(10)),
        ("Porto", at(10), at(20)),
        ("Lisbon", at(20), None),
    ]
    assert [s for s, _ in graph.statements(None, "u1", early.id)] == ["m1"]


def test_a_late_retraction_between_two_statements_cuts_the_interval(graph: GraphStore) -> None:
    tea = say(graph, [F(SELF, "likes", "tea")], when=at(0), source="m1").added[0]
    say(graph, [F(SELF, "likes", "tea")], when=at(20), source="m3")
    late = say(graph, [F(SELF, "likes", "tea", negated=True)], when=at(10), source="m2")
    ((early, rest),) = late.split
    assert early is not None and (early.valid_to, early.superseded_by) == (at(10), None)
    assert rest.id == tea.id and rest.valid_from == at(20) and rest.current
    assert [f.object for f in graph.facts("u1", as_of=at(15))] == []
    assert [f.object for f in graph.facts("u1", as_of=at(5))] == ["tea"]
    assert [f.object for f in graph.facts("u1")] == ["tea"]


def test_a_late_retraction_closes_a_fact_that_held_then(graph: GraphStore) -> None:
    say(graph, [F(SELF, "likes", "tea")], when=at(0), source="m1")
    dislike = say(graph, [F(SELF, "dislikes", "tea")], when=at(20), source="m2").added[0]
    late = say(graph, [F(SELF, "likes", "tea", negated=True)], when=at(10), source="m3")
    ((old, by),) = late.closed
    assert by is None and (old.valid_to, old.superseded_by) == (at(10), None)
    assert [f.id for f in graph.facts("u1")] == [dislike.id]
    assert graph.facts("u1", as_of=at(15)) == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["likes", "dislikes"])),
        min_size=1,
        max_size=7,
        unique_by=lambda x: x[0],
    ),
    st.randoms(use_true_random=False),
)
def test_a_preference_history_in_any_order(statements: list[tuple[int, str]], rnd: object) -> None:
    """likes / dislikes of one object at distinct times, in any order: at every moment
    the latest statement made for a time at or before it holds."""
    order = list(statements)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(str(Path(tmp) / "g.db"))
        try:
            graph = GraphStore(store)
            for i, (t, pred) in enumerate(order):
                say(graph, [F(SELF, pred, "tea")], when=at(t), source=f"m{i}", recorded=at(100 + i))
            truth = sorted(statements)
            for probe in range(-1, 62):
                expect = [p for t, p in truth if t <= probe][-1:]
                assert [f.predicate for f in graph.facts("u1", as_of=at(probe))] == expect
        finally:
            store.close()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(["likes", "dislikes", "no longer likes"])),
        min_size=1,
        max_size=8,
        unique_by=lambda x: x[0],
    )
)
def test_retractions_in_conversation_order(statements: list[tuple[int, str]]) -> None:
    """Likes, dislikes and "no longer likes" said in order: the graph tracks the state."""
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(str(Path(tmp) / "g.db"))
        try:
            graph = GraphStore(store)
            truth = sorted(statements)
            for i, (t, what) in enumerate(truth):
                fact = (
                    F(SELF, "likes", "tea", negated=True)
                    if what == "no longer likes"
                    else F(SELF, what, "tea")
                )
                say(graph, [fact], when=at(t), source=f"m{i}")
            for probe in range(-1, 62):
                state: list[str] = []
                for t, what in truth:
                    if t > probe:
                        break
                    if what != "no longer likes":
                        state = [what]
                    elif state == ["likes"]:
                        state = []
                assert [f.predicate for f in graph.facts("u1", as_of=at(probe))] == state
        finally:
            store.close()


# -- opposites and negation ----------------------------------------------------------------


def test_a_changed_preference_closes_the_old_one(graph: GraphStore) -> None:
    like = say(
        graph, [F(SELF, "likes", "coriander"), F(SELF, "likes", "jazz")], when=T1, source="m1"
    ).added[0]
    result = say(graph, [F(SELF, "dislikes", "Coriander")], when=T2, source="m2")
    (dislike,) = result.added
    ((old, by),) = result.closed
    assert old.id == like.id and old.valid_to == T2 and by == dislike
    assert sorted(objects(graph.facts("u1"))) == [
        ("user", "dislikes", "Coriander"),
        ("user", "likes", "jazz"),
    ]
    # An older "likes" arriving late does not undo the newer dislike: it only shows the
    # like held from earlier on.
    late = say(
        graph,
        [F(SELF, "likes", "cilantro"), F(SELF, "likes", "coriander")],
        when=at(-5),
        source="m0",
    )
    assert late.closed == [] and [f.object for f in late.added] == ["cilantro"]
    (earlier,) = late.reinforced
    assert earlier.id == like.id and earlier.valid_from == at(-5) and not earlier.current
    assert sorted(objects(graph.facts("u1", predicate="dislikes"))) == [
        ("user", "dislikes", "Coriander")
    ]
    # A dislike stated for a time before the like (and after nothing) ends there.
    older = say(graph, [F(SELF, "dislikes", "coriander")], when=at(-9), source="m00")
    (stale,) = older.added
    assert (stale.valid_to, stale.superseded_by, stale.current) == (at(-5), like.id, False)


def test_negation_closes_the_matching_fact(graph: GraphStore) -> None:
    say(
        graph,
        [F(SELF, "eats", "red meat"), F(SELF, "eats", "fish"), F(SELF, "likes", "steak")],
        when=T1,
        source="m1",
    )
    result = say(graph, [F(SELF, "eats", "meat", negated=True)], when=T2, source="m2")
    assert result.added == [] and result.ignored == []
    ((old, by),) = result.closed
    assert (old.object, old.valid_to, old.superseded_by, by) == ("red meat", T2, None, None)
    assert sorted(f.object for f in graph.facts("u1")) == ["fish", "steak"]
    assert [f.object for f in graph.facts("u1", as_of=at(1), predicate="eats")] == [
        "red meat",
        "fish",
    ]


def test_chinese_negation(graph: GraphStore) -> None:
    say(graph, [F(SELF, "likes", "喝咖啡"), F(SELF, "likes", "茶")], when=T1, source="m1")
    result = say(graph, [F(SELF, "likes", "咖啡", negated=True)], when=T2, source="m2")
    assert [old.object for old, _ in result.closed] == ["喝咖啡"]
    assert [f.object for f in graph.facts("u1")] == ["茶"]


def test_negation_of_nothing_is_ignored(graph: GraphStore) -> None:
    say(graph, [F(SELF, "likes", "steak")], when=T1, source="m1")
    for fact in (
        F(SELF, "likes", "tea", negated=True),  # "tea" is no word of "steak"
        F("Nobody", "likes", "steak", negated=True),  # unknown subject
        F(SELF, "dislikes", "steak", negated=True),  # other predicate
    ):
        result = say(graph, [fact], when=T2, source="m2")
        assert result.ignored == [(fact, "nothing to retract")]
    older = say(graph, [F(SELF, "likes", "steak", negated=True)], when=at(-1), source="m0")
    assert older.ignored[0][1] == "the retraction is older than the fact"
    assert [f.object for f in graph.facts("u1")] == ["steak"]
    assert graph.counts("u1")["entities"] == 1  # the retraction created no "Nobody"


@pytest.mark.parametrize(
    ("stored", "said", "match"),
    [
        ("red meat", "meat", True),
        ("meat", "red meat", True),
        ("Coffee", "coffee.", True),
        ("steak", "tea", False),
        ("tea", "green tea leaves", True),
        ("喝咖啡", "咖啡", True),
        ("香菜", "菜", True),
        ("香菜", "咖啡", False),
        ("", "x", False),
    ],
)
def test_object_matches(stored: str, said: str, match: bool) -> None:
    assert object_matches(stored, said) is match


# -- entities ------------------------------------------------------------------------------


def test_relationships_and_places_become_graph_edges(graph: GraphStore) -> None:
    result = say(
        graph,
        [F(SELF, "sister", "Maria"), F("Maria", "lives_in", "Rome"), F(SELF, "likes", "tea")],
        when=T1,
        source="m1",
    )
    sister, rome, tea = result.added
    assert sister.object_id is not None and rome.object_id is not None and tea.object_id is None
    assert {e.name: e.type for e in result.entities} == {
        "user": "person",
        "Maria": "person",
        "Rome": "place",
    }
    reached, _ = graph.neighbors("u1", SELF, depth=1)
    assert [e.name for e, _ in reached] == ["Maria"]
    reached, facts = graph.neighbors("u1", SELF, depth=2)
    assert sorted((e.name, hop) for e, hop in reached) == [("Maria", 1), ("Rome", 2)]
    assert {f.id for f in facts} == {sister.id, rome.id}


def test_a_name_fact_makes_an_alias(graph: GraphStore) -> None:
    # Even when the message lists "Lena" as a person, the name is the user's alias.
    say(
        graph,
        [F(SELF, "name", "Lena")],
        when=T1,
        source="m1",
        entities=[ExtractedEntity("Lena", "person")],
    )
    me = graph.entity("u1", "Lena")
    assert me is not None and me.name == "user" and me.aliases == ["Lena"]
    # Later facts about "Lena" are facts about the user.
    say(graph, [F("Lena", "lives_in", "Porto")], when=T2, source="m2")
    assert objects(graph.facts("u1", subject=SELF)) == [
        ("user", "name", "Lena"),
        ("user", "lives_in", "Porto"),
    ]


def test_message_entities_type_and_alias_what_the_facts_mention(graph: GraphStore) -> None:
    max_dog = ExtractedEntity("Max", "dog", ("Maxie",))
    result = say(
        graph,
        [F(SELF, "likes", "Max"), F(SELF, "likes", "tea")],
        when=T1,
        source="m1",
        entities=[max_dog, ExtractedEntity("Unmentioned", "person")],
    )
    likes_max, likes_tea = result.added
    max_ = graph.entity("u1", "max")
    assert max_ is not None and max_.type == "dog" and max_.aliases == ["Maxie"]
    assert likes_max.object_id == max_.id  # the message says Max is a dog: an entity
    assert likes_tea.object_id is None  # tea is a value
    assert graph.entity("u1", "Unmentioned") is None  # only what facts mention is stored
    # A later message naming the dog by its alias reaches the same entity.
    say(graph, [F(SELF, "has_pet", "Maxie")], when=T2, source="m2", entities=[max_dog])
    (pet,) = graph.facts("u1", predicate="has_pet")
    assert pet.object_id == max_.id and pet.object == "Maxie"
    assert [e.name for e in graph.entities("u1")] == ["user", "Max"]


def test_an_alias_listed_first_resolves_to_the_listed_name(graph: GraphStore) -> None:
    say(
        graph,
        [F(SELF, "friend", "Kate")],
        when=T1,
        source="m1",
        entities=[ExtractedEntity("Katherine", "person", ("Kate",))],
    )
    (kat,) = [e for e in graph.entities("u1") if e.name != "user"]
    assert (kat.name, kat.type, kat.aliases) == ("Katherine", "person", ["Kate"])


# -- time and vocabulary -------------------------------------------------------------------


def test_valid_from_uses_past_dates_but_not_plan_dates() -> None:
    seen = datetime(2024, 5, 10, 15, 30, tzinfo=UTC)
    moved = F(SELF, "lives_in", "Porto", date=date(2024, 5, 3))
    trip = F(SELF, "plans", "fly to Oslo", date=date(2024, 5, 17))
    today = F(SELF, "visited", "Louvre", date=date(2024, 5, 10))
    future = F(SELF, "attended", "a concert", date=date(2024, 6, 1))
    assert valid_from_of(moved, seen) == datetime(2024, 5, 3, tzinfo=UTC)
    assert valid_from_of(trip, seen) == seen
    assert valid_from_of(today, seen) == seen
    assert valid_from_of(future, seen) == seen
    assert valid_from_of(F(SELF, "likes", "tea"), seen) == seen


def test_a_dated_fact_starts_on_its_date(graph: GraphStore) -> None:
    say(graph, [F(SELF, "lives_in", "Lisbon")], when=datetime(2024, 1, 1, tzinfo=UTC), source="m1")
    result = say(
        graph,
        [F(SELF, "lives_in", "Porto", date=date(2024, 5, 3))],
        when=datetime(2024, 5, 10, tzinfo=UTC),
        source="m2",
    )
    (porto,) = result.added
    assert porto.date == date(2024, 5, 3)
    assert porto.valid_from == datetime(2024, 5, 3, tzinfo=UTC)
    assert porto.created_at == datetime(2024, 5, 10, tzinfo=UTC)
    assert [f.object for f in graph.facts("u1", as_of=datetime(2024, 5, 5, tzinfo=UTC))] == [
        "Porto"
    ]


def test_what_cannot_be_stored_is_ignored_with_a_reason(graph: GraphStore) -> None:
    bad = [
        F(SELF, "teleports_to", "Mars"),
        F(" ", "likes", "tea"),
        F(SELF, "likes", "…"),
        F(SELF, "likes", "tea", confidence=float("nan")),
    ]
    result = say(graph, [*bad, F(SELF, "likes", "tea", confidence=3.0)], when=T1, source="m1")
    assert [reason for _, reason in result.ignored] == [
        "unknown predicate 'teleports_to'",
        "empty subject",
        "empty object",
        "confidence is not a number",
    ]
    (tea,) = result.added
    assert tea.confidence == 1.0  # clamped into [0, 1]


def test_users_do_not_share_facts(graph: GraphStore) -> None:
    say(graph, [F(SELF, "lives_in", "Lisbon")], when=T1, source="a1", user="alice")
    say(graph, [F(SELF, "lives_in", "Porto")], when=T2, source="b1", user="bob")
    assert [f.object for f in graph.facts("alice")] == ["Lisbon"]
    assert [f.object for f in graph.facts("bob")] == ["Porto"]


def test_speaker_and_ids(graph: GraphStore) -> None:
    ids = (f"fact-{i}" for i in itertools.count())

    def write(c: sqlite3.Connection) -> ResolveResult:
        return resolve(
            graph, c, "u1", [F("Lena", "likes", "tea")], source_id="m1", speaker="Lena",
            observed_at=T1, now=T1, new_id=lambda: next(ids),
        )  # fmt: skip

    (fact,) = graph.store.transact(write).added
    assert (fact.id, fact.speaker, fact.source_ids, fact.memory_id) == (
        "fact-0",
        "Lena",
        ["m1"],
        None,
    )


def test_naive_times_are_utc(graph: GraphStore) -> None:
    naive = datetime(2024, 3, 1, 9, 0)
    (fact,) = say(graph, [F(SELF, "likes", "tea")], when=naive, source="m1").added
    assert fact.valid_from == T1 and fact.created_at == T1
    assert graph.fact(None, fact.id) == fact
