"""The knowledge-graph tables of the store (store/graph.py), on real SQLite files."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemolayer.errors import ValidationError
from mnemolayer.models import Fact, new_id
from mnemolayer.store import graph as graph_module
from mnemolayer.store.graph import GraphStore, normalize_name
from mnemolayer.store.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION
from mnemolayer.store.sqlite.store import SQLiteStore

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(str(tmp_path / "graph.db"))
    yield s
    s.close()


@pytest.fixture
def graph(store: SQLiteStore) -> GraphStore:
    return GraphStore(store)


def add_fact(
    graph: GraphStore,
    user: str,
    subject: str,
    predicate: str,
    obj: str,
    *,
    start: datetime,
    end: datetime | None = None,
    object_entity: bool = False,
    sources: tuple[str, ...] = ("m1",),
    superseded_by: str | None = None,
    confidence: float = 0.8,
) -> Fact:
    """Insert one fact directly (no conflict resolution) and return it."""

    def write(c: sqlite3.Connection) -> Fact:
        s = graph.resolve_entity(c, user, subject, now=start)
        o = graph.resolve_entity(c, user, obj, now=start) if object_entity else None
        assert s is not None
        fact = Fact(
            id=new_id(), user_id=user, subject=s.name, subject_id=s.id, predicate=predicate,
            object=obj, object_id=o.id if o else None, valid_from=start, valid_to=end,
            created_at=start, expired_at=end, superseded_by=superseded_by,
            confidence=confidence, source_ids=list(sources),
        )  # fmt: skip
        graph.insert_fact(c, fact)
        return fact

    return graph.store.transact(write)


# -- normalisation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("Lena", "lena"),
        ("  LENA  ", "lena"),
        ("Ｌｅｎａ", "lena"),  # full-width letters fold under NFKC
        ("Straße", "strasse"),
        ("New   York\tCity", "new york city"),
        ('"Lisbon."', "lisbon"),
        ("(Orca)", "orca"),
        ("C#", "c#"),  # a trailing '#' is part of the name
        ("AT&T", "at&t"),
        ("香菜。", "香菜"),
        ("「小雨」", "小雨"),
        ("?!", ""),
        ("ǰ", "ǰ"),  # folds to j + combining caron, recomposed
        ("", ""),
    ],
)
def test_normalize_name(raw: str, norm: str) -> None:
    assert normalize_name(raw) == norm


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_normalize_name_is_idempotent(text: str) -> None:
    once = normalize_name(text)
    assert normalize_name(once) == once
    assert once == once.strip()


# -- schema ------------------------------------------------------------------------------


def test_migration_3_upgrades_a_version_2_file(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL)")
    for version, statements in enumerate(MIGRATIONS[:2], start=1):
        for stmt in statements:
            db.execute(stmt)
        db.execute("INSERT INTO schema_version VALUES (?, ?)", (version, T0.isoformat()))
    db.commit()
    db.close()

    s = SQLiteStore(str(path))
    try:
        assert s.schema_version() == SCHEMA_VERSION >= 3
        tables = {r[0] for r in s.read("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"entities", "entity_aliases", "facts", "fact_sources"} <= tables
        assert GraphStore(s).counts() == {
            "entities": 0,
            "aliases": 0,
            "facts": 0,
            "current_facts": 0,
        }
    finally:
        s.close()


# -- entities ----------------------------------------------------------------------------


def test_resolve_entity_finds_the_same_entity_under_any_spelling(
    store: SQLiteStore, graph: GraphStore
) -> None:
    def write(c: sqlite3.Connection) -> list[str]:
        ids = []
        for name in ("Maria", " maria ", "MARIA.", "Ｍａｒｉａ"):
            e = graph.resolve_entity(c, "u1", name, type="person", now=day(0))
            assert e is not None
            ids.append(e.id)
        return ids

    ids = store.transact(write)
    assert len(set(ids)) == 1
    (maria,) = graph.entities("u1")
    assert (maria.name, maria.type) == ("Maria", "person")
    assert graph.entity("u1", "mARIA") == maria
    assert graph.entity("u2", "Maria") is None  # another user's graph is separate


def test_resolve_entity_without_create_does_not_write(
    store: SQLiteStore, graph: GraphStore
) -> None:
    assert graph.resolve_entity(None, "u1", "Nobody", create=False, now=day(0)) is None
    found = store.transact(
        lambda c: graph.resolve_entity(c, "u1", "Nobody", create=False, now=day(0))
    )
    assert found is None
    assert graph.counts("u1")["entities"] == 0


def test_the_user_entity_is_a_person_called_user(store: SQLiteStore, graph: GraphStore) -> None:
    me = store.transact(lambda c: graph.resolve_entity(c, "u1", "User", type="pet", now=day(0)))
    assert me is not None
    assert (me.name, me.type) == ("user", "person")
    assert graph.entity("u1", "user") == me


def test_a_generic_type_is_upgraded_but_a_specific_one_kept(
    store: SQLiteStore, graph: GraphStore
) -> None:
    def write(c: sqlite3.Connection) -> tuple[str, str, str]:
        a = graph.resolve_entity(c, "u1", "Max", now=day(0))
        b = graph.resolve_entity(c, "u1", "Max", type="dog", now=day(1))
        d = graph.resolve_entity(c, "u1", "Max", type="person", now=day(2))
        assert a and b and d
        return a.type, b.type, d.type

    assert store.transact(write) == ("thing", "dog", "dog")
    max_ = graph.entity("u1", "max")
    assert max_ is not None and max_.type == "dog" and max_.updated_at == day(1)


def test_an_empty_name_is_refused(store: SQLiteStore, graph: GraphStore) -> None:
    with pytest.raises(ValidationError) as err:
        store.transact(lambda c: graph.resolve_entity(c, "u1", " … ", now=day(0)))
    assert err.value.field == "name"


def test_aliases_resolve_and_are_never_stolen(store: SQLiteStore, graph: GraphStore) -> None:
    def write(c: sqlite3.Connection) -> dict[str, bool]:
        me = graph.resolve_entity(c, "u1", "user", now=day(0))
        kat = graph.resolve_entity(c, "u1", "Katherine", type="person", now=day(0))
        bob = graph.resolve_entity(c, "u1", "Bob", type="person", now=day(0))
        assert me and kat and bob
        return {
            "kat gets Kate": graph.add_alias(c, "u1", kat.id, "Kate", day(1)),
            "kat gets Kate again": graph.add_alias(c, "u1", kat.id, " KATE ", day(2)),
            "bob takes Kate": graph.add_alias(c, "u1", bob.id, "Kate", day(2)),
            "bob takes Katherine": graph.add_alias(c, "u1", bob.id, "Katherine", day(2)),
            "kat gets her own name": graph.add_alias(c, "u1", kat.id, "katherine", day(2)),
            "kat takes 'user'": graph.add_alias(c, "u1", kat.id, "User", day(2)),
            "empty": graph.add_alias(c, "u1", kat.id, "...", day(2)),
            "me gets Lena": graph.add_alias(c, "u1", me.id, "Lena", day(3)),
        }

    assert store.transact(write) == {
        "kat gets Kate": True,
        "kat gets Kate again": False,
        "bob takes Kate": False,
        "bob takes Katherine": False,
        "kat gets her own name": False,
        "kat takes 'user'": False,
        "empty": False,
        "me gets Lena": True,
    }
    kat = graph.entity("u1", "kate")
    assert kat is not None and kat.name == "Katherine" and kat.aliases == ["Kate"]
    bob = graph.entity("u1", "Bob")
    assert bob is not None and bob.aliases == []
    me = graph.entity("u1", "Lena")
    assert me is not None and me.name == "user"
    assert graph.entity("u1", "user") == me
    assert graph.counts("u1")["aliases"] == 2


# -- facts -------------------------------------------------------------------------------


def test_insert_fact_validates(store: SQLiteStore, graph: GraphStore) -> None:
    with pytest.raises(ValidationError) as err:
        add_fact(graph, "u1", "user", "likes", " ", start=day(0))
    assert err.value.field == "object"
    with pytest.raises(ValidationError) as err:
        add_fact(graph, "u1", "user", "likes", "tea", start=day(0), confidence=1.5)
    assert err.value.field == "confidence"
    with pytest.raises(ValidationError) as err:
        add_fact(graph, "u1", "user", "likes", "tea", start=day(2), end=day(1))
    assert err.value.field == "valid_to"
    assert graph.counts("u1")["facts"] == 0  # each failed write rolled back whole


def test_fact_round_trip_and_json(graph: GraphStore) -> None:
    fact = add_fact(graph, "u1", "user", "sister", "Maria", start=day(0), object_entity=True)
    stored = graph.fact(None, fact.id)
    assert stored == fact
    data = stored.to_json()
    assert data["current"] is True and data["valid_to"] is None
    assert data["valid_from"] == "2024-01-01T00:00:00Z"
    assert data["object_id"] == graph.entity("u1", "Maria").id  # type: ignore[union-attr]


def test_reinforce_adds_provenance_once_and_keeps_the_higher_confidence(
    store: SQLiteStore, graph: GraphStore
) -> None:
    fact = add_fact(graph, "u1", "user", "likes", "tea", start=day(0), confidence=0.6)
    store.transact(lambda c: graph.reinforce(c, fact.id, "m2", 0.9))
    store.transact(lambda c: graph.reinforce(c, fact.id, "m2", 0.5))
    after = store.transact(lambda c: graph.reinforce(c, fact.id, "m3", 0.7))
    assert after is not None
    assert after.source_ids == ["m1", "m2", "m3"]
    assert after.confidence == pytest.approx(0.9)
    assert graph.fact(None, fact.id) == after
    assert set(graph.facts_for_memories("u1", ["m2", "m3"])) == {"m2", "m3"}
    assert store.transact(lambda c: graph.reinforce(c, "no-such-fact", "m4", 0.9)) is None


def test_close_fact_and_current_facts(store: SQLiteStore, graph: GraphStore) -> None:
    lisbon = add_fact(graph, "u1", "Lena", "lives_in", "Lisbon", start=day(0))
    porto = add_fact(graph, "u1", "Lena", "lives_in", "Porto", start=day(10))
    store.transact(
        lambda c: graph.close_fact(
            c, lisbon.id, valid_to=day(10), superseded_by=porto.id, expired_at=day(11)
        )
    )
    closed = graph.fact(None, lisbon.id)
    assert closed is not None and not closed.current
    assert (closed.valid_to, closed.superseded_by, closed.expired_at) == (
        day(10),
        porto.id,
        day(11),
    )
    lena = graph.entity("u1", "lena")
    assert lena is not None
    assert [f.object for f in graph.current_facts(None, "u1", subject_id=lena.id)] == ["Porto"]
    assert graph.current_facts(None, "u1", predicate="lives_in", object_norm="LISBON") == []
    assert [f.id for f in graph.current_facts(None, "u1", object_norm=" porto ")] == [porto.id]
    with pytest.raises(ValidationError) as err:
        store.transact(
            lambda c: graph.close_fact(
                c, porto.id, valid_to=day(5), superseded_by=None, expired_at=day(12)
            )
        )
    assert err.value.field == "valid_to"


def test_facts_as_of_boundaries_and_history(graph: GraphStore) -> None:
    # Lisbon holds on [day 0, day 10), Porto from day 10 on.
    porto = add_fact(graph, "u1", "Lena", "lives_in", "Porto", start=day(10))
    lisbon = add_fact(
        graph, "u1", "Lena", "lives_in", "Lisbon", start=day(0), end=day(10),
        superseded_by=porto.id,
    )  # fmt: skip

    def at(moment: datetime, **kw: object) -> list[str]:
        return [f.object for f in graph.facts("u1", as_of=moment, **kw)]  # type: ignore[arg-type]

    assert at(day(0) - timedelta(microseconds=1)) == []
    assert at(day(0)) == ["Lisbon"]  # valid_from is inclusive
    assert at(day(10) - timedelta(microseconds=1)) == ["Lisbon"]
    assert at(day(10)) == ["Porto"]  # valid_to is exclusive
    assert at(day(400)) == ["Porto"]
    assert at(datetime(2024, 1, 5)) == ["Lisbon"]  # naive means UTC
    assert at(day(10), include_history=True) == ["Lisbon", "Porto"]  # started by then
    assert at(day(5), include_history=True) == ["Lisbon"]
    assert [f.id for f in graph.facts("u1")] == [porto.id]
    assert [f.id for f in graph.facts("u1", include_history=True)] == [lisbon.id, porto.id]
    assert graph.facts("u1", subject="LENA", predicate="lives_in") == [porto]
    assert graph.facts("u1", subject="Nobody") == []
    assert graph.facts("u1", predicate="likes") == []
    with pytest.raises(ValidationError) as err:
        graph.facts("u1", as_of="yesterday")  # type: ignore[arg-type]
    assert err.value.field == "as_of"


def test_facts_are_ordered_by_valid_from_then_created_at(
    store: SQLiteStore, graph: GraphStore
) -> None:
    b = add_fact(graph, "u1", "user", "likes", "b", start=day(2))
    a = add_fact(graph, "u1", "user", "likes", "a", start=day(1))
    c_ = add_fact(graph, "u1", "user", "likes", "c", start=day(2))
    assert [f.id for f in graph.facts("u1")] == [a.id, b.id, c_.id]


# -- traversal ---------------------------------------------------------------------------


@pytest.fixture(params=["multi-arm", "single-arm"])
def cte(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run traversal tests with both forms of the recursive query (the single-arm one
    serves SQLite before 3.34)."""
    monkeypatch.setattr(graph_module, "_MULTI_ARM_CTE", request.param == "multi-arm")
    return str(request.param)


