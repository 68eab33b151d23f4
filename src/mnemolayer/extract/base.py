"""The extractor protocol and the types every extractor returns.

An extractor turns one message (text, who said it, when) into :class:`Extraction`:
facts as subject–predicate–object triples between entities, plus the entities and
absolute dates it found. Rule-based and LLM extractors return the same types, so the
rest of mnemolayer never knows which one ran.

Conventions every extractor follows:

- **Subjects.** First person ("I", "my", "我", "我的") resolves to the speaker: the
  ``speaker`` name when one is given, else :data:`SELF` (the user the memory belongs to).
  Third parties are their own entities, by name ("my sister Maria lives in Rome" →
  ``(Maria, lives_in, Rome)`` and ``(SELF, sister, Maria)``), never the speaker's.
- **Predicates** come from :data:`mnemolayer.extract.predicates.PREDICATES` (English
  snake_case identifiers, also for Chinese text). Objects keep the message's language
  and wording, trimmed of articles and possessives ("a dog named Max" → ``"Max"`` with
  ``object_type="dog"``; "peanuts"; "香菜").
- **Negation.** "I no longer eat meat" / "我不再喜欢咖啡" is a fact with ``negated=True``:
  it closes the matching current fact rather than stating a new one. "I don't like
  coriander" is not a negation but a ``dislikes`` fact.
- **Dates.** Relative dates ("yesterday", "next Friday", "上周", "下个月") resolve against
  the **message's own timestamp**, never the processing time, and are stored as ISO
  dates (``datetime.date``). A fact's ``date`` is when its event happens or happened.
"""

from __future__ import annotations

from mnemolayer.protocols import Extractor
from mnemolayer.values import ExtractedEntity, ExtractedFact, Extraction, ResolvedDate

__all__ = ["SELF", "ExtractedEntity", "ExtractedFact", "Extraction", "Extractor", "ResolvedDate"]

#: The subject name for "I"/"我" when the message has no speaker name: the user the
#: memory belongs to. The store resolves it to that user's own entity.
SELF = "user"
