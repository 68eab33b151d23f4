"""The month table the query readers share."""

from __future__ import annotations

import pytest

from mnemolayer.text.months import MONTHS, month_number


def test_months_are_in_calendar_order() -> None:
    assert len(MONTHS) == 12 and MONTHS[0] == "january" and MONTHS[-1] == "december"


@pytest.mark.parametrize(
    ("name", "number"),
    [("January", 1), ("jan", 1), ("Sept", 9), ("sep.", 9), ("MAY", 5), ("december", 12)],
)
def test_month_number_reads_names_and_abbreviations(name: str, number: int) -> None:
    assert month_number(name) == number


@pytest.mark.parametrize("name", ["", "ja", "monday", "xyz"])
def test_month_number_refuses_what_is_no_month(name: str) -> None:
    with pytest.raises(ValueError, match="not a month name"):
        month_number(name)
