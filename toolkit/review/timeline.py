"""A finding's state over time, from the snapshots that observed it: time in violation and
the episodes a review counts.

Each committed snapshot (complete or partial) observes a finding (a check and a resource)
as ``alarm``, ``ok`` (an ok row, or no row: the resource is gone or the check no longer
examines it) or ``unobserved`` (a partial snapshot that failed to collect what the check
reads and has no row for it, or rows that all say ``unknown``). As in the audit's lifecycle
(:mod:`toolkit.audit.lifecycle`), an unobserved snapshot carries the state last observed:
it neither ends nor starts an episode. Before its first observation a finding is not in
alarm.

**Time in violation**: the state a snapshot gives holds from that snapshot's time until the
next snapshot's (after the newest snapshot, until the end asked about). A finding's time in
violation over ``[start, end)`` is the length of the parts of those intervals in alarm that
fall inside ``[start, end)``; summed over resources it is in resource-days (86 400 s each).

**Episodes**: maximal runs of snapshots in alarm; one starts at its first alarming
snapshot's time and is fixed at the time of the first snapshot after it that observes the
finding ok (None while it lasts). Every episode after a finding's first is a regression.
Example::

    line = Timeline.observe(times, ["alarm", "unobserved", "ok"])
    line.seconds_in_alarm(start, end), line.episodes()
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

__all__ = ["OBSERVATIONS", "Episode", "Timeline", "seconds_true", "state_before"]

OBSERVATIONS = ("alarm", "ok", "unobserved")
DAY_SECONDS = 86_400.0


@dataclass(frozen=True)
class Episode:
    """One run in alarm: when it started, when a snapshot first saw it fixed (None: never),
    and whether the finding had been in alarm before (a regression)."""

    started: datetime
    fixed: datetime | None
    regression: bool


def seconds_true(
    times: Sequence[datetime], states: Sequence[bool], start: datetime, end: datetime
) -> float:
    """Seconds of ``[start, end)`` during which ``states`` held: ``states[i]`` holds from
    ``times[i]`` (ascending) to ``times[i + 1]``, the last one to ``end``."""
    total = 0.0
    for i, (at, state) in enumerate(zip(times, states, strict=True)):
        if not state:
            continue
        until = times[i + 1] if i + 1 < len(times) else end
        overlap = (min(until, end) - max(at, start)).total_seconds()
        total += max(overlap, 0.0)
    return total


def state_before(times: Sequence[datetime], states: Sequence[bool], moment: datetime) -> bool:
    """The state holding just before ``moment``: the newest snapshot's taken before it
    (False before the first)."""
    index = bisect_left(list(times), moment)
    return bool(states[index - 1]) if index else False


@dataclass(frozen=True)
class Timeline:
    """A finding's state at every committed snapshot (``times`` ascending), carried over the
    snapshots that did not observe it; ``observed`` says which did."""

    times: tuple[datetime, ...]
    alarm: tuple[bool, ...]
    observed: tuple[bool, ...]

    @classmethod
    def observe(cls, times: Sequence[datetime], observations: Sequence[str]) -> Timeline:
        """The timeline of per-snapshot observations (:data:`OBSERVATIONS`)."""
        state, alarm, observed = False, [], []
        for seen in observations:
            if seen not in OBSERVATIONS:
                raise ValueError(f"unknown observation {seen!r}")
            if seen != "unobserved":
                state = seen == "alarm"
            alarm.append(state)
            observed.append(seen != "unobserved")
        return cls(tuple(times), tuple(alarm), tuple(observed))

    def seconds_in_alarm(self, start: datetime, end: datetime) -> float:
        """Seconds of ``[start, end)`` in alarm (see the module docstring)."""
        return seconds_true(self.times, self.alarm, start, end)

    def in_alarm_before(self, moment: datetime) -> bool:
        """In alarm just before ``moment`` (by the newest snapshot taken before it)."""
        return state_before(self.times, self.alarm, moment)

    def episodes(self) -> list[Episode]:
        """Every run in alarm, oldest first."""
        found: list[Episode] = []
        started: datetime | None = None
        for at, alarm in zip(self.times, self.alarm, strict=True):
            if alarm and started is None:
                started = at
            elif not alarm and started is not None:
                found.append(Episode(started, at, regression=bool(found)))
                started = None
        if started is not None:
            found.append(Episode(started, None, regression=bool(found)))
        return found
