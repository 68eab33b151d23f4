"""Semantic memory: facts extracted from conversation, kept as a graph with validity in time.

- :mod:`.types` — the extractor protocol and the types every extractor returns.
- :mod:`.predicates` — the predicate vocabulary (cardinality, category, rendering).
- :mod:`.rules` — the offline rule extractor (English and Chinese), the default.
- :mod:`.llm` — the optional extractor over any OpenAI-compatible chat endpoint.
- :mod:`.resolve` — bi-temporal conflict resolution of new facts against current ones.
"""

from __future__ import annotations

from mnemolayer.extract.base import SELF, ExtractedEntity, ExtractedFact, Extraction, Extractor

__all__ = ["SELF", "ExtractedEntity", "ExtractedFact", "Extraction", "Extractor"]
