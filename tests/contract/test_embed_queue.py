"""The background embedding queue (``Memory(embed_queue=True)``): ``add`` returns once the
words are stored, keyword search finds them at once, the worker embeds pending records in
batches across calls, a record left pending at close is embedded after the next open, and
a vector made from words edited meanwhile is discarded.

The worker's model is a hashing embedder behind a gate (:class:`tests.helpers.Gate`): a
test holds the worker inside its model call while it checks what is there before the
vectors, or edits the memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from mnemolayer import Memory, ValidationError
from mnemolayer.aio import AsyncMemory
from mnemolayer.layers.episodic.queue import EmbedQueueConfig
from mnemolayer.retrieval.index import embed_records
from mnemolayer.testing import HashingEmbedder
from tests.helpers import GATE_WAIT_S, EndpointEmbedder, Gate, open_gates

#: Quick retries, and a short wait at close: the tests hold the model on purpose.
FAST = EmbedQueueConfig(retry_s=0.05, close_wait_s=0.2)


@pytest.fixture(autouse=True)
def _gates_open_afterwards() -> Iterator[None]:
    yield
    open_gates()


def _gated() -> EndpointEmbedder:
    embedder = EndpointEmbedder(gate=Gate())
    embedder.gate.arm()  # type: ignore[union-attr]
    return embedder


def _ids(mem: Memory, query: str, mode: str, user: str = "u1") -> list[str]:
    return [h.memory.id for h in mem.search(query, user_id=user, mode=mode)]


def _vectors_match(mem: Memory, memory_id: str, user: str = "u1") -> bool:
    """Whether the user's only vectors are those of the record's current text."""
    _rowids, matrix = mem.store.load_vectors(user, 256)
    [expected] = embed_records(HashingEmbedder(), [mem.get(memory_id)])
    return matrix.shape == expected.shape and bool(np.allclose(matrix, expected))


def test_add_returns_before_the_vector_keyword_search_finds_it_and_the_vector_arrives(
    db_path: Path, clock: Any
) -> None:
    embedder = _gated()
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None, embed_queue=FAST) as mem:
        [rec] = mem.add("The spare key is under the blue flowerpot", user_id="u1")
        assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
        # The worker holds it inside the model call: stored, pending, found by keyword.
        assert rec.pending == ["embedding"] and mem.get(rec.id).pending == ["embedding"]
        assert mem.pending() == {"embedding": 1, "extraction": 0}
        assert (
            mem.pending(user_id="u1") == mem.pending()
            and mem.pending(user_id="u2")["embedding"] == 0
        )
        assert mem.stats(user_id="u1")["vectors"] == 0
        assert _ids(mem, "flowerpot", "keyword") == [rec.id]
        assert _ids(mem, "blue flowerpot key", "hybrid") == [rec.id]
        embedder.gate.open()  # type: ignore[union-attr]
        assert mem.flush() == 0
        assert mem.get(rec.id).pending == [] and mem.pending()["embedding"] == 0
        hits = mem.search("where is the spare key", user_id="u1", mode="vector")
        assert [h.memory.id for h in hits] == [rec.id] and hits[0].scores["vector"] > 0.2
        assert _vectors_match(mem, rec.id)


def test_single_message_adds_are_embedded_together_in_batches(db_path: Path, clock: Any) -> None:
    embedder = _gated()
    config = EmbedQueueConfig(batch=8, retry_s=0.05)
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None, embed_queue=config) as mem:
        mem.add("first message, held in the model", user_id="u1")
        assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
        added = [
            mem.add(f"message number {i} about the garden", user_id=f"u{i % 3}")[0]
            for i in range(20)
        ]
        embedder.gate.open()  # type: ignore[union-attr]
        assert mem.flush() == 0
        # The first call had the first message; the 20 that came meanwhile, of three
        # users, went to the model 8 at a time, oldest first.
        assert embedder.calls == [1, 8, 8, 4]
        assert all(mem.get(r.id).pending == [] for r in added)
        assert sum(mem.stats(user_id=f"u{i}")["vectors"] for i in range(3)) == 21


def test_facts_sentence_records_wait_in_the_queue_with_their_message(
    db_path: Path, clock: Any
) -> None:
    embedder = EndpointEmbedder()
    with Memory(db_path, embedder=embedder, clock=clock, embed_queue=FAST) as mem:  # rules
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert rec.pending == ["embedding"]
        [fact] = mem.facts(user_id="u1")
        assert mem.flush() == 0
        assert mem.stats(user_id="u1")["vectors"] == 2  # the message and the fact's sentence
        assert fact.memory_id is not None and mem.get(fact.memory_id).pending == []
        assert embedder.calls == [2]


def test_a_record_left_pending_at_close_is_embedded_after_reopening(
    db_path: Path, clock: Any
) -> None:
    embedder = _gated()
    mem = Memory(db_path, embedder=embedder, clock=clock, extractor=None, embed_queue=FAST)
    [rec] = mem.add("The boat is moored at pier seven", user_id="u1")
    assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
    mem.close()  # the worker is still inside the model call: nothing more is written
    embedder.gate.open()  # type: ignore[union-attr]
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as plain:
        # Durable: stored, keyword-searchable, still marked in the store.
        assert plain.get(rec.id).pending == ["embedding"]
        assert plain.pending()["embedding"] == 1
        assert _ids(plain, "pier seven", "keyword") == [rec.id]
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, embed_queue=FAST
    ) as again:
        assert again.flush() == 0  # the new worker's first look finds it
        assert again.get(rec.id).pending == []
        assert _vectors_match(again, rec.id)


def test_flush_without_the_queue_embeds_what_an_outage_left_pending(
    db_path: Path, clock: Any
) -> None:
    embedder = EndpointEmbedder(down=True)
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None) as mem:
        [rec] = mem.add("The boat is moored at pier seven", user_id="u1")
        assert rec.pending == ["embedding"]
        assert mem.flush() == 1  # still down: it stays pending, nothing raised
        embedder.down = False
        assert mem.flush() == 0
        assert _vectors_match(mem, rec.id)


def test_a_vector_of_words_edited_meanwhile_is_not_written(db_path: Path, clock: Any) -> None:
    embedder = _gated()
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None, embed_queue=FAST) as mem:
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
        # The worker read "Porto" and waits in the model; another process edits it.
        with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as editor:
            editor.update(rec.id, content="I live in Braga")  # embeds the new words itself
            embedder.gate.open()  # type: ignore[union-attr]
            assert mem.flush() == 0
            assert editor.get(rec.id).content == "I live in Braga"
            assert _vectors_match(editor, rec.id)  # Braga's vector, not Porto's
            assert editor.stats(user_id="u1")["vectors"] == 1


def test_an_edit_in_queue_mode_is_queued_and_the_stale_vector_discarded(
    db_path: Path, clock: Any
) -> None:
    embedder = _gated()
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None, embed_queue=FAST) as mem:
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert embedder.gate.entered.wait(GATE_WAIT_S)  # type: ignore[union-attr]
        edited = mem.update(rec.id, content="I live in Braga")
        assert edited.pending == ["embedding"]
        embedder.gate.open()  # type: ignore[union-attr]
        assert mem.flush() == 0
        assert embedder.calls == [1, 1]  # Porto (discarded), then Braga
        assert mem.get(rec.id).pending == [] and _vectors_match(mem, rec.id)


class _WrongDimension(HashingEmbedder):
    def embed(self, texts: Any, kind: Any = "document") -> np.ndarray:
        return np.ones((len(texts), self.dim + 1), dtype=np.float32)


def test_an_embedder_answering_wrongly_leaves_the_records_pending(
    db_path: Path, clock: Any
) -> None:
    with Memory(
        db_path, embedder=_WrongDimension(), clock=clock, extractor=None, embed_queue=FAST
    ) as mem:
        [rec] = mem.add("The boat is moored at pier seven", user_id="u1")
        assert mem.flush() == 1  # logged by the worker, never raised into add or flush
        assert mem.get(rec.id).pending == ["embedding"]
        assert _ids(mem, "pier seven", "keyword") == [rec.id]


def test_the_async_facade_queues_and_flushes(db_path: Path, clock: Any) -> None:
    async def run() -> tuple[Any, int, dict[str, int], Any]:
        async with AsyncMemory(
            db_path, embedder="hashing", clock=clock, extractor=None, embed_queue=True
        ) as mem:
            [rec] = await mem.add("Dinner with Maria on Friday", user_id="u1")
            left = await mem.flush(timeout_s=30)
            return rec, left, await mem.pending(user_id="u1"), await mem.get(rec.id)

    rec, left, pending, stored = anyio.run(run)
    assert rec.pending == ["embedding"]
    assert left == 0 and pending["embedding"] == 0 and stored.pending == []


@pytest.mark.parametrize("bad", ["yes", 1, {"batch": 8}])
def test_a_bad_embed_queue_argument_is_refused_before_anything_is_opened(
    db_path: Path, bad: Any
) -> None:
    with pytest.raises(ValidationError) as info:
        Memory(db_path, embedder="hashing", embed_queue=bad)
    assert info.value.field == "embed_queue"


@pytest.mark.parametrize("bad", [0, -1.5, "10", True])
def test_flush_refuses_a_bad_timeout(mem: Memory, bad: Any) -> None:
    with pytest.raises(ValidationError) as info:
        mem.flush(timeout_s=bad)
    assert info.value.field == "timeout_s"
