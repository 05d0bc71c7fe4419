"""Keeping a store that runs for years fast: retention, gc, compaction and vacuum by policy.

After a run, when ``[schedule] maintain_every`` has passed since the last maintenance, the
job prunes what the retention policy does not keep (every snapshot for ``keep_all_for``,
then one an hour for ``hourly_for``, then one a day for ``daily_for``), removes rows of
snapshots that never committed (a killed run's, older than an hour), rewrites each table's
many small files into few large ones, and removes the files no table version within
``vacuum_retention_hours`` still needs. Those no version needs but younger than that window
are counted as ``vacuum_kept`` beside the window itself, so a pass that removed nothing says
why (right after a compaction, the files it replaced are still within the window).
``benchmarks/maintenance.py`` measures the effect on a year of hourly snapshots. Example::

    report = maintain(store, settings.schedule)
    report.pruned, report.files_before, report.files_after, report.vacuum_kept, report.duration_s
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolkit.snapshot import RetentionPolicy

if TYPE_CHECKING:
    from toolkit.schedule.settings import ScheduleSettings
    from toolkit.snapshot import Store

__all__ = ["MaintenanceReport", "maintain", "maintenance_due", "retention_policy"]

GC_MIN_AGE = timedelta(hours=1)  # younger orphans may belong to a write still under way


@dataclass(frozen=True)
class MaintenanceReport:
    """What one maintenance pass did, and how long each step took. ``vacuumed`` counts the
    files removed; ``vacuum_kept`` those no table version needs that stay because they are
    younger than ``vacuum_retention_hours`` (a later pass removes them)."""

    pruned: int
    gc_rows: int
    files_before: int
    files_after: int
    vacuumed: int
    vacuum_kept: int = 0
    vacuum_retention_hours: int = 0
    durations: dict[str, float] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return sum(self.durations.values())

    def as_fields(self) -> dict[str, Any]:
        """The report as log and status fields."""
        return {
            "pruned": self.pruned,
            "gc_rows": self.gc_rows,
            "files_before": self.files_before,
            "files_after": self.files_after,
            "vacuumed": self.vacuumed,
            "vacuum_kept": self.vacuum_kept,
            "vacuum_retention_hours": self.vacuum_retention_hours,
            "duration_s": round(self.duration_s, 3),
            "durations": {k: round(v, 3) for k, v in self.durations.items()},
        }


def retention_policy(settings: ScheduleSettings) -> RetentionPolicy:
    """The store's retention policy from ``[schedule]``."""
    return RetentionPolicy(
        keep_all_for=settings.keep_all_for,
        hourly_for=settings.hourly_for,
        daily_for=settings.daily_for,
    )


def maintenance_due(settings: ScheduleSettings, last_at: str | None, now: datetime) -> bool:
    """True when ``maintain_every`` has passed since ``last_at`` (an ISO time, or never)."""
    if last_at is None or settings.maintain_every_s <= 0:
        return True
    return now - datetime.fromisoformat(last_at) >= timedelta(seconds=settings.maintain_every_s)


def maintain(
    store: Store, settings: ScheduleSettings, *, now: datetime | None = None
) -> MaintenanceReport:
    """Retention, gc, compaction and vacuum, in that order (each step needs the one before)."""
    moment = now or datetime.now(UTC)
    durations: dict[str, float] = {}
    started = time.perf_counter()
    retained = store.apply_retention(retention_policy(settings), now=moment)
    durations["retention"] = time.perf_counter() - started
    started = time.perf_counter()
    collected = store.gc(min_age=GC_MIN_AGE, now=moment)
    durations["gc"] = time.perf_counter() - started
    started = time.perf_counter()
    compacted = store.compact()
    durations["compact"] = time.perf_counter() - started
    started = time.perf_counter()
    vacuumed = store.vacuum(retention_hours=settings.vacuum_retention_hours)
    durations["vacuum"] = time.perf_counter() - started
    return MaintenanceReport(
        pruned=len(retained.pruned),
        gc_rows=collected.total_rows,
        files_before=sum(compacted.files_before.values()),
        files_after=sum(compacted.files_after.values()),
        vacuumed=vacuumed.total,
        vacuum_kept=vacuumed.total_kept,
        vacuum_retention_hours=settings.vacuum_retention_hours,
        durations=durations,
    )
