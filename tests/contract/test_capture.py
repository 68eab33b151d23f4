"""Capture does not depend on enrichment: with the embedder or the extractor failing,
``add`` and ``update`` keep the user's words (keyword-searchable at once), mark them
pending, and ``maintain`` completes them once the model is back, without duplicates.

The models that fail stand in for endpoints (an embedding server, an LLM): a hashing
embedder that raises while ``down``, an extractor that raises while ``down``, and the
LLM extractor over a :class:`~mnemolayer.testing.ScriptedChatModel` that times out or
answers HTTP 429.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import openai
import pytest

from mnemolayer import EmbedderError, Memory
from mnemolayer.extract.llm import LLMExtractor
from mnemolayer.testing import HashingEmbedder, ScriptedChatModel
from tests.helpers import EndpointEmbedder, EndpointExtractor, all_records

NONE = {"embedding": 0, "extraction": 0}


def _keyword(mem: Memory, query: str, user: str = "u1") -> list[str]:
    return [h.memory.content for h in mem.search(query, user_id=user, mode="keyword")]


def test_add_with_the_embedder_down_stores_the_words_and_maintain_embeds_them(
    db_path: Path, clock: Any
) -> None:
    embedder = EndpointEmbedder(down=True)
    with Memory(db_path, embedder=embedder, clock=clock, extractor=None) as mem:
        [rec] = mem.add("The spare key is under the blue flowerpot", user_id="u1")
        assert rec.pending == ["embedding"]
        assert mem.get(rec.id).pending == ["embedding"]
        stats = mem.stats(user_id="u1")
        assert stats["pending"] == {"embedding": 1, "extraction": 0}
        assert stats["memories"] == 1 and stats["vectors"] == 0
        assert _keyword(mem, "flowerpot") == [rec.content]
        # A hybrid search goes on with keywords while the embedder is down.
        assert [h.memory.id for h in mem.search("blue flowerpot key", user_id="u1")] == [rec.id]
        with pytest.raises(ConnectionError):
            mem.search("flowerpot", user_id="u1", mode="vector")
        # The same words again: the stored record, not a second one.
        assert [
            r.id for r in mem.add("The spare key is under the blue flowerpot", user_id="u1")
        ] == [rec.id]

        # Still down: maintenance leaves it pending and does the rest of its pass.
        assert mem.maintain().totals["embedded"] == 0
        assert mem.stats(user_id="u1")["pending"] == {"embedding": 1, "extraction": 0}

        embedder.down = False
        report = mem.maintain()
        assert report.totals["embedded"] == 1 and report.users[0].embedded == 1
        assert mem.get(rec.id).pending == []
        stats = mem.stats(user_id="u1")
        assert stats["pending"] == NONE
        assert stats["memories"] == 1 and stats["vectors"] == 1
        hits = mem.search("where is the spare key", user_id="u1", mode="vector")
        assert [h.memory.id for h in hits] == [rec.id] and hits[0].scores["vector"] > 0.2
        assert mem.maintain().totals["embedded"] == 0  # nothing left: a second pass is idle
        assert [r.id for r in all_records(mem, "u1")] == [rec.id]


def test_facts_extracted_while_the_embedder_is_down_wait_with_their_message(
    db_path: Path, clock: Any
) -> None:
    embedder = EndpointEmbedder(down=True)
    with Memory(db_path, embedder=embedder, clock=clock) as mem:  # rules extraction
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert rec.pending == ["embedding"]
        [fact] = mem.facts(user_id="u1")
        assert (fact.predicate, fact.object) == ("lives_in", "Porto")
        assert mem.get(fact.memory_id).pending == ["embedding"]  # its sentence record too
        assert mem.stats(user_id="u1")["pending"] == {"embedding": 2, "extraction": 0}
        assert "I live in Porto" in [
            h.memory.content for h in mem.search("Porto", user_id="u1", kinds=["episodic"])
        ]

        embedder.down = False
        assert mem.maintain().totals["embedded"] == 2
        stats = mem.stats(user_id="u1")
        assert stats["pending"] == NONE and stats["vectors"] == 2 and stats["memories"] == 2
        assert [(f.predicate, f.object) for f in mem.facts(user_id="u1")] == [("lives_in", "Porto")]
        hits = mem.search("Porto", user_id="u1", mode="vector", kinds=["semantic"])
        assert [h.memory.id for h in hits] == [fact.memory_id]


def test_add_with_the_extractor_down_stores_the_message_and_maintain_mines_it(
    db_path: Path, clock: Any
) -> None:
    extractor = EndpointExtractor(down=True)
    with Memory(db_path, embedder="hashing", clock=clock, extractor=extractor) as mem:
        [rec, reply] = mem.add(
            [
                {"role": "user", "content": "I live in Porto"},
                {"role": "assistant", "content": "Porto is lovely in spring"},
            ],
            user_id="u1",
        )
        assert rec.pending == ["extraction"] and reply.pending == []  # replies are not mined
        assert mem.facts(user_id="u1") == []
        assert mem.stats(user_id="u1")["pending"] == {"embedding": 0, "extraction": 1}
        assert set(_keyword(mem, "Porto")) == {rec.content, reply.content}
        assert mem.maintain().totals["extracted"] == 0  # still down

        extractor.down = False
        report = mem.maintain()
        assert report.totals["extracted"] == 1
        assert mem.get(rec.id).pending == []
        assert mem.stats(user_id="u1")["pending"] == NONE
        [fact] = mem.facts(user_id="u1")
        assert (fact.predicate, fact.object, fact.source_ids) == ("lives_in", "Porto", [rec.id])
        # The message is found through its fact's sentence, as if mined when added.
        hits = mem.search(
            "The user lives in Porto", user_id="u1", mode="keyword", kinds=["episodic"]
        )
        assert hits[0].memory.id == rec.id
        assert mem.maintain().totals["extracted"] == 0
        assert mem.extract_facts() == 0  # nothing left to mine either
        assert len(mem.facts(user_id="u1", include_history=True)) == 1
        assert len(all_records(mem, "u1")) == 3  # two messages and the fact's sentence


def test_extract_facts_mines_a_message_whose_extraction_is_pending(
    db_path: Path, clock: Any
) -> None:
    extractor = EndpointExtractor(down=True)
    with Memory(db_path, embedder="hashing", clock=clock, extractor=extractor) as mem:
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert mem.extract_facts() == 0  # still down: it stays pending
        assert mem.get(rec.id).pending == ["extraction"]
        extractor.down = False
        assert mem.extract_facts() == 1
        assert mem.get(rec.id).pending == [] and mem.maintain().totals["extracted"] == 0


def test_update_with_the_models_down_stores_the_new_words_pending(
    db_path: Path, clock: Any
) -> None:
    embedder, extractor = EndpointEmbedder(down=True), EndpointExtractor(down=True)
    embedder.down = extractor.down = False
    with Memory(db_path, embedder=embedder, clock=clock, extractor=extractor) as mem:
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert mem.stats(user_id="u1")["vectors"] == 2
        embedder.down = extractor.down = True
        new = mem.update(rec.id, content="I live in Braga")
        assert new.pending == ["embedding", "extraction"]
        assert mem.facts(user_id="u1") == []  # the old words' fact went with them
        stats = mem.stats(user_id="u1")
        assert stats["vectors"] == 0 and stats["pending"] == {"embedding": 1, "extraction": 1}
        assert _keyword(mem, "Braga") == ["I live in Braga"] and _keyword(mem, "Porto") == []

        embedder.down = extractor.down = False
        report = mem.maintain()
        assert (report.totals["embedded"], report.totals["extracted"]) == (1, 1)
        assert [(f.predicate, f.object) for f in mem.facts(user_id="u1")] == [("lives_in", "Braga")]
        assert mem.stats(user_id="u1")["pending"] == NONE
        assert mem.stats(user_id="u1")["vectors"] == 2  # the message and the new fact's sentence


class TruncatingEmbedder(HashingEmbedder):
    """A misconfigured model: it answers, with half of its dimensions."""

    __test__ = False

    def embed(self, texts: Sequence[str], kind: Any = "document") -> np.ndarray:
        return super().embed(texts, kind)[:, :128]


def test_an_embedder_that_answers_wrongly_still_fails_the_add_and_the_search(
    db_path: Path, clock: Any
) -> None:
    # Only an outage defers: a wrong answer is a misconfiguration a retry would not mend.
    with Memory(db_path, embedder=TruncatingEmbedder(), clock=clock) as mem:
        with pytest.raises(EmbedderError, match="dimension 128"):
            mem.add("I live in Porto", user_id="u1")
        assert mem.stats(user_id="u1")["memories"] == 0
        with pytest.raises(EmbedderError, match="dimension 128"):
            mem.search("Porto", user_id="u1")  # hybrid: not taken for an outage


def _rate_limited() -> openai.RateLimitError:
    request = httpx.Request("POST", "http://scripted.invalid/v1/chat/completions")
    response = httpx.Response(429, request=request, json={"error": {"message": "slow down"}})
    return openai.RateLimitError("slow down", response=response, body=None)


@pytest.mark.parametrize("failure", ["timeout", "429"])
def test_an_llm_extractor_timing_out_or_refused_keeps_the_memory_with_rule_facts(
    db_path: Path, clock: Any, failure: str
) -> None:
    chat = ScriptedChatModel(
        [TimeoutError("no answer in time") if failure == "timeout" else _rate_limited()]
    )
    extractor = LLMExtractor(chat.settings, chat=chat, budget_s=2.0)
    with Memory(db_path, embedder="hashing", clock=clock, extractor=extractor) as mem:
        started = time.monotonic()
        [rec] = mem.add("I live in Porto", user_id="u1")
        assert time.monotonic() - started < 2.0  # within the extractor's budget
        assert len(chat.requests) == 1 and extractor.last_source == "fallback"
        assert rec.pending == [] and mem.stats(user_id="u1")["pending"] == NONE
        assert _keyword(mem, "Porto")[0] in {"I live in Porto", "The user lives in Porto"}
        assert [(f.predicate, f.object) for f in mem.facts(user_id="u1")] == [("lives_in", "Porto")]
