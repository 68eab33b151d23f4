"""Recover the JSON value inside a language model's near-JSON answer.

Chat models asked for JSON often wrap it: a ``<think>…</think>`` block of reasoning
first, a Markdown code fence around it, a sentence before or after it, or small syntax
slips (trailing commas, single quotes, Python's ``True``/``None``, an answer cut off
before its closing brackets). :func:`extract_json` peels the wrapping off and finds the
JSON object or array itself; the syntax slips are repaired by the `json-repair
<https://pypi.org/project/json-repair/>`_ library, which only ever sees the bracketed
candidate, never the surrounding prose.
"""

from __future__ import annotations

import json
import re
from typing import Any

try:
    import json_repair
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "near-JSON repair needs json-repair: pip install -e '.[llm]' in the mnemolayer checkout"
    ) from exc

__all__ = ["extract_json", "strip_reasoning"]

# Reasoning blocks some models put before the answer (``<think>`` from DeepSeek-R1 and
# Qwen3, ``<thinking>`` / ``<reasoning>`` from others).
_TAGS = "think|thinking|reasoning"
_CLOSED_BLOCK = re.compile(rf"<({_TAGS})\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_CLOSING_TAG = re.compile(rf"</(?:{_TAGS})\s*>", re.IGNORECASE)
_OPENING_TAG = re.compile(rf"<(?:{_TAGS})\b[^>]*>", re.IGNORECASE)
# A Markdown code fence: ```json … ``` (any info string, or none); an unclosed fence runs
# to the end of the text (an answer cut off by the token limit).
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)

# How a candidate worth repairing starts: an object with a key (quoted, or a bare
# identifier) and a colon, or an array whose first element starts like a JSON value, or
# an empty container.
_JSONISH_START = re.compile(
    r"""\{\s*(?:\}|"[^"]*"\s*:|'[^']*'\s*:|[A-Za-z_]\w*\s*:)"""
    r"""|\[\s*(?:\]|["'{\[\-\d]|true\b|false\b|null\b|True\b|False\b|None\b)"""
)

#: How many bracketed candidates :func:`extract_json` tries before giving up; bounds the
#: work on long prose full of brackets.
MAX_CANDIDATES = 32


def strip_reasoning(text: str) -> str:
    """``text`` without its reasoning blocks.

    Removes every closed ``<think>…</think>`` (also ``<thinking>``, ``<reasoning>``,
    any case) block; then, if a closing tag is left whose opening tag was in the prompt
    template, everything up to the last one; then, if an opening tag is left that never
    closes (reasoning cut off by the token limit), everything from it on.
    """
    text = _CLOSED_BLOCK.sub("", text)
    closing = list(_CLOSING_TAG.finditer(text))
    if closing:
        text = text[closing[-1].end() :]
    opening = _OPENING_TAG.search(text)
    if opening:
        text = text[: opening.start()]
    return text


def extract_json(text: str) -> Any:
    """Parse the JSON object or array in a model's answer.

    Steps: drop reasoning blocks (:func:`strip_reasoning`); try the contents of each
    Markdown code fence, then the whole remaining text; in each, take every top-level
    bracketed span (``{…}`` or ``[…]``, matched outside string literals; an unclosed one
    runs to the end) and keep the longest that parses, strictly as JSON if possible,
    else after repair of trailing commas, single quotes, comments, unquoted keys,
    Python literals and missing closing brackets.

    Args:
        text: the model's raw answer.

    Returns:
        The parsed value: a ``dict`` or a ``list`` (never a bare string or number).

    Raises:
        ValueError: the text holds no JSON object or array, even after repair.
    """
    body = strip_reasoning(text)
    sources = [m.group(1) for m in _FENCE.finditer(body)]
    sources.append(_FENCE.sub(" ", body) if sources else body)
    for source in sources:
        value = _best_candidate(source)
        if value is not None:
            return value
    preview = " ".join(text.split())[:80]
    raise ValueError(f"no JSON object or array found in the answer: {preview!r}")


def _best_candidate(source: str) -> dict[str, Any] | list[Any] | None:
    """The longest bracketed span in ``source`` that parses, strictly or after repair,
    or ``None``.

    Longest first, so a whole answer cut off before its closing brackets wins over the
    complete inner objects it contains.
    """
    spans = sorted(_bracketed_spans(source), key=lambda span: span[1] - span[0], reverse=True)
    for start, end in spans:
        candidate = source[start:end]
        try:
            value = json.loads(candidate)
        except ValueError:
            value = _repair(candidate)
        if isinstance(value, dict | list):
            return value
    return None


def _repair(candidate: str) -> dict[str, Any] | list[Any] | None:
    """``candidate`` repaired and parsed, or ``None`` when it does not start like JSON
    (so prose in braces, ``{like this}``, is never "repaired" into a value)."""
    if not _JSONISH_START.match(candidate):
        return None
    try:
        value = json_repair.loads(candidate, skip_json_loads=True)
    except Exception:  # the library promises not to raise; guard against regressions
        return None
    if isinstance(value, dict | list) and (value or _is_empty_container(candidate)):
        return value
    return None


def _is_empty_container(candidate: str) -> bool:
    """``{}`` / ``[]`` with only whitespace inside: a genuinely empty answer, not a
    failed repair (which also yields an empty container)."""
    return len(candidate) >= 2 and not candidate[1:-1].strip()


def _bracketed_spans(source: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each top-level ``{…}``/``[…]`` span in ``source``, in order.

    Brackets inside double-quoted strings (with backslash escapes) do not count. A span
    whose brackets never balance runs to the end of ``source``. At most
    :data:`MAX_CANDIDATES` spans.
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(source)
    while i < n and len(spans) < MAX_CANDIDATES:
        if source[i] not in "{[":
            i += 1
            continue
        end = _span_end(source, i)
        spans.append((i, end))
        # A span that never closed swallowed the rest; also try what starts inside it,
        # e.g. a stray "[" in prose before the real object.
        i = end if end < n else i + 1
    return spans


def _span_end(source: str, start: int) -> int:
    """Index one past the bracket that closes the one at ``start``; ``len(source)`` if
    it never closes."""
    depth = 0
    in_string = False
    escaped = False
    for j in range(start, len(source)):
        ch = source[j]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(source)
