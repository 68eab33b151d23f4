"""What the indexes see of a record: its text rendered with speaker and date.

Stored content stays verbatim. The keyword and vector indexes get a rendering that puts
the speaker and a natural-language date in front, because questions name people and
dates ("When did Caroline go to the support group?"): on LoCoMo this rendering lifted
dense recall@5 from 0.18 (bare text) to 0.56 (MODELS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from mnemolayer.embed import embed_long
from mnemolayer.embed.base import Embedder
from mnemolayer.models import MemoryKind, MemoryRecord, normalize_text
from mnemolayer.text.speakers import strip_speaker
from mnemolayer.text.terms import index_terms

__all__ = ["embed_records", "index_text", "keyword_terms", "ordinal_day"]


def index_text(record: MemoryRecord) -> str:
    """``(8 May 2023) Caroline said, "text"`` — or without the parts the record lacks.

    Semantic records (facts) are already third-person statements: ``(7 May 2023) Caroline
    attended the support group``."""
    text = normalize_text(record.content)
    if record.speaker and record.kind != MemoryKind.SEMANTIC:
        # "Caroline: text" added without a name renders as "text" given name="Caroline".
        text = f'{record.speaker} said, "{strip_speaker(text, record.speaker)}"'
    when = record.occurred_at
    if when is not None:
        text = f"({when.day} {when.strftime('%B %Y')}) {text}"
    return text


def ordinal_day(when: datetime) -> str:
    """The English ordinal of ``when``'s day of the month: ``"1st"``, ``"22nd"``, ``"13th"``."""
    day = when.day
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def keyword_terms(record: MemoryRecord, extra: str = "") -> str:
    """The segmented terms stored in the FTS5 index for ``record``; ``extra`` is more
    text to index with it (the sentences of the facts extracted from it).

    A dated record's terms also hold its day as an English ordinal (``4th``): questions
    say "on May 4th", which the rendered "(4 May 2023)" alone does not match, since the
    tokenizer keeps ``4th`` as one word. Only the keyword index sees it (the embedded
    text is :func:`index_text`)."""
    text = index_text(record)
    if record.occurred_at is not None:
        text = f"{text} {ordinal_day(record.occurred_at)}"
    return index_terms(f"{text} {extra}" if extra else text)


def embed_records(embedder: Embedder, records: Sequence[MemoryRecord]) -> list[np.ndarray]:
    """Embed each record's index text; long texts are chunked to the model's limit.

    Returns:
        One float32 array of shape (chunks, dim) per record.
    """
    if not records:
        return []
    vectors, owners = embed_long(embedder, [index_text(r) for r in records], "document")
    owners_arr = np.asarray(owners)
    return [vectors[owners_arr == i] for i in range(len(records))]
