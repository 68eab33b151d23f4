"""Privacy at write time: personal data and secrets found and redacted, masked or kept
before a memory is stored (:func:`redact`, :class:`RedactionConfig`)."""

from __future__ import annotations

from mnemolayer.privacy.detectors import PIIType
from mnemolayer.privacy.redact import (
    Action,
    Finding,
    RedactionConfig,
    RedactionResult,
    redact,
    redact_data,
)
from mnemolayer.privacy.wiring import REDACTED_KEY, resolve_privacy

__all__ = [
    "REDACTED_KEY",
    "Action",
    "Finding",
    "PIIType",
    "RedactionConfig",
    "RedactionResult",
    "redact",
    "redact_data",
    "resolve_privacy",
]
