"""The lifecycle clock: a protocol that ``Memory(clock=...)`` accepts, and a fake for tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle import Clock, system_clock
from mnemolayer.testing import FakeClock


def test_fake_clock_stands_still_until_advanced() -> None:
    clock = FakeClock(datetime(2024, 5, 1, tzinfo=UTC))
    assert clock() == clock() == datetime(2024, 5, 1, tzinfo=UTC)
    assert clock.advance(days=2, seconds=30) == datetime(2024, 5, 3, 0, 0, 30, tzinfo=UTC)
    assert clock.advance(hours=1.5, minutes=1) == datetime(2024, 5, 3, 1, 31, 30, tzinfo=UTC)


def test_fake_clock_takes_iso_strings_and_naive_times_as_utc() -> None:
    assert FakeClock("2024-05-01T12:00:00+02:00")() == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert FakeClock(datetime(2024, 5, 1))().tzinfo is UTC
    clock = FakeClock()
    assert clock.set("2023-01-01") == datetime(2023, 1, 1, tzinfo=UTC)
    assert clock() == datetime(2023, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("step", [{"days": -1}, {"seconds": float("nan")}, {"hours": True}])
def test_fake_clock_never_runs_back(step: dict[str, float]) -> None:
    clock = FakeClock()
    with pytest.raises(ValidationError) as err:
        clock.advance(**step)
    assert err.value.field == next(iter(step))
    assert clock() == FakeClock()()


def test_bad_start_names_the_field() -> None:
    with pytest.raises(ValidationError) as err:
        FakeClock("not a time")
    assert err.value.field == "start"


def test_clocks_satisfy_the_protocol() -> None:
    assert isinstance(FakeClock(), Clock)
    assert isinstance(system_clock, Clock)
    now = system_clock()
    assert now.tzinfo is UTC
    assert abs(datetime.now(UTC) - now) < timedelta(seconds=5)
