"""The nightly schedule of `veille serve` and the deployments."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prefect.schedules import Schedule

__all__ = ["NIGHTLY_CRON", "NIGHTLY_TIMEZONE", "nightly_schedule"]

NIGHTLY_CRON = "0 2 * * *"
NIGHTLY_TIMEZONE = "Europe/Paris"


def nightly_schedule(cron: str = NIGHTLY_CRON, timezone: str = NIGHTLY_TIMEZONE) -> Schedule:
    """A timezone-aware cron schedule (``serve(cron=...)`` alone would be read in UTC)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from prefect.schedules import Cron

    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"timezone: {timezone!r} is not an IANA time zone (e.g. 'Europe/Paris')") from exc
    return Cron(cron, timezone=timezone)
