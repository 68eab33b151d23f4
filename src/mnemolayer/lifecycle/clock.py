"""The clock seam: where "now" comes from, so decay and expiry can be tested.

A clock is any callable that returns the current time as an aware UTC datetime; it is
the same shape as ``Memory(clock=...)``. :func:`system_clock` reads the real time and
:class:`FakeClock` stands still until a test moves it (also in :mod:`mnemolayer.testing`,
with the other deterministic stand-ins).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from mnemolayer.errors import ValidationError
from mnemolayer.models import to_utc
from mnemolayer.protocols import Clock

__all__ = ["Clock", "FakeClock", "system_clock"]


def system_clock() -> datetime:
    """The real current time, aware UTC."""
    return datetime.now(UTC)


class FakeClock:
    """A clock that stands still until told to move; for tests and simulations.

    Args:
        start: the initial time (datetime, ISO-8601 string or epoch seconds; naive is
            taken as UTC). Defaults to 2024-01-01T00:00:00Z.

    Raises:
        ValidationError: ``start`` is not a time.
    """

    __test__ = False  # not a test class, whatever pytest's naming rules say

    def __init__(self, start: datetime | str | float = datetime(2024, 1, 1, tzinfo=UTC)) -> None:
        now = to_utc(start, "start")
        if now is None:
            raise ValidationError("start", "is required")
        self.now: datetime = now

    def __call__(self) -> datetime:
        return self.now

    def __repr__(self) -> str:
        return f"FakeClock({self.now.isoformat()})"

    def advance(
        self, *, days: float = 0.0, hours: float = 0.0, minutes: float = 0.0, seconds: float = 0.0
    ) -> datetime:
        """Move the clock forward and return the new time.

        Raises:
            ValidationError: a step is negative or not finite (time never runs back).
        """
        steps = {"days": days, "hours": hours, "minutes": minutes, "seconds": seconds}
        for name, value in steps.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError(name, f"must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValidationError(name, f"must be finite and ≥ 0, got {value!r}")
        self.now += timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        return self.now

    def set(self, when: datetime | str | float) -> datetime:
        """Jump to ``when`` (which may be earlier, to replay a scenario) and return it.

        Raises:
            ValidationError: ``when`` is not a time.
        """
        now = to_utc(when, "when")
        if now is None:
            raise ValidationError("when", "is required")
        self.now = now
        return now