@pytest.fixture
def family(graph: GraphStore, cte: str) -> dict[str, Fact]:
    """user -sister-> Maria -lives_in-> Rome -…; Maria -friend-> Ana; user likes tea."""
    return {
        "sister": add_fact(graph, "u1", "user", "sister", "Maria", start=day(0), object_entity=True),
        "rome": add_fact(graph, "u1", "Maria", "lives_in", "Rome", start=day(1), object_entity=True),
        "milan": add_fact(
            graph, "u1", "Maria", "lives_in", "Milan", start=day(0), end=day(1),
            object_entity=True,
        ),
        "friend": add_fact(graph, "u1", "Ana", "friend", "Maria", start=day(2), object_entity=True),
        "tea": add_fact(graph, "u1", "user", "likes", "tea", start=day(0)),
        "other": add_fact(graph, "u2", "user", "sister", "Maria", start=day(0), object_entity=True),
    }  # fmt: skip


def test_neighbors_k_hops(graph: GraphStore, family: dict[str, Fact]) -> None:
    reached, facts = graph.neighbors("u1", "user", depth=1)
    assert [(e.name, hop) for e, hop in reached] == [("Maria", 1)]
    assert [f.id for f in facts] == [family["sister"].id]

    reached, facts = graph.neighbors("u1", "user", depth=2)
    assert sorted((e.name, hop) for e, hop in reached) == [("Ana", 2), ("Maria", 1), ("Rome", 2)]
    assert {f.id for f in facts} == {family["sister"].id, family["rome"].id, family["friend"].id}
    assert "Milan" not in {e.name for e, _ in reached}  # a closed fact is no current edge

    # From Rome, back through Maria to the user: edges are followed both ways.
    reached, _ = graph.neighbors("u1", "rome", depth=2)
    assert sorted((e.name, hop) for e, hop in reached) == [("Ana", 2), ("Maria", 1), ("user", 2)]


