"""A store embedded through an OpenAI-compatible ``/v1/embeddings`` endpoint
(``embedder="openai:MODEL"``) on both engines: the same model behind the endpoint recalls
exactly what it recalls in process (the provider path is faithful), the store records the
provider's model and refuses another until ``reindex``, and an endpoint that goes away
leaves adds stored and pending rather than lost (issue 18, item 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.embed.http import BASE_URL_ENV
from mnemolayer.errors import EmbedderUnavailableError, EmbeddingModelMismatchError
from mnemolayer.testing import HashingEmbedder
from tests.fake_model_server import FakeEmbeddingsServer

MESSAGES = [
    "I live in Lisbon and work as a nurse.",
    "My sister Anna works at Google in Zurich.",
    "I love green tea, especially sencha.",
    "Last weekend we went hiking in the Alps.",
    "My dog is called Biscuit and he is a beagle.",
    "I am learning to play the cello.",
]
QUERIES = ["what tea do I like", "where does my sister work", "pets", "music lessons"]


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbeddingsServer]:
    with FakeEmbeddingsServer() as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        yield server


def _ranking(mem: Memory) -> list[list[tuple[str, float]]]:
    return [
        [
            (h.memory.content, round(h.score, 6))
            for h in mem.search(q, user_id="u", limit=3, kinds=["episodic"])
        ]
        for q in QUERIES
    ]


def test_recall_through_the_endpoint_equals_the_same_model_in_process(
    endpoint: FakeEmbeddingsServer, new_db: Callable[[str], Any]
) -> None:
    with Memory(new_db("local"), embedder="hashing") as local:
        local.add(MESSAGES, user_id="u")
        expected = _ranking(local)
    with Memory(new_db("remote"), embedder="openai:hash-model") as remote:
        remote.add(MESSAGES, user_id="u")
        assert _ranking(remote) == expected
        assert remote.stats(user_id="u")["embedding_model"] == "openai:hash-model"
    assert any(len(r["body"]["input"]) > 1 for r in endpoint.requests), "adds are batched"


def test_the_store_keeps_its_provider_model_until_reindex(
    endpoint: FakeEmbeddingsServer, db_path: Path
) -> None:
    with Memory(db_path, embedder="openai:hash-model") as mem:
        mem.add(MESSAGES[:3], user_id="u")
    with pytest.raises(EmbeddingModelMismatchError, match="openai:hash-model"):
        Memory(db_path, embedder="hashing")
    with Memory(db_path, embedder="hashing", check_embedder=False) as mem:
        assert mem.reindex() >= 3
        assert (
            mem.search("green tea", user_id="u", limit=1, kinds=["episodic"])[0].memory.content
            == MESSAGES[2]
        )
    with Memory(db_path, embedder="hashing") as mem:  # the store is the in-process model's now
        assert mem.stats(user_id="u")["embedding_model"] == HashingEmbedder().name


def test_an_endpoint_that_goes_away_leaves_adds_stored_and_pending(
    endpoint: FakeEmbeddingsServer, db_path: Path
) -> None:
    with Memory(db_path, embedder="openai:hash-model") as mem:
        mem.add(MESSAGES[:2], user_id="u")
        endpoint.script = [{"status": 503}] * 10
        [rec] = mem.add("The spare key is under the blue flowerpot.", user_id="u")
        assert rec.pending == ["embedding"]
        hits = mem.search("flowerpot", user_id="u", mode="keyword")
        assert [h.memory.id for h in hits] == [rec.id]
        endpoint.script = []
        mem.maintain(user_id="u")
        assert mem.get(rec.id).pending == []
        [top] = mem.search("where is the spare key", user_id="u", limit=1, kinds=["episodic"])
        assert top.memory.id == rec.id


def test_a_store_opens_and_keeps_working_while_its_endpoint_is_down(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeEmbeddingsServer() as server:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        with Memory(db_path, embedder="openai:hash-model") as mem:
            mem.add("I live in Lisbon.", user_id="u")
    # The server is gone (its port closed): the store's recorded dimension is used, so
    # opening makes no request; adds are kept pending, hybrid search ranks on keywords.
    with Memory(db_path, embedder="openai:hash-model") as mem:
        [rec] = mem.add("The spare key is under the blue flowerpot.", user_id="u")
        assert rec.pending == ["embedding"]
        hits = mem.search("spare key flowerpot", user_id="u", kinds=["episodic"])
        assert hits[0].memory.id == rec.id
        with pytest.raises(EmbedderUnavailableError, match=BASE_URL_ENV):
            mem.search("spare key", user_id="u", mode="vector")
