"""The default extractor: offline rules for English and Chinese.

:class:`RuleExtractor` picks the language per message by script: text with Han characters
goes to :func:`~mnemolayer.extract.rules.zh.extract_zh` (which also handles Latin names
inside Chinese sentences, "我在Google工作"), everything else to
:func:`~mnemolayer.extract.rules.en.extract_en`.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

from mnemolayer.extract.base import Extraction

__all__ = ["RuleExtractor", "detect_language"]

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

                return extract_zh(text, speaker=speaker, timestamp=timestamp)
            from mnemolayer.extract.rules.en import extract_en

            return extract_en(text, speaker=speaker, timestamp=timestamp)
        except Exception:  # a rule bug must never lose the message being stored
            log.exception("rule extraction failed; storing the message without facts")
            return Extraction()