def test_neighbors_history_depth_and_unknown(graph: GraphStore, family: dict[str, Fact]) -> None:
    reached, facts = graph.neighbors("u1", "Maria", depth=1, include_history=True)
    assert sorted(e.name for e, _ in reached) == ["Ana", "Milan", "Rome", "user"]
    assert family["milan"].id in {f.id for f in facts}
    # Many hops over a small graph with a cycle terminate with the fewest hops.
    reached, _ = graph.neighbors("u1", "user", depth=5)
    assert dict((e.name, hop) for e, hop in reached) == {"Maria": 1, "Rome": 2, "Ana": 2}
    assert graph.neighbors("u1", "Nobody") == ([], [])
    for bad in (0, 6, -1, True, 2.0, "2"):
        with pytest.raises(ValidationError) as err:
            graph.neighbors("u1", "user", depth=bad)  # type: ignore[arg-type]
        assert err.value.field == "depth"


# -- provenance and deletion -------------------------------------------------------------


def test_facts_for_memories_and_by_memory_id(store: SQLiteStore, graph: GraphStore) -> None:
    tea = add_fact(graph, "u1", "user", "likes", "tea", start=day(0), sources=("m1", "m2"))
    cat = add_fact(graph, "u1", "user", "has_pet", "Tom", start=day(1), sources=("m2",))
    add_fact(graph, "u2", "user", "likes", "tea", start=day(0), sources=("m1",))
    found = graph.facts_for_memories("u1", ["m1", "m2", "m9"])
    assert {k: [f.id for f in v] for k, v in found.items()} == {
        "m1": [tea.id],
        "m2": [tea.id, cat.id],
    }
    store.transact(lambda c: graph.set_memory_id(c, tea.id, "sem-1"))
    got = graph.fact_by_memory_id("u1", "sem-1")
    assert got is not None and got.id == tea.id and got.memory_id == "sem-1"
    assert graph.fact_by_memory_id("u2", "sem-1") is None
    assert graph.facts_by_memory_ids("u1", ["sem-1", "sem-2"]) == {"sem-1": got}


