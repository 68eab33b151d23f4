"""Where a memory came from and whether it is taken as the user's truth (memory poisoning,
OWASP Agentic ASI06).

Every record has a :attr:`~mnemolayer.models.MemoryRecord.source` (:data:`SOURCES`) and,
from it, a trust level (:func:`is_trusted`: only what the user or the assistant said in
the conversation is trusted by default). :func:`detect` flags instruction-like text at
write (:data:`FLAGS`); flags are kept on the record and shown by search and explain, and
never change what is stored. ``docs/guide/trust.md`` describes the whole model.
"""

from mnemolayer.trust.detector import FLAGS, detect
from mnemolayer.trust.sources import (
    SOURCES,
    TRUSTED_SOURCES,
    default_source,
    is_trusted,
    validate_source,
)

__all__ = [
    "FLAGS",
    "SOURCES",
    "TRUSTED_SOURCES",
    "default_source",
    "detect",
    "is_trusted",
    "validate_source",
]
