"""Detectors of personal data and secrets in free text (English and Chinese).

Each detector is a generator of ``(start, end)`` character spans of one :class:`PIIType`;
:data:`DETECTORS` lists them in priority order (a span found by an earlier detector wins
over an overlapping one found later). Patterns find candidates; the checks in
:mod:`.checks` (Luhn, MOD 11-2, MOD 97-10, a real birth date, a decodable JWT header)
decide, so that order numbers, amounts, dates and other numbers are not flagged.

What is detected:

* ``secret``: API keys and tokens with well-known prefixes (OpenAI ``sk-``, Anthropic
  ``sk-ant-``, Stripe ``sk_live_``/``rk_live_``, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/
  ``ghr_``/``github_pat_``, Slack ``xoxb-``/``xoxp-``/``xoxa-``/``xoxr-``/``xoxs-``, AWS
  ``AKIA``/``ASIA`` access key ids, Google ``AIza``), the token after ``Bearer``, JWTs,
  PEM private key blocks, and the value in ``key=value`` / ``key: value`` / ``key is
  value`` when the key names a secret (``api_key``, ``API key``, ``access token``,
  ``secret key``, ``token``, ``password``, ``密码``, ``密钥``, ``令牌``…) and the value
  is a high-entropy string of 32+ characters (a password-like key: any 6+ characters
  holding a digit or symbol).
* ``email``: ``local@domain.tld`` (ASCII local part; domain labels may be non-ASCII).
* ``iban``: country code, check digits, the country's registered length, MOD 97-10; in
  any letter case (``iban de89…``), contiguous or grouped by single spaces or dashes.
* ``cn_id``: 18-character Chinese resident ID numbers (region, birth date, MOD 11-2).
* ``card``: 13-19 digit payment card numbers, contiguous or in the usual 4-4-4-4(-3),
  4-6-5 and 4-6-4 groups with one kind of separator, a first digit 2-6, Luhn-checked;
  not a list of years (every 4-digit group 1900-2099), and not a number right after an
  order/ticket/invoice/tracking/reference/booking word or ``#`` (``订单``, ``单号``,
  ``快递``, ``工单``, ``编号``) unless a card word (``card``, ``visa``, ``卡``…) is near.
* ``phone``: Chinese mobile numbers (``1[3-9]`` + 9 digits, optional ``+86``/``0086``,
  3-4-4 groups), Chinese landlines with the area code and a dash (``010-62345678``),
  North American numbers with separators (``(202) 555-0143``,
  ``+1 202 555 0143``), and international numbers written with ``+`` and 8-15 digits
  (not followed by a currency code or word: ``+12 345 678 USD``; not single digits apart
  by dots: ``+1.2.3.4.5.6.7.8`` is a version).
  Bare runs of digits without a ``+`` or the NANP shape are not phones: too many order
  numbers look the same.

Detectors expect ASCII digits: :func:`ascii_digits` maps full-width and other Unicode
decimal digits to them, one character for one, before detection (spans stay valid).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from enum import StrEnum

from mnemolayer.privacy.checks import (
    IBAN_LENGTHS,
    cn_id_ok,
    iban_ok,
    jwt_ok,
    luhn_ok,
    shannon_entropy,
)

__all__ = ["DETECTORS", "PIIType", "Span", "ascii_digits", "is_cn_mobile", "secret_field"]

Span = tuple[int, int]


class PIIType(StrEnum):
    """The kinds of personal data and secrets :func:`mnemolayer.privacy.redact` finds."""

    SECRET = "secret"
    EMAIL = "email"
    IBAN = "iban"
    CN_ID = "cn_id"
    CARD = "card"
    PHONE = "phone"


def ascii_digits(text: str) -> str:
    """``text`` with every Unicode decimal digit (category Nd: full-width ``４``, Arabic-
    Indic ``٤``…) replaced by its ASCII digit, one character for one, so that spans found
    in the result are spans of ``text``. ASCII text is returned as it is."""
    if text.isascii():
        return text
    return "".join(
        str(unicodedata.decimal(ch)) if not ch.isascii() and ch.isdecimal() else ch for ch in text
    )


# -- secrets -----------------------------------------------------------------------------

_TOKEN_TAIL = r"(?![A-Za-z0-9_\-])"
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r")" + _TOKEN_TAIL
)
_BEARER = re.compile(r"\bBearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", re.IGNORECASE)
_JWT = re.compile(
    r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*" + _TOKEN_TAIL
)
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PASSWORD_KEY = r"password|passwd|passphrase|pwd|密码|口令"
_SECRET_KEY = (
    r"(?:api|access|secret|private|auth|client|app)[ _\-]?(?:key|token|secret)"
    r"|apikey|secret|token|private[_\-]?key|access[_\-]?key|auth[_\-]?key"
    r"|credentials?|密钥|令牌|秘钥"
)
# A key name: one of the words above inside an identifier (``DB_PASSWORD``,
# ``x-api-key``, ``client_secret``). The affixes are bounded so that scanning a long run
# of identifier characters stays linear.
_KEY_NAME = (
    rf"[A-Za-z0-9_\-]{{0,24}}?(?:(?P<pw>{_PASSWORD_KEY})|(?:{_SECRET_KEY}))[A-Za-z0-9_\-]{{0,24}}"
)
_KEY_VALUE = re.compile(
    rf"(?i)(?<![A-Za-z0-9_\-])[\"']?{_KEY_NAME}[\"']?"
    r"(?:\s*[:=：]\s*|\s*[是为]\s*|\s+(?:is|was)\s+)[\"']?(?P<value>[^\s\"',;，。；、）)]+)"
)


def _secret_value(value: str, password: bool) -> bool:
    if password:  # any non-trivial value: a digit or symbol, and not a row of stars
        return (
            len(value) >= 6
            and any(ch.isalnum() for ch in value)
            and any(not ch.isalpha() for ch in value)
        )
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    return len(value) >= 32 and has_digit and has_alpha and shannon_entropy(value) >= 3.5


_FIELD_NAME = re.compile(rf"(?i){_KEY_NAME}")


def secret_field(key: str, value: str) -> bool:
    """Whether ``value``, stored under the name ``key`` (a metadata key, a form field), is
    a secret by the same rule as ``key=value`` in text."""
    m = _FIELD_NAME.fullmatch(key.strip())
    return m is not None and _secret_value(value.strip(), m.group("pw") is not None)


def _pem_blocks(text: str) -> Iterator[Span]:
    """PEM private key blocks, BEGIN line to END line (a scan, not one regex, so that
    many BEGIN lines without an END cost linear time)."""
    pos = 0
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        end = _PEM_END.search(text, begin.end())
        if end is None:
            return
        yield begin.start(), end.end()
        pos = end.end()


def _secrets(text: str) -> Iterator[Span]:
    for m in _PREFIXED.finditer(text):
        # Random keys mix digits and letters; a long hyphenated phrase does not.
        if any(ch.isdigit() for ch in m.group()) and any(ch.isalpha() for ch in m.group()):
            yield m.span()
    for m in _BEARER.finditer(text):
        yield m.span(1)
    for m in _JWT.finditer(text):
        if jwt_ok(m.group()):
            yield m.span()
    yield from _pem_blocks(text)
    for m in _KEY_VALUE.finditer(text):
        if _secret_value(m.group("value"), m.group("pw") is not None):
            yield m.span("value")


# -- emails ------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9](?:[A-Za-z0-9._%+\-]{0,62}[A-Za-z0-9_%+\-])?"
    r"@(?:[^\W_](?:[\w\-]{0,61}[^\W_])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
)


def _emails(text: str) -> Iterator[Span]:
    for m in _EMAIL.finditer(text):
        yield m.span()


# -- IBANs -------------------------------------------------------------------------------

# Upper, lower or mixed case (``iban de89…``, ``De89…``); groups apart by single spaces
# or dashes (one kind in an IBAN). ``[A-Za-z]`` rather than a case-insensitive flag, which
# would also take the Kelvin sign and the long s for letters.
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){11,30}")


def _ibans(text: str) -> Iterator[Span]:
    pos = 0
    while (m := _IBAN.search(text, pos)) is not None:
        pos = m.start() + 1
        need = IBAN_LENGTHS.get(m.group()[:2].upper())
        if need is None:
            continue
        # Walk the candidate until it holds the country's length, so that a word or
        # number written after the IBAN is not taken in; the IBAN must end there, and
        # the search goes on from there (the greedy candidate may hold the next IBAN).
        count, end = 0, m.start()
        while end < m.end() and count < need:
            if text[end] not in " -":
                count += 1
            end += 1
        if count != need or (end < len(text) and text[end].isalnum()):
            continue
        found = text[m.start() : end]
        if " " in found and "-" in found:
            continue
        if iban_ok(found.replace(" ", "").replace("-", "").upper()):
            yield m.start(), end
            pos = end


# -- Chinese resident ID numbers --------------------------------------------------------

_CN_ID = re.compile(r"(?<![0-9A-Za-z])\d{6} ?\d{8} ?\d{3}[0-9Xx](?![0-9A-Za-z])")


def _cn_ids(text: str) -> Iterator[Span]:
    for m in _CN_ID.finditer(text):
        if cn_id_ok(m.group().replace(" ", "")):
            yield m.span()


# -- payment cards -----------------------------------------------------------------------

_CARD = re.compile(
    r"(?<![A-Za-z0-9.,\-])(?:"
    r"\d{13,19}"
    r"|\d{4}(?P<s1>[ \-])\d{4}(?P=s1)\d{4}(?P=s1)\d{4}(?:(?P=s1)\d{3})?"
    r"|\d{4}(?P<s2>[ \-])\d{6}(?P=s2)\d{4,5}"
    r")(?![A-Za-z0-9]|[.,]\d)"
)


# Words after which a number is an order, ticket or tracking number (``Order #…``,
# ``tracking number: …``, ``订单号…``), matched against the text just before a candidate.
_REFERENCE_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:orders?|tickets?|invoices?|tracking|reference|ref|booking"
    r"|confirmation|shipment|parcel|package)"
    r"(?:\s*(?:no|nr|num|number|id|code|#)\.?)?(?:\s+(?:is|was))?\s*[:#：]?"
    r"|#|(?:订单|单号|快递|工单|编号|运单)[号码]?(?:\s*[是为])?\s*[:：]?)\s*$",
    re.IGNORECASE,
)
# Words that make a number a card again even after an order word (``order paid with
# card #4242…``).
_CARD_CONTEXT = re.compile(
    r"(?<![A-Za-z])(?:cards?|credit|debit|visa|master ?card|amex|jcb|unionpay)(?![A-Za-z])|卡",
    re.IGNORECASE,
)
_CONTEXT_BEFORE, _CONTEXT_AFTER = 40, 20


def _year_like(groups: list[str]) -> bool:
    """Whether every group is a four-digit year 1900-2099 (``2010 2011 2012 2013``)."""
    return all(len(g) == 4 and g[:2] in ("19", "20") for g in groups)


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        found = m.group()
        digits = re.sub(r"[ \-]", "", found)
        if not (digits[0] in "23456" and 13 <= len(digits) <= 19 and luhn_ok(digits)):
            continue
        # A list of years, grouped or run together, is not a card even when it passes
        # Luhn (about one list in ten does).
        groups = re.split(r"[ \-]", found) if found != digits else re.findall(r"\d{1,4}", digits)
        if _year_like(groups):
            continue
        # A number right after "order", "ticket #", "订单号"… is that order's number,
        # unless a card is named near it.
        start, end = m.span()
        if _REFERENCE_BEFORE.search(text[max(0, start - _CONTEXT_BEFORE) : start]):
            near = text[max(0, start - _CONTEXT_BEFORE) : end + _CONTEXT_AFTER]
            if _CARD_CONTEXT.search(near) is None:
                continue
        yield start, end


# -- phone numbers -----------------------------------------------------------------------

_CN_MOBILE = re.compile(
    r"(?<![A-Za-z0-9+(])(?:(?:\((?:\+|00)86\)|(?:\+|00)86)[ \-]?)?"
    r"1[3-9]\d(?:[ \-]?\d{4}){2}(?![A-Za-z0-9])"
)


def is_cn_mobile(found: str) -> bool:
    """Whether a detected phone number is a Chinese mobile number (full-width or other
    Unicode decimal digits count as the ASCII ones)."""
    return _CN_MOBILE.fullmatch(ascii_digits(found)) is not None


_NANP = re.compile(
    r"(?<![\d+])(?:(?:\+1|1)[ .\-]?)?"
    r"(?:\([2-9]\d{2}\)[ .\-]?|[2-9]\d{2}(?P<sep>[ .\-]))[2-9]\d{2}[ .\-]\d{4}(?![\d])"
    r"|(?<![\d+])\+1[ .\-]?[2-9]\d{2}[2-9]\d{6}(?![\d])"
)
_CN_LANDLINE = re.compile(r"(?<![A-Za-z0-9\-+])0[1-9]\d{1,2}-[2-8]\d{6,7}(?![\d\-])")
_INTL = re.compile(r"(?<![A-Za-z0-9_+])\+[1-9]\d{0,3}(?:[ .\-]?\(?\d{1,5}\)?){1,7}(?![\d])")
_VERSION_DOTS = re.compile(r"(?<!\d)\d\.\d(?!\d)")
# A currency code, currency word or unit right after a ``+`` number makes it an amount.
_AMOUNT_AFTER = re.compile(
    r"\s*(?:(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|NZD|HKD|SGD|INR|KRW|TWD|SEK|NOK|DKK|RUB"
    r"|BRL|MXN|ZAR|BTC|ETH)(?![A-Za-z])"
    r"|(?i:dollars?|euros?|pounds?|yen|yuan|rupees?|bucks|percent|points?|pts)(?![A-Za-z])"
    r"|[%$€£¥元块美欧英日]|人民币)"
)


def _phones(text: str) -> Iterator[Span]:
    for m in _CN_MOBILE.finditer(text):
        yield m.span()
    for m in _NANP.finditer(text):
        yield m.span()
    for m in _CN_LANDLINE.finditer(text):
        yield m.span()
    for m in _INTL.finditer(text):
        if not 8 <= sum(ch.isdigit() for ch in m.group()) <= 15:
            continue
        # "+1.2.3.4.5" is a version; "+12 345 678 USD" an amount.
        if _VERSION_DOTS.search(m.group()) or _AMOUNT_AFTER.match(text, m.end()):
            continue
        yield m.span()


# -- registry ----------------------------------------------------------------------------


_DIGIT_RUNS: dict[int, re.Pattern[str]] = {}


def _has_run_of_digits(text: str, n: int) -> bool:
    """Whether ``text`` holds ``n`` ASCII digits in a row, separators `` -.()`` between
    them allowed (a regex: a scan in Python per character cost ~30 µs a message)."""
    pattern = _DIGIT_RUNS.get(n)
    if pattern is None:
        pattern = _DIGIT_RUNS[n] = re.compile(rf"[0-9](?:[ \-.()]*[0-9]){{{n - 1}}}")
    return pattern.search(text) is not None


Detector = Callable[[str], Iterator[Span]]

#: ``(type, detector, cheap pre-check)`` in priority order; a detector runs only when
#: its pre-check passes (most chat messages hold no ``@`` and few digits).
DETECTORS: tuple[tuple[PIIType, Detector, Callable[[str], bool]], ...] = (
    (PIIType.SECRET, _secrets, lambda t: True),
    (PIIType.EMAIL, _emails, lambda t: "@" in t),
    (PIIType.IBAN, _ibans, lambda t: _has_run_of_digits(t, 2)),
    (PIIType.CN_ID, _cn_ids, lambda t: _has_run_of_digits(t, 17)),
    (PIIType.CARD, _cards, lambda t: _has_run_of_digits(t, 13)),
    (PIIType.PHONE, _phones, lambda t: _has_run_of_digits(t, 8)),
)