def test_remove_sources_keeps_supported_facts_and_deletes_orphans(
    store: SQLiteStore, graph: GraphStore
) -> None:
    tea = add_fact(graph, "u1", "user", "likes", "tea", start=day(0), sources=("m1", "m2"))
    sister = add_fact(
        graph, "u1", "user", "sister", "Maria", start=day(0), object_entity=True, sources=("m2",)
    )
    deleted = store.transact(lambda c: graph.remove_sources(c, "u1", ["m2"]))
    assert [f.id for f in deleted] == [sister.id]
    kept = graph.fact(None, tea.id)
    assert kept is not None and kept.source_ids == ["m1"]
    assert graph.fact(None, sister.id) is None
    # Maria is mentioned by no fact any more: she goes; the user stays (likes tea).
    assert [e.name for e in graph.entities("u1")] == ["user"]
    assert graph.facts_for_memories("u1", ["m2"]) == {}
    assert store.transact(lambda c: graph.remove_sources(c, "u1", [])) == []


def test_deleting_a_replacement_reopens_or_relinks_what_it_closed(
    store: SQLiteStore, graph: GraphStore
) -> None:
    madrid = add_fact(graph, "u1", "Lena", "lives_in", "Madrid", start=day(20), sources=("m3",))
    porto = add_fact(
        graph, "u1", "Lena", "lives_in", "Porto", start=day(10), end=day(20),
        superseded_by=madrid.id, sources=("m2",),
    )  # fmt: skip
    lisbon = add_fact(
        graph, "u1", "Lena", "lives_in", "Lisbon", start=day(0), end=day(10),
        superseded_by=porto.id, sources=("m1",),
    )  # fmt: skip

    # Lisbon → Porto → Madrid; forgetting Porto links Lisbon straight to Madrid.
    removal = store.transact(lambda c: graph.remove_sources_detailed(c, "u1", ["m2"]))
    assert [f.id for f in removal.deleted] == [porto.id]
    assert [(f.id, f.valid_to, f.superseded_by) for f in removal.relinked] == [
        (lisbon.id, day(20), madrid.id)
    ]
    assert graph.fact(None, lisbon.id) == removal.relinked[0]
    assert [f.object for f in graph.facts("u1", as_of=day(15))] == ["Lisbon"]

    # Forgetting Madrid too makes Lisbon current again.
    deleted = store.transact(lambda c: graph.delete_facts_by_memory(c, "u1", []))
    assert deleted == []
    store.transact(lambda c: graph.set_memory_id(c, madrid.id, "sem-madrid"))
    deleted = store.transact(lambda c: graph.delete_facts_by_memory(c, "u1", ["sem-madrid"]))
    assert [f.id for f in deleted] == [madrid.id]
    again = graph.fact(None, lisbon.id)
    assert again is not None and again.current
    assert (again.superseded_by, again.expired_at) == (None, None)
    assert [f.object for f in graph.facts("u1")] == ["Lisbon"]


