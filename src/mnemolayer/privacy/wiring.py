"""How :class:`~mnemolayer.Memory` applies redaction at write time.

:func:`resolve_privacy` turns ``Memory(privacy=...)``, ``--privacy`` and
``MNEMOLAYER_PRIVACY`` into a :class:`~mnemolayer.privacy.RedactionConfig` (or ``None``:
off). The write paths then call :func:`redact_text` on content, :func:`redact_metadata`
on metadata, :func:`with_report` to record what was changed under
:data:`REDACTED_KEY`, and :func:`private_facts` on facts before they are drafted.

What was redacted is reported in the record's own metadata, never the values:
``record.metadata["_redacted"] == {"content": {"card": 1}, "metadata": {"secret": 1}}``
(a part, and the key itself, is absent when nothing in it was redacted or masked; a
``"keep"`` type is not counted).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, get_args

from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import ExtractedFact
from mnemolayer.privacy.detectors import PIIType
from mnemolayer.privacy.redact import Action, Finding, RedactionConfig, redact, redact_data

__all__ = [
    "REDACTED_KEY",
    "private_facts",
    "redact_metadata",
    "redact_text",
    "report_part",
    "resolve_privacy",
    "with_report",
]

#: Metadata key under which a record reports what was redacted or masked at its last
#: write: ``{"content": {type: count}, "metadata": {type: count}}``.
REDACTED_KEY = "_redacted"

_OFF = {"off", "none", "false", "0", "no"}
_DEFAULT = {"default", "on", "true", "1", "yes"}
_ACTIONS: tuple[str, ...] = get_args(Action)
_TYPES = tuple(t.value for t in PIIType)


def resolve_privacy(spec: Any, field: str = "privacy") -> RedactionConfig | None:
    """Resolve a privacy setting to a :class:`RedactionConfig`, or ``None`` for off.

    Args:
        spec: a :class:`RedactionConfig` (used as is); ``None``, ``False`` or ``"off"``
            (off: nothing is detected); ``True`` or ``"default"`` (the defaults: secrets
            redacted; cards, ID numbers and IBANs masked; emails and phones kept); or a
            string of comma-separated parts applied in order: ``"redact"``, ``"mask"`` or
            ``"keep"`` sets every type, ``"default"`` resets to the defaults, and
            ``type=action`` sets one type (types: ``secret``, ``email``, ``iban``,
            ``cn_id``, ``card``, ``phone``). ``"email=mask,phone=mask"`` is the defaults
            with emails and phones masked; ``"redact,phone=keep"`` redacts all but phones.
        field: the name used in errors (``"privacy"``, ``"--privacy"``,
            ``"MNEMOLAYER_PRIVACY"``).

    Raises:
        ValidationError: naming ``field``, for another type or an unknown part.
    """
    if spec is None or spec is False:
        return None
    if spec is True:
        return RedactionConfig()
    if isinstance(spec, RedactionConfig):
        return spec
    if not isinstance(spec, str):
        raise ValidationError(
            field, f"expected a RedactionConfig, a string or a bool, got {type(spec).__name__}"
        )
    text = spec.strip().lower()
    if text in _OFF:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValidationError(field, "is empty; use 'default', 'off' or e.g. 'email=mask'")
    actions: dict[str, str] = dict(RedactionConfig().model_dump())
    for part in parts:
        if part in _DEFAULT:
            actions = dict(RedactionConfig().model_dump())
        elif part in _ACTIONS:
            actions = dict.fromkeys(_TYPES, part)
        elif "=" in part:
            kind, _, action = (s.strip() for s in part.partition("="))
            if kind not in _TYPES:
                raise ValidationError(
                    field, f"unknown type {kind!r} in {spec!r}; types: {', '.join(_TYPES)}"
                )
            if action not in _ACTIONS:
                raise ValidationError(
                    field, f"unknown action {action!r} for {kind}; actions: redact, mask, keep"
                )
            actions[kind] = action
        else:
            raise ValidationError(
                field,
                f"cannot read {part!r} in {spec!r}; use 'default', 'off', 'redact', 'mask', "
                "'keep' or type=action (e.g. 'email=mask,phone=mask')",
            )
    return RedactionConfig(**actions)


def _counts(findings: Sequence[Finding]) -> dict[str, int]:
    """Redacted or masked findings per type (``"keep"`` ones not counted)."""
    if not findings:
        return {}
    return dict(Counter(f.type.value for f in findings if f.action != "keep"))


def redact_text(text: str, config: RedactionConfig) -> tuple[str, dict[str, int]]:
    """``text`` with ``config`` applied, and how many values of each type were changed."""
    result = redact(text, config)
    return result.text, _counts(result.findings)


def redact_metadata(
    metadata: Mapping[str, Any], config: RedactionConfig
) -> tuple[dict[str, Any], dict[str, int]]:
    """Every string value inside ``metadata`` redacted (a value stored under a secret's
    name, ``api_key`` or ``password``, as a secret whole; keys kept), without a
    :data:`REDACTED_KEY` the caller put there; and the counts per type changed."""
    given = {k: v for k, v in metadata.items() if k != REDACTED_KEY}
    value, findings = redact_data(given, config)
    return value, _counts(findings)


def with_report(
    metadata: dict[str, Any],
    content: Mapping[str, int] | None,
    meta: Mapping[str, int] | None,
) -> dict[str, Any]:
    """``metadata`` with :data:`REDACTED_KEY` set to the non-empty parts of
    ``{"content": content, "metadata": meta}``, or without that key when both are empty."""
    out = {k: v for k, v in metadata.items() if k != REDACTED_KEY}
    report = {
        part: dict(sorted(counts.items()))
        for part, counts in (("content", content), ("metadata", meta))
        if counts
    }
    if report:
        out[REDACTED_KEY] = report
    return out


def report_part(metadata: Mapping[str, Any], part: str) -> dict[str, int]:
    """The counts of one part (``"content"`` or ``"metadata"``) of a stored record's
    report; ``{}`` when it has none."""
    report = metadata.get(REDACTED_KEY)
    counts = report.get(part) if isinstance(report, dict) else None
    if not isinstance(counts, dict):
        return {}
    return {k: v for k, v in counts.items() if isinstance(k, str) and isinstance(v, int)}


# Placeholders ("[CARD]") and masked values ("****4242", "j***@e***.com", "138****5678")
# carry no word a fact could be about.
_PLACEHOLDER = re.compile(r"\[(?:" + "|".join(t.upper() for t in _TYPES) + r")\]")
_MASKED_TOKEN = re.compile(r"\S*\*\S*")


def _only_redacted(value: str) -> bool:
    """Whether ``value`` held a placeholder or mask and nothing else with a letter in it
    (the digits a mask leaves are not enough)."""
    rest = _PLACEHOLDER.sub(" ", value)
    if rest == value and "*" not in value:
        return False
    rest = _MASKED_TOKEN.sub(" ", rest)
    return not any(ch.isalpha() for ch in rest)


def private_facts(facts: Iterable[ExtractedFact], config: RedactionConfig) -> list[ExtractedFact]:
    """Facts with ``config`` applied to their subject, object and evidence, less those
    whose subject or object is nothing but a redacted or masked value.

    A message "I like 4242 4242 4242 4242" redacted to "I like [CARD]" would otherwise
    state the fact *likes [CARD]*; facts given by the caller (feedback) are redacted here
    like the message they come with.
    """
    out: list[ExtractedFact] = []
    for f in facts:
        subject = redact(f.subject, config).text
        obj = redact(f.object, config).text
        if _only_redacted(subject) or _only_redacted(obj):
            continue
        evidence = redact(f.evidence, config).text if f.evidence else f.evidence
        if (subject, obj, evidence) == (f.subject, f.object, f.evidence):
            out.append(f)
        else:
            out.append(replace(f, subject=subject, object=obj, evidence=evidence))
    return out
