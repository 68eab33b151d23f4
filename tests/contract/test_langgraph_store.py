"""``MnemolayerStore``, LangGraph's ``BaseStore`` over mnemolayer.

LangGraph ships no store conformance suite (``langgraph`` and ``langgraph-checkpoint``
install no tests), so :class:`TestContract` follows the contract written in
``langgraph.store.base`` (the docstrings of ``BaseStore``, ``SearchOp``,
``ListNamespacesOp`` and ``PutOp``) and runs twice: on ``MnemolayerStore`` and on
LangGraph's own ``InMemoryStore``, the reference, which proves the suite asks for
LangGraph's behaviour and not for ours. Both embed with mnemolayer's deterministic
hashing model. The mnemolayer-only tests follow it: the mapping onto memories,
persistence, fact mining, and a real LangGraph graph using the store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from helpers import is_postgres
from mnemolayer import Memory, ValidationError
from mnemolayer.crypto import EncryptionConfig
from mnemolayer.embed import HashingEmbedder
from mnemolayer.integrations.langgraph import MnemolayerStore

FIELDS = ["text"]


def _reference() -> InMemoryStore:
    embedder = HashingEmbedder()

    def embed(texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in embedder.embed(texts, "document")]

    return InMemoryStore(index={"dims": embedder.dim, "embed": embed, "fields": FIELDS})


@pytest.fixture(params=["mnemolayer", "mnemolayer-encrypted", "reference"])
def store(
    new_db: Callable[[str], Any], request: pytest.FixtureRequest, mem: Memory, tmp_path: Path
) -> Iterator[BaseStore]:
    if request.param == "mnemolayer":
        yield MnemolayerStore(mem, index={"fields": FIELDS})
    elif request.param == "mnemolayer-encrypted":
        # Metadata is sealed on an encrypted store: filters and namespace listing must
        # still work without SQLite's JSON functions.
        key = bytes(range(32))
        if is_postgres(new_db("enc")):
            # Not offered on PostgreSQL: check that it is refused, naming the setting.
            with pytest.raises(ValidationError, match="encryption"):
                Memory(
                    new_db("enc"), embedder="hashing", encryption=EncryptionConfig(master_key=key)
                )
            pytest.xfail("encryption at rest is SQLite-only: PostgreSQL refuses it")
        with Memory(
            new_db("enc"),
            embedder="hashing",
            extractor=None,
            encryption=EncryptionConfig(master_key=key),
        ) as enc:
            yield MnemolayerStore(enc, index={"fields": FIELDS})
    else:
        yield _reference()


def _keys(items: list[Any]) -> list[str]:
    return [item.key for item in items]


class TestContract:
    """What ``BaseStore`` promises, checked on both stores."""

    def test_put_get_round_trip(self, store: BaseStore) -> None:
        value = {"text": "likes tea", "n": 3, "nested": {"tags": ["a", "b"]}, "$odd key": None}
        store.put(("alice", "prefs"), "drink", value)
        item = store.get(("alice", "prefs"), "drink")
        assert item is not None
        assert (item.namespace, item.key, item.value) == (("alice", "prefs"), "drink", value)
        assert item.updated_at >= item.created_at
        assert store.get(("alice", "prefs"), "food") is None
        assert store.get(("bob", "prefs"), "drink") is None

    def test_put_replaces_the_value(self, store: BaseStore) -> None:
        store.put(("alice",), "k", {"text": "first", "old": True})
        store.put(("alice",), "k", {"text": "second"})
        item = store.get(("alice",), "k")
        assert item is not None and item.value == {"text": "second"}
        assert len(store.search(("alice",))) == 1

    def test_delete(self, store: BaseStore) -> None:
        store.put(("alice",), "k", {"text": "gone soon"})
        store.delete(("alice",), "k")
        assert store.get(("alice",), "k") is None
        store.delete(("alice",), "never-there")  # no error
        assert store.search(("alice",)) == []

    def test_same_key_in_other_namespaces_is_another_item(self, store: BaseStore) -> None:
        store.put(("alice", "a"), "k", {"text": "one"})
        store.put(("alice", "b"), "k", {"text": "two"})
        store.put(("bob", "a"), "k", {"text": "one"})
        store.delete(("alice", "a"), "k")
        assert store.get(("alice", "a"), "k") is None
        assert store.get(("alice", "b"), "k").value == {"text": "two"}
        assert store.get(("bob", "a"), "k").value == {"text": "one"}

    def test_search_by_namespace_prefix(self, store: BaseStore) -> None:
        store.put(("alice", "notes"), "1", {"text": "a"})
        store.put(("alice", "notes", "work"), "2", {"text": "b"})
        store.put(("alice", "notesx"), "3", {"text": "c"})
        store.put(("bob", "notes"), "4", {"text": "d"})
        assert sorted(_keys(store.search(("alice", "notes")))) == ["1", "2"]
        assert sorted(_keys(store.search(("alice",)))) == ["1", "2", "3"]
        assert sorted(_keys(store.search(()))) == ["1", "2", "3", "4"]
        assert store.search(("carol",)) == []
        hit = store.search(("alice", "notes", "work"))[0]
        assert (hit.namespace, hit.value, hit.score) == (
            ("alice", "notes", "work"),
            {"text": "b"},
            None,
        )

    def test_filter_on_value_fields(self, store: BaseStore) -> None:
        rows = [
            (
                "a",
                {"text": "x", "kind": "fruit", "price": 3, "tags": ["red"], "meta": {"ok": True}},
            ),
            (
                "b",
                {
                    "text": "y",
                    "kind": "fruit",
                    "price": 7,
                    "tags": ["green"],
                    "meta": {"ok": False},
                },
            ),
            ("c", {"text": "z", "kind": "veg", "price": 5, "name": "kale"}),
        ]
        for key, value in rows:
            store.put(("shop",), key, value)

        def keys(flt: dict[str, Any]) -> list[str]:
            return sorted(_keys(store.search(("shop",), filter=flt)))

        assert keys({"kind": "fruit"}) == ["a", "b"]
        assert keys({"kind": "fruit", "price": {"$gt": 4}}) == ["b"]
        assert keys({"price": {"$gte": 5}}) == ["b", "c"]
        assert keys({"price": {"$lt": 5}}) == ["a"]
        assert keys({"price": {"$lte": 5, "$gt": 3}}) == ["c"]
        assert keys({"kind": {"$ne": "fruit"}}) == ["c"]
        assert keys({"kind": {"$eq": "veg"}}) == ["c"]
        assert keys({"tags": ["red"]}) == ["a"]
        assert keys({"meta": {"ok": False}}) == ["b"]
        assert keys({"name": "kale", "kind": "veg"}) == ["c"]
        assert keys({"missing": "x"}) == []

    def test_limit_and_offset_page_through_everything(self, store: BaseStore) -> None:
        for n in range(7):
            store.put(("alice", "log"), f"k{n}", {"text": f"entry {n}", "n": n})
        pages = [store.search(("alice", "log"), limit=3, offset=o) for o in (0, 3, 6)]
        assert [len(p) for p in pages] == [3, 3, 1]
        keys = [k for page in pages for k in _keys(page)]
        assert sorted(keys) == [f"k{n}" for n in range(7)]
        assert store.search(("alice", "log"), limit=2, offset=10) == []
        assert len(store.search(("alice", "log"), filter={"n": {"$gte": 2}}, limit=10)) == 5

    def test_query_ranks_the_relevant_item_first(self, store: BaseStore) -> None:
        store.put(("alice", "m"), "hike", {"text": "weekend hiking trips in the mountains"})
        store.put(("alice", "m"), "sushi", {"text": "favourite food is salmon sushi"})
        store.put(("alice", "m"), "car", {"text": "the car needs new winter tyres"})
        hits = store.search(("alice",), query="which sushi food is the favourite?", limit=3)
        assert hits[0].key == "sushi"
        scores = [h.score for h in hits]
        assert all(s is not None for s in scores)
        assert scores == sorted(scores, reverse=True)

    def test_query_with_filter_and_offset(self, store: BaseStore) -> None:
        for n, city in enumerate(["Lisbon", "Porto", "Lisbon", "Faro"]):
            store.put(("trips",), f"t{n}", {"text": f"trip number {n} to {city}", "city": city})
        hits = store.search(("trips",), query="trip to Lisbon", filter={"city": "Lisbon"})
        assert sorted(_keys(hits)) == ["t0", "t2"]
        first = store.search(("trips",), query="trip to Lisbon", limit=1)
        second = store.search(("trips",), query="trip to Lisbon", limit=1, offset=1)
        assert len(first) == len(second) == 1 and first[0].key != second[0].key

    def test_index_fields_choose_the_text_that_is_searched(self, store: BaseStore) -> None:
        store.put(
            ("docs",),
            "a",
            {"title": "volcano eruption report", "text": "plain words"},
            index=["title"],
        )
        store.put(("docs",), "b", {"title": "nothing here", "text": "grocery list apples"})
        hits = store.search(("docs",), query="volcano eruption", limit=2)
        assert hits[0].key == "a"
        hits = store.search(("docs",), query="grocery apples", limit=2)
        assert hits[0].key == "b"

    def test_unindexed_items_come_after_ranked_ones(self, store: BaseStore) -> None:
        store.put(("docs",), "ranked", {"text": "solar panels on the roof"})
        store.put(("docs",), "plain", {"text": "solar panels on the roof"}, index=False)
        assert sorted(_keys(store.search(("docs",)))) == ["plain", "ranked"]
        hits = store.search(("docs",), query="solar panels", limit=5)
        assert [(h.key, h.score is None) for h in hits] == [("ranked", False), ("plain", True)]

    def test_list_namespaces(self, store: BaseStore) -> None:
        for ns in [
            ("a", "b", "c"),
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
            ("a", "b", "f"),
            ("a", "c", "f"),
            ("x", "v1"),
        ]:
            store.put(ns, "k", {"text": "t"})
        assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
            ("a", "b", "c"),
            ("a", "b", "d"),
            ("a", "b", "f"),
        ]
        assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
        assert store.list_namespaces(prefix=("a",), suffix=("d", "*")) == [
            ("a", "b", "d", "e"),
            ("a", "b", "d", "i"),
        ]
        assert store.list_namespaces(max_depth=1) == [("a",), ("x",)]
        everything = store.list_namespaces()
        assert everything == sorted(everything) and len(everything) == 6
        assert store.list_namespaces(limit=2, offset=1) == everything[1:3]

    def test_batch_answers_in_order_and_reads_before_writes(self, store: BaseStore) -> None:
        store.put(("u",), "old", {"text": "before"})
        results = store.batch(
            [
                PutOp(("u",), "new", {"text": "made in the batch"}),
                GetOp(("u",), "new"),
                GetOp(("u",), "old"),
                PutOp(("u",), "old", None),
                SearchOp(("u",)),
                ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("u",)),)),
            ]
        )
        assert results[0] is None and results[3] is None
        assert results[1] is None  # the batch's own write is not seen by its reads
        assert results[2].value == {"text": "before"}
        assert _keys(results[4]) == ["old"]
        assert results[5] == [("u",)]
        assert store.get(("u",), "old") is None
        assert store.get(("u",), "new").value == {"text": "made in the batch"}

    def test_last_write_of_a_key_in_a_batch_wins(self, store: BaseStore) -> None:
        store.batch([PutOp(("u",), "k", {"text": "one"}), PutOp(("u",), "k", {"text": "two"})])
        assert store.get(("u",), "k").value == {"text": "two"}
        store.batch([PutOp(("u",), "k", {"text": "three"}), PutOp(("u",), "k", None)])
        assert store.get(("u",), "k") is None

    def test_async_methods(self, store: BaseStore) -> None:
        async def run() -> None:
            await store.aput(("alice", "a"), "k", {"text": "async tea"})
            item = await store.aget(("alice", "a"), "k")
            assert item is not None and item.value == {"text": "async tea"}
            hits = await store.asearch(("alice",), query="tea")
            assert _keys(hits) == ["k"]
            assert await store.alist_namespaces() == [("alice", "a")]
            got = await store.abatch([GetOp(("alice", "a"), "k"), GetOp(("alice", "a"), "x")])
            assert got[0] is not None and got[1] is None
            await store.adelete(("alice", "a"), "k")
            assert await store.aget(("alice", "a"), "k") is None

        asyncio.run(run())

    @pytest.mark.parametrize(
        "namespace", [("a.b",), ("alice", ""), ("alice", 3)], ids=["period", "empty", "not-str"]
    )
    def test_bad_namespace_labels(self, store: BaseStore, namespace: Any) -> None:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.get(namespace, "k")
        with pytest.raises(InvalidNamespaceError):
            store.search(namespace)

    def test_unwritable_namespaces_and_ttl(self, store: BaseStore) -> None:
        with pytest.raises(InvalidNamespaceError):
            store.put((), "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.put(("langgraph", "x"), "k", {"text": "x"})
        with pytest.raises(NotImplementedError):
            store.put(("alice",), "k", {"text": "x"}, ttl=5)


# -- mnemolayer specifics -----------------------------------------------------------------


@pytest.fixture
def mstore(mem: Memory) -> MnemolayerStore:
    return MnemolayerStore(mem, index={"fields": FIELDS})


def test_items_are_memories_of_the_first_label(mem: Memory, mstore: MnemolayerStore) -> None:
    mstore.put(("alice", "notes"), "n1", {"text": "I keep bees on the balcony", "n": 1})
    hits = mem.search("bees on the balcony", user_id="alice")
    assert [h.content for h in hits] == ["I keep bees on the balcony"]
    meta = hits[0].memory.metadata
    assert meta["langgraph_namespace"] == ["alice", "notes"]
    assert meta["langgraph_key"] == "n1"
    assert json.loads(meta["langgraph_value"]) == {"text": "I keep bees on the balcony", "n": 1}
    assert mem.search("bees", user_id="notes") == []


def test_user_level_picks_another_label(mem: Memory) -> None:
    store = MnemolayerStore(mem, index={"fields": FIELDS}, user_level=1)
    store.put(("memories", "alice"), "k", {"text": "alice rides a red bicycle"})
    store.put(("memories", "bob"), "k", {"text": "bob rides a blue scooter"})
    assert [h.content for h in mem.search("rides", user_id="alice")] == [
        "alice rides a red bicycle"
    ]
    assert sorted(i.namespace[1] for i in store.search(("memories",), query="rides")) == [
        "alice",
        "bob",
    ]
    with pytest.raises(InvalidNamespaceError, match="user_level"):
        store.put(("memories",), "k", {"text": "no user label"})


def test_batch_checks_labels_too(mstore: MnemolayerStore) -> None:
    # BaseStore's methods check labels; ops handed to batch() directly skip them, and
    # langgraph.store.base asks stores to check them there as well (InMemoryStore does not).
    for op in (GetOp(("a.b",), "k"), SearchOp(("",)), PutOp(("alice", "x.y"), "k", {"t": 1})):
        with pytest.raises(InvalidNamespaceError):
            mstore.batch([op])
    assert mstore.list_namespaces() == []


def test_a_namespace_without_items_is_not_listed(mstore: MnemolayerStore) -> None:
    # InMemoryStore keeps listing a namespace whose items were all deleted; LangGraph's
    # SQL stores, like this one, list the namespaces that hold items.
    mstore.put(("x", "v1"), "k", {"text": "t"})
    mstore.put(("x", "v2"), "k", {"text": "t"})
    mstore.delete(("x", "v1"), "k")
    assert mstore.list_namespaces() == [("x", "v2")]


def test_same_text_under_two_keys_stays_two_items(mem: Memory, mstore: MnemolayerStore) -> None:
    mstore.put(("alice",), "a", {"text": "same words"})
    mstore.put(("alice",), "b", {"text": "same words"})
    mstore.delete(("alice",), "a")
    assert mstore.get(("alice",), "b") is not None
    assert [r.content for r in mem.list(user_id="alice").items] == ["same words"]


def test_second_put_updates_the_record_and_keeps_history(
    mem: Memory, mstore: MnemolayerStore, clock: Any
) -> None:
    mstore.put(("alice",), "k", {"text": "lives in Lisbon"})
    first = mstore.get(("alice",), "k")
    clock.advance(minutes=5)
    mstore.put(("alice",), "k", {"text": "lives in Porto"})
    second = mstore.get(("alice",), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    (record,) = mem.list(user_id="alice").items
    assert record.content == "lives in Porto"
    assert [e.event for e in mem.history(record.id)] == ["ADD", "UPDATE"]


def test_items_persist_in_the_file(db_path: Path, mem: Memory, mstore: MnemolayerStore) -> None:
    mstore.put(("alice", "notes"), "n", {"text": "kept on disk"})
    mem.close()
    with Memory(db_path, embedder="hashing", extractor=None) as again:
        item = MnemolayerStore(again).get(("alice", "notes"), "n")
        assert item is not None and item.value == {"text": "kept on disk"}


def test_facts_are_mined_with_the_user_role(smem: Memory) -> None:
    store = MnemolayerStore(smem, index={"fields": FIELDS})
    store.put(("alice", "chat"), "m1", {"text": "I live in Lisbon."})
    assert ("lives_in", "Lisbon") in {(f.predicate, f.object) for f in smem.facts(user_id="alice")}
    # The fact's own sentence record is not an item: one item, found once.
    assert _keys(store.search(("alice",))) == ["m1"]
    assert _keys(store.search(("alice",), query="where does she live? Lisbon")) == ["m1"]
    quiet = MnemolayerStore(smem, index={"fields": FIELDS}, role="assistant")
    quiet.put(("bob", "chat"), "m1", {"text": "I live in Madrid."})
    assert smem.facts(user_id="bob") == []


def test_whole_value_is_embedded_by_default(mem: Memory) -> None:
    store = MnemolayerStore(mem)
    store.put(("alice",), "k", {"city": "Reykjavik", "why": "northern lights"})
    (record,) = mem.list(user_id="alice").items
    assert json.loads(record.content) == {"city": "Reykjavik", "why": "northern lights"}
    assert store.search(("alice",), query="Reykjavik northern lights")[0].key == "k"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"index": {"dims": 3, "fields": ["text"]}}, "index.dims"),
        ({"index": {"fields": "text"}}, "index.fields"),
        ({"user_level": -1}, "user_level"),
        ({"role": " "}, "role"),
    ],
)
def test_bad_settings(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        MnemolayerStore(mem, **kwargs)
    assert err.value.field == field


def test_bad_values_and_filters(mstore: MnemolayerStore) -> None:
    with pytest.raises(ValidationError) as err:
        mstore.batch([PutOp(("alice",), "ok", {"text": "fine"}), PutOp((" ",), "k", {"t": 1})])
    assert err.value.field == "namespace[0]"
    assert mstore.get(("alice",), "ok") is None  # nothing of the batch was written
    with pytest.raises(ValidationError) as err:
        mstore.put(("alice",), "k", {"when": object()})
    assert err.value.field == "value"
    with pytest.raises(ValidationError):
        mstore.put(("alice",), "k", {"text": "x" * 70_000})  # over mnemolayer's 64 KiB
    assert mstore.get(("alice",), "k") is None
    with pytest.raises(ValidationError) as err:
        mstore.search(("alice",), filter={"price": {"$between": [1, 2]}})
    assert err.value.field == "filter.price.$between"


def test_filter_keeps_paging_past_nonmatching_hits(mstore: MnemolayerStore) -> None:
    for n in range(60):
        mstore.put(("alice",), f"k{n}", {"text": f"garden note {n}", "rare": n % 20 == 0})
    hits = mstore.search(("alice",), query="garden note", filter={"rare": True}, limit=5)
    assert sorted(_keys(hits)) == ["k0", "k20", "k40"]


class State(TypedDict):
    user: str
    question: str
    answer: str


def test_in_a_langgraph_graph(mstore: MnemolayerStore) -> None:
    from langgraph.config import get_store
    from langgraph.graph import END, START, StateGraph

    def remember(state: State) -> dict[str, Any]:
        get_store().put((state["user"], "facts"), "home", {"text": "home town is Braga"})
        return {}

    def recall(state: State) -> dict[str, Any]:
        hits = get_store().search((state["user"],), query=state["question"], limit=1)
        return {"answer": hits[0].value["text"] if hits else ""}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=mstore)
    out = app.invoke({"user": "alice", "question": "what is the home town?", "answer": ""})
    assert out["answer"] == "home town is Braga"
    assert mstore.get(("alice", "facts"), "home") is not None


def test_items_never_fade_out_of_the_store(
    mem: Memory, mstore: MnemolayerStore, clock: Any
) -> None:
    # A low-importance item untouched for years: the lifecycle keeps it (items are pinned).
    mstore.put(("alice", "notes"), "ok", {"text": "ok"})
    clock.advance(days=3650)
    mem.maintain(user_id="alice")
    item = mstore.get(("alice", "notes"), "ok")
    assert item is not None and item.value == {"text": "ok"}
    assert [i.key for i in mstore.search(("alice",), query="ok")] == ["ok"]
