"""The CrewAI storage (src/mnemolayer/integrations/crewai.py) under CrewAI's own
``crewai.Memory`` (CrewAI 1.x, the unified memory), offline: records given their scope,
categories and importance, and recalled with ``depth="shallow"``, need no LLM; a crew's
round trip (a task's result remembered, recalled into a later crew's task prompt) runs on
a scripted ``BaseLLM`` that answers CrewAI's structured memory calls too.

crewai is not in the ``dev`` extra (it forces older mcp, openai, httpx and pydantic than
the ``dev`` extra pins, and with ``.[dev]`` pip falls back to crewai 0.134, whose memory
API is another): this module is skipped where crewai is missing, unless
``MNEMOLAYER_REQUIRE_CREWAI=1`` (the CI job that installs ``.[crewai]`` sets it).
"""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

if os.environ.get("MNEMOLAYER_REQUIRE_CREWAI") != "1":
    pytest.importorskip("crewai", reason="crewai is not installed (the crewai extra)")

from crewai import Agent, Crew, Task
from crewai import Memory as CrewMemory
from crewai.llms.base_llm import BaseLLM
from crewai.memory.analyze import ExtractedMemories, ExtractedMetadata, MemoryAnalysis
from crewai.memory.storage.backend import StorageBackend
from crewai.memory.types import MemoryRecord

from mnemolayer import Memory
from mnemolayer.errors import ValidationError
from mnemolayer.integrations.crewai import MnemolayerStorage

FACTS = [
    ("The customer Acme prefers invoices in euros.", "/crew/billing", ["billing"]),
    ("Acme's contact person is Maria Santos.", "/crew/sales", ["contacts"]),
    ("The deployment runs on Kubernetes in Frankfurt.", "/crew/ops", ["infra"]),
]


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    with Memory(tmp_path / "crew.db", embedder="hashing") as m:
        yield m


@pytest.fixture
def crew_memory(mem: Memory) -> CrewMemory:
    storage = MnemolayerStorage(mem)
    memory = CrewMemory(storage=storage, embedder=storage.embedder)
    for content, scope, categories in FACTS:
        memory.remember(content, scope=scope, categories=categories, importance=0.7)
    yield memory
    memory.close()


def test_it_is_a_crewai_storage_backend(mem: Memory) -> None:
    assert isinstance(MnemolayerStorage(mem), StorageBackend)


def test_remembered_records_are_recalled_through_crewai(crew_memory: CrewMemory) -> None:
    found = crew_memory.recall("Which currency does Acme want on invoices?", depth="shallow")
    assert found[0].record.content == FACTS[0][0]
    assert found[0].record.scope == "/crew/billing" and found[0].record.categories == ["billing"]
    only_sales = crew_memory.recall("Acme", scope="/crew/sales", depth="shallow")
    assert [m.record.content for m in only_sales] == [FACTS[1][0]]
    infra = crew_memory.recall("Acme Kubernetes", categories=["infra"], depth="shallow")
    assert [m.record.content for m in infra] == [FACTS[2][0]]


def test_records_are_mnemolayer_memories(crew_memory: CrewMemory, mem: Memory) -> None:
    hits = mem.search("Maria Santos", user_id="crewai", limit=1)
    assert hits[0].memory.content == FACTS[1][0]
    assert hits[0].memory.metadata["crewai_scope"] == "/crew/sales"
    assert hits[0].memory.importance == pytest.approx(0.7)


def test_scopes_categories_and_counts(crew_memory: CrewMemory) -> None:
    assert crew_memory.list_scopes("/") == ["/crew"]
    assert crew_memory.list_scopes("/crew") == ["/crew/billing", "/crew/ops", "/crew/sales"]
    info = crew_memory.info("/crew")
    assert info.record_count == 3 and info.categories == ["billing", "contacts", "infra"]
    assert info.child_scopes == ["/crew/billing", "/crew/ops", "/crew/sales"]
    assert info.oldest_record is not None and info.oldest_record <= info.newest_record
    assert crew_memory.list_categories("/crew/ops") == {"infra": 1}
    listed = crew_memory.list_records("/crew")
    assert [r.content for r in listed] == [f[0] for f in reversed(FACTS)]  # newest first


def test_update_forget_and_reset(crew_memory: CrewMemory, mem: Memory) -> None:
    record = crew_memory.list_records("/crew/sales")[0]
    crew_memory.update(record.id, content="Acme's contact person is now João Silva.")
    storage = crew_memory._storage
    assert storage.get_record(record.id).content == "Acme's contact person is now João Silva."
    assert len(mem.list(user_id="crewai", kinds=["episodic"]).items) == 3  # updated in place
    assert crew_memory.forget(scope="/crew/ops") == 1
    assert storage.count() == 2 and storage.count("/crew/ops") == 0
    crew_memory.reset(scope="/crew/billing")
    assert [r.scope for r in crew_memory.list_records()] == ["/crew/sales"]
    crew_memory.reset()
    assert storage.count() == 0 and mem.list(user_id="crewai", kinds=["episodic"]).items == []


