"""English month names, and a month's number from its name or abbreviation.

One table for the query readers (:mod:`mnemolayer.text.timeq`, :mod:`mnemolayer.text.dayrefs`)
and the time words of recall's conversation features; not :data:`calendar.month_name`,
which follows the process's locale.
"""

from __future__ import annotations

__all__ = ["MONTHS", "month_number"]

#: ``january`` … ``december``, lower case, in calendar order.
MONTHS: tuple[str, ...] = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def month_number(name: str) -> int:
    """1-12 for a month's English name or its abbreviation of three or more letters
    (``"Sept"``, ``"jan"``), case-insensitive.

    Raises:
        ValueError: ``name`` names no month.
    """
    key = name.lower().rstrip(".")[:3]
    for number, full in enumerate(MONTHS, start=1):
        if len(key) == 3 and full.startswith(key):
            return number
    raise ValueError(f"not a month name: {name!r}")
