"""Offline rule-based fact extraction for English chat messages: the entry point.

:func:`extract_en` is implemented in the package :mod:`mnemolayer.semantic.en` (word lists,
text splitting, subjects, rule handlers and the rule table, one module each); its
docstring tells how a message is read. This module keeps the import path that
:class:`~mnemolayer.semantic.rules.RuleExtractor` and callers use.
"""

from __future__ import annotations

from mnemolayer.semantic.en import extract_en

__all__ = ["extract_en"]