def test_storage_calls_with_every_filter(mem: Memory) -> None:
    storage = MnemolayerStorage(mem, user_id="team")
    old = MemoryRecord(
        content="The old office was in Lisbon.",
        scope="/team",
        metadata={"kind": "office", "floor": 2},
        created_at=datetime(2020, 1, 1),
    )
    new = MemoryRecord(content="The new office is in Porto.", scope="/team2", source="bob")
    storage.save([old, new])
    query = storage.embedder(["office"])[0]
    got = storage.search(query, metadata_filter={"kind": "office"})
    assert [(r.id, r.metadata) for r, _ in got] == [(old.id, {"kind": "office", "floor": 2})]
    assert all(0.0 <= s <= 1.0 for _, s in storage.search(query))
    assert [r.id for r, _ in storage.search(query, scope_prefix="/team")] == [old.id]
    assert storage.search(query, min_score=1.01) == [] and storage.search(query, limit=0) == []
    again = storage.get_record(new.id)
    assert again is not None and (again.source, again.private) == ("bob", False)
    assert storage.get_record("no-such-id") is None
    assert storage.delete(older_than=datetime(2021, 1, 1)) == 1
    assert asyncio.run(storage.adelete(record_ids=[new.id])) == 1
    asyncio.run(storage.asave([old]))
    assert [r.id for r, _ in asyncio.run(storage.asearch(query))] == [old.id]
    assert storage.list_records(offset=1) == [] and storage.list_records(limit=0) == []
    assert old.created_at < datetime.utcnow() - timedelta(days=365)


def test_a_vector_from_another_embedder_is_refused(mem: Memory) -> None:
    storage = MnemolayerStorage(mem)
    with pytest.raises(ValidationError, match=r"storage\.embedder") as info:
        storage.search([0.1] * mem.embedder.dim)
    assert info.value.field == "query_embedding"
    for kwargs, field in (({"user_id": " "}, "user_id"), ({"role": "system"}, "role")):
        with pytest.raises(ValidationError) as bad:
            MnemolayerStorage(mem, **kwargs)  # type: ignore[arg-type]
        assert bad.value.field == field
    with pytest.raises(ValidationError, match="metadata"):
        storage.save([MemoryRecord(content="x", metadata={"n": float("nan")})])


class ScriptedLLM(BaseLLM):
    """Answers CrewAI's memory calls (extraction, field analysis) with fixed objects and
    an agent's task with a final answer; the currency question is answered from what its
    prompt recalled."""

    prompts: list[str] = Field(default_factory=list)

    def call(self, messages: Any, *args: Any, response_model: Any = None, **kwargs: Any) -> Any:
        if response_model is ExtractedMemories:
            return ExtractedMemories(memories=["Acme wants its invoices in euros."])
        if response_model is MemoryAnalysis:
            return MemoryAnalysis(
                suggested_scope="/customers/acme",
                categories=["billing"],
                importance=0.8,
                extracted_metadata=ExtractedMetadata(),
            )
        text = "\n".join(str(m.get("content")) for m in messages)
        self.prompts.append(text)
        if "Which currency" in text:
            known = "euros" if "invoices in euros" in text else "unknown"
            return f"Thought: the memories say it.\nFinal Answer: {known}"
        return "Thought: noted.\nFinal Answer: Acme wants its invoices in euros."

    def supports_function_calling(self) -> bool:
        return True


def test_a_crew_recalls_what_an_earlier_crew_remembered(mem: Memory) -> None:
    llm = ScriptedLLM(model="scripted")
    storage = MnemolayerStorage(mem)
    crew_memory = CrewMemory(storage=storage, embedder=storage.embedder, llm=llm)
    agent = Agent(
        role="Account manager", goal="Keep customer details", backstory="Careful.", llm=llm
    )
    note = Task(description="Note Acme's invoicing wish.", expected_output="A note", agent=agent)
    Crew(agents=[agent], tasks=[note], memory=crew_memory).kickoff()
    crew_memory.drain_writes()
    stored = storage.list_records()
    assert [(r.content, r.scope, r.categories) for r in stored] == [
        ("Acme wants its invoices in euros.", "/customers/acme", ["billing"])
    ]
    ask = Task(
        description="Which currency does Acme want on invoices?",
        expected_output="A currency",
        agent=agent,
    )
    out = Crew(agents=[agent], tasks=[ask], memory=crew_memory).kickoff()
    crew_memory.close()
    assert "euros" in out.raw
    asked = next(p for p in llm.prompts if "Which currency" in p)
    assert "Acme wants its invoices in euros." in asked  # recalled from mnemolayer
    assert mem.search("invoice currency", user_id="crewai", limit=1)[0].memory.content == (
        "Acme wants its invoices in euros."
    )
