"""Per check and per requirement over a period, from the findings' timelines; service
levels and their breaches.

A finding's episode (:class:`~toolkit.review.timeline.Episode`) is due in the period when a
snapshot in it saw the episode fixed, or when it is still open at the period's end; its
deadline is its start plus the days its severity allows (``[review] time_to_fix_days``).
It was fixed **in time** when fixed by its deadline; it **breached** when fixed after it
(resolved late) or still open past it at the period's end (open past deadline), by how
long past. A severity without a time to fix (``info`` by default) has no service level.
Example::

    figures = check_figures("RES001", "title", "high", lines, period, ends_at)
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from toolkit.review.figures import Breach, CheckFigures, ServiceLevel
from toolkit.review.timeline import DAY_SECONDS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from datetime import datetime

    from toolkit.audit.frameworks import Framework
    from toolkit.review.period import Period
    from toolkit.review.timeline import Episode, Timeline

__all__ = ["check_figures", "due_status", "requirement_figures", "service_levels"]


def check_figures(
    check: tuple[str, str, str],
    lines: Iterable[Timeline],
    period: Period,
    ends_at: datetime,
    *,
    previous_known: bool = True,
) -> CheckFigures:
    """``check`` (id, title, severity)'s figures over ``period`` (ending at ``ends_at``)
    from its findings' timelines; without ``previous_known`` (no snapshot before the
    period) the previous period's time in violation is None."""
    start, previous = period.start, period.previous().start
    counts = {"open_at_start": 0, "opened": 0, "resolved": 0, "open_at_end": 0, "regressions": 0}
    seconds = before = 0.0
    for line in lines:
        counts["open_at_start"] += line.in_alarm_before(start)
        counts["open_at_end"] += line.in_alarm_before(ends_at)
        for episode in line.episodes():
            if start <= episode.started < ends_at:
                counts["opened"] += 1
                counts["regressions"] += episode.regression
            if episode.fixed is not None and start <= episode.fixed < ends_at:
                counts["resolved"] += 1
        seconds += line.seconds_in_alarm(start, ends_at)
        before += line.seconds_in_alarm(previous, start)
    check_id, title, severity = check
    return CheckFigures(
        id=check_id,
        title=title,
        severity=severity,
        open_at_start=counts["open_at_start"],
        opened=counts["opened"],
        resolved=counts["resolved"],
        open_at_end=counts["open_at_end"],
        regressions=counts["regressions"],
        violation_days=seconds / DAY_SECONDS,
        previous_days=before / DAY_SECONDS if previous_known else None,
    )


def requirement_figures(
    framework: Framework, per_check: Mapping[str, CheckFigures]
) -> tuple[CheckFigures, ...]:
    """Each requirement of ``framework``: the sums of its checks' figures (a check this
    review did not run adds nothing), its severity the highest of theirs."""
    from toolkit.audit import SEVERITIES

    found = []
    for requirement in framework.requirements:
        ids = tuple(m.check_id for m in requirement.checks)
        parts = [per_check[i] for i in ids if i in per_check]
        ranks = [SEVERITIES.index(p.severity) for p in parts if p.severity in SEVERITIES]
        found.append(
            CheckFigures(
                id=requirement.id,
                title=requirement.title,
                severity=SEVERITIES[min(ranks)] if ranks else "",
                open_at_start=sum(p.open_at_start for p in parts),
                opened=sum(p.opened for p in parts),
                resolved=sum(p.resolved for p in parts),
                open_at_end=sum(p.open_at_end for p in parts),
                regressions=sum(p.regressions for p in parts),
                violation_days=sum(p.violation_days for p in parts),
                previous_days=_sum_known([p.previous_days for p in parts]),
                checks=ids,
            )
        )
    return tuple(found)


def _sum_known(values: list[float | None]) -> float | None:
    """The sum, or None when any is unknown."""
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


def due_status(episode: Episode, allowed_days: int, start: datetime, end: datetime) -> str | None:
    """``in_time``, ``late`` or ``overdue`` for an episode due in ``[start, end)`` (see the
    module docstring); None when it is not due there."""
    deadline = episode.started + timedelta(days=allowed_days)
    if episode.fixed is not None and start <= episode.fixed < end:
        return "in_time" if episode.fixed <= deadline else "late"
    open_at_end = episode.started < end and (episode.fixed is None or episode.fixed >= end)
    return "overdue" if open_at_end and end > deadline else None


def service_levels(
    findings: Iterable[tuple[str, str, str, str | None, Timeline]],
    allowed: Mapping[str, int],
    start: datetime,
    end: datetime,
) -> tuple[list[Breach], list[ServiceLevel]]:
    """The breaches and each severity's service level over ``[start, end)``, from
    ``(check_id, severity, resource_id, resource_name, timeline)`` of every finding."""
    tally = {severity: {"in_time": 0, "late": 0, "overdue": 0} for severity in allowed}
    breaches = []
    for check_id, severity, resource_id, name, line in findings:
        days = allowed.get(severity)
        if days is None:
            continue
        for episode in line.episodes():
            status = due_status(episode, days, start, end)
            if status is None:
                continue
            tally[severity][status] += 1
            if status != "in_time":
                deadline = episode.started + timedelta(days=days)
                overdue = (episode.fixed or end) - deadline
                breaches.append(
                    Breach(check_id, severity, resource_id, name, episode.started, deadline,
                           episode.fixed, days, overdue.total_seconds() / DAY_SECONDS)
                )  # fmt: skip
    levels = [
        ServiceLevel(severity, days, sum(tally[severity].values()), tally[severity]["in_time"],
                     tally[severity]["late"], tally[severity]["overdue"])
        for severity, days in allowed.items()
    ]  # fmt: skip
    breaches.sort(key=lambda b: (-b.overdue_days, b.check_id, b.resource_id))
    return breaches, levels
