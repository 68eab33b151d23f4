"""The default extractor: offline rules for English and Chinese.

:class:`RuleExtractor` picks the language per message by script: text with Han characters
goes to :func:`~mnemolayer.extract.rules.zh.extract_zh` (which also handles Latin names
inside Chinese sentences, "我在Google工作"), everything else to
:func:`~mnemolayer.extract.rules.en.extract_en`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import datetime

from mnemolayer.extract.base import ExtractedFact, Extraction

__all__ = ["RuleExtractor", "detect_language", "with_tastes_retracted"]

log = logging.getLogger(__name__)

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> str:
    """``"zh"`` when the text contains Han characters, else ``"en"``."""
    return "zh" if _HAN.search(text) else "en"


class RuleExtractor:
    """Offline, deterministic, thread-safe fact extraction (English and Chinese).

    Never raises: a failure inside a rule is logged and yields an empty
    :class:`Extraction` (the message itself is still stored as an episode).
    """

    name = "rules"

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        try:
            if detect_language(text) == "zh":
                from mnemolayer.extract.rules.zh import extract_zh

                found = extract_zh(text, speaker=speaker, timestamp=timestamp)
            else:
                from mnemolayer.extract.rules.en import extract_en

                found = extract_en(text, speaker=speaker, timestamp=timestamp)
        except Exception:  # a rule bug must never lose the message being stored
            log.exception("rule extraction failed; storing the message without facts")
            return Extraction()
        found.facts = with_tastes_retracted(found.facts)
        return found


def with_tastes_retracted(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """``facts`` with a retraction of ``likes X`` after each retraction of ``eats X``:
    "I don't drink coffee anymore", "I quit coffee", 我不再喝咖啡了, 我戒咖啡了 end the
    taste a user stated ("I love coffee") as well as the habit, so the profile stops
    listing it (a retraction with nothing to close is ignored)."""
    out: list[ExtractedFact] = []
    said = {(f.subject, f.predicate, f.object, f.negated) for f in facts}
    for f in facts:
        out.append(f)
        if f.predicate == "eats" and f.negated and (f.subject, "likes", f.object, True) not in said:
            out.append(replace(f, predicate="likes"))
    return out