def test_deleting_a_name_fact_removes_its_alias(store: SQLiteStore, graph: GraphStore) -> None:
    name = add_fact(graph, "u1", "user", "name", "Lena", start=day(0), sources=("m1",))
    add_fact(graph, "u1", "user", "likes", "tea", start=day(0), sources=("m2",))

    def alias(c: sqlite3.Connection) -> bool:
        me = graph.resolve_entity(c, "u1", "user", now=day(0))
        assert me is not None
        return graph.add_alias(c, "u1", me.id, "Lena", day(0))

    assert store.transact(alias)
    assert graph.entity("u1", "lena") is not None
    deleted = store.transact(lambda c: graph.remove_sources(c, "u1", ["m1"]))
    assert [f.id for f in deleted] == [name.id]
    assert graph.entity("u1", "lena") is None
    me = graph.entity("u1", "user")
    assert me is not None and me.aliases == []


def test_delete_user_and_counts(store: SQLiteStore, graph: GraphStore) -> None:
    add_fact(graph, "u1", "user", "sister", "Maria", start=day(0), object_entity=True)
    add_fact(graph, "u1", "user", "likes", "tea", start=day(0), end=day(1))
    add_fact(graph, "u2", "user", "likes", "tea", start=day(0))

    def alias(c: sqlite3.Connection) -> None:
        maria = graph.resolve_entity(c, "u1", "Maria", now=day(0))
        assert maria is not None
        graph.add_alias(c, "u1", maria.id, "Mari", day(0))

    store.transact(alias)
    assert graph.counts("u1") == {"entities": 2, "aliases": 1, "facts": 2, "current_facts": 1}
    assert graph.counts() == {"entities": 3, "aliases": 1, "facts": 3, "current_facts": 2}
    removed = store.transact(lambda c: graph.delete_user(c, "u1"))
    assert removed == {"entities": 2, "aliases": 1, "facts": 2}
    assert graph.counts("u1") == {"entities": 0, "aliases": 0, "facts": 0, "current_facts": 0}
    assert graph.counts("u2")["facts"] == 1
    assert graph.facts_for_memories("u1", ["m1"]) == {}
    assert store.transact(lambda c: graph.delete_user(c, "u1")) == {
        "entities": 0,
        "aliases": 0,
        "facts": 0,
    }
