"""Redaction of personal data and secrets before they are stored.

:func:`redact` finds emails, phone numbers, payment cards, Chinese resident ID numbers,
IBANs and API keys/tokens in a text (see :mod:`mnemolayer.privacy.detectors` for what each
detector accepts) and, per type, replaces them with a typed placeholder (``"redact"``:
``[EMAIL]``), keeps a hint (``"mask"``: ``j***@e***.com``, ``****-****-****-4242``,
``138****5678``) or leaves them (``"keep"``). :func:`redact_data` does the same to every
string inside a JSON value (metadata), and treats a value stored under a secret's name
(``"api_key"``, ``"password"``) as a secret.

Both are deterministic (the same input and config give the same output) and never
raise on any string. Placeholders and masks are not detected again, so redacting a
summary written from redacted messages changes nothing more (where a number was glued to
another one, ``"…5678(415) 555-0132"``, a second pass may find the one the first hid).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mnemolayer.errors import ValidationError
from mnemolayer.privacy.detectors import (
    DETECTORS,
    PIIType,
    ascii_digits,
    is_cn_mobile,
    secret_field,
)

__all__ = ["Action", "Finding", "RedactionConfig", "RedactionResult", "redact", "redact_data"]

Action = Literal["redact", "mask", "keep"]


class RedactionConfig(BaseModel):
    """What to do with each type of personal data found at write time.

    The defaults follow what an agent's memory is for. Secrets are never useful to
    remember and are dangerous to keep, so they are redacted. Card, ID and bank account
    numbers are masked: the last four characters (what a bank statement shows, and what
    PCI DSS allows to display) are enough for "which card did I use?", the rest is not
    kept. Emails and phone numbers are kept: "my email is …" is usually said so that the
    agent remembers it, and it belongs to the user who said it; set them to ``"mask"`` or
    ``"redact"`` where memories are shared or exported.

    Attributes:
        secret: API keys, tokens, JWTs, private keys, passwords (default ``"redact"``).
        card: payment card numbers (default ``"mask"``: ``************4242``).
        cn_id: Chinese resident ID numbers (default ``"mask"``: ``**************123X``).
        iban: bank account numbers (default ``"mask"``: ``DE** **** … **30 00``).
        email: email addresses (default ``"keep"``; mask: ``j***@e***.com``).
        phone: phone numbers (default ``"keep"``; mask: ``138****5678``,
            ``+44 ** **** 0958``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    secret: Action = "redact"
    card: Action = "mask"
    cn_id: Action = "mask"
    iban: Action = "mask"
    email: Action = "keep"
    phone: Action = "keep"

    @classmethod
    def uniform(cls, action: Action) -> RedactionConfig:
        """The same action for every type (``RedactionConfig.uniform("redact")``)."""
        return cls(**{t.value: action for t in PIIType})

    def action(self, kind: PIIType | str) -> Action:
        """The action for one type."""
        result: Action = getattr(self, PIIType(kind).value)
        return result


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of personal data found.

    Attributes:
        type: what it is.
        start, end: its character span in the input text (``text[start:end]``).
        action: what was done with it.
        replacement: the text put in its place (the original itself for ``"keep"``).
        path: where in a JSON value the string was (``"notes[2].email"``), ``""`` for a
            plain text.
    """

    type: PIIType
    start: int
    end: int
    action: Action
    replacement: str
    path: str = ""


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and what was found in the input, in text order."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        """Whether anything was redacted or masked."""
        return any(f.action != "keep" for f in self.findings)


_DEFAULT = RedactionConfig()


def redact(text: str, config: RedactionConfig | None = None) -> RedactionResult:
    """Find personal data and secrets in ``text`` and apply ``config``'s action per type.

    Where two detections overlap, the earlier type in :class:`PIIType` order wins
    (secret, email, IBAN, ID number, card, phone), then the longer span.

    Args:
        text: any string (English, Chinese or mixed).
        config: actions per type; ``None`` → :class:`RedactionConfig` defaults.

    Returns:
        The new text and a :class:`Finding` per detection (``"keep"`` ones included),
        whose spans refer to ``text``.

    Raises:
        ValidationError: ``text`` is not a string (field ``"text"``) or ``config`` not a
            :class:`RedactionConfig` (field ``"config"``).
    """
    if not isinstance(text, str):
        raise ValidationError("text", f"must be a string, got {type(text).__name__}")
    cfg = _config(config)
    spans = _detect(text)
    if not spans:
        return RedactionResult(text, ())
    out: list[str] = []
    findings: list[Finding] = []
    pos = 0
    for start, end, kind in spans:
        action = cfg.action(kind)
        found = text[start:end]
        replacement = _replacement(kind, action, found)
        out.append(text[pos:start])
        out.append(replacement)
        findings.append(Finding(kind, start, end, action, replacement))
        pos = end
    out.append(text[pos:])
    return RedactionResult("".join(out), tuple(findings))


def redact_data(
    value: Any, config: RedactionConfig | None = None, path: str = ""
) -> tuple[Any, list[Finding]]:
    """:func:`redact` every string inside a JSON value (dicts, lists, scalars).

    Keys are left as they are. A string value under a key that names a secret
    (``api_key``, ``token``, ``password``, ``密码``…; see
    :func:`~mnemolayer.privacy.detectors.secret_field`) is a secret as a whole.

    Returns:
        A new value (the input is not changed) and the findings, each with its ``path``.

    Raises:
        ValidationError: ``config`` is not a :class:`RedactionConfig`.
    """
    cfg = _config(config)
    findings: list[Finding] = []
    return _walk(value, cfg, path, None, findings), findings


def _walk(value: Any, cfg: RedactionConfig, path: str, key: str | None, out: list[Finding]) -> Any:
    if isinstance(value, str):
        if key is not None and secret_field(key, value):
            action = cfg.action(PIIType.SECRET)
            replacement = _replacement(PIIType.SECRET, action, value)
            out.append(Finding(PIIType.SECRET, 0, len(value), action, replacement, path))
            return replacement
        result = redact(value, cfg)
        out.extend(
            Finding(f.type, f.start, f.end, f.action, f.replacement, path) for f in result.findings
        )
        return result.text
    if isinstance(value, dict):
        return {
            k: _walk(item, cfg, f"{path}.{k}" if path else str(k), str(k), out)
            for k, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_walk(item, cfg, f"{path}[{i}]", None, out) for i, item in enumerate(value)]
    return value


def _config(config: RedactionConfig | None) -> RedactionConfig:
    if config is None:
        return _DEFAULT
    if not isinstance(config, RedactionConfig):
        raise ValidationError("config", f"expected a RedactionConfig, got {type(config).__name__}")
    return config


def _detect(text: str) -> list[tuple[int, int, PIIType]]:
    """Non-overlapping detections in text order: by priority, then length. Detectors see
    the text with its Unicode decimal digits as ASCII ones (``４５３９`` → ``4539``, the
    same length), so the spans are those of the original."""
    text = ascii_digits(text)
    candidates: list[tuple[int, int, int, PIIType]] = []
    for priority, (kind, detector, worth_trying) in enumerate(DETECTORS):
        if worth_trying(text):
            candidates.extend((priority, s, e, kind) for s, e in detector(text) if e > s)
    if not candidates:
        return []
    candidates.sort(key=lambda c: (c[0], c[1] - c[2], c[1]))
    starts: list[int] = []
    chosen: list[tuple[int, int, PIIType]] = []
    for _prio, start, end, kind in candidates:
        i = bisect.bisect_right(starts, start)
        if i and chosen[i - 1][1] > start:
            continue  # overlaps the span before it
        if i < len(chosen) and chosen[i][0] < end:
            continue  # overlaps the span after it
        starts.insert(i, start)
        chosen.insert(i, (start, end, kind))
    return chosen


# -- replacements ------------------------------------------------------------------------


def _replacement(kind: PIIType, action: Action, found: str) -> str:
    if action == "keep":
        return found
    if action == "redact":
        return f"[{kind.value.upper()}]"
    return _MASKS[kind](found)


def _mask_email(found: str) -> str:
    local, _, domain = found.rpartition("@")
    labels = domain.split(".")
    return f"{local[0]}***@{labels[0][0]}***.{labels[-1]}"


def _mask_digits(found: str, keep_last: int, keep_first: int = 0) -> str:
    """Each digit or letter → ``*`` except the first ``keep_first`` and the last
    ``keep_last``; separators stay."""
    total = sum(ch.isalnum() for ch in found)
    out: list[str] = []
    seen = 0
    for ch in found:
        if ch.isalnum():
            seen += 1
            out.append(ch if seen <= keep_first or seen > total - keep_last else "*")
        else:
            out.append(ch)
    return "".join(out)


def _mask_phone(found: str) -> str:
    digits = [i for i, ch in enumerate(found) if ch.isdigit()]
    if is_cn_mobile(found):
        mobile = "".join(found[i] for i in digits[-11:])
        return f"{found[: digits[-11]]}{mobile[:3]}****{mobile[-4:]}"
    country = re.match(r"\+\d{1,3}(?=[ .\-(])", found)
    if country is None:
        return _mask_digits(found, 4)
    return country.group() + _mask_digits(found[country.end() :], 4)


def _mask_iban(found: str) -> str:
    return found[:2] + _mask_digits(found[2:], 4)


_PEM_ENDS = re.compile(r"(-----BEGIN [A-Z0-9 ]*-----).*(-----END [A-Z0-9 ]*-----)", re.DOTALL)


def _mask_secret(found: str) -> str:
    pem = _PEM_ENDS.fullmatch(found)
    if pem is not None:
        return f"{pem.group(1)}****{pem.group(2)}"
    if len(found) < 24:
        return "****"
    return f"{found[:4]}****{found[-4:]}"


_MASKS = {
    PIIType.SECRET: _mask_secret,
    PIIType.EMAIL: _mask_email,
    PIIType.IBAN: _mask_iban,
    PIIType.CN_ID: lambda found: _mask_digits(found, 4),
    PIIType.CARD: lambda found: _mask_digits(found, 4),
    PIIType.PHONE: _mask_phone,
}
