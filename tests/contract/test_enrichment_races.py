"""What is derived from a memory's text after a slow model call is written only onto that
same text: a model that answers after the memory was edited (by another ``Memory`` on the
same store, as another process would) has its result discarded, never written over the
edit; and two passes completing the same pending work write it once.

The slow models block on an event while the test edits the memory: the LLM extractor
over a :class:`~mnemolayer.testing.ScriptedChatModel` whose answer waits, and a hashing
embedder whose call waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemolayer import Memory
from mnemolayer.extract.llm import LLMExtractor
from mnemolayer.retrieval.index import embed_records
from mnemolayer.testing import HashingEmbedder, ScriptedChatModel
from tests.helpers import EndpointEmbedder, EndpointExtractor, Gate, open_gates

PORTO = '{"facts": [{"subject": "user", "predicate": "lives_in", "object": "Porto"}]}'
BRAGA = '{"facts": [{"subject": "user", "predicate": "lives_in", "object": "Braga"}]}'
WAIT_S = 20.0


@pytest.fixture(autouse=True)
def _gates_open_afterwards() -> Iterator[None]:
    """A test that fails while a model waits at a gate does not leave its thread hanging."""
    yield
    open_gates()


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # re-raised by the test after join
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _joined(thread: threading.Thread, out: dict[str, Any]) -> Any:
    thread.join(WAIT_S)
    assert not thread.is_alive()
    if "error" in out:
        raise out["error"]
    return out["result"]


def _keyword(mem: Memory, query: str) -> list[str]:
    hits = mem.search(query, user_id="u1", mode="keyword", kinds=["episodic"])
    return [h.memory.content for h in hits]


def _has_vectors_of(mem: Memory, memory_id: str) -> bool:
    """Whether the store's vectors of the user (one record) are those of its current text."""
    _rowids, matrix = mem.store.load_vectors("u1", 256)
    [expected] = embed_records(HashingEmbedder(), [mem.get(memory_id)])
    return matrix.shape == expected.shape and bool(np.allclose(matrix, expected))


@pytest.mark.parametrize("editor_extractor", ["none", "rules"])
def test_extract_facts_waiting_on_the_llm_while_the_memory_is_updated_writes_no_stale_fact(
    db_path: Path, clock: Any, editor_extractor: str
) -> None:
    gate = Gate()
    gate.arm()

    def slow_porto(messages: list[Any]) -> str:
        gate.pass_through()
        return PORTO

    chat = ScriptedChatModel([slow_porto, BRAGA])
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as first:
        [rec] = first.add("I live in Porto", user_id="u1")
    miner = Memory(
        db_path, embedder="hashing", clock=clock, extractor=LLMExtractor(chat.settings, chat=chat)
    )
    editor = Memory(db_path, embedder="hashing", clock=clock, extractor=editor_extractor)
    with miner, editor:
        thread, out = _in_thread(lambda: miner.extract_facts(user_id="u1"))
        assert gate.entered.wait(WAIT_S)  # the miner read "Porto" and waits on the model
        editor.update(rec.id, content="I live in Braga")
        gate.open()
        _joined(thread, out)

        facts = editor.facts(user_id="u1", include_history=True)
        assert [(f.predicate, f.object, f.valid_to) for f in facts] == [("lives_in", "Braga", None)]
        assert _keyword(editor, "Porto") == []  # no stale term points at the Braga text
        assert _keyword(editor, "Braga") == ["I live in Braga"]
        assert [r.content for r in editor.list(user_id="u1", kinds=["semantic"]).items] == [
            "The user lives in Braga"
        ]
        # Mined once more, from the new words, only when the edit left them unmined.
        asked_about = [r["messages"][-1]["content"] for r in chat.requests]
        if editor_extractor == "none":
            assert ["Porto" in a for a in asked_about] == [True, False]
            assert "Braga" in asked_about[1]
        else:
            assert len(asked_about) == 1


def test_reindex_embedding_while_the_memory_is_updated_keeps_the_update(
    db_path: Path, clock: Any
) -> None:
    slow = EndpointEmbedder(gate=Gate())
    with Memory(db_path, embedder=slow, clock=clock, extractor=None) as indexer:
        [rec] = indexer.add("I live in Porto", user_id="u1")
        with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as editor:
            slow.gate.arm()
            thread, out = _in_thread(indexer.reindex)
            assert slow.gate.entered.wait(WAIT_S)  # it read "Porto" and waits on the model
            editor.update(rec.id, content="I live in Braga")
            slow.gate.open()
            assert _joined(thread, out) == 1
            assert editor.get(rec.id).content == "I live in Braga"  # not written back
            assert _has_vectors_of(editor, rec.id)
            assert _keyword(editor, "Porto") == [] and _keyword(editor, "Braga") != []


def test_maintain_embedding_a_pending_memory_while_it_is_updated_keeps_the_update(
    db_path: Path, clock: Any
) -> None:
    slow = EndpointEmbedder(gate=Gate())
    with Memory(db_path, embedder=slow, clock=clock, extractor=None) as mem:
        slow.down = True
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert rec.pending == ["embedding"]
        slow.down = False
        with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as editor:
            slow.gate.arm()
            thread, out = _in_thread(lambda: mem.maintain(user_id="u1"))
            assert slow.gate.entered.wait(WAIT_S)
            editor.update(rec.id, content="I live in Braga")  # embeds the new words itself
            slow.gate.open()
            assert _joined(thread, out).totals["embedded"] == 0  # its result was stale
            assert editor.get(rec.id).pending == []
            assert _has_vectors_of(editor, rec.id)
            assert editor.stats(user_id="u1")["vectors"] == 1


@pytest.mark.parametrize("kind", ["embedding", "extraction"])
def test_two_passes_completing_the_same_pending_work_write_it_once(
    db_path: Path, clock: Any, kind: str
) -> None:
    slow_embedder, slow_extractor = EndpointEmbedder(gate=Gate()), EndpointExtractor(gate=Gate())
    with Memory(db_path, embedder=slow_embedder, clock=clock, extractor=slow_extractor) as first:
        slow_embedder.down, slow_extractor.down = kind == "embedding", kind == "extraction"
        [rec] = first.add("I live in Porto", user_id="u1")
        assert rec.pending == [kind]
        slow_embedder.down = slow_extractor.down = False
        gate = slow_embedder.gate if kind == "embedding" else slow_extractor.gate
        with Memory(db_path, embedder="hashing", clock=clock) as second:
            gate.arm()
            thread, out = _in_thread(lambda: first.maintain(user_id="u1"))
            assert gate.entered.wait(WAIT_S)  # the first pass read the record, and waits
            done = second.maintain(user_id="u1").totals
            # Embedding: the message and its fact's sentence; extraction: the message.
            assert (done["embedded"], done["extracted"]) == (
                (2, 0) if kind == "embedding" else (0, 1)
            )
            gate.open()
            report = _joined(thread, out)
            assert (report.totals["embedded"], report.totals["extracted"]) == (0, 0)

            assert [(f.predicate, f.object) for f in second.facts(user_id="u1")] == [
                ("lives_in", "Porto")
            ]
            stats = second.stats(user_id="u1")
            assert stats["memories"] == 2 and stats["vectors"] == 2  # message and sentence
            assert stats["pending"] == {"embedding": 0, "extraction": 0}
