"""Offline rule-based fact extraction for Chinese chat messages: :func:`extract_zh`.

The rules live in the package :mod:`mnemolayer.semantic.zh` (word lists, subject parsing,
handlers, the rule table); this module is the stable entry point.
"""

from __future__ import annotations

from mnemolayer.semantic.zh import extract_zh

__all__ = ["extract_zh"]
