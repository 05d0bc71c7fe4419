"""A review period: whole UTC days from ``--from`` to ``--to``, both included, and the
previous period of the same length; the days it has no complete snapshot for.

The period covers ``[from 00:00 UTC, to + 1 day 00:00 UTC)``, clipped at the time the review
is made (nothing is known of the future; a store whose snapshots are stamped later, as the
demo's simulated days are, is seen to the end of its newest snapshot's day). A **coverage
gap** is a day of the period (begun by then) in which no complete snapshot was taken; a
partial snapshot does not close one.
Example::

    period = Period.parse("2026-01-01", "2026-01-14")
    period.previous()           # 2025-12-18 .. 2025-12-31
    coverage_gaps(period, snapshots, now)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING

from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["Period", "coverage_gaps", "parse_day"]


def parse_day(value: str | date, option: str) -> date:
    """A ``YYYY-MM-DD`` date (a datetime's date part), or a ConfigError naming ``option``."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise ConfigError(
            f"{option} {value!r} is not a date: write it as YYYY-MM-DD, e.g. 2026-01-31"
        ) from None


@dataclass(frozen=True)
class Period:
    """Whole UTC days ``first`` to ``last``, both included."""

    first: date
    last: date

    def __post_init__(self) -> None:
        if self.last < self.first:
            raise ConfigError(
                f"--to {self.last} is before --from {self.first}: give the period's first day "
                "with --from and its last (the same or a later day) with --to"
            )

    @classmethod
    def parse(cls, first: str | date, last: str | date) -> Period:
        """The period from ``--from`` and ``--to`` values (dates or ``YYYY-MM-DD`` text)."""
        return cls(parse_day(first, "--from"), parse_day(last, "--to"))

    @property
    def start(self) -> datetime:
        return datetime.combine(self.first, time(), tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The instant after the period: its last day's end."""
        return datetime.combine(self.last + timedelta(days=1), time(), tzinfo=UTC)

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def previous(self) -> Period:
        """The period of the same length just before this one."""
        return Period(self.first - timedelta(days=self.days), self.first - timedelta(days=1))

    def end_by(self, now: datetime) -> datetime:
        """The period's end, or ``now`` when that comes first (never before its start)."""
        return max(self.start, min(self.end, now))

    def each_day(self, now: datetime) -> list[date]:
        """The period's days that have begun by ``now``."""
        return [
            self.first + timedelta(days=n)
            for n in range(self.days)
            if datetime.combine(self.first + timedelta(days=n), time(), tzinfo=UTC) < now
        ]

    def __str__(self) -> str:
        return f"{self.first.isoformat()} to {self.last.isoformat()}"


def coverage_gaps(
    period: Period, snapshots: Iterable[tuple[datetime, str]], now: datetime
) -> list[date]:
    """The period's days (begun by ``now``) without a complete snapshot; ``snapshots`` are
    ``(snapshot_at, status)`` pairs."""
    covered = {at.astimezone(UTC).date() for at, status in snapshots if status == "complete"}
    return [day for day in period.each_day(now) if day not in covered]


def gap_runs(days: Sequence[date]) -> list[tuple[date, date]]:
    """Consecutive days folded into ``(first, last)`` runs, for sentences."""
    runs: list[tuple[date, date]] = []
    for day in days:
        if runs and runs[-1][1] + timedelta(days=1) == day:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs
