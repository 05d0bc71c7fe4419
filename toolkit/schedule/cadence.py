"""When the next run is due: a fixed interval or a cron expression, plus jitter and backoff.

>>> cadence = Cadence.every(3600, jitter_s=120)
>>> cadence.next_after(now)                 # now + 1 h + up to 2 min
>>> Cadence.cron("17 * * * *").next_after(now)
>>> backoff_delay(3, base_s=30, max_s=900)  # 120 s, give or take a quarter
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from toolkit.schedule.settings import format_duration, validate_cron

__all__ = ["Cadence", "backoff_delay"]


@dataclass(frozen=True)
class Cadence:
    """A fixed interval (the first run is at once) or a cron expression (UTC)."""

    every_s: float | None = None
    cron_expr: str | None = None
    jitter_s: float = 0.0

    @classmethod
    def every(cls, seconds: float, *, jitter_s: float = 0.0) -> Cadence:
        if seconds <= 0:
            raise ValueError("the interval must be longer than 0")
        return cls(every_s=seconds, jitter_s=jitter_s)

    @classmethod
    def cron(cls, expression: str, *, jitter_s: float = 0.0) -> Cadence:
        return cls(cron_expr=validate_cron(expression), jitter_s=jitter_s)

    def describe(self) -> str:
        what = (
            f"cron {self.cron_expr!r} (UTC)"
            if self.cron_expr
            else "every " + format_duration(self.every_s or 0)
        )
        return what + (f", jitter up to {format_duration(self.jitter_s)}" if self.jitter_s else "")

    def first(self, now: datetime) -> datetime:
        """The first run: at once for an interval, the next match for a cron expression."""
        return self.next_after(now) if self.cron_expr else now

    def next_after(self, moment: datetime, rng: random.Random | None = None) -> datetime:
        """The run after ``moment``, with jitter added."""
        if self.cron_expr is not None:
            from croniter import croniter  # type: ignore[import-untyped]  # no types shipped

            due: datetime = croniter(self.cron_expr, moment.astimezone(UTC)).get_next(datetime)
        else:
            due = moment + timedelta(seconds=self.every_s or 0)
        return due + timedelta(seconds=_jitter(self.jitter_s, rng))


def backoff_delay(
    failures: int, *, base_s: float, max_s: float, rng: random.Random | None = None
) -> float:
    """Seconds before the next attempt after ``failures`` failed runs in a row.

    ``base_s`` doubled for each failure after the first, capped at ``max_s``, then spread
    by up to a quarter either way so that many jobs do not retry in step.
    """
    delay = float(min(max_s, base_s * 2.0 ** max(0, failures - 1)))
    spread = float((rng or random).uniform(-0.25, 0.25))
    return max(0.0, delay * (1 + spread))


def _jitter(limit_s: float, rng: random.Random | None) -> float:
    return float((rng or random).uniform(0, limit_s)) if limit_s > 0 else 0.0
