"""Check digits and plausibility tests that keep the PII detectors from flagging any
number that merely looks right.

Each check takes the candidate with separators already removed and returns a bool; none
raises.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections import Counter
from datetime import date

__all__ = [
    "IBAN_LENGTHS",
    "cn_id_ok",
    "iban_ok",
    "jwt_ok",
    "luhn_ok",
    "shannon_entropy",
]


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) check of payment card numbers (ISO/IEC 7812-1, annex B).

    From the rightmost digit, every second digit is doubled (minus 9 when above 9);
    the number is valid when the sum is a multiple of 10.
    """
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Provinces, autonomous regions and municipalities (the first two digits of the
# administrative division code, GB/T 2260), plus 71 Taiwan, 81 Hong Kong, 82 Macao and
# 83 (residence permits of Taiwan residents).
_CN_REGIONS = frozenset(
    str(code)
    for code in (11, 12, 13, 14, 15, 21, 22, 23, 31, 32, 33, 34, 35, 36, 37, 41, 42, 43,
                 44, 45, 46, 50, 51, 52, 53, 54, 61, 62, 63, 64, 65, 71, 81, 82, 83)
)  # fmt: skip
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"


def cn_id_ok(text: str, today: date | None = None) -> bool:
    """A Chinese resident identity number (GB 11643-1999): 18 characters, a known region,
    a real birth date between 1900-01-01 and ``today`` (default: the system date), and the
    ISO 7064 MOD 11-2 check character (``X`` stands for 10)."""
    if len(text) != 18 or not text[:17].isdigit() or text[:2] not in _CN_REGIONS:
        return False
    try:
        born = date(int(text[6:10]), int(text[10:12]), int(text[12:14]))
    except ValueError:
        return False
    if not date(1900, 1, 1) <= born <= (today or date.today()):
        return False
    total = sum(int(d) * w for d, w in zip(text[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == text[17].upper()


# IBAN length per country (ISO 13616 registry, countries that issue IBANs).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27,
    "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28,
    "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


def iban_ok(compact: str) -> bool:
    """An IBAN without spaces: a known country, its registered length, and the ISO 7064
    MOD 97-10 check (the first four characters moved to the end, letters read as
    10-35, the number modulo 97 is 1)."""
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    if not compact.isascii() or not compact.isalnum():
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def _b64url_json(part: str) -> object:
    padded = part + "=" * (-len(part) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):
        return None


def jwt_ok(token: str) -> bool:
    """A JSON Web Token (RFC 7519): three base64url parts whose first decodes to a JSON
    object naming an ``alg`` or ``typ`` (RFC 7515 §4.1)."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts[:2]):
        return False
    header = _b64url_json(parts[0])
    return isinstance(header, dict) and ("alg" in header or "typ" in header)


def shannon_entropy(text: str) -> float:
    """Shannon entropy of the characters of ``text``, in bits per character (0 for "")."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())
